/**
 * What `plan` says about growth: for a central, how many tenants its host holds and how
 * many more fit; for a tenant, what it adds to the operator's bill.
 */
import { centralCeiling, checkCentralCapacity, hostCapacity, OPEN_A_CELL, RESOURCE_NAMES, tenantStacksOf, type Resources } from "../config/capacity";
import type { StackConfig, StackFile } from "../config/types";
import { CENTRAL_DATA_VOLUME, CENTRAL_NODE, dataVolumeGiB, tenantDiskGiB } from "../facts/central-host";
import { isKnownInstanceType } from "../facts/instance-types";
import { CONFIG_NAMESPACE } from "../facts/project";
import { INSTANCE_HOUR, monthly } from "../facts/prices";
import { estimateCost, type CostEstimate, type CostLine } from "./cost";
import type { Deployment } from "./deployment";

const show = (r: Resources) => `${r.cpuMillis}m CPU, ${r.memoryMiB} MiB, ${r.pods} pods`;

/** Central: its host's capacity against the tenant stack files that join it. */
export function formatCentralCapacity(stack: string, instanceType: string, files: readonly StackFile[]): string {
  const tenants = tenantStacksOf(stack, files);
  const check = checkCentralCapacity(instanceType, tenants.length);
  const c = check.capacity;
  const lines = [`central capacity: ${tenants.length} tenant(s) join ${stack} (${tenants.map((t) => t.stack).join(", ") || "none yet"})`];
  if (c) {
    lines.push(
      `  ${instanceType} allocatable ${show(c.allocatable)} (less ${(CENTRAL_NODE.vmMemoryOverheadPercent * 100).toFixed(1)} % VM overhead and kubelet's eviction threshold)`,
      `  reserved by the host (K3s, ArgoCD, cluster-api, operators; facts/central-host.ts): ${show(c.reserved)}`,
      `  one tenant's control plane and its DNS (facts/control-plane.ts): ${show(c.perTenant)}`,
      `  holds ${c.maxTenants} tenant(s) (${RESOURCE_NAMES[c.limitedBy]} runs out first): ${Math.max(0, c.maxTenants - tenants.length)} more fit`,
      `  one central holds at most ${centralCeiling().tenants} whatever its host (${centralCeiling().limitedBy}): past that, ${OPEN_A_CELL}`,
      `  data volume ${dataVolumeGiB(tenants.length)} GiB for ${tenants.length} tenant(s): ${CENTRAL_DATA_VOLUME.hostGiB} GiB the host's, ${tenantDiskGiB()} GiB per tenant (slurmctld state, MariaDB, its backups), at least ${CENTRAL_DATA_VOLUME.minimumGiB} GiB; grows with the tenants (${dataVolumeGiB(c.maxTenants)} GiB at ${c.maxTenants})`,
    );
  }
  lines.push(...check.errors.map((e) => `  error: ${e.problem}; valid: ${e.valid}`), ...check.warnings.map((w) => `  warning: ${w}`));
  return lines.join("\n");
}

/** The central host's monthly price shared by the tenants it holds; undefined if unknown. */
export function hostSharePerTenant(instanceType: string): { usd: number; hostUsd: number; tenants: number } | undefined {
  const c = hostCapacity(instanceType);
  if (!c || !isKnownInstanceType(instanceType) || c.maxTenants === 0) return undefined;
  const hostUsd = monthly(INSTANCE_HOUR[instanceType]);
  return { usd: Math.round((hostUsd / c.maxTenants) * 100) / 100, hostUsd, tenants: c.maxTenants };
}

/**
 * What central builds for one tenant (its TenantLink component: role, slurmctld endpoint,
 * rules, route), priced from central's plan: part of what the tenant costs the operator.
 */
export function centralLinesFor(central: Deployment, tenantId: string): CostLine[] {
  const resources = central.deployment.resources;
  const link = resources.find((r) => r.type === TENANT_LINK && r.urn.endsWith(`-tenant-${tenantId}`));
  if (!link) return [];
  const parentOf = new Map(resources.map((r) => [r.urn, r.parent]));
  const under = (urn: string | undefined): boolean => urn !== undefined && (urn === link.urn || under(parentOf.get(urn)));
  return estimateCost(central).lines.filter((l) => l.basis === "idle" && under(l.urn));
}
const TENANT_LINK = "clusterra:central:TenantLink";

/** Tenant: the idle lines its stack and central's part for it bill the operator, plus its share of the central host. */
export function formatOperatorMarginal(estimate: CostEstimate, centralFile: StackFile | undefined, centralLines: readonly CostLine[] = []): string {
  const operator = [...estimate.lines.filter((l) => l.payer === "operator" && l.basis === "idle"), ...centralLines];
  const direct = Math.round(operator.reduce((s, l) => s + l.monthlyUsd, 0) * 100) / 100;
  const parts = [...new Map(operator.map((l) => [l.item, 0])).keys()].map((item) => {
    const same = operator.filter((l) => l.item === item);
    return `${item}${same.length > 1 ? ` x${same.length}` : ""} $${same.reduce((s, l) => s + l.monthlyUsd, 0).toFixed(2)}`;
  });
  const plane = centralFile?.values[`${CONFIG_NAMESPACE}:controlPlane`] as { instanceType?: unknown } | undefined;
  const share = typeof plane?.instanceType === "string" ? hostSharePerTenant(plane.instanceType) : undefined;
  const shareText = share
    ? `; with its share of the central host (${String(plane?.instanceType)} $${share.hostUsd.toFixed(2)} / ${share.tenants} tenants it holds) $${(direct + share.usd).toFixed(2)}`
    : "";
  return `operator's marginal cost of this tenant: $${direct.toFixed(2)} a month idle (${parts.join(", ") || "nothing"})${shareText}`;
}

/** The growth lines `plan` prints for a stack (none for a connector). */
export function formatGrowth(config: StackConfig, estimate: CostEstimate, files: readonly StackFile[], central?: Deployment): string | undefined {
  if (config.kind === "central") return formatCentralCapacity(config.stack, config.controlPlane.instanceType, files);
  if (config.kind === "tenant") return formatOperatorMarginal(estimate, files.find((f) => f.stack === config.central.stack.split("/").pop()), central ? centralLinesFor(central, config.tenant.id) : []);
  return undefined;
}
