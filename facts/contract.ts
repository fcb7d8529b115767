/**
 * The peering contract: every flow that crosses the VPC peering between central and a
 * tenant. Security-group rules on both sides, the CrossGuard stack policy and the README
 * table all derive from this one list; a port that is not here is closed.
 *
 * Endpoints:
 * - `tenant-endpoint`: the tenant's own internal NLB in the central VPC (its security group
 *   admits only that tenant's CIDR), forwarding to the tenant's slurmctld NodePort.
 * - `central-host`: the central K3s host's primary address (pod egress is SNATed to it).
 * - `tenant-vpc`: the tenant VPC's CIDR (Cilium ENI mode gives slurmd pods VPC addresses).
 * - `tenant-host`: the tenant's fixed K3s node.
 */
export type ContractEndpoint = "tenant-endpoint" | "central-host" | "tenant-vpc" | "tenant-host";

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
  readonly fromPort: number;
  readonly toPort: number;
  /** Why the flow exists. */
  readonly purpose: string;
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

export const PEERING_FLOWS: readonly PeeringFlow[] = [
  {
    id: "slurmd-to-slurmctld",
    from: "tenant-vpc", to: "tenant-endpoint", side: "central",
    protocol: "tcp", fromPort: SLURM_PORTS.slurmctld, toPort: SLURM_PORTS.slurmctld,
    purpose: "slurmd registration and RPCs to the tenant slurmctld",
  },
  {
    id: "edge-agent-heartbeat",
    from: "tenant-host", to: "central-host", side: "central",
    protocol: "tcp", fromPort: CLUSTER_API_PORT, toPort: CLUSTER_API_PORT,
    purpose: "edge-agent heartbeats and node events to cluster-api",
  },
  {
    id: "slurmctld-to-slurmd",
    from: "central-host", to: "tenant-vpc", side: "tenant",
    protocol: "tcp", fromPort: SLURM_PORTS.slurmd, toPort: SLURM_PORTS.slurmd,
    purpose: "job launch and node pings from slurmctld to slurmd pods",
  },
  {
    id: "argocd-to-k3s-api",
    from: "central-host", to: "tenant-host", side: "tenant",
    protocol: "tcp", fromPort: K3S_API_PORT, toPort: K3S_API_PORT,
    purpose: "central ArgoCD syncs the tenant cluster from its fleet folder",
  },
];

/** Flows admitted by one side's security groups. */
export function flowsInto(side: PeeringFlow["side"]): readonly PeeringFlow[] {
  return PEERING_FLOWS.filter((f) => f.side === side);
}

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

/** The contract as the README's Markdown table (a test keeps the README in step). */
export function contractTable(): string {
  const rows = PEERING_FLOWS.map((f) => `| ${f.id} | ${f.from} | ${f.to} | ${f.protocol}/${f.fromPort === f.toPort ? f.fromPort : `${f.fromPort}-${f.toPort}`} | ${f.side} | ${f.purpose} |`);
  return ["| flow | from | to | port | rule on | why |", "|---|---|---|---|---|---|", ...rows].join("\n");
}
