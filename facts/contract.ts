/**
 * The peering contract: every flow that crosses the VPC peering between central and a
 * tenant. Security-group rules on both sides, the CrossGuard stack policy and the README
 * table all derive from this one list; a port that is not here is closed.
 *
 * Endpoints:
 * - `central-host`: the central K3s host's primary address (pod egress is SNATed to it; each
 *   tenant's slurmctld listens there on that tenant's own NodePort).
 * - `tenant-vpc`: the tenant VPC's CIDR (Cilium ENI mode gives slurmd pods VPC addresses).
 * - `tenant-host`: the tenant's fixed K3s node.
 */
export type ContractEndpoint = "central-host" | "tenant-vpc" | "tenant-host";

export interface PeeringFlow {
  /** Stable name, used in rule names and descriptions. */
  readonly id: string;
  /** Who opens the connection. */
  readonly from: ContractEndpoint;
  /** Who accepts it. */
  readonly to: ContractEndpoint;
  /** Side whose security group admits the flow. */
  readonly side: "central" | "tenant";
  readonly protocol: "tcp";
  /**
   * The ports admitted: the same for every tenant, or `per-tenant`: each tenant exactly its
   * own slurmctld NodePort (slurmctldNodePort), so a rule for one tenant never opens another's.
   */
  readonly ports: PortRange | "per-tenant";
  /** Why the flow exists. */
  readonly purpose: string;
}

/** An inclusive TCP port range. */
export interface PortRange {
  readonly from: number;
  readonly to: number;
}

/** Slurm's well-known ports (SchedMD network guide). */
export const SLURM_PORTS = {
  slurmctld: 6817,
  slurmd: 6818,
  slurmdbd: 6819,
  slurmrestd: 6820,
} as const;

/**
 * Pod and service ranges of the central K3s, in the shared address space (RFC 6598) that
 * validation never accepts for a VPC: no tenant CIDR can shadow them on the central host.
 */
export const CENTRAL_K3S_RANGES = { clusterCidr: "100.64.0.0/16", serviceCidr: "100.65.0.0/16", clusterDns: "100.65.0.10" } as const;

/** Kubernetes API of a K3s server. */
export const K3S_API_PORT = 6443;

/** cluster-api's private listener on the central host (heartbeats, edge-agent calls). */
export const CLUSTER_API_PORT = 8443;

/** NodePorts the central K3s hands to tenants' slurmctld Services (Kubernetes' default range). */
export const NODE_PORT_RANGE = { from: 30000, to: 32767 } as const;

/**
 * The NodePort of a tenant's slurmctld on the central host, derived from the tenant id
 * (FNV-1a), so no registry of slots is needed; validation rejects two tenants of one
 * central that land on the same port.
 */
export function slurmctldNodePort(tenantId: string): number {
  let hash = 0x811c9dc5;
  for (const ch of tenantId) {
    hash ^= ch.charCodeAt(0);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return NODE_PORT_RANGE.from + (hash % (NODE_PORT_RANGE.to - NODE_PORT_RANGE.from + 1));
}

export const PEERING_FLOWS: readonly PeeringFlow[] = [
  {
    id: "slurmd-to-slurmctld",
    from: "tenant-vpc", to: "central-host", side: "central",
    protocol: "tcp", ports: "per-tenant",
    purpose: "slurmd (and the customer cluster slurmrestd) to this tenant slurmctld, on its own NodePort",
  },
  {
    id: "edge-agent-heartbeat",
    from: "tenant-host", to: "central-host", side: "central",
    protocol: "tcp", ports: { from: CLUSTER_API_PORT, to: CLUSTER_API_PORT },
    purpose: "edge-agent heartbeats and node events to cluster-api",
  },
  {
    id: "slurmctld-to-slurmd",
    from: "central-host", to: "tenant-vpc", side: "tenant",
    protocol: "tcp", ports: { from: SLURM_PORTS.slurmd, to: SLURM_PORTS.slurmd },
    purpose: "job launch and node pings from slurmctld to slurmd pods",
  },
  {
    id: "argocd-to-k3s-api",
    from: "central-host", to: "tenant-host", side: "tenant",
    protocol: "tcp", ports: { from: K3S_API_PORT, to: K3S_API_PORT },
    purpose: "central ArgoCD syncs the tenant cluster from its fleet folder",
  },
];

/** A flow as the central host's group carries it for each tenant: its direction there, and the tenant's end. */
export interface CentralHostFlow {
  readonly flow: PeeringFlow;
  readonly direction: "ingress" | "egress";
  readonly tenantEnd: Exclude<ContractEndpoint, "central-host">;
}

/** The flows that touch the central host: one rule each, per tenant, on the host's group. */
export function centralHostFlows(): readonly CentralHostFlow[] {
  return PEERING_FLOWS.flatMap((flow): CentralHostFlow[] => {
    if (flow.to === "central-host" && flow.from !== "central-host") return [{ flow, direction: "ingress", tenantEnd: flow.from }];
    if (flow.from === "central-host" && flow.to !== "central-host") return [{ flow, direction: "egress", tenantEnd: flow.to }];
    return [];
  });
}

/** Flows admitted by one side's security groups. */
export function flowsInto(side: PeeringFlow["side"]): readonly PeeringFlow[] {
  return PEERING_FLOWS.filter((f) => f.side === side);
}

/** The exact ports a flow opens for one tenant. */
export function flowPorts(flow: PeeringFlow, tenantId: string): { fromPort: number; toPort: number } {
  if (flow.ports === "per-tenant") {
    const port = slurmctldNodePort(tenantId);
    return { fromPort: port, toPort: port };
  }
  return { fromPort: flow.ports.from, toPort: flow.ports.to };
}

/** A flow's ports as people read them: `tcp/6818`, or the range a per-tenant port lies in. */
export function flowPortLabel(flow: PeeringFlow, tenantId?: string): string {
  if (flow.ports !== "per-tenant") return `${flow.protocol}/${flow.ports.from === flow.ports.to ? flow.ports.from : `${flow.ports.from}-${flow.ports.to}`}`;
  if (tenantId !== undefined) return `${flow.protocol}/${slurmctldNodePort(tenantId)}`;
  return `${flow.protocol}/${NODE_PORT_RANGE.from}-${NODE_PORT_RANGE.to} (the tenant's own)`;
}

/** The contract as the README's Markdown table (a test keeps the README in step). */
export function contractTable(): string {
  const rows = PEERING_FLOWS.map((f) => `| ${f.id} | ${f.from} | ${f.to} | ${flowPortLabel(f)} | ${f.side} | ${f.purpose} |`);
  return ["| flow | from | to | port | rule on | why |", "|---|---|---|---|---|---|", ...rows].join("\n");
}
