/**
 * How ArgoCD reaches one tenant: central's entry for it (its namespace, its two
 * AppProjects, its app-of-apps, the credentials of its cluster through External Secrets)
 * and the Applications in the tenant's folder, every one confined to its project.
 */
import { LABEL_KEYS } from "../../facts/project";
import type { INamespace as Namespace } from "kubernetes-models/v1/Namespace";
import { CHARTS } from "../../facts/charts";
import { K3S_API_PORT } from "../../facts/contract";
import {
  LOCAL_CHARTS, SLURM_RELEASE, tenantEntryPath, tenantFleetPath, tenantNamespace, tenantProject,
} from "../../facts/fleet";
import { TENANT_NAMESPACES } from "../../facts/tenant-cluster";
import { ARGOCD_CHART, ARGOCD_IN_CLUSTER, PLATFORM_PROJECT } from "../../facts/versions";
import { application, appProject, helmRepoUrl, type AppArgs, type FleetRepo } from "./argo";
import { controlPlanePath } from "./control-plane";
import { externalSecret, secretStore } from "./external-secrets";
import { tenantClusterFleetPath } from "./tenant-cluster";

export interface TenantAppsFacts {
  readonly environment: string;
  readonly tenantId: string;
  readonly clusterName: string;
  readonly repo: FleetRepo;
  /** The tenant's K3s API across the peering (push: central ArgoCD syncs it). */
  readonly serverAddress: string;
  /** Central's region (the cluster credential's secret). */
  readonly centralRegion: string;
  /** The role central reads this tenant's secrets with. */
  readonly secretsRoleArn: string;
  /** Secrets Manager name of the cluster credential (`{"bearerToken", "caData"}`). */
  readonly clusterCredentialSecret: string;
}

/** The customer cluster's API as ArgoCD names it. */
export function tenantClusterServer(serverAddress: string): string {
  return `https://${serverAddress}:${K3S_API_PORT}`;
}

/** Project of the customer cluster's Applications (its own cluster, any namespace there). */
export function tenantClusterProject(tenantId: string): string {
  return `${tenantProject(tenantId)}-cluster`;
}

/**
 * Cluster-scoped kinds the add-ons of a customer cluster create (CRDs, their RBAC and
 * webhooks, Karpenter's pools): nothing else, and nothing at all on central.
 */
export const TENANT_CLUSTER_RESOURCES = [
  { group: "", kind: "Namespace" },
  { group: "apiextensions.k8s.io", kind: "CustomResourceDefinition" },
  { group: "rbac.authorization.k8s.io", kind: "ClusterRole" },
  { group: "rbac.authorization.k8s.io", kind: "ClusterRoleBinding" },
  { group: "admissionregistration.k8s.io", kind: "MutatingWebhookConfiguration" },
  { group: "admissionregistration.k8s.io", kind: "ValidatingWebhookConfiguration" },
  { group: "scheduling.k8s.io", kind: "PriorityClass" },
  { group: "karpenter.sh", kind: "NodePool" },
  { group: "karpenter.k8s.aws", kind: "EC2NodeClass" },
] as const;

const applicationsPath = (environment: string, tenantId: string) => `${tenantFleetPath(environment, tenantId)}/applications`;

/** Central's file for the tenant: namespace, projects, app-of-apps, cluster credential. */
export function tenantEntryDocuments(f: TenantAppsFacts): unknown[] {
  const namespace = tenantNamespace(f.tenantId);
  const server = tenantClusterServer(f.serverAddress);
  const chartRepos = (...keys: (keyof typeof CHARTS)[]) => keys.map((k) => helmRepoUrl(CHARTS[k].repo));
  const ns: Namespace = { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace, labels: { [LABEL_KEYS.tenant]: f.tenantId } } };
  const controlPlane = appProject({
    name: tenantProject(f.tenantId),
    description: `Tenant ${f.tenantId}: its Slurm control plane, in namespace ${namespace} on central only`,
    sourceRepos: [f.repo.repoUrl, ...chartRepos("slurm")],
    destinations: [{ server: ARGOCD_IN_CLUSTER, namespace }],
    clusterResources: [],
  });
  const cluster = appProject({
    name: tenantClusterProject(f.tenantId),
    description: `Tenant ${f.tenantId}: the add-ons of its own cluster ${f.clusterName}, and nothing on central`,
    sourceRepos: [f.repo.repoUrl, ...chartRepos("cilium", "karpenter", "externalSecrets", "slurmOperatorCrds", "slurmOperator", "slurm")],
    destinations: [{ server, namespace: "*" }],
    clusterResources: TENANT_CLUSTER_RESOURCES,
  });
  const root = application({
    name: tenantProject(f.tenantId),
    project: PLATFORM_PROJECT,
    repo: f.repo,
    source: { kind: "directory", path: applicationsPath(f.environment, f.tenantId) },
    destination: { server: ARGOCD_IN_CLUSTER, namespace: ARGOCD_CHART.namespace },
    wave: "workloads",
  });
  // The cluster's credential, as ArgoCD's cluster Secret, from Secrets Manager: never in git.
  const store = { name: tenantProject(f.tenantId), namespace: ARGOCD_CHART.namespace, region: f.centralRegion, roleArn: f.secretsRoleArn };
  const credential = externalSecret({
    store,
    target: `cluster-${f.clusterName}`,
    key: "config",
    remoteKey: f.clusterCredentialSecret,
    template: {
      labels: { "argocd.argoproj.io/secret-type": "cluster", [LABEL_KEYS.tenant]: f.tenantId },
      data: {
        name: f.clusterName,
        server,
        project: tenantClusterProject(f.tenantId),
        config: '{"bearerToken": "{{ .bearerToken }}", "tlsClientConfig": {"caData": "{{ .caData }}"}}',
      },
      properties: ["bearerToken", "caData"],
    },
  });
  return [ns, controlPlane, cluster, secretStore(store), credential, root];
}

/** The tenant's Applications: two on central (its namespace), the rest on its own cluster. */
export function tenantApplications(f: TenantAppsFacts): AppArgs[] {
  const cp = controlPlanePath(f.environment, f.tenantId);
  const cl = tenantClusterFleetPath(f.environment, f.tenantId);
  const onCentral = { server: ARGOCD_IN_CLUSTER, namespace: tenantNamespace(f.tenantId) };
  const onCluster = (namespace: string) => ({ server: tenantClusterServer(f.serverAddress), namespace });
  const base = { repo: f.repo };
  const id = f.tenantId;
  const central = { ...base, project: tenantProject(id) };
  const own = { ...base, project: tenantClusterProject(id) };
  return [
    { ...central, name: `${id}-control-plane-manifests`, source: { kind: "directory", path: `${cp}/manifests` }, destination: onCentral, wave: "secrets" },
    { ...central, name: `${id}-control-plane`, releaseName: SLURM_RELEASE, source: { kind: "chart", chart: "slurm", valuesPath: `${cp}/values/slurm.yaml` }, destination: onCentral, wave: "workloads" },
    { ...own, name: `${id}-cilium`, releaseName: "cilium", source: { kind: "chart", chart: "cilium", valuesPath: `${cl}/values/cilium.yaml` }, destination: onCluster(TENANT_NAMESPACES.cilium), wave: "crds" },
    { ...own, name: `${id}-external-secrets`, releaseName: "external-secrets", source: { kind: "chart", chart: "externalSecrets", valuesPath: `${cl}/values/external-secrets.yaml` }, destination: onCluster(TENANT_NAMESPACES.externalSecrets), wave: "crds" },
    { ...own, name: `${id}-slurm-operator-crds`, releaseName: "slurm-operator-crds", source: { kind: "chart", chart: "slurmOperatorCrds", valuesPath: `${cl}/values/slurm-operator-crds.yaml` }, destination: onCluster(TENANT_NAMESPACES.slurmOperator), wave: "crds" },
    { ...own, name: `${id}-karpenter`, releaseName: "karpenter", source: { kind: "chart", chart: "karpenter", valuesPath: `${cl}/values/karpenter.yaml` }, destination: onCluster(TENANT_NAMESPACES.karpenter), wave: "operators" },
    {
      ...own,
      name: `${id}-slurm-operator`,
      releaseName: "slurm-operator",
      source: { kind: "chart", chart: "slurmOperator", valuesPath: `${cl}/values/slurm-operator.yaml` },
      destination: onCluster(TENANT_NAMESPACES.slurmOperator),
      wave: "operators",
      // Without cert-manager (no room on a 4 GiB server) the chart makes a new webhook CA on every render.
      ignoreDifferences: [
        { group: "", kind: "Secret", name: "slurm-operator-webhook-ca", jsonPointers: ["/data"] },
        { group: "admissionregistration.k8s.io", kind: "MutatingWebhookConfiguration", jsonPointers: ["/webhooks/0/clientConfig/caBundle"] },
        { group: "admissionregistration.k8s.io", kind: "ValidatingWebhookConfiguration", jsonPointers: ["/webhooks/0/clientConfig/caBundle"] },
      ],
    },
    { ...own, name: `${id}-cluster-manifests`, source: { kind: "directory", path: `${cl}/manifests` }, destination: onCluster(TENANT_NAMESPACES.slurm), wave: "secrets" },
    {
      ...own,
      name: `${id}-slurm`,
      releaseName: SLURM_RELEASE,
      source: { kind: "chart", chart: "slurm", valuesPath: `${cl}/values/slurm.yaml` },
      destination: onCluster(TENANT_NAMESPACES.slurm),
      // After the control plane on central: a Slurm upgrade reaches slurmd last.
      wave: "slurmd",
      // The scaling loop owns every NodeSet's replicas (git says 0): neither a diff nor a sync
      // may take them back.
      ignoreDifferences: [{ group: "slinky.slurm.net", kind: "NodeSet", jsonPointers: ["/spec/replicas"] }],
    },
    { ...own, name: `${id}-edge-agent`, releaseName: "edge-agent", source: { kind: "local-chart", path: LOCAL_CHARTS.edgeAgent, valuesPath: `${cl}/values/edge-agent.yaml` }, destination: onCluster(TENANT_NAMESPACES.edgeAgent), wave: "workloads" },
  ];
}

/** Central's entry and the Applications, by path. */
export function tenantAppDocuments(f: TenantAppsFacts): Record<string, unknown[]> {
  const dir = applicationsPath(f.environment, f.tenantId);
  return {
    [tenantEntryPath(f.environment, f.tenantId)]: tenantEntryDocuments(f),
    ...Object.fromEntries(tenantApplications(f).map((a) => [`${dir}/${a.name.slice(f.tenantId.length + 1)}.yaml`, [application(a)]])),
  };
}
