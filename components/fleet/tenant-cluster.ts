/**
 * Fleet files of a tenant's own cluster (GitOps Bridge: the tenant stack writes the cloud
 * facts, ArgoCD does the rest): Cilium, Karpenter and its EC2NodeClass and NodePools, the
 * Slinky `slurm` release in hybrid mode with one NodeSet per shape x size, External
 * Secrets delivering the tenant's Slurm keys from central, and the edge-agent. Pure: the
 * same facts give byte-identical files.
 */
import { heartbeatSigning, type HeartbeatScope } from "./heartbeat";
import { clusterParameterNames, EDGE_AGENT_IMAGE, EFS_MOUNT_PATH, KARPENTER_DISCOVERY_TAG, KARPENTER_LABELS, SHAPE_LABEL, SLURM_KEY_SECRETS, TAINTS, TENANT_NAMESPACES, tenantNodeLabels, WORKER_NODE } from "../../facts/tenant-cluster";
import { SERVER_HOST_PORTS, SERVER_NODE_LABEL, SLINKY_API_GROUP, SLURM_CLUSTER_NAME_POLICY } from "../../facts/tenant-cluster";
import { K3S_API_PORT, SLURM_PORTS } from "../../facts/contract";
import { LABEL_KEYS, stackTags } from "../../facts/project";
import { al2023AmiParameter } from "../../facts/versions";
import type { NodeSetPlan } from "../../config/sizing";
import type { TenantUser } from "../../config/users";
import { identityPodParts, MERGE_SCRIPT_KEY, usersConfigMap, usersDigest } from "../identity/passwd";
import { agentUserData } from "../host/tenant-cloud-init";
import type { TenantCloudFacts } from "./facts";
import type { IClusterRole as ClusterRole } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole";
import type { IClusterRoleBinding as ClusterRoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding";
import type { IServiceAccount as ServiceAccount } from "kubernetes-models/v1/ServiceAccount";
import { ARGOCD_MANAGER, nodeSetObjectName, SLINKY_IMAGES, slurmctldServiceAddress, tenantFleetPath } from "../../facts/fleet";
import { externalSecret } from "./external-secrets";
import type { FleetFileSet } from "./writer";
import { yamlFile } from "./yaml-file";

/**
 * What the cluster's add-ons' derived files are written from: the tenant's configuration
 * only. Its cloud facts reach the charts at sync time (its facts file, its cluster Secret).
 */
export interface TenantClusterFacts {
  readonly environment: string;
  /** Its central's scope (facts/project.ts centralScope): the tenant's fleet folder is under it. */
  readonly scope: string;
  readonly tenantId: string;
  readonly clusterName: string;
  readonly region: string;
  /** One range covering the tenant and central VPCs: pod traffic to it is never SNATed. */
  readonly nativeRoutingCidr: string;
  /** The K3s release the workers join with (their user data installs it). */
  readonly k3sVersion: string;
  readonly nodeSets: readonly NodeSetPlan[];
  readonly centralRegion: string;
  /** The tenant's users: every slurmd pod and the jobs it runs know them by name. */
  readonly users: readonly TenantUser[];
}

/** Folder of a tenant's cluster fleet. */
export function tenantClusterFleetPath(scope: string, tenantId: string): string {
  return `${tenantFleetPath(scope, tenantId)}/cluster`;
}

/** Karpenter's well-known label of an instance's vCPUs: a NodePool's sizes, a NodeSet's node selector. */
const INSTANCE_CPU_LABEL = KARPENTER_LABELS.cpu;

/** Pods of the platform run on the server (the control-plane node), never on workers. */
const ON_SERVER = SERVER_NODE_LABEL;

const asTaint = (t: { key: string; value: string; effect: string }) => ({ key: t.key, value: t.value, effect: t.effect });
const toleration = (t: { key: string; effect: string }) => ({ key: t.key, operator: "Exists", effect: t.effect });

/** Cilium as every tenant runs it: ENI IPAM, native routing, no kube-proxy. */
export function ciliumSharedValues(): Record<string, unknown> {
  return {
    eni: { enabled: true },
    ipam: { mode: "eni" },
    routingMode: "native",
    enableIPv4Masquerade: true,
    bpf: { masquerade: true },
    kubeProxyReplacement: true,
    k8sServicePort: K3S_API_PORT,
    operator: { replicas: 1, nodeSelector: ON_SERVER },
    resources: { requests: { cpu: `${WORKER_NODE.daemonSetRequests.cpuMillis}m`, memory: `${WORKER_NODE.daemonSetRequests.memoryMiB}Mi` } },
    // Hubble's CA and server certificate made once in the cluster by the chart's certgen Job
    // (renewed by its CronJob), not by Helm: the chart's default (helm) draws a new CA at every
    // render, so ArgoCD saw cilium-ca and hubble-server-certs OutOfSync after every refresh and
    // self-heal rotated them each time (the journey, real ArgoCD v3.4.4).
    hubble: { tls: { auto: { method: "cronJob" } } },
  };
}

/** The tenant's own Cilium values: its cluster, its subnets, its address ranges. */
export function ciliumValues(f: TenantClusterFacts): Record<string, unknown> {
  // Its cluster's name and API server's address are Helm parameters from the cluster Secret (TENANT_ADD_ONS).
  return {
    // ENIs for pods come from the private subnets only (the server sits in the NAT subnet).
    eni: { subnetTagsFilter: [`${KARPENTER_DISCOVERY_TAG}=${f.clusterName}`] },
    // Covers the tenant and central VPCs: slurmd registers with its pod address, not a SNATed one.
    ipv4NativeRoutingCIDR: f.nativeRoutingCidr,
  };
}

/** Karpenter as every tenant runs it: one replica on the server, on its host network. */
export function karpenterSharedValues(): Record<string, unknown> {
  return {
    replicas: 1,
    // IMDS hop limit 1 on the server: only host-network pods reach the node role.
    hostNetwork: true,
    dnsPolicy: "Default",
    nodeSelector: ON_SERVER,
    // The chart spreads its replicas over topology.kubernetes.io/zone (DoNotSchedule), a label
    // K3s's server node does not carry: with one replica on one node there is nothing to spread.
    topologySpreadConstraints: [],
    controller: { resources: { requests: { cpu: "100m", memory: "512Mi" }, limits: { memory: "1Gi" } } },
  };
}

/** A value Helm fills in at sync time (`tpl`): a key of the tenant's facts file or of its own values. */
const atSync = (key: keyof TenantCloudFacts | keyof ReturnType<typeof clusterManifestsValues>) => `{{ required "${key}" .Values.${key} }}`;

/**
 * The workers' user data for every tenant, as a Helm template: the agents' cloud-config
 * with `{{ required "<key>" .Values.<key> }}` where a tenant's value or fact goes (the chart's
 * values.schema.json holds each to its pattern). The K3s release also goes
 * into the install script's URL, escaped there (urlquery, as the URL builder escapes it).
 */
function workerUserDataTemplate(): string {
  const version = atSync("k3sVersion");
  const text = agentUserData({
    k3sVersion: version,
    region: atSync("region"),
    kmsKeyArn: atSync("kmsKeyArn"),
    efs: { fileSystemId: atSync("fileSystemId"), accessPointId: atSync("accessPointId") },
    nodeLabels: tenantNodeLabels(atSync("tenantId"), "worker"),
    serverAddress: atSync("serverAddress"),
    agentJoinParameter: clusterParameterNames(atSync("environment"), atSync("tenantId")).agentJoin,
  }).replaceAll(encodeURIComponent(version), `{{ required "k3sVersion" .Values.k3sVersion | urlquery }}`);
  if (text.includes(encodeURIComponent("{{"))) throw new Error("the workers' user data escapes a Helm placeholder that is not the K3s release: fill it in as urlquery does");
  return text;
}

/** The worker NodeClass's name (every NodePool points at it). */
const WORKER_NODE_CLASS = "slurm-workers";

/**
 * What the cluster-manifests chart (fleet/charts/tenant-cluster) reads alike for every
 * tenant: the facts/ tables its EC2NodeClass, NodePools, key delivery, users and slurmctld
 * Service are made of, and the workers' boot script as one template whose tenant values
 * and facts Helm fills in at sync time.
 */
export function clusterManifestsSharedValues(): Record<string, unknown> {
  const w = WORKER_NODE;
  const keyStore = { name: "central-slurm-keys", namespace: TENANT_NAMESPACES.slurm, region: "", roleArn: "" };
  // How every ExternalSecret of the fleet refreshes and keeps its Secret (external-secrets.ts).
  const { refreshInterval, target } = externalSecret({ store: keyStore, target: "", key: "", remoteKey: "" }).spec ?? {};
  const users = usersConfigMap(TENANT_NAMESPACES.slurm, [], EFS_MOUNT_PATH);
  return {
    nodeClass: {
      name: WORKER_NODE_CLASS,
      discoveryTag: KARPENTER_DISCOVERY_TAG,
      spec: {
        // Custom: the user data is used as is; AL2023 would need eks:DescribeCluster.
        amiFamily: "Custom",
        amiSelectorTerms: [{ ssmParameter: al2023AmiParameter("arm64") }, { ssmParameter: al2023AmiParameter("x86_64") }],
        associatePublicIPAddress: false,
        // Hop limit 1: slurmd pods (and so jobs) cannot take the node role from IMDS.
        metadataOptions: { httpEndpoint: "enabled", httpProtocolIPv6: "disabled", httpPutResponseHopLimit: 1, httpTokens: "required" },
        kubelet: {
          maxPods: w.maxPods,
          kubeReserved: { cpu: `${w.kubeReserved.cpuMillis}m`, memory: `${w.kubeReserved.memoryMiB}Mi` },
          systemReserved: { cpu: `${w.systemReserved.cpuMillis}m`, memory: `${w.systemReserved.memoryMiB}Mi` },
          evictionHard: { "memory.available": `${w.evictionHardMemoryMiB}Mi` },
        },
      },
      // The stack key encrypts it (kmsKeyID, from the facts).
      rootVolume: { deviceName: "/dev/xvda", ebs: { volumeSize: `${w.rootVolumeGiB}Gi`, volumeType: "gp3", encrypted: true, deleteOnTermination: true } },
      userData: workerUserDataTemplate(),
    },
    // Each shape's pool: emptiness-only consolidation (a busy node is never consolidated
    // away), Cilium's startup taint, and a taint only slurmd pods tolerate.
    nodePool: {
      shapeLabel: SHAPE_LABEL,
      keys: { category: KARPENTER_LABELS.category, cpu: INSTANCE_CPU_LABEL, capacityType: KARPENTER_LABELS.capacityType },
      template: {
        nodeClassRef: { group: "karpenter.k8s.aws", kind: "EC2NodeClass", name: WORKER_NODE_CLASS },
        taints: [asTaint(TAINTS.slurmdOnly)],
        startupTaints: [asTaint(TAINTS.ciliumNotReady)],
        expireAfter: "Never",
      },
      requirements: [
        { key: KARPENTER_LABELS.generation, operator: "Gt", values: ["5"] },
        { key: "kubernetes.io/arch", operator: "In", values: ["arm64", "amd64"] },
      ],
      disruption: { consolidationPolicy: "WhenEmpty", consolidateAfter: "10m" },
    },
    slurmKeys: {
      store: keyStore.name,
      namespace: keyStore.namespace,
      spec: { refreshInterval },
      target: { creationPolicy: target?.creationPolicy, deletionPolicy: target?.deletionPolicy },
      secrets: (Object.keys(SLURM_KEY_SECRETS) as (keyof typeof SLURM_KEY_SECRETS)[]).map((fact) => ({ fact, ...SLURM_KEY_SECRETS[fact] })),
    },
    usersConfigMap: { name: users.metadata?.name, namespace: users.metadata?.namespace, mergeScriptKey: MERGE_SCRIPT_KEY, mergeScript: users.data?.[MERGE_SCRIPT_KEY] },
    controllerService: { name: slurmctldServiceAddress("").name, port: SLURM_PORTS.slurmctld, tenantLabel: LABEL_KEYS.tenant, managedBy: "fleet.clusterra.io" },
    // The policy that gives the slurm release's external Controller central's cluster name (templates/slurm-cluster-name.yaml).
    slurmClusterName: { policy: SLURM_CLUSTER_NAME_POLICY, namespace: TENANT_NAMESPACES.slurm, group: SLINKY_API_GROUP, resource: "controllers" },
  };
}

/**
 * The tenant's own values of the cluster-manifests chart: who it is, its regions and K3s
 * release, its tags, one entry per shape (the NodePool's category, sizes, capacity types and
 * CPU limit; a Spot shape also allows on-demand: Karpenter launches Spot first and falls back
 * when Spot has no capacity). Its users come from its users file, its cloud facts from its
 * facts file.
 */
export function clusterManifestsValues(f: TenantClusterFacts) {
  const shapes = [...new Map(f.nodeSets.map((n) => [n.shape.name, n])).values()];
  return {
    tenantId: f.tenantId,
    environment: f.environment,
    clusterName: f.clusterName,
    region: f.region,
    centralRegion: f.centralRegion,
    k3sVersion: f.k3sVersion,
    controllerNamespace: slurmctldServiceAddress(f.tenantId).namespace,
    tags: stackTags(f.environment, "tenant", f.tenantId),
    shapes: shapes.map(({ shape, category }) => ({
      name: shape.name,
      category,
      sizes: shape.sizes.map(String),
      capacityTypes: shape.capacityType === "spot" ? ["spot", "on-demand"] : ["on-demand"],
      cpuLimit: String(shape.maxNodes * Math.max(...shape.sizes)),
    })),
  };
}

/** The tenant's users beside its NodeSets (each slurmd pod reads them at start). */
function tenantUsers(f: TenantClusterFacts) {
  return usersConfigMap(TENANT_NAMESPACES.slurm, f.users, EFS_MOUNT_PATH);
}

/**
 * The Slinky release every tenant's cluster runs: hybrid (slurmctld on central), central's
 * keys, and what every NodeSet has alike (`nodesetDefaults`, which the chart merges under
 * each NodeSet): the slurmd image, EFS, the users' init container, the slurmd-only toleration.
 */
export function slurmSharedValues(): Record<string, unknown> {
  const identity = identityPodParts(SLINKY_IMAGES.slurmd, "");
  return {
    // Hybrid: slurmctld runs on central; these slurmd pull their configuration from it,
    // by the name central's slurm.conf gives it (slurmctldObjects make it resolve here).
    controller: { external: true, externalConfig: { port: SLURM_PORTS.slurmctld } },
    // Never created here: central's keys, delivered by External Secrets.
    slurmKey: { create: false, secretRef: { ...SLURM_KEY_SECRETS.slurm } },
    jwtKey: { create: false, secretRef: { ...SLURM_KEY_SECRETS.jwt } },
    restapi: { replicas: 1 },
    accounting: { enabled: false },
    nodesetDefaults: {
      enabled: true,
      // At rest: the scaling loop sets replicas; Karpenter then makes the node.
      replicas: 0,
      slurmd: { image: { ...SLINKY_IMAGES.slurmd }, volumeMounts: [{ name: "efs", mountPath: EFS_MOUNT_PATH }, ...identity.volumeMounts] },
      logfile: { image: { ...SLINKY_IMAGES.helper } },
      partition: { enabled: false },
      podSpec: {
        tolerations: [toleration(TAINTS.slurmdOnly)],
        initContainers: [identity.initContainer],
        volumes: [{ name: "efs", hostPath: { path: EFS_MOUNT_PATH, type: "Directory" } }, ...identity.volumes],
      },
    },
  };
}

/** The tenant's own Slinky values: slurmctld's name, its users' digest, one NodeSet per shape x size. */
export function slurmValues(f: TenantClusterFacts): Record<string, unknown> {
  const identity = identityPodParts(SLINKY_IMAGES.slurmd, usersDigest(tenantUsers(f)));
  const nodesets = Object.fromEntries(
    f.nodeSets.map((n) => {
      const resources = { cpu: `${n.request.cpuMillis}m`, memory: `${n.request.memoryMiB}Mi` };
      return [
        n.name,
        {
          // Requests = limits: one pod fills one worker, and slurmd reports them as its CPUs and memory.
          slurmd: { resources: { requests: resources, limits: resources } },
          extraConfMap: { Features: [n.shape.name, n.name] },
          podSpec: { nodeSelector: { [SHAPE_LABEL]: n.shape.name, [INSTANCE_CPU_LABEL]: String(n.vcpus) } },
        },
      ];
    }),
  );
  return {
    controller: { externalConfig: { host: slurmctldServiceAddress(f.tenantId).host } },
    // A new user list restarts every slurmd pod (their passwd is read at start).
    nodesetDefaults: { metadata: { annotations: identity.annotations } },
    nodesets,
  };
}

export function externalSecretsValues(): Record<string, unknown> {
  return {
    // The controller takes the server's instance credentials (host network, hop limit 1)
    // and assumes its own role for every read (the SecretStore's `role`).
    hostNetwork: true,
    nodeSelector: ON_SERVER,
    // On the host network its metrics port is a host port, and Karpenter's is the chart
    // default 8080 on the same server: each takes its own (facts/tenant-cluster.ts).
    metrics: { listen: { port: SERVER_HOST_PORTS.externalSecretsMetrics } },
    webhook: { nodeSelector: ON_SERVER },
    certController: { nodeSelector: ON_SERVER },
  };
}

export function slurmOperatorValues(): Record<string, unknown> {
  return {
    // No cert-manager on a 4 GiB server: the chart makes its webhook CA (ArgoCD ignores that diff).
    certManager: { enabled: false },
    operator: { nodeSelector: ON_SERVER, resources: { requests: { cpu: "50m", memory: "128Mi" }, limits: { memory: "512Mi" } } },
    webhook: { nodeSelector: ON_SERVER },
  };
}

/**
 * The account central ArgoCD acts as here (push). Its rights are what the add-ons'
 * charts create: workloads and their config in any namespace, the cluster-scoped kinds
 * of the tenant's cluster AppProject, and `escalate`/`bind` because those charts grant
 * RBAC of their own. No pods/exec, no nodes/proxy, no certificate signing.
 */
export function argocdManagerObjects(): unknown[] {
  const meta = { name: ARGOCD_MANAGER.serviceAccount };
  const verbs = ["get", "list", "watch", "create", "update", "patch", "delete"];
  const rules = [
    { apiGroups: [""], resources: ["namespaces", "configmaps", "secrets", "services", "serviceaccounts", "persistentvolumeclaims", "pods", "endpoints", "events"], verbs },
    { apiGroups: ["apps"], resources: ["deployments", "daemonsets", "statefulsets", "replicasets"], verbs },
    { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs },
    { apiGroups: ["batch"], resources: ["jobs", "cronjobs"], verbs },
    { apiGroups: ["policy"], resources: ["poddisruptionbudgets"], verbs },
    { apiGroups: ["rbac.authorization.k8s.io"], resources: ["roles", "rolebindings", "clusterroles", "clusterrolebindings"], verbs: [...verbs, "escalate", "bind"] },
    { apiGroups: ["apiextensions.k8s.io"], resources: ["customresourcedefinitions"], verbs },
    { apiGroups: ["admissionregistration.k8s.io"], resources: ["mutatingwebhookconfigurations", "validatingwebhookconfigurations", "mutatingadmissionpolicies", "mutatingadmissionpolicybindings"], verbs },
    { apiGroups: ["scheduling.k8s.io"], resources: ["priorityclasses"], verbs },
    { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "list", "watch"] },
    { apiGroups: ["karpenter.sh", "karpenter.k8s.aws", SLINKY_API_GROUP, "external-secrets.io", "cilium.io"], resources: ["*"], verbs },
  ];
  const account: ServiceAccount = { apiVersion: "v1", kind: "ServiceAccount", metadata: { ...meta, namespace: ARGOCD_MANAGER.namespace } };
  const role: ClusterRole = { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: meta, rules };
  const binding: ClusterRoleBinding = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: meta,
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: meta.name },
    subjects: [{ kind: "ServiceAccount", name: meta.name, namespace: ARGOCD_MANAGER.namespace }],
  };
  return [account, role, binding];
}

/**
 * The same objects as one JSON List, as the server applies them at bootstrap (it reads them
 * from an SSM parameter the tenant stack writes, never from its user data): compact, within
 * SSM's Standard tier. Pure.
 */
export function argocdManagerManifest(): string {
  return JSON.stringify({ apiVersion: "v1", kind: "List", items: argocdManagerObjects() });
}

/** The edge-agent as every tenant runs it: on the server's host network, scaling NodeSets of the slurm namespace. */
export function edgeAgentSharedValues(heartbeat: HeartbeatScope): Record<string, unknown> {
  // How its heartbeats prove the tenant: signed with its own role for central's STS (components/fleet/heartbeat.ts).
  return { image: { ...EDGE_AGENT_IMAGE }, hostNetwork: true, nodeSelector: ON_SERVER, nodeSets: { namespace: TENANT_NAMESPACES.slurm }, heartbeat: heartbeatSigning(heartbeat) };
}

/** The tenant's own edge-agent values: who it is and which NodeSets it may scale (its role and cluster-api's endpoint and CA are read from its facts file). */
export function edgeAgentValues(f: TenantClusterFacts): Record<string, unknown> {
  return {
    clusterName: f.clusterName,
    tenantId: f.tenantId,
    aws: { region: f.region },
    // What the scaling loop may change, and nothing else: these NodeSets' scale.
    nodeSets: { names: f.nodeSets.map((n) => nodeSetObjectName(n.name)).sort() },
  };
}

export function tenantClusterFleetFiles(f: TenantClusterFacts): FleetFileSet {
  const dir = tenantClusterFleetPath(f.scope, f.tenantId);
  const source = `stack tenant-${f.tenantId}-${f.environment}`;
  return {
    [`${dir}/values/cilium.yaml`]: yamlFile(source, ciliumValues(f)),
    [`${dir}/values/slurm.yaml`]: yamlFile(source, slurmValues(f)),
    [`${dir}/values/edge-agent.yaml`]: yamlFile(source, edgeAgentValues(f)),
    [`${dir}/values/cluster-manifests.yaml`]: yamlFile(source, clusterManifestsValues(f)),
  };
}

