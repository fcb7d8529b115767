/**
 * Which of a tenant's ports on its central host meet another's. Every tenant of one central
 * shares the host's NodePort range: its slurmctld port and its srun block are derived from
 * its id (facts/contract.ts), so two ids can land on the same ports, and a NodePort can only
 * lead to one Service. Pure: validate.ts turns each conflict into a configuration issue.
 */
import { portRangesOverlap, slurmctldNodePort, srunPortBlock, type PortRange } from "../facts/contract";

export interface TenantPorts {
  readonly slurmctld: number;
  readonly srunBlock: PortRange;
}

export function tenantPorts(tenantId: string): TenantPorts {
  return { slurmctld: slurmctldNodePort(tenantId), srunBlock: srunPortBlock(tenantId) };
}

function single(port: number): PortRange {
  return { from: port, to: port };
}

export function describeBlock(range: PortRange): string {
  return `${range.from}-${range.to}`;
}

/** A tenant whose own srun block holds its own slurmctld port (undefined when apart). */
export function ownPortConflict(tenantId: string): string | undefined {
  const p = tenantPorts(tenantId);
  return portRangesOverlap(p.srunBlock, single(p.slurmctld)) ? `its srun port block ${describeBlock(p.srunBlock)} holds its own slurmctld NodePort ${p.slurmctld}` : undefined;
}

/**
 * Every way two tenants' ports meet, each as the clause after "tenant <id>": the slurmctld
 * ports, one's srun block and the other's slurmctld port (both ways), the two srun blocks.
 */
export function portConflicts(tenantId: string, otherId: string): string[] {
  if (tenantId === otherId) return [];
  const mine = tenantPorts(tenantId);
  const theirs = tenantPorts(otherId);
  const out: string[] = [];
  if (mine.slurmctld === theirs.slurmctld) out.push(`gets the same slurmctld NodePort (${mine.slurmctld}) as tenant ${otherId}`);
  if (portRangesOverlap(mine.srunBlock, single(theirs.slurmctld))) out.push(`gets the srun port block ${describeBlock(mine.srunBlock)}, which holds tenant ${otherId}'s slurmctld NodePort ${theirs.slurmctld}`);
  if (portRangesOverlap(theirs.srunBlock, single(mine.slurmctld))) out.push(`gets the slurmctld NodePort ${mine.slurmctld}, inside tenant ${otherId}'s srun port block ${describeBlock(theirs.srunBlock)}`);
  if (portRangesOverlap(mine.srunBlock, theirs.srunBlock)) out.push(`gets the srun port block ${describeBlock(mine.srunBlock)}, meeting tenant ${otherId}'s ${describeBlock(theirs.srunBlock)}`);
  return out;
}
