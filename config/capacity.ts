/**
 * How many tenants' control planes a central host holds: the instance type's memory, CPU
 * and pods less the host's own reservations (facts/central-host.ts), divided by one
 * tenant's requests (facts/control-plane.ts); and how many peerings central's VPC, routes its
 * route table and rules the host's security group take (facts/aws-limits.ts VPC_QUOTAS).
 */
import { VPC_QUOTAS } from "../facts/aws-limits";
import { baselineEgressRules, CENTRAL_OWN_ROUTES } from "../facts/baseline-egress";
import { CENTRAL_HOST_RESERVED, CENTRAL_NODE } from "../facts/central-host";
import { centralHostFlows } from "../facts/contract";
import { TENANT_CONTROL_PLANE, TENANT_DNS, tenantControlPlaneRequest } from "../facts/control-plane";
import { INSTANCE_TYPES, isKnownInstanceType, type InstanceTypeName } from "../facts/instance-types";
import { INSTANCE_HOUR } from "../facts/prices";
import { CONFIG_NAMESPACE } from "../facts/project";
import type { StackFile } from "./types";
import { TENANTS_PER_NODE_PORT_RANGE } from "./tenant-ports";

export interface Resources {
  readonly cpuMillis: number;
  readonly memoryMiB: number;
  readonly pods: number;
}

export interface HostCapacity {
  readonly instanceType: InstanceTypeName;
  /** What kubelet offers pods, less the host processes (K3s, system). */
  readonly allocatable: Resources;
  readonly reserved: Resources;
  readonly perTenant: Resources;
  /** Tenants the host holds, and which resource runs out first. */
  readonly maxTenants: number;
  readonly limitedBy: keyof Resources;
}

/** How a resource is named in messages. */
export const RESOURCE_NAMES: Readonly<Record<keyof Resources, string>> = { cpuMillis: "CPU", memoryMiB: "memory", pods: "pods" };

const sum = (parts: readonly Resources[]): Resources => ({
  cpuMillis: parts.reduce((s, p) => s + p.cpuMillis, 0),
  memoryMiB: parts.reduce((s, p) => s + p.memoryMiB, 0),
  pods: parts.reduce((s, p) => s + p.pods, 0),
});

/** One tenant's share of central: its control plane (its requests, one pod per component) and its own DNS (TENANT_DNS). */
export function tenantFootprint(): Resources {
  const controlPlane = tenantControlPlaneRequest();
  return {
    cpuMillis: controlPlane.cpuMillis + TENANT_DNS.request.cpuMillis * TENANT_DNS.replicas,
    memoryMiB: controlPlane.memoryMiB + TENANT_DNS.request.memoryMiB * TENANT_DNS.replicas,
    pods: Object.keys(TENANT_CONTROL_PLANE).length + TENANT_DNS.replicas,
  };
}

/** Undefined for a type the instance table does not know. */
export function hostCapacity(instanceType: string): HostCapacity | undefined {
  if (!isKnownInstanceType(instanceType)) return undefined;
  const t = INSTANCE_TYPES[instanceType];
  const allocatable = {
    cpuMillis: t.vcpus * 1000,
    memoryMiB: Math.floor(t.memoryGiB * 1024 * (1 - CENTRAL_NODE.vmMemoryOverheadPercent)) - CENTRAL_NODE.evictionHardMemoryMiB,
    pods: CENTRAL_NODE.maxPods,
  };
  const reserved = sum(Object.values(CENTRAL_HOST_RESERVED));
  const perTenant = tenantFootprint();
  const keys = ["memoryMiB", "cpuMillis", "pods"] as const;
  const fits = keys.map((k) => ({ k, n: Math.max(0, Math.floor((allocatable[k] - reserved[k]) / perTenant[k])) }));
  const tightest = fits.reduce((a, b) => (b.n < a.n ? b : a));
  return { instanceType, allocatable, reserved, perTenant, maxTenants: tightest.n, limitedBy: tightest.k };
}

/** The cheapest known type that holds `tenants`, or undefined if none does. */
export function cheapestHostFor(tenants: number): InstanceTypeName | undefined {
  const types = (Object.keys(INSTANCE_TYPES) as InstanceTypeName[]).filter((t) => (hostCapacity(t)?.maxTenants ?? 0) >= tenants);
  return types.sort((a, b) => INSTANCE_HOUR[a].usd - INSTANCE_HOUR[b].usd)[0];
}

/**
 * The most tenants one central can hold, whatever its host, and what binds it: the largest
 * host the catalog has (facts/instance-types.ts), AWS's peerings per VPC, the tenants' ports
 * in its NodePort range. Past it, new tenants join a second central of the environment (a
 * cell: `clusterra:cell`, README "An environment outgrows one central").
 */
export function centralCeiling(): { tenants: number; limitedBy: string } {
  const largest = (Object.keys(INSTANCE_TYPES) as InstanceTypeName[]).map((t) => ({ t, n: hostCapacity(t)?.maxTenants ?? 0 })).reduce((a, b) => (b.n > a.n ? b : a));
  const bounds = [
    { tenants: largest.n, limitedBy: `the largest host type (${largest.t}) holds ${largest.n}` },
    { tenants: VPC_QUOTAS.peeringsPerVpc.max, limitedBy: `AWS's ${VPC_QUOTAS.peeringsPerVpc.max} peerings per VPC at most` },
    { tenants: TENANTS_PER_NODE_PORT_RANGE, limitedBy: `its NodePort range holds ${TENANTS_PER_NODE_PORT_RANGE} tenants' ports` },
  ];
  return bounds.reduce((a, b) => (b.tenants < a.tenants ? b : a));
}

/** What to do when a central is full. */
export const OPEN_A_CELL = `new tenants join a second central of the environment (a cell: a central stack file with clusterra:cell, README "An environment outgrows one central")`;

/** What every message about a full central ends with: the way out, and how far one central goes. */
export function openACell(): string {
  const ceiling = centralCeiling();
  return `${OPEN_A_CELL}; one central holds at most ${ceiling.tenants} (${ceiling.limitedBy})`;
}

export interface CentralCheck {
  readonly tenants: number;
  /** Undefined when the instance type is not in the table (not checked). */
  readonly capacity?: HostCapacity;
  /** Problems that make the configuration invalid: on which part, what, and what would be valid. */
  readonly errors: { readonly on: "instanceType" | "tenants"; readonly problem: string; readonly valid: string }[];
  /** What an operator should know but may have arranged (a raised quota). */
  readonly warnings: string[];
}

/** Rules on the central host's group each way with `tenants` tenants: its baseline egress, and per tenant one per flow touching the host. */
export function hostGroupRules(tenants: number): { ingress: number; egress: number } {
  const perTenant = (direction: "ingress" | "egress") => centralHostFlows().filter((f) => f.direction === direction).length;
  // The baseline's size does not depend on the CIDR.
  return { ingress: tenants * perTenant("ingress"), egress: baselineEgressRules("0.0.0.0/0").length + tenants * perTenant("egress") };
}

/** Checks a central host of `instanceType` against the `tenants` that join it. */
export function checkCentralCapacity(instanceType: string, tenants: number): CentralCheck {
  const capacity = hostCapacity(instanceType);
  const errors: CentralCheck["errors"] = [];
  const warnings: string[] = [];
  if (capacity && tenants > capacity.maxTenants) {
    const better = cheapestHostFor(tenants);
    errors.push({
      on: "instanceType",
      problem: `holds ${capacity.maxTenants} tenant control plane(s) (${RESOURCE_NAMES[capacity.limitedBy]} runs out first) but ${tenants} tenant stacks join this central`,
      valid: better ? `${better}, the cheapest type that holds ${tenants}` : `none of facts/instance-types.ts holds them: ${openACell()}`,
    });
  }
  // Each tenant takes one peering into central's VPC and one route in its private route table.
  const peering = VPC_QUOTAS.peeringsPerVpc;
  const routes = VPC_QUOTAS.routesPerRouteTable;
  if (tenants > peering.max) {
    errors.push({
      on: "tenants",
      problem: `${tenants} tenants need ${tenants} peerings into the central VPC, over AWS's maximum of ${peering.max} per VPC`,
      valid: `at most ${peering.max} tenant stacks per central: ${openACell()}`,
    });
  } else if (tenants > peering.default) {
    warnings.push(`${tenants} tenants need ${tenants} active peerings into the central VPC: over the default quota of ${peering.default}; raise "${peering.name}" (at most ${peering.max}) before they join`);
  }
  if (CENTRAL_OWN_ROUTES + tenants > routes.default) {
    warnings.push(
      `${tenants} tenants put ${CENTRAL_OWN_ROUTES + tenants} routes in central's private route table (its ${CENTRAL_OWN_ROUTES} own, the NAT default and gateway endpoints, and one per tenant): ` +
        `over the default quota of ${routes.default}; raise "${routes.name}" (at most ${routes.max}) before they join`,
    );
  }
  for (const [direction, rules] of Object.entries(hostGroupRules(tenants))) {
    if (rules > VPC_QUOTAS.rulesPerSecurityGroup.default) {
      warnings.push(
        `${tenants} tenants put ${rules} ${direction} rules on the central host's security group (one per contract flow touching the host, per tenant, plus the host's own): ` +
          `over the default quota of ${VPC_QUOTAS.rulesPerSecurityGroup.default}; raise "${VPC_QUOTAS.rulesPerSecurityGroup.name}" before they join`,
      );
    }
  }
  if (!capacity) warnings.push(`instance type ${instanceType} is not in facts/instance-types.ts: its capacity for tenants is not checked`);
  return { tenants, capacity, errors, warnings };
}

/** The tenant stack files that join central stack `central` (by `clusterra:central.stack`). */
export function tenantStacksOf(central: string, files: readonly StackFile[]): StackFile[] {
  return files.filter((f) => {
    const c = f.values[`${CONFIG_NAMESPACE}:central`];
    const stack = typeof c === "object" && c !== null ? (c as Record<string, unknown>).stack : undefined;
    return f.values[`${CONFIG_NAMESPACE}:kind`] === "tenant" && typeof stack === "string" && stack.split("/").pop() === central;
  });
}
