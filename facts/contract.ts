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
   * The ports admitted: the same for every tenant, or one of PER_TENANT_PORTS: each tenant
   * exactly its own (its slurmctld NodePort, its srun block), so a rule for one tenant never
   * opens another's.
   */
  readonly ports: PortRange | PerTenantPorts;
  /**
   * Opened only by slurmd pods (slurmstepd), so only the workers' group carries the tenant
   * end: the K3s server runs no job steps and gets no rule for it.
   */
  readonly workersOnly?: boolean;
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
 * `clusterDns` is K3s's own CoreDNS; `sharedTenantDns` the retiring DNS all tenants' pods
 * asked in the release before each tenant had its own (facts/control-plane.ts
 * RETIRING_SHARED_DNS). Fixed Service addresses in the range's lower band, which the API
 * server keeps for addresses asked by name (it allocates the others from the upper band first).
 */
export const CENTRAL_K3S_RANGES = { clusterCidr: "100.64.0.0/16", serviceCidr: "100.65.0.0/16", clusterDns: "100.65.0.10", sharedTenantDns: "100.65.0.11" } as const;

/** Kubernetes API of a K3s server. */
export const K3S_API_PORT = 6443;

/** cluster-api's private listener on the central host (heartbeats, edge-agent calls). */
export const CLUSTER_API_PORT = 8443;

/** NodePorts the central K3s hands to tenants' slurmctld Services (Kubernetes' default range). */
export const NODE_PORT_RANGE = { from: 30000, to: 32767 } as const;

/**
 * How many ports one tenant's interactive clients may listen on (its SrunPortRange). From
 * the Slurm journey's figures: `srun --pty` on one node holds 3 ports plus 2 per 48 hosts,
 * `salloc` one more; 10 ports is about two concurrent `srun --pty` sessions. A port block is
 * a NodePort per port on central, so the block is kept small: each tenant's costs a slot of
 * the shared NodePort range, and validation must find the blocks disjoint.
 */
export const SRUN_PORT_BLOCK_SIZE = 10;

/**
 * A tenant's ports on its central host, allocated once and recorded in its stack file
 * (`clusterra:ports`: config/tenant-ports.ts finds free ones, validation keeps every tenant
 * of a central apart): its slurmctld's NodePort, and its srun block, the SrunPortRange that
 * `srun`/`salloc` on its login pod listen on and slurmstepd on its nodes calls back to (the
 * launch came from the host's address after SNAT). Each srun port is a NodePort forwarded
 * to the login pod on the same number (port = nodePort = targetPort), because central's Pod
 * Security baseline refuses hostPort and a Service cannot forward a range.
 */
export interface TenantPorts {
  readonly slurmctld: number;
  readonly srunBlock: PortRange;
}

/** The srun block that starts at `from`. */
export function srunBlockAt(from: number): PortRange {
  return { from, to: from + SRUN_PORT_BLOCK_SIZE - 1 };
}

/** Whether two port ranges share a port. */
export function portRangesOverlap(a: PortRange, b: PortRange): boolean {
  return a.from <= b.to && b.from <= a.to;
}

/** The per-tenant port sets a flow may name, each read from the tenant's recorded ports. */
export const PER_TENANT_PORTS = {
  "per-tenant": { ports: (p: TenantPorts): PortRange => ({ from: p.slurmctld, to: p.slurmctld }), label: "the tenant's own" },
  "per-tenant-srun-block": { ports: (p: TenantPorts): PortRange => p.srunBlock, label: `the tenant's own block of ${SRUN_PORT_BLOCK_SIZE}` },
} as const;

export type PerTenantPorts = keyof typeof PER_TENANT_PORTS;

/** Whether a flow's ports differ per tenant. */
export function isPerTenant(ports: PeeringFlow["ports"]): ports is PerTenantPorts {
  return typeof ports === "string";
}

export const PEERING_FLOWS: readonly PeeringFlow[] = [
  {
    id: "slurmd-to-slurmctld",
    from: "tenant-vpc", to: "central-host", side: "central",
    protocol: "tcp", ports: "per-tenant",
    purpose: "slurmd, and the tenant cluster slurmrestd (Slinky creates slurmd pods only through it), to this tenant slurmctld, on its own NodePort",
  },
  {
    id: "edge-agent-heartbeat",
    from: "tenant-host", to: "central-host", side: "central",
    protocol: "tcp", ports: { from: CLUSTER_API_PORT, to: CLUSTER_API_PORT },
    purpose: "edge-agent heartbeats and node events to cluster-api",
  },
  {
    id: "slurmstepd-to-srun",
    from: "tenant-vpc", to: "central-host", side: "central",
    protocol: "tcp", ports: "per-tenant-srun-block", workersOnly: true,
    purpose: "slurmstepd calls back interactive srun/salloc on this tenant login pod (its SrunPortRange, a NodePort per port)",
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

/** The exact ports a flow opens for one tenant (with its recorded ports). */
export function flowPorts(flow: PeeringFlow, ports: TenantPorts): { fromPort: number; toPort: number } {
  const range = isPerTenant(flow.ports) ? PER_TENANT_PORTS[flow.ports].ports(ports) : flow.ports;
  return { fromPort: range.from, toPort: range.to };
}

function rangeLabel(range: PortRange): string {
  return range.from === range.to ? String(range.from) : `${range.from}-${range.to}`;
}

/** A flow's ports as people read them: `tcp/6818`, or the range a per-tenant port lies in. */
export function flowPortLabel(flow: PeeringFlow, ports?: TenantPorts): string {
  if (!isPerTenant(flow.ports)) return `${flow.protocol}/${rangeLabel(flow.ports)}`;
  if (ports !== undefined) return `${flow.protocol}/${rangeLabel(PER_TENANT_PORTS[flow.ports].ports(ports))}`;
  return `${flow.protocol}/${rangeLabel(NODE_PORT_RANGE)} (${PER_TENANT_PORTS[flow.ports].label})`;
}

/** The contract as the README's Markdown table (a test keeps the README in step). */
export function contractTable(): string {
  const rows = PEERING_FLOWS.map((f) => `| ${f.id} | ${f.from} | ${f.to} | ${flowPortLabel(f)} | ${f.side} | ${f.purpose} |`);
  return ["| flow | from | to | port | rule on | why |", "|---|---|---|---|---|---|", ...rows].join("\n");
}

/**
 * How an edge-agent proves to cluster-api which tenant it is: with its own role in the tenant's
 * account, never a shared secret. Each heartbeat carries an STS GetCallerIdentity request the
 * agent signed (SigV4) with that role's credentials for central's regional STS endpoint and
 * region (not the agent's own region), the audience and the SHA-256 of the heartbeat's body
 * among the signed headers. cluster-api refuses a heartbeat unless: the Authorization header's
 * SignedHeaders include host, x-amz-date, the audience and the digest headers (STS ignores a
 * header it was not asked to sign, so an unsigned one proves nothing), and host is its own
 * endpoint's; the audience is its own; the digest is the body's; the signature is younger than
 * maxAgeSeconds and not seen before (a replay cache for that long); it has sent that request (method, headers and body as signed,
 * to its own configured endpoint, never a URL the request names) to STS, which answered; and
 * the caller STS names matches the caller template with the tenant the heartbeat claims and that
 * tenant's account from cluster-api's tenants table. A tenant can assume only roles in its own
 * account, so it cannot post as another; a captured heartbeat is good for its own body only,
 * for seconds.
 */
export const HEARTBEAT_AUTH = {
  scheme: "aws-sts-get-caller-identity",
  audienceHeader: "X-Clusterra-Audience",
  bodyDigestHeader: "X-Clusterra-Body-Sha256",
  maxAgeSeconds: 60,
} as const;
