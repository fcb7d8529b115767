/**
 * How ArgoCD reaches one tenant: central's entry for it (its namespace, its two AppProjects,
 * the credentials of its cluster through External Secrets, as ArgoCD's cluster Secret whose
 * labels say whose cluster it is and its rollout wave: what the tenants ApplicationSet
 * generates the tenant's Applications from, each confined to one of its projects).
 *
 * Written once per environment, rendered per tenant at sync time: the tenant-entries
 * ApplicationSet's git files generator finds each tenant's folder by its entry.yaml (its
 * rollout wave), and renders fleet/charts/tenant-entry with the folder's name as the
 * tenant's id (a parameter: no file can claim another tenant), the folder's facts file (its
 * server's address, the role central reads its secrets with) and what every tenant shares
 * (below, written by the central stack).
 */
import { ARGOCD_CONTROLLER_SHARDS } from "../../facts/central-host";
import { CHARTS } from "../../facts/charts";
import { K3S_API_PORT } from "../../facts/contract";
import {
  CLUSTER_SECRET_FACTS, LOCAL_CHARTS, ROLLOUT_WAVES, TENANT_ENTRIES_APPLICATION_SET, TENANT_ENTRY_FILE, tenantClusterProjectSuffix, tenantEntryApplication, tenantNamespace, tenantProject, tenantsFleetPath, tenantsSharedPath,
  type RolloutWave,
} from "../../facts/fleet";
import { centralOnlySecretNames, LABEL_KEYS } from "../../facts/project";
import { tenantClusterName } from "../../facts/tenant-cluster";
import { ARGOCD_CHART, ARGOCD_CLUSTER_SECRET, ARGOCD_IN_CLUSTER, ENTRIES_PROJECT } from "../../facts/versions";
import { helmRepoUrl, syncRetry, type FleetRepo } from "./argo";
import { FACTS_FILE } from "./facts";

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
 * webhooks, the Slinky Controller's cluster-name policy, Karpenter's pools): nothing else,
 * and nothing at all on central.
 */
export const TENANT_CLUSTER_RESOURCES = [
  { group: "", kind: "Namespace" },
  { group: "apiextensions.k8s.io", kind: "CustomResourceDefinition" },
  { group: "rbac.authorization.k8s.io", kind: "ClusterRole" },
  { group: "rbac.authorization.k8s.io", kind: "ClusterRoleBinding" },
  { group: "admissionregistration.k8s.io", kind: "MutatingWebhookConfiguration" },
  { group: "admissionregistration.k8s.io", kind: "ValidatingWebhookConfiguration" },
  { group: "admissionregistration.k8s.io", kind: "MutatingAdmissionPolicy" },
  { group: "admissionregistration.k8s.io", kind: "MutatingAdmissionPolicyBinding" },
  { group: "scheduling.k8s.io", kind: "PriorityClass" },
  { group: "karpenter.sh", kind: "NodePool" },
  { group: "karpenter.k8s.aws", kind: "EC2NodeClass" },
] as const;

/**
 * Namespaced kinds the add-ons of a customer cluster create. With TENANT_CLUSTER_RESOURCES,
 * the only kinds ArgoCD's cache of a tenant cluster holds (resource.inclusions on central):
 * pods, events, leases and the rest stay out of central's application controller. Hygiene, not
 * a bound: these kinds are cached cluster-wide, and a tenant's API server may return as many of
 * them as it likes. `fleet check --render` refuses a tenant cluster's rendered object of any
 * other kind (ArgoCD would leave it out of the sync).
 */
export const TENANT_CLUSTER_NAMESPACED_RESOURCES = [
  { group: "", kind: "ConfigMap" },
  { group: "", kind: "Secret" },
  { group: "", kind: "Service" },
  { group: "", kind: "ServiceAccount" },
  { group: "apps", kind: "Deployment" },
  { group: "apps", kind: "DaemonSet" },
  { group: "batch", kind: "CronJob" },
  { group: "batch", kind: "Job" },
  { group: "discovery.k8s.io", kind: "EndpointSlice" },
  { group: "policy", kind: "PodDisruptionBudget" },
  { group: "rbac.authorization.k8s.io", kind: "Role" },
  { group: "rbac.authorization.k8s.io", kind: "RoleBinding" },
  { group: "external-secrets.io", kind: "SecretStore" },
  { group: "external-secrets.io", kind: "ExternalSecret" },
  { group: "slinky.slurm.net", kind: "Controller" },
  { group: "slinky.slurm.net", kind: "NodeSet" },
  { group: "slinky.slurm.net", kind: "RestApi" },
] as const;

/** Every kind ArgoCD deploys to (and caches of) a tenant cluster, as "group/kind" ("" for the core group). */
export function tenantClusterKinds(): Set<string> {
  return new Set([...TENANT_CLUSTER_RESOURCES, ...TENANT_CLUSTER_NAMESPACED_RESOURCES].map((r) => `${r.group}/${r.kind}`));
}

/** Where the chart puts the tenant's id (or its server's address) in a name pattern. */
const ID = "%s";

/** The tenant's own entry file: its rollout wave (what the generator reads, and the cluster Secret's wave label). */
export function tenantEntryValues(rolloutWave: RolloutWave): { rolloutWave: RolloutWave } {
  return { rolloutWave };
}

/** What every tenant's entry shares: name patterns from the facts/ functions, the projects' rules, the credential's template. */
export function tenantEntrySharedValues(environment: string, repoUrl: string, centralRegion: string): Record<string, unknown> {
  const chartRepos = (...keys: (keyof typeof CHARTS)[]) => keys.map((k) => helmRepoUrl(CHARTS[k].repo));
  return {
    environment,
    centralRegion,
    names: {
      namespace: tenantNamespace(ID),
      project: tenantProject(ID),
      clusterProject: tenantClusterProject(ID),
      cluster: tenantClusterName(environment, ID),
      credential: centralOnlySecretNames(environment, ID).argocdCluster,
      server: tenantClusterServer(ID),
    },
    labels: { tenant: LABEL_KEYS.tenant, environment: LABEL_KEYS.environment, wave: LABEL_KEYS.wave },
    inCluster: ARGOCD_IN_CLUSTER,
    projects: {
      controlPlane: { sourceRepos: [repoUrl, ...chartRepos("slurm")].sort() },
      cluster: {
        sourceRepos: [repoUrl, ...chartRepos("cilium", "karpenter", "externalSecrets", "slurmOperatorCrds", "slurmOperator", "slurm")].filter((r, i, all) => all.indexOf(r) === i).sort(),
        clusterResourceWhitelist: TENANT_CLUSTER_RESOURCES.map((r) => ({ ...r })),
      },
    },
    credential: {
      labels: { [ARGOCD_CLUSTER_SECRET.label]: ARGOCD_CLUSTER_SECRET.value },
      // Annotation -> the facts file's key: what the tenants' Applications read of its facts.
      annotations: Object.fromEntries(Object.entries(CLUSTER_SECRET_FACTS).map(([fact, annotation]) => [annotation, fact])),
      refreshInterval: "1h",
      // Kept if the ExternalSecret goes: a bad sync never leaves ArgoCD without the cluster.
      creationPolicy: "Owner",
      deletionPolicy: "Retain",
      // The tenant's server publishes these values: each is encoded as a JSON string (toJson).
      config: '{"bearerToken": {{ .bearerToken | toJson }}, "tlsClientConfig": {"caData": {{ .caData | toJson }}}}',
      properties: ["bearerToken", "caData"],
      // Every tenant cluster on the tenants' controller shard, never central's (ARGOCD_CONTROLLER_SHARDS).
      shard: String(ARGOCD_CONTROLLER_SHARDS.tenantClusters),
    },
  };
}

/** The shared entry values' file, relative to the environment's shared folder. */
export const TENANT_ENTRY_SHARED_VALUES = `values/${TENANT_ENTRY_FILE}`;

/**
 * The environment's tenants' entries, as one ApplicationSet: a git files generator over the
 * tenants' entry files; each Application in the entries project (it writes AppProjects and
 * a cluster Secret in ArgoCD's namespace, which no tenant project may, and nothing else),
 * rolled out wave by wave like the tenants' own Applications. Deleting the ApplicationSet
 * keeps what its Applications made: a tenant's namespace holds its control plane.
 */
export function tenantEntriesApplicationSet(scope: string, repo: FleetRepo): Record<string, unknown> {
  const id = "{{ .path.basename }}";
  const folder = `${tenantsFleetPath(scope)}/${id}`;
  return {
    apiVersion: "argoproj.io/v1alpha1",
    kind: "ApplicationSet",
    metadata: { name: TENANT_ENTRIES_APPLICATION_SET, namespace: ARGOCD_CHART.namespace },
    spec: {
      goTemplate: true,
      goTemplateOptions: ["missingkey=error"],
      generators: [{ git: { repoURL: repo.repoUrl, revision: repo.revision, files: [{ path: `${tenantsFleetPath(scope)}/*/${TENANT_ENTRY_FILE}` }] } }],
      // A tenant's entry is deleted on purpose only (`clusterra tenant remove`): its namespace holds the control plane.
      syncPolicy: { applicationsSync: "create-update", preserveResourcesOnDeletion: true },
      strategy: { type: "RollingSync", rollingSync: { steps: ROLLOUT_WAVES.map((wave) => ({ matchExpressions: [{ key: LABEL_KEYS.wave, operator: "In", values: [wave] }] })) } },
      template: {
        metadata: {
          name: tenantEntryApplication(id),
          labels: { [LABEL_KEYS.tenant]: id, [LABEL_KEYS.wave]: "{{ .rolloutWave }}" },
          // Deleting the entry on purpose deletes what it made (`clusterra tenant remove`, last).
          finalizers: ["resources-finalizer.argocd.argoproj.io"],
        },
        spec: {
          project: ENTRIES_PROJECT,
          destination: { server: ARGOCD_IN_CLUSTER, namespace: ARGOCD_CHART.namespace },
          sources: [
            { repoURL: repo.repoUrl, targetRevision: repo.revision, ref: "values" },
            {
              repoURL: repo.repoUrl,
              targetRevision: repo.revision,
              path: LOCAL_CHARTS.tenantEntry,
              helm: {
                releaseName: tenantEntryApplication(id),
                valueFiles: [`$values/${folder}/${TENANT_ENTRY_FILE}`, `$values/${folder}/${FACTS_FILE}`, `$values/${tenantsSharedPath(scope)}/${TENANT_ENTRY_SHARED_VALUES}`],
                // The folder names the tenant; a parameter beats every value file.
                parameters: [{ name: "tenantId", value: id, forceString: true }],
              },
            },
          ],
          syncPolicy: {
            automated: { prune: true, selfHeal: true },
            retry: syncRetry(),
            syncOptions: ["ServerSideApply=true"],
          },
        },
      },
    },
  };
}
