/**
 * Traffic among the nodes of a customer cluster (inside the tenant VPC), as one table the
 * security groups derive from: what crosses the peering is in contract.ts, not here.
 */
import { K3S_API_PORT, SLURM_PORTS } from "./contract";

export type ClusterNodeGroup = "server" | "workers";

export interface ClusterFlow {
  readonly id: string;
  readonly from: ClusterNodeGroup;
  readonly to: ClusterNodeGroup;
  /** IANA protocol name, or "-1" for every protocol. */
  readonly protocol: "tcp" | "udp" | "icmp" | "-1";
  readonly fromPort?: number;
  readonly toPort?: number;
  readonly purpose: string;
}

/** kubelet's API (logs, exec, metrics). */
export const KUBELET_PORT = 10250;
/** Cilium's health checks between nodes. */
export const CILIUM_HEALTH_PORT = 4240;

const tcp = (port: number) => ({ protocol: "tcp" as const, fromPort: port, toPort: port });

export const CLUSTER_INTERNAL_FLOWS: readonly ClusterFlow[] = [
  { id: "agents-to-api", from: "workers", to: "server", ...tcp(K3S_API_PORT), purpose: "K3s agents join and kubelets talk to the API server" },
  { id: "api-to-kubelet", from: "server", to: "workers", ...tcp(KUBELET_PORT), purpose: "the API server reaches kubelet for logs, exec and metrics" },
  { id: "kubelet-on-server", from: "workers", to: "server", ...tcp(KUBELET_PORT), purpose: "kubelet API of the server node (metrics)" },
  { id: "cilium-health-to-workers", from: "server", to: "workers", ...tcp(CILIUM_HEALTH_PORT), purpose: "Cilium health checks" },
  { id: "cilium-health-to-server", from: "workers", to: "server", ...tcp(CILIUM_HEALTH_PORT), purpose: "Cilium health checks" },
  { id: "cilium-ping-to-workers", from: "server", to: "workers", protocol: "icmp", fromPort: 8, toPort: 0, purpose: "Cilium health pings" },
  { id: "cilium-ping-to-server", from: "workers", to: "server", protocol: "icmp", fromPort: 8, toPort: 0, purpose: "Cilium health pings" },
  { id: "dns-udp", from: "workers", to: "server", ...{ protocol: "udp" as const, fromPort: 53, toPort: 53 }, purpose: "CoreDNS runs on the server" },
  { id: "dns-tcp", from: "workers", to: "server", ...tcp(53), purpose: "CoreDNS runs on the server" },
  // Forwarded HTTPS: the server is the private subnets' NAT (image pulls, AWS APIs).
  { id: "nat-https", from: "workers", to: "server", ...tcp(443), purpose: "HTTPS to the internet through the NAT on the server" },
  // slurmd to slurmd on 6818 (srun fan-out), and MPI ranks and srun step I/O on ephemeral
  // ports: a job's nodes talk freely, and only among themselves.
  { id: "slurmd-and-jobs", from: "workers", to: "workers", protocol: "-1", purpose: `slurmd to slurmd (${SLURM_PORTS.slurmd}) and traffic between the nodes of a job` },
];
