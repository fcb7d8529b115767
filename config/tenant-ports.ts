/**
 * Each tenant's ports on its central host, as its stack file records them (`clusterra:ports`):
 * allocated once, when the tenant is added (validation names free ones), and never changed
 * for a live tenant (its facts file holds the NodePort central opened). Every tenant of one
 * central shares the host's NodePort range, and a NodePort leads to one Service only, so no
 * two tenants' ports may meet. Pure: validate.ts turns each problem into a configuration issue.
 */
import { NODE_PORT_RANGE, portRangesOverlap, SRUN_PORT_BLOCK_SIZE, srunBlockAt, type PortRange, type TenantPorts } from "../facts/contract";
import { CONFIG_NAMESPACE } from "../facts/project";

/** The stack file key that records them. */
export const PORTS_KEY = `${CONFIG_NAMESPACE}:ports`;

/** Whether ports lie in the NodePort range, the whole srun block too. */
export function inNodePortRange(p: TenantPorts): boolean {
  return p.slurmctld >= NODE_PORT_RANGE.from && p.slurmctld <= NODE_PORT_RANGE.to && p.srunBlock.from >= NODE_PORT_RANGE.from && p.srunBlock.to <= NODE_PORT_RANGE.to;
}

/**
 * A tenant's recorded ports from its stack file's values: undefined when absent, not whole
 * numbers or outside the NodePort range (a port central's host serves itself, 6443 or
 * 10250, must never become a tenant's).
 */
export function recordedPorts(values: Readonly<Record<string, unknown>>): TenantPorts | undefined {
  return parsePorts(values[PORTS_KEY]);
}

/** Ports as a stack file (or the contract policy's `tenantPorts`) writes them, `{ slurmctld, srun }`: undefined unless whole and in range. */
export function parsePorts(p: unknown): TenantPorts | undefined {
  if (typeof p !== "object" || p === null) return undefined;
  const { slurmctld, srun } = p as { slurmctld?: unknown; srun?: unknown };
  if (!Number.isInteger(slurmctld) || !Number.isInteger(srun)) return undefined;
  const ports = { slurmctld: slurmctld as number, srunBlock: srunBlockAt(srun as number) };
  return inNodePortRange(ports) ? ports : undefined;
}

function single(port: number): PortRange {
  return { from: port, to: port };
}

export function describeBlock(range: PortRange): string {
  return `${range.from}-${range.to}`;
}

/** A tenant whose own srun block holds its own slurmctld port (undefined when apart). */
export function ownPortConflict(p: TenantPorts): string | undefined {
  return portRangesOverlap(p.srunBlock, single(p.slurmctld)) ? `its srun block ${describeBlock(p.srunBlock)} holds its own slurmctld NodePort ${p.slurmctld}` : undefined;
}

/**
 * Every way two tenants' ports meet, each as the clause after "tenant <id>": the slurmctld
 * ports, one's srun block and the other's slurmctld port (both ways), the two srun blocks.
 */
export function portConflicts(mine: TenantPorts, theirs: TenantPorts, otherId: string): string[] {
  const out: string[] = [];
  if (mine.slurmctld === theirs.slurmctld) out.push(`has the slurmctld NodePort ${mine.slurmctld} of tenant ${otherId}`);
  if (portRangesOverlap(mine.srunBlock, single(theirs.slurmctld))) out.push(`has the srun block ${describeBlock(mine.srunBlock)}, which holds tenant ${otherId}'s slurmctld NodePort ${theirs.slurmctld}`);
  if (portRangesOverlap(theirs.srunBlock, single(mine.slurmctld))) out.push(`has the slurmctld NodePort ${mine.slurmctld}, inside tenant ${otherId}'s srun block ${describeBlock(theirs.srunBlock)}`);
  if (portRangesOverlap(mine.srunBlock, theirs.srunBlock)) out.push(`has the srun block ${describeBlock(mine.srunBlock)}, meeting tenant ${otherId}'s ${describeBlock(theirs.srunBlock)}`);
  return out;
}

/** How many tenants one central's NodePort range holds: a slurmctld port and a block each. */
export const TENANTS_PER_NODE_PORT_RANGE = Math.floor((NODE_PORT_RANGE.to - NODE_PORT_RANGE.from + 1) / (1 + SRUN_PORT_BLOCK_SIZE));

/**
 * The lowest free ports beside `taken` (the other tenants of the central): a slurmctld port,
 * then the block right after it, so each new tenant takes eleven consecutive ports and the
 * range holds TENANTS_PER_NODE_PORT_RANGE of them. Undefined when the range is full.
 */
export function freePorts(taken: readonly TenantPorts[]): TenantPorts | undefined {
  const used = taken.flatMap((t) => [single(t.slurmctld), t.srunBlock]);
  const free = (r: PortRange) => r.to <= NODE_PORT_RANGE.to && !used.some((u) => portRangesOverlap(u, r));
  for (let port = NODE_PORT_RANGE.from; port + SRUN_PORT_BLOCK_SIZE <= NODE_PORT_RANGE.to; port++) {
    const candidate = { slurmctld: port, srunBlock: srunBlockAt(port + 1) };
    if (free({ from: port, to: candidate.srunBlock.to })) return candidate;
  }
  return undefined;
}

/**
 * The ports the `slot`-th tenant of a central gets when every tenant before it took the lowest
 * free ones (slot 0 first; past the range's TENANTS_PER_NODE_PORT_RANGE the slots repeat, as
 * on another central): what a generated fleet allocates.
 */
export function portsAtSlot(slot: number): TenantPorts {
  const first = NODE_PORT_RANGE.from + (slot % TENANTS_PER_NODE_PORT_RANGE) * (1 + SRUN_PORT_BLOCK_SIZE);
  return { slurmctld: first, srunBlock: srunBlockAt(first + 1) };
}

/** Ports as the stack file writes them, in YAML's flow style. */
export function formatPorts(p: TenantPorts): string {
  return `{ slurmctld: ${p.slurmctld}, srun: ${p.srunBlock.from} }`;
}
