/**
 * How ArgoCD reaches one tenant: central's entry for it (its namespace, its two AppProjects,
 * the credentials of its cluster through External Secrets, as ArgoCD's cluster Secret whose
 * labels say whose cluster it is and its rollout wave: what the environment's ApplicationSet
 * generates the tenant's Applications from, each confined to one of its projects).
 */
import { LABEL_KEYS } from "../../facts/project";
import type { INamespace as Namespace } from "kubernetes-models/v1/Namespace";
import { CHARTS } from "../../facts/charts";
import { K3S_API_PORT } from "../../facts/contract";
import { tenantClusterProjectSuffix, tenantEntryPath, tenantNamespace, tenantProject, type RolloutWave } from "../../facts/fleet";
import { ARGOCD_CHART, ARGOCD_CLUSTER_SECRET, ARGOCD_IN_CLUSTER } from "../../facts/versions";
import { appProject, helmRepoUrl } from "./argo";
import { externalSecret, secretStore } from "./external-secrets";

export interface TenantAppsFacts {
  readonly environment: string;
  readonly tenantId: string;
  readonly clusterName: string;
  /** When a fleet-wide change reaches the tenant (the cluster Secret's wave label). */
  readonly rolloutWave: RolloutWave;
  /** Fleet repository the tenant's Applications read (its AppProjects allow it). */
  readonly repoUrl: string;
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
  return `${tenantProject(tenantId)}${tenantClusterProjectSuffix()}`;
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

/** Central's file for the tenant: namespace, projects, app-of-apps, cluster credential. */
export function tenantEntryDocuments(f: TenantAppsFacts): unknown[] {
  const namespace = tenantNamespace(f.tenantId);
  const server = tenantClusterServer(f.serverAddress);
  const chartRepos = (...keys: (keyof typeof CHARTS)[]) => keys.map((k) => helmRepoUrl(CHARTS[k].repo));
  const ns: Namespace = { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace, labels: { [LABEL_KEYS.tenant]: f.tenantId } } };
  const controlPlane = appProject({
    name: tenantProject(f.tenantId),
    description: `Tenant ${f.tenantId}: its Slurm control plane, in namespace ${namespace} on central only`,
    sourceRepos: [f.repoUrl, ...chartRepos("slurm")],
    destinations: [{ server: ARGOCD_IN_CLUSTER, namespace }],
    clusterResources: [],
  });
  const cluster = appProject({
    name: tenantClusterProject(f.tenantId),
    description: `Tenant ${f.tenantId}: the add-ons of its own cluster ${f.clusterName}, and nothing on central`,
    sourceRepos: [f.repoUrl, ...chartRepos("cilium", "karpenter", "externalSecrets", "slurmOperatorCrds", "slurmOperator", "slurm")],
    destinations: [{ server, namespace: "*" }],
    clusterResources: TENANT_CLUSTER_RESOURCES,
  });
  // The cluster's credential, as ArgoCD's cluster Secret, from Secrets Manager: never in git.
  const store = { name: tenantProject(f.tenantId), namespace: ARGOCD_CHART.namespace, region: f.centralRegion, roleArn: f.secretsRoleArn };
  const credential = externalSecret({
    store,
    target: `cluster-${f.clusterName}`,
    key: "config",
    remoteKey: f.clusterCredentialSecret,
    template: {
      labels: { [ARGOCD_CLUSTER_SECRET.label]: ARGOCD_CLUSTER_SECRET.value, [LABEL_KEYS.tenant]: f.tenantId, [LABEL_KEYS.environment]: f.environment, [LABEL_KEYS.wave]: f.rolloutWave },
      data: {
        name: f.clusterName,
        server,
        project: tenantClusterProject(f.tenantId),
        // The tenant's server publishes these values: each is encoded as a JSON string
        // (toJson), so no value can add a field (an execProviderConfig would run a command in
        // central's ArgoCD) or break out of its own.
        config: '{"bearerToken": {{ .bearerToken | toJson }}, "tlsClientConfig": {"caData": {{ .caData | toJson }}}}',
      },
      properties: ["bearerToken", "caData"],
    },
  });
  return [ns, controlPlane, cluster, secretStore(store), credential];
}

/** Central's entry for the tenant, by path (its Applications come from the environment's ApplicationSet). */
export function tenantAppDocuments(f: TenantAppsFacts): Record<string, unknown[]> {
  return { [tenantEntryPath(f.environment, f.tenantId)]: tenantEntryDocuments(f) };
}
