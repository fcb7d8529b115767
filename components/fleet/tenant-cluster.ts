/**
 * Fleet files of a tenant's own cluster (GitOps Bridge: the tenant stack writes the cloud
 * facts, ArgoCD does the rest): Cilium, Karpenter and its EC2NodeClass and NodePools, the
 * Slinky `slurm` release in hybrid mode with one NodeSet per shape x size, External
 * Secrets delivering the tenant's Slurm keys from central, and the edge-agent. Pure: the
 * same facts give byte-identical files.
 */
import { SHAPE_FAMILIES } from "../../facts/shapes";
import {
  EDGE_AGENT_IMAGE, EFS_MOUNT_PATH, KARPENTER_DISCOVERY_TAG, SHAPE_LABEL, SLURM_KEY_SECRETS, TAINTS, TENANT_NAMESPACES, WORKER_NODE,
} from "../../facts/tenant-cluster";
import { SERVER_HOST_PORTS } from "../../facts/tenant-cluster";
import { K3S_API_PORT, SLURM_PORTS } from "../../facts/contract";
import { LABEL_KEYS, stackTags } from "../../facts/project";
import { al2023AmiParameter } from "../../facts/versions";
import type { NodeSetPlan } from "../tenant/sizing";
import type { TenantUser } from "../../config/users";
import { identityPodParts, usersConfigMap, usersDigest } from "../identity/passwd";
import type { IClusterRole as ClusterRole } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole";
import type { IClusterRoleBinding as ClusterRoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding";
import type { IServiceAccount as ServiceAccount } from "kubernetes-models/v1/ServiceAccount";
import type { INamespace as Namespace } from "kubernetes-models/v1/Namespace";
import type { IService as Service } from "kubernetes-models/v1/Service";
import type { IEndpointSlice as EndpointSlice } from "kubernetes-models/discovery.k8s.io/v1/EndpointSlice";
import { ARGOCD_MANAGER, nodeSetObjectName, SLINKY_IMAGES, slurmctldServiceAddress } from "../../facts/fleet";
import { externalSecret, secretStore, type StoreArgs } from "./external-secrets";
import type { FleetFileSet } from "./writer";
import { yamlFile } from "./yaml-file";

/** Everything the tenant stack resolved that the cluster's add-ons need. */
export interface TenantClusterFacts {
  readonly environment: string;
  readonly tenantId: string;
  readonly clusterName: string;
  readonly region: string;
  /** The K3s server's private address (API endpoint for Karpenter, Cilium and agents). */
  readonly serverAddress: string;
  /** One range covering the tenant and central VPCs: pod traffic to it is never SNATed. */
  readonly nativeRoutingCidr: string;
  readonly karpenter: { readonly interruptionQueueName: string; readonly instanceProfileName: string };
  /** The workers' user data (EC2NodeClass, used as is). */
  readonly workerUserData: string;
  /** The stack key: worker root volumes. */
  readonly kmsKeyArn: string;
  readonly nodeSets: readonly NodeSetPlan[];
  /** This tenant's slurmctld on central, as slurmd reaches it across the peering: the central host and the tenant's NodePort. */
  readonly slurmctld: { readonly host: string; readonly port: number };
  /** The Slurm keys in central's Secrets Manager, by ARN (cross-account reads need it). */
  readonly keySecretArns: { readonly slurm: string; readonly jwt: string };
  readonly centralRegion: string;
  readonly externalSecretsRoleArn: string;
  readonly edgeAgent: { readonly roleArn: string; readonly heartbeatEndpoint: string; readonly heartbeatCaPem: string };
  /** The tenant's users: every slurmd pod and the jobs it runs know them by name. */
  readonly users: readonly TenantUser[];
}

/** Folder of a tenant's cluster fleet. */
export function tenantClusterFleetPath(environment: string, tenantId: string): string {
  return `fleet/tenants/${environment}/${tenantId}/cluster`;
}

/** Pods of the platform run on the server (the control-plane node), never on workers. */
const ON_SERVER = { "node-role.kubernetes.io/control-plane": "true" };

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
  };
}

/** The tenant's own Cilium values: its cluster, its subnets, its address ranges. */
export function ciliumValues(f: TenantClusterFacts): Record<string, unknown> {
  return {
    cluster: { name: f.clusterName },
    // ENIs for pods come from the private subnets only (the server sits in the NAT subnet).
    eni: { subnetTagsFilter: [`${KARPENTER_DISCOVERY_TAG}=${f.clusterName}`] },
    // Covers the tenant and central VPCs: slurmd registers with its pod address, not a SNATed one.
    ipv4NativeRoutingCIDR: f.nativeRoutingCidr,
    k8sServiceHost: f.serverAddress,
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

/** The tenant's own Karpenter settings. */
export function karpenterValues(f: TenantClusterFacts): Record<string, unknown> {
  return {
    settings: {
      clusterName: f.clusterName,
      // Off EKS: without it Karpenter calls eks:DescribeCluster at start-up and exits.
      clusterEndpoint: `https://${f.serverAddress}:${K3S_API_PORT}`,
      interruptionQueue: f.karpenter.interruptionQueueName,
    },
  };
}

/** Karpenter's view of the workers: images, user data, disks, IMDS, reservations. */
export function workerNodeClass(f: TenantClusterFacts): Record<string, unknown> {
  const w = WORKER_NODE;
  return {
    apiVersion: "karpenter.k8s.aws/v1",
    kind: "EC2NodeClass",
    metadata: { name: "slurm-workers" },
    spec: {
      // Custom: the user data is used as is; AL2023 would need eks:DescribeCluster.
      amiFamily: "Custom",
      amiSelectorTerms: [{ ssmParameter: al2023AmiParameter("arm64") }, { ssmParameter: al2023AmiParameter("x86_64") }],
      instanceProfile: f.karpenter.instanceProfileName,
      subnetSelectorTerms: [{ tags: { [KARPENTER_DISCOVERY_TAG]: f.clusterName } }],
      securityGroupSelectorTerms: [{ tags: { [KARPENTER_DISCOVERY_TAG]: f.clusterName } }],
      associatePublicIPAddress: false,
      // Hop limit 1: slurmd pods (and so jobs) cannot take the node role from IMDS.
      metadataOptions: { httpEndpoint: "enabled", httpProtocolIPv6: "disabled", httpPutResponseHopLimit: 1, httpTokens: "required" },
      blockDeviceMappings: [
        { deviceName: "/dev/xvda", ebs: { volumeSize: `${w.rootVolumeGiB}Gi`, volumeType: "gp3", encrypted: true, kmsKeyID: f.kmsKeyArn, deleteOnTermination: true } },
      ],
      kubelet: {
        maxPods: w.maxPods,
        kubeReserved: { cpu: `${w.kubeReserved.cpuMillis}m`, memory: `${w.kubeReserved.memoryMiB}Mi` },
        systemReserved: { cpu: `${w.systemReserved.cpuMillis}m`, memory: `${w.systemReserved.memoryMiB}Mi` },
        evictionHard: { "memory.available": `${w.evictionHardMemoryMiB}Mi` },
      },
      tags: stackTags(f.environment, "tenant", f.tenantId),
      userData: f.workerUserData,
    },
  };
}

/**
 * One NodePool per shape: its instance category, the shape's sizes, the capacity type
 * (a Spot shape also allows on-demand: Karpenter launches Spot first and falls back to
 * on-demand when Spot has no capacity), a limit from maxNodes, emptiness-only
 * consolidation (a busy node is never consolidated away), Cilium's startup taint and a
 * taint only slurmd pods tolerate.
 */
export function workerNodePools(f: TenantClusterFacts): Record<string, unknown>[] {
  const shapes = [...new Map(f.nodeSets.map((n) => [n.shape.name, n.shape])).values()];
  return shapes.map((shape) => {
    const largest = Math.max(...shape.sizes);
    return {
      apiVersion: "karpenter.sh/v1",
      kind: "NodePool",
      metadata: { name: shape.name },
      spec: {
        template: {
          metadata: { labels: { [SHAPE_LABEL]: shape.name } },
          spec: {
            nodeClassRef: { group: "karpenter.k8s.aws", kind: "EC2NodeClass", name: "slurm-workers" },
            requirements: [
              { key: "karpenter.k8s.aws/instance-category", operator: "In", values: [SHAPE_FAMILIES[shape.memoryPerCpuGiB].category] },
              { key: "karpenter.k8s.aws/instance-cpu", operator: "In", values: shape.sizes.map(String) },
              { key: "karpenter.k8s.aws/instance-generation", operator: "Gt", values: ["5"] },
              { key: "kubernetes.io/arch", operator: "In", values: ["arm64", "amd64"] },
              { key: "karpenter.sh/capacity-type", operator: "In", values: shape.capacityType === "spot" ? ["spot", "on-demand"] : ["on-demand"] },
            ],
            taints: [asTaint(TAINTS.slurmdOnly)],
            startupTaints: [asTaint(TAINTS.ciliumNotReady)],
            expireAfter: "Never",
          },
        },
        disruption: { consolidationPolicy: "WhenEmpty", consolidateAfter: "10m" },
        limits: { cpu: String(shape.maxNodes * largest) },
      },
    };
  });
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
      logfile: { image: { repository: "docker.io/library/alpine", tag: "3.22" } },
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
          podSpec: { nodeSelector: { [SHAPE_LABEL]: n.shape.name, "karpenter.k8s.aws/instance-cpu": String(n.vcpus) } },
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

/**
 * slurmctld's name from central, resolvable here: a namespace and a selector-less Service
 * named as central's, on 6817, whose one endpoint is the central host on this tenant's
 * NodePort. Cilium translates the address at connect time, so the packet leaves with the
 * slurmd pod's own address (the peering is inside the native-routing range: no SNAT), and
 * slurmctld records the address it can call back on 6818.
 */
export function slurmctldObjects(f: TenantClusterFacts): unknown[] {
  const { name, namespace } = slurmctldServiceAddress(f.tenantId);
  const port = { name: "slurmctld", protocol: "TCP" as const };
  const ns: Namespace = { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace, labels: { [LABEL_KEYS.tenant]: f.tenantId } } };
  const service: Service = {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace },
    spec: { type: "ClusterIP", ports: [{ ...port, port: SLURM_PORTS.slurmctld, targetPort: f.slurmctld.port }] },
  };
  const endpoints: EndpointSlice = {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    // The service-name label binds it to the Service; managed-by keeps Kubernetes' own controller off it.
    metadata: { name: `${name}-central`, namespace, labels: { "kubernetes.io/service-name": name, "endpointslice.kubernetes.io/managed-by": "fleet.clusterra.io" } },
    addressType: "IPv4",
    ports: [{ ...port, port: f.slurmctld.port }],
    endpoints: [{ addresses: [f.slurmctld.host], conditions: { ready: true } }],
  };
  return [ns, service, endpoints];
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

/** The store and the two ExternalSecrets that deliver central's keys for this tenant. */
export function slurmKeyObjects(f: TenantClusterFacts): unknown[] {
  const store: StoreArgs = { name: "central-slurm-keys", namespace: TENANT_NAMESPACES.slurm, region: f.centralRegion, roleArn: f.externalSecretsRoleArn };
  const ids = Object.keys(SLURM_KEY_SECRETS) as (keyof typeof SLURM_KEY_SECRETS)[];
  return [secretStore(store), ...ids.map((id) => externalSecret({ store, target: SLURM_KEY_SECRETS[id].name, key: SLURM_KEY_SECRETS[id].key, remoteKey: f.keySecretArns[id] }))];
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
    { apiGroups: ["admissionregistration.k8s.io"], resources: ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"], verbs },
    { apiGroups: ["scheduling.k8s.io"], resources: ["priorityclasses"], verbs },
    { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "list", "watch"] },
    { apiGroups: ["karpenter.sh", "karpenter.k8s.aws", "slinky.slurm.net", "external-secrets.io", "cilium.io"], resources: ["*"], verbs },
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

/** The edge-agent as every tenant runs it: on the server's host network, scaling NodeSets of the slurm namespace. */
export function edgeAgentSharedValues(): Record<string, unknown> {
  return { image: { ...EDGE_AGENT_IMAGE }, hostNetwork: true, nodeSelector: ON_SERVER, nodeSets: { namespace: TENANT_NAMESPACES.slurm } };
}

/** The tenant's own edge-agent values: who it is, whom it reports to, which NodeSets it may scale. */
export function edgeAgentValues(f: TenantClusterFacts): Record<string, unknown> {
  return {
    clusterName: f.clusterName,
    tenantId: f.tenantId,
    heartbeatEndpoint: f.edgeAgent.heartbeatEndpoint,
    heartbeatCaPem: f.edgeAgent.heartbeatCaPem,
    aws: { region: f.region, roleArn: f.edgeAgent.roleArn },
    // What the scaling loop may change, and nothing else: these NodeSets' scale.
    nodeSets: { names: f.nodeSets.map((n) => nodeSetObjectName(n.name)).sort() },
  };
}

export function tenantClusterFleetFiles(f: TenantClusterFacts): FleetFileSet {
  const dir = tenantClusterFleetPath(f.environment, f.tenantId);
  const source = `pulumi up -s tenant-${f.tenantId}-${f.environment}`;
  return {
    [`${dir}/values/cilium.yaml`]: yamlFile(source, ciliumValues(f)),
    [`${dir}/values/karpenter.yaml`]: yamlFile(source, karpenterValues(f)),
    [`${dir}/values/slurm.yaml`]: yamlFile(source, slurmValues(f)),
    [`${dir}/values/edge-agent.yaml`]: yamlFile(source, edgeAgentValues(f)),
    [`${dir}/manifests/karpenter-nodeclass.yaml`]: yamlFile(source, workerNodeClass(f)),
    [`${dir}/manifests/karpenter-nodepools.yaml`]: yamlFile(source, ...workerNodePools(f)),
    [`${dir}/manifests/slurm-keys.yaml`]: yamlFile(source, ...slurmKeyObjects(f)),
    [`${dir}/manifests/users.yaml`]: yamlFile(source, tenantUsers(f)),
    [`${dir}/manifests/slurmctld.yaml`]: yamlFile(source, ...slurmctldObjects(f)),
  };
}

