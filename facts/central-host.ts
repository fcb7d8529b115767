/**
 * What the central K3s host keeps for itself before any tenant's control plane
 * (facts/control-plane.ts) is scheduled: the node's overheads and every platform
 * component's reservation, each with where its figure comes from. The capacity check
 * (config/capacity.ts) derives from this table and facts/instance-types.ts.
 */
import { CENTRAL_K3S_RANGES } from "./contract";
import { RETIRING_SHARED_DNS, TENANT_DNS, type ComponentRequest } from "./control-plane";
import { ACCOUNTING_BACKUP, ACCOUNTING_DATABASE, SLURMCTLD_STATE_GIB } from "./fleet";
import { WORKER_NODE } from "./tenant-cluster";

export interface HostReservation extends ComponentRequest {
  /** Pods it runs (0: a host process). */
  readonly pods: number;
  readonly basis: string;
}

/** The node: what the kernel and hypervisor keep, and kubelet's limits (K3s defaults). */
export const CENTRAL_NODE = {
  /** Memory the instance shows less than its nominal size (Karpenter's default estimate). */
  vmMemoryOverheadPercent: WORKER_NODE.vmMemoryOverheadPercent,
  /** kubelet's default hard eviction threshold, memory.available < 100Mi. */
  evictionHardMemoryMiB: 100,
  /** kubelet's default max-pods (K3s keeps it; central runs flannel, not ENI addressing). */
  maxPods: 110,
} as const;

const ARGOCD = "argo-cd chart 10.1.1 values.yaml, its suggested requests";

/**
 * The central host's private address: this host number of its subnet (AWS keeps the first four
 * and the last), fixed and reserved (an explicit subnet CIDR reservation), so a replaced host
 * takes the same address and nothing a tenant holds (its security-group rules, its
 * slurm-controller EndpointSlice, the edge-agent's heartbeat URL, cluster-api's certificate)
 * changes on a central upgrade.
 */
export const CENTRAL_HOST_NUMBER = 10;

/**
 * ArgoCD's pods' PriorityClass on central: below every tenant's control plane (their pods take
 * the default, 0). Among pods over their requests the kubelet evicts the lower priority first,
 * and the scheduler may preempt ArgoCD for a tenant's pod; ArgoCD itself never preempts.
 */
export const ARGOCD_PRIORITY = { name: "clusterra-gitops", value: -1000 } as const;

/**
 * ArgoCD's application controller in shards (its StatefulSet's replicas; a pod's shard is its
 * ordinal): central's own cluster (every tenant's control plane, the platform) on one, every
 * tenant cluster on the other (each tenant's cluster Secret names its shard). A tenant's API
 * server decides how much the controller caches of its cluster: one that grows that cache
 * until its controller is killed stops the tenants' clusters' syncs, never central's, and so
 * never a tenant's control plane.
 */
export const ARGOCD_CONTROLLER_SHARDS = { replicas: 2, central: 0, tenantClusters: 1 } as const;

/** What one pod of a component with several takes: its reservation over its pods. */
export function perPod(r: HostReservation): HostReservation {
  return { ...r, cpuMillis: r.cpuMillis / r.pods, memoryMiB: r.memoryMiB / r.pods, pods: 1 };
}

export const CENTRAL_HOST_RESERVED: Readonly<Record<string, HostReservation>> = {
  system: { ...WORKER_NODE.systemReserved, pods: 0, basis: "AL2023 systemd, SSM agent, journald: the system reservation tenant nodes give kubelet (facts/tenant-cluster.ts)" },
  k3sServer: { cpuMillis: 60, memoryMiB: 1522, pods: 0, basis: "K3s resource profiling, server with a workload on SQLite: 1596 MB, 6% of a core (docs.k3s.io/reference/resource-profiling)" },
  coredns: { cpuMillis: 100, memoryMiB: 70, pods: 1, basis: "K3s's packaged coredns manifest requests" },
  retiringSharedDns: { cpuMillis: TENANT_DNS.request.cpuMillis * RETIRING_SHARED_DNS.replicas, memoryMiB: TENANT_DNS.request.memoryMiB * RETIRING_SHARED_DNS.replicas, pods: RETIRING_SHARED_DNS.replicas, basis: "the retiring shared tenants' DNS (components/fleet/retiring-shared-dns.ts), until the release after removes it" },
  metricsServer: { cpuMillis: 100, memoryMiB: 70, pods: 1, basis: "K3s's packaged metrics-server manifest requests" },
  localPathProvisioner: { cpuMillis: 10, memoryMiB: 32, pods: 1, basis: "K3s's packaged local-path-provisioner sets none: an estimate" },
  argocdController: { cpuMillis: 250, memoryMiB: 256, pods: ARGOCD_CONTROLLER_SHARDS.replicas, basis: `${ARGOCD}, for the one controller its ${ARGOCD_CONTROLLER_SHARDS.replicas} shards split the clusters of` },
  argocdRepoServer: { cpuMillis: 10, memoryMiB: 64, pods: 1, basis: ARGOCD },
  argocdServer: { cpuMillis: 50, memoryMiB: 64, pods: 1, basis: ARGOCD },
  argocdRedis: { cpuMillis: 100, memoryMiB: 64, pods: 1, basis: ARGOCD },
  argocdApplicationSet: { cpuMillis: 100, memoryMiB: 128, pods: 1, basis: ARGOCD },
  clusterApi: { cpuMillis: 100, memoryMiB: 128, pods: 1, basis: "fleet/charts/cluster-api/values.yaml requests (a test keeps them equal)" },
  slurmOperator: { cpuMillis: 100, memoryMiB: 1024, pods: 2, basis: "field brief §7: the Slinky operator ~1 GB (operator and webhook)" },
  mariadbOperator: { cpuMillis: 30, memoryMiB: 96, pods: 3, basis: "mariadb-operator chart 26.6.0 suggested requests, 10m/32Mi for each of controller, webhook, cert-controller" },
  certManager: { cpuMillis: 30, memoryMiB: 192, pods: 3, basis: "cert-manager v1.19.6 sets none: an estimate of 10m/64Mi for each of controller, webhook, cainjector" },
  externalSecrets: { cpuMillis: 30, memoryMiB: 96, pods: 3, basis: "external-secrets chart 2.9.0 suggested requests, 10m/32Mi for each of controller, webhook, cert-controller" },
};

/**
 * K3s's packaged CoreDNS (its coredns add-on, left on central for the platform's own pods):
 * it forwards every name it does not hold to the VPC's resolver, so no tenant pod may ask it
 * (facts/control-plane.ts TENANT_DNS is theirs, one per tenant). Its namespace, labels, port and Service address.
 */
export const K3S_CLUSTER_DNS = { namespace: "kube-system", labels: { "k8s-app": "kube-dns" }, port: 53, clusterIp: CENTRAL_K3S_RANGES.clusterDns } as const;

/**
 * K3s's packaged local-path provisioner (its local-storage add-on, left on central): its
 * default StorageClass, and the folder on the host's data volume under which it makes each
 * claim's volume (`pvc-<claim uid>_<namespace>_<claim>`). It enforces no size:
 * components/host/volume-limits.ts holds each folder to its claim's.
 */
export const K3S_LOCAL_PATH = { storageClass: "local-path", provisioner: "rancher.io/local-path", hostRoot: "/var/lib/rancher/k3s/storage" } as const;

/**
 * The host's data volume (/var/lib/rancher): the K3s datastore, the images of every pod and
 * the platform's own volumes, plus each tenant's local volumes (slurmctld's state and its
 * MariaDB). Its size follows the tenants the stack files give central, in whole steps, never
 * below the minimum; EBS grows a volume in place and the host grows its file system online.
 */
export const CENTRAL_DATA_VOLUME = {
  /** Datastore (SQLite, well under 1 GiB), container images (~10 GiB for the platform and Slinky's), logs, slack. */
  hostGiB: 30,
  minimumGiB: 100,
  stepGiB: 10,
} as const;

/** What one tenant's control plane keeps on the data volume (its three persistent volumes: slurmctld's state, MariaDB, MariaDB's backups). */
export function tenantDiskGiB(): number {
  return SLURMCTLD_STATE_GIB + ACCOUNTING_DATABASE.storageGiB + ACCOUNTING_BACKUP.storageGiB;
}

/** The data volume for `tenants` tenants. */
export function dataVolumeGiB(tenants: number): number {
  const needed = CENTRAL_DATA_VOLUME.hostGiB + tenants * tenantDiskGiB();
  return Math.max(CENTRAL_DATA_VOLUME.minimumGiB, Math.ceil(needed / CENTRAL_DATA_VOLUME.stepGiB) * CENTRAL_DATA_VOLUME.stepGiB);
}

/**
 * cluster-api's listener certificate: an environment CA valid ten years signs a server
 * certificate for one year, replaced by the first `pulumi up` in its last 30 days. ECDSA
 * P-256: what every TLS stack the agents may use verifies.
 */
export const CLUSTER_API_TLS = { curve: "P256", caValidityHours: 10 * 365 * 24, serverValidityHours: 365 * 24, serverEarlyRenewalHours: 30 * 24 } as const;
