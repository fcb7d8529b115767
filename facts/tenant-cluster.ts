/**
 * The customer cluster's fixed facts: the K3s release, the server node's size, worker
 * kubelet reservations, taints and labels. Components, user data, fleet values and the
 * cost estimate derive from this table.
 */
import { LABEL_KEYS, platformName, tenantParameterPath } from "./project";

/** A tenant's cluster name (Slurm's, Karpenter's discovery tag, names of its resources). */
export function tenantClusterName(environment: string, tenantId: string): string {
  return platformName(environment, tenantId);
}

/** The IAM role a tenant's edge-agent runs as, in the tenant's account: the identity its heartbeats prove. */
export function edgeAgentRoleName(environment: string, tenantId: string): string {
  return `${tenantClusterName(environment, tenantId)}-edge-agent`;
}
import { INSTANCE_TYPES, type InstanceTypeName } from "./instance-types";

/** K3s release of every tenant cluster (server and Karpenter-made agents). */
export const TENANT_K3S_VERSION = "v1.35.3+k3s1";

/**
 * Host ports of the host-network pods on the tenant server, which must not collide: Karpenter
 * keeps its chart's defaults; External Secrets' metrics move off 8080.
 */
export const SERVER_HOST_PORTS = { karpenterMetrics: 8080, karpenterHealth: 8081, externalSecretsMetrics: 8082 } as const;

/** Where every node mounts the tenant's EFS file system, and slurmd pods see it. */
export const EFS_MOUNT_PATH = "/mnt/efs";

/** The server's instance type: one of the shared table's (facts/instance-types.ts). */
export type ServerInstanceType = InstanceTypeName;

/**
 * Pods Cilium can address on an instance type in ENI mode without prefix delegation:
 * `enis` x (`ipv4PerEni` - 1) + 2, which kubelet's max-pods must not exceed.
 */
export function eniPodDensity(type: ServerInstanceType): number {
  const t = INSTANCE_TYPES[type];
  return t.enis * (t.ipv4PerEni - 1) + 2;
}

/**
 * Host-network pods on the server: they take no pod address, but kubelet's max-pods counts
 * them (Cilium agent and operator, Karpenter, External Secrets' controller, the edge-agent).
 */
export const SERVER_HOST_NETWORK_PODS = ["cilium-agent", "cilium-operator", "karpenter", "external-secrets", "edge-agent"] as const;

/**
 * Pods the server can really hold: Cilium takes pod addresses only from ENIs in the private
 * subnets (its subnetTagsFilter), never from the primary ENI in the NAT subnet, so the other
 * ENIs' secondary addresses, plus the host-network pods that need none.
 */
export function serverPodCapacity(type: ServerInstanceType): number {
  const t = INSTANCE_TYPES[type];
  return (t.enis - 1) * (t.ipv4PerEni - 1) + SERVER_HOST_NETWORK_PODS.length;
}

/**
 * The fixed K3s server: the smallest Graviton type that holds K3s (~1.6 GB), cilium-agent
 * and operator (~0.4 GB), the Slinky operator (~1 GB) and Karpenter (~1 GiB): 4 GiB.
 * The root volume is the data disk too (images, the SQLite datastore); 10 GiB keeps the
 * idle floor under $30 a month, and kubelet's image GC keeps it from filling.
 */
export const TENANT_SERVER = {
  instanceType: "t4g.medium" as ServerInstanceType,
  /** The OS and the container images (AL2023's image is 8 GiB). */
  rootVolumeGiB: 8,
  /**
   * The cluster's state (K3s's datastore, its CA and tokens, the node's identity) on a volume
   * of its own: a replaced server (a new K3s version, a new image, lost hardware) starts
   * from it, so the cluster is never rebuilt. A few MB today; 2 GiB keeps the idle bill
   * where the 10 GiB root alone had it.
   */
  stateVolumeGiB: 2,
  imageGcHighPercent: 75,
  imageGcLowPercent: 60,
} as const;

/**
 * Karpenter-made worker nodes: one slurmd pod each, plus Cilium's agent (host network).
 * maxPods is fixed below the density of the smallest worker (a 2-vCPU c/m/r: 29), so
 * kubelet and Karpenter agree without per-type arithmetic.
 */
export const WORKER_NODE = {
  maxPods: 16,
  rootVolumeGiB: 40,
  /** kubelet reservations, as the EC2NodeClass tells Karpenter and the agent tells kubelet. */
  kubeReserved: { cpuMillis: 100, memoryMiB: 512 },
  systemReserved: { cpuMillis: 100, memoryMiB: 256 },
  evictionHardMemoryMiB: 200,
  /** Karpenter's default vmMemoryOverheadPercent: capacity it assumes the hypervisor keeps. */
  vmMemoryOverheadPercent: 0.075,
  /** What the daemon sets on every worker request (cilium-agent). */
  daemonSetRequests: { cpuMillis: 100, memoryMiB: 384 },
} as const;

/** The API group of Slinky's custom resources (Controller, NodeSet, ...). */
export const SLINKY_API_GROUP = "slinky.slurm.net";

/** The label K3s puts on a server's Node (a tenant cluster has one server). */
export const SERVER_NODE_LABEL = { "node-role.kubernetes.io/control-plane": "true" } as const;

/** Taints and labels that steer pods. */
export const TAINTS = {
  /** On every worker NodePool: only slurmd pods tolerate it (Slinky's own toleration). */
  slurmdOnly: { key: `nodeset.${SLINKY_API_GROUP}/worker`, value: "true", effect: "NoExecute" },
  /** Cilium removes it when its agent is ready: nothing schedules before networking works. */
  ciliumNotReady: { key: "node.cilium.io/agent-not-ready", value: "true", effect: "NoExecute" },
  /** A node Karpenter has not registered yet (the agent starts with it). */
  karpenterUnregistered: { key: "karpenter.sh/unregistered", value: "true", effect: "NoExecute" },
} as const;

/**
 * The labels Karpenter puts on the nodes it launches that the fleet selects on: the AWS
 * provider's of the instance type (karpenter.sh/docs/reference/instance-types), and the
 * core's capacity type.
 */
export const KARPENTER_LABELS = {
  category: "karpenter.k8s.aws/instance-category",
  family: "karpenter.k8s.aws/instance-family",
  generation: "karpenter.k8s.aws/instance-generation",
  cpu: "karpenter.k8s.aws/instance-cpu",
  memory: "karpenter.k8s.aws/instance-memory",
  capacityType: "karpenter.sh/capacity-type",
  nodePool: "karpenter.sh/nodepool",
} as const;

/** Karpenter (and Cilium's pod-ENI filter) find the cluster's subnets and groups by this tag, valued with the cluster's name. */
export const KARPENTER_DISCOVERY_TAG = "karpenter.sh/discovery";

/** The tag Karpenter puts on what it launches, and Cilium's operator may attach ENIs to. */
export function clusterOwnedTag(clusterName: string): string {
  return `kubernetes.io/cluster/${clusterName}`;
}

/** The worker nodes' role and instance profile (EFS's file-system policy names the role too). */
export function workerRoleName(clusterName: string): string {
  return `${clusterName}-worker`;
}

/** Labels every node of a tenant cluster registers with. */
export function tenantNodeLabels(tenantId: string, role: "server" | "worker"): Record<string, string> {
  return { [LABEL_KEYS.tenant]: tenantId, [LABEL_KEYS.role]: role };
}

/** Node label carrying the shape of a worker NodePool (NodeSets select on it). */
export const SHAPE_LABEL = "clusterra.io/shape";

/** The edge-agent's image, pinned. */
export const EDGE_AGENT_IMAGE = { repository: "ghcr.io/clusterra/edge-agent", tag: "0.9.0" } as const;

/** The mutating admission policy (and its binding) that names the tenant's external Slinky Controller as central does. */
export const SLURM_CLUSTER_NAME_POLICY = "clusterra-slurm-cluster-name";


/** Namespaces of the customer cluster's add-ons. */
export const TENANT_NAMESPACES = {
  slurm: "slurm",
  karpenter: "kube-system",
  cilium: "kube-system",
  externalSecrets: "external-secrets",
  slurmOperator: "slinky",
  edgeAgent: "clusterra-system",
} as const;

/** Secrets the tenant cluster's slurm release reads its keys from (delivered by External Secrets). */
export const SLURM_KEY_SECRETS = {
  slurm: { name: "slurm-auth-slurm", key: "slurm.key" },
  jwt: { name: "slurm-auth-jwt", key: "jwt.key" },
} as const;

/** SSM parameters of a tenant cluster: the join secret, the full join token, the kubeconfig. */
export function clusterParameterNames(environment: string, tenantId: string): { agentToken: string; agentJoin: string; kubeconfig: string; argocdManager: string; serverFiles: string } {
  const base = `${tenantParameterPath(environment, tenantId)}/k3s`;
  return { agentToken: `${base}/agent-token`, agentJoin: `${base}/agent-join`, kubeconfig: `${base}/kubeconfig`, argocdManager: `${base}/argocd-manager`, serverFiles: `${base}/server-files` };
}
