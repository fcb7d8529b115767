/**
 * The fleet's fixed facts: where each environment's and tenant's files live, the
 * namespaces on central, the AppProject names, the sync order, and the Secrets External
 * Secrets delivers. Components, `fleet check` and the tests derive from this table.
 */
import type { ChartKey } from "./charts";
import { clusterApiRoleName, platformName, PROJECT, tenantAccessRoleName, tenantDeployerRoleName, tenantKeyAliasName, tenantSecretPrefix } from "./project";
import { alarmTopicName } from "./alarms";
import { connectorBridgeRoleName, connectorExternalId } from "./connector-network";

/**
 * Folder of a central's fleet: what its root Application syncs (not recursive). `scope` is
 * the central's (facts/project.ts centralScope): its environment's, or with its cell after it.
 */
export function centralFleetPath(scope: string): string {
  return `fleet/central/${scope}`;
}

/** Folder of every tenant of a central (its scope's): each central's ApplicationSets find their own tenants there. */
export function tenantsFleetPath(scope: string): string {
  return `fleet/tenants/${scope}`;
}

/**
 * What every tenant of an environment shares (each add-on's common values, manifests no
 * tenant changes): beside the ApplicationSet that reads it, written by the central stack.
 * Not a tenant's folder, and not synced by central's root Application (it is not recursive).
 */
export function tenantsSharedPath(scope: string): string {
  return `${centralFleetPath(scope)}/${TENANTS_APPLICATION_SET}`;
}

/** A tenant's folder under its central's scope: control-plane/ (on central) and cluster/ (its own), and its facts. */
export function tenantFleetPath(scope: string, tenantId: string): string {
  return `${tenantsFleetPath(scope)}/${tenantId}`;
}

/** Folder of one connector's files (its ParallelCluster's name): the patch and hook settings `pulumi up` writes. */
export function connectorFleetPath(clusterName: string): string {
  return `fleet/connector/${clusterName}`;
}

/** Where a repository file lies in the fleet: in a central's folder, a tenant's or a connector's, with the rest of its path. */
export type FleetPlace =
  | { readonly kind: "central"; readonly scope: string; readonly rest: string }
  | { readonly kind: "tenant"; readonly scope: string; readonly tenantId: string; readonly rest: string }
  | { readonly kind: "connector"; readonly clusterName: string; readonly rest: string };

/**
 * The inverse of the folder functions above: the place of a file (a path relative to the
 * repository, `/`-separated), or undefined outside every such folder. Pure.
 */
export function fleetPlace(file: string): FleetPlace | undefined {
  // Each folder function with an empty name gives its stem ("fleet/central/", ...).
  const after = (stem: string, names: number): { names: string[]; rest: string } | undefined => {
    if (!file.startsWith(stem)) return undefined;
    const parts = file.slice(stem.length).split("/");
    const rest = parts.slice(names).join("/");
    return parts.length > names && parts.slice(0, names).every(Boolean) && rest ? { names: parts.slice(0, names), rest } : undefined;
  };
  const central = after(centralFleetPath(""), 1);
  if (central) return { kind: "central", scope: central.names[0], rest: central.rest };
  const tenant = after(tenantsFleetPath(""), 2);
  if (tenant) return { kind: "tenant", scope: tenant.names[0], tenantId: tenant.names[1], rest: tenant.rest };
  const connector = after(connectorFleetPath(""), 1);
  if (connector) return { kind: "connector", clusterName: connector.names[0], rest: connector.rest };
  return undefined;
}

/** The central scope a file of a central's or a tenant's folder belongs to. Pure. */
export function fleetScopeOf(file: string): string | undefined {
  const place = fleetPlace(file);
  return place && place.kind !== "connector" ? place.scope : undefined;
}

/**
 * A tenant's own entry file in its folder (its rollout wave): the file the tenant-entries
 * ApplicationSet's git files generator finds each tenant by.
 */
export const TENANT_ENTRY_FILE = "entry.yaml";

/**
 * A tenant's users file in its folder (passwd and group lines): one copy, read by the charts
 * of both its sides (the slurmd pods on its cluster, slurmctld and the login on central).
 */
export const TENANT_USERS_FILE = "users.yaml";

/**
 * The tenant's facts its cluster Secret carries as annotations (GitOps Bridge's way): what
 * an upstream chart needs of them reaches it as a Helm parameter of its generated
 * Application, so no derived file holds a fact. Fact key -> annotation.
 */
export const CLUSTER_SECRET_FACTS = {
  serverAddress: "clusterra.io/server-address",
  interruptionQueueName: "clusterra.io/interruption-queue",
} as const;
export type ClusterSecretFact = keyof typeof CLUSTER_SECRET_FACTS;

/** The ApplicationSet that makes each tenant's entry on central (namespace, projects, cluster Secret), and its file. */
export const TENANT_ENTRIES_APPLICATION_SET = "tenant-entries";
export function tenantEntriesApplicationSetPath(scope: string): string {
  return `${centralFleetPath(scope)}/${TENANT_ENTRIES_APPLICATION_SET}.yaml`;
}

/** The Application that enters a tenant into its central's ArgoCD (its namespace, projects, store and credential). */
export function tenantEntryApplication(tenantId: string): string {
  return `${tenantId}-entry`;
}

/** The namespace on central holding one tenant's Slurm control plane. */
export function tenantNamespace(tenantId: string): string {
  return `tenant-${tenantId}`;
}

/**
 * Ids that would make one of the platform's own names read as a tenant's: the name slots the
 * platform writes right after `clusterra-<env>-` for what belongs to no tenant (cluster-api,
 * the alarm topic, the connectors' names, the tenants' access roles), each hyphen-prefix of
 * them. Derived from the name functions, so a new platform name extends it by itself.
 */
export function platformNameSlots(environment: string): string[] {
  const stem = platformName(environment, "");
  const names = [clusterApiRoleName(environment), alarmTopicName(platformName(environment)), connectorBridgeRoleName(environment), connectorExternalId(environment, "x"), tenantAccessRoleName(environment, "x")];
  const slots = new Set<string>();
  for (const n of names) {
    const rest = n.startsWith(stem) ? n.slice(stem.length) : "";
    const parts = rest.split("-");
    // Every hyphen-prefix but the whole name's tail after a tenant or cluster placeholder.
    for (let i = 1; i <= parts.length; i++) if (!parts.slice(0, i).includes("x")) slots.add(parts.slice(0, i).join("-"));
  }
  return [...slots].filter(Boolean).sort();
}

/**
 * The text the platform writes before a tenant's id in every name it derives for that
 * tenant (resource names, roles, secrets and parameters, namespaces), longest first: where a
 * name says whose it is. The tenant-isolation policy reads ownership from these, never from
 * words.
 */
export function tenantNameStems(environment: string): string[] {
  const marker = "\u0000";
  const forms = [
    platformName(environment, marker),
    tenantAccessRoleName(environment, marker),
    tenantDeployerRoleName(environment, marker),
    tenantSecretPrefix(environment, marker),
    `${PROJECT}/${tenantKeyAliasName(environment, marker)}`,
    tenantNamespace(marker),
  ];
  return [...new Set(forms.map((f) => f.slice(0, f.indexOf(marker))))].sort((a, b) => b.length - a.length);
}

/** The tenant's AppProject: only its namespace on central and its own cluster. */
export function tenantProject(tenantId: string): string {
  return `tenant-${tenantId}`;
}

/** What names a tenant's second project, for its own cluster: `tenant-<id>-cluster`. */
export function tenantClusterProjectSuffix(): string {
  return "-cluster";
}

/** Local charts in this repository (fleet/charts/<name>). */
export const LOCAL_CHARTS = { clusterApi: "fleet/charts/cluster-api", edgeAgent: "fleet/charts/edge-agent", tenantCluster: "fleet/charts/tenant-cluster", tenantControlPlane: "fleet/charts/tenant-control-plane", tenantEntry: "fleet/charts/tenant-entry", tenantGuards: "fleet/charts/tenant-guards" } as const;

/**
 * Sync waves: CRDs, then operators, then what uses them; a tenant's slurmd after its control
 * plane, as Slurm upgrades must go (slurmdbd and slurmctld first, never a slurmd newer than
 * its controller). ArgoCD applies a lower wave first and waits for it to be healthy.
 */
export const SYNC_WAVES = { crds: "-30", operators: "-20", secrets: "-10", workloads: "0", slurmd: "5", platform: "10" } as const;

/**
 * The stages of a tenant's Applications, in sync order (the sync waves a tenant uses): one
 * RollingSync step each, per rollout wave.
 */
export const ROLLOUT_STAGES = ["crds", "operators", "secrets", "workloads", "slurmd"] as const satisfies readonly (keyof typeof SYNC_WAVES)[];

/**
 * Rollout waves (`clusterra:rolloutWave`), in the order a fleet-wide change reaches them:
 * canary tenants first, general last; a wave starts once every earlier one is healthy.
 */
export const ROLLOUT_WAVES = ["canary", "early", "general"] as const;
export type RolloutWave = (typeof ROLLOUT_WAVES)[number];
export const DEFAULT_ROLLOUT_WAVE: RolloutWave = "general";

/** The ApplicationSet that makes every tenant's Applications of an environment, and its file. */
export const TENANTS_APPLICATION_SET = "tenants";
export function tenantsApplicationSetPath(scope: string): string {
  return `${centralFleetPath(scope)}/${TENANTS_APPLICATION_SET}.yaml`;
}

/**
 * The ApplicationSet of what contains each tenant on central (its NetworkPolicies, quota and
 * LimitRange), and its file. Not RollingSync: ArgoCD v3.4.4's ApplicationSet controller turns
 * automated sync off for every Application a RollingSync set generates and syncs one only when
 * its revision or spec changes (applicationset/controllers/applicationset_controller.go,
 * syncDesiredApplications and updateApplicationSetApplicationStatus), so nothing it generates
 * is self-healed. These Applications keep `automated: { selfHeal: true }`.
 */
// Not `tenant-*.yaml`: central's folder held one such file per tenant in an earlier layout, and those are pruned.
export const TENANT_GUARDS_APPLICATION_SET = "guards";
export function tenantGuardsApplicationSetPath(scope: string): string {
  return `${centralFleetPath(scope)}/${TENANT_GUARDS_APPLICATION_SET}.yaml`;
}

/**
 * Kinds whose live state on central is a tenant's containment: an Application that renders one
 * for central must be one ArgoCD self-heals (a deleted NetworkPolicy opens the namespace, an
 * edited quota lets it take the host), never one a RollingSync set generates (fleet check).
 */
export const SELF_HEALED_KINDS = ["NetworkPolicy", "ResourceQuota", "LimitRange", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"] as const;

/**
 * How ArgoCD retries a failed automated sync. Without it a failed sync of a revision is
 * never tried again by itself, and a fresh install fails by design at first: an app's
 * custom resources reach the API before the Application that installs their CRDs has
 * synced. Backoff 30 s doubling to 10 min: about an hour of tries in all. `refresh`: each
 * retry syncs what the Application says now (the latest commit, a reverted chart version),
 * not what it said when the failing sync began: a revert heals a broken sync at its next
 * retry instead of waiting out the retries of the broken one.
 */
export const SYNC_RETRY = { limit: 10, backoff: { duration: "30s", factor: 2, maxDuration: "10m" }, refresh: true } as const;

/** The label Kubernetes puts on every namespace with its name: what a namespaceSelector names one by. */
export const NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name";

/** Where an operator's metrics scraper runs on central: the one namespace ArgoCD's metrics admit (components/central/argocd-network-policies.ts). */
export const MONITORING_NAMESPACE = "monitoring";

/** Where External Secrets runs on central (exempt from Pod Security: it needs the host network). */
export const EXTERNAL_SECRETS_NAMESPACE = "external-secrets";

/** One add-on the central cluster runs for every tenant. */
export interface CentralAddOn {
  /** Application name (and release name). */
  readonly name: string;
  readonly chart: ChartKey;
  readonly namespace: string;
  readonly wave: keyof typeof SYNC_WAVES;
}

/**
 * Central add-ons. CRDs come from their own charts so an operator's uninstall never
 * deletes them (and every MariaDB with them); cert-manager issues the Slinky webhook's
 * certificate, which otherwise changes on every render and drifts under ArgoCD.
 */
export const CENTRAL_ADD_ONS: readonly CentralAddOn[] = [
  { name: "cert-manager", chart: "certManager", namespace: "cert-manager", wave: "crds" },
  { name: "external-secrets", chart: "externalSecrets", namespace: EXTERNAL_SECRETS_NAMESPACE, wave: "crds" },
  { name: "slurm-operator-crds", chart: "slurmOperatorCrds", namespace: "slinky", wave: "crds" },
  { name: "mariadb-operator-crds", chart: "mariadbOperatorCrds", namespace: "mariadb-operator", wave: "crds" },
  { name: "slurm-operator", chart: "slurmOperator", namespace: "slinky", wave: "operators" },
  { name: "mariadb-operator", chart: "mariadbOperator", namespace: "mariadb-operator", wave: "operators" },
];

/**
 * Secrets a tenant's control plane reads on central, each delivered by External Secrets
 * from the Secrets Manager secret of the same id (components/tenant/slurm-keys.ts).
 */
export const CONTROL_PLANE_SECRETS = {
  slurm: { name: "slurm-auth-slurm", key: "slurm.key" },
  jwt: { name: "slurm-auth-jwt", key: "jwt.key" },
  mariadb: { name: "mariadb-password", key: "password" },
} as const;

/** The MariaDB a tenant's slurmdbd writes to (the slurm chart's storageConfig defaults). */
export const ACCOUNTING_DATABASE = { service: "mariadb", port: 3306, database: "slurm_acct_db", username: "slurm", storageGiB: 10 } as const;

/**
 * Pod labels of the parties to the accounting database: mariadb-operator (26.6.0) labels a
 * MariaDB's pods with its name; the operator's own pods carry its chart's selector labels.
 * The operator creates the `slurm` user and its grants by SQL from its own pod, so the
 * tenant namespace's NetworkPolicy must admit it on the database port.
 */
export const MARIADB_POD_LABELS = { "app.kubernetes.io/name": "mariadb", "app.kubernetes.io/instance": ACCOUNTING_DATABASE.service } as const;
/** Labels the fleet gives the pods of each tenant's backup Job (the Backup's `podMetadata`): its egress policy selects on them. */
export const MARIADB_BACKUP_POD_LABELS = { "app.kubernetes.io/name": "mariadb-backup", "app.kubernetes.io/instance": "mariadb-daily" } as const;
export const MARIADB_OPERATOR_POD_LABELS = { "app.kubernetes.io/name": "mariadb-operator", "app.kubernetes.io/instance": "mariadb-operator" } as const;

/**
 * Each tenant's accounting database backed up by mariadb-operator (a `Backup` of its
 * `MariaDB`) to a volume of its own on central's data volume, which DLM snapshots daily to
 * the region (facts: components/storage/data-snapshots.ts): a restore needs only the
 * cluster, and a lost zone has the snapshot. Defaults of the central stack's `clusterra:backups`.
 */
export const ACCOUNTING_BACKUP = {
  name: "mariadb-daily",
  defaults: { schedule: "15 2 * * *", retentionDays: 14 },
  storageGiB: 10,
} as const;

/** slurmctld's state on central (job state, node records), per tenant. */
export const SLURMCTLD_STATE_GIB = 4;

/** The Slinky release name on both sides: the operator names its objects after it. */
export const SLURM_RELEASE = "slurm";

/**
 * The name slurmctld is known by, in both clusters. Slinky v1.2.1 writes central's
 * slurm.conf with `SlurmctldHost=<release>-controller-0(<release>-controller.<namespace>)`
 * and SlurmctldPort 6817; the customer's slurmd fetch that file (configless) and then
 * send every RPC there. So the customer cluster carries a Service of the same name and
 * namespace, port 6817, whose endpoint is the central host on the tenant's own NodePort.
 */
export function slurmctldServiceAddress(tenantId: string): { readonly name: string; readonly namespace: string; readonly host: string } {
  const name = `${SLURM_RELEASE}-controller`;
  const namespace = tenantNamespace(tenantId);
  return { name, namespace, host: `${name}.${namespace}` };
}

/** The NodeSet object the Slinky chart (v1.2.1) renders for a `nodesets.<key>` entry. */
export function nodeSetObjectName(key: string): string {
  return `${SLURM_RELEASE}-worker-${key}`;
}

/**
 * Labels the Slinky operator (v1.2.1) puts on the slurmctld, slurmdbd and slurmrestd pods of
 * a release (`name` the daemon, `instance` the Controller, Accounting or RestApi, each named
 * after the release): the NodePort Service and the NetworkPolicies select on them.
 */
export function slinkyPodLabels(component: "slurmctld" | "slurmdbd" | "slurmrestd"): Record<string, string> {
  return { "app.kubernetes.io/name": component, "app.kubernetes.io/instance": SLURM_RELEASE };
}

/** The key of the tenant's one LoginSet in the central release's `loginsets` (users' shells, interactive srun). */
export const LOGIN_SET = "login";

/**
 * Labels the Slinky operator (v1.2.1) selects a LoginSet's pods by: `name` login, `instance`
 * the LoginSet object, which the chart names `<release>-login-<key>`.
 */
export function slinkyLoginPodLabels(): Record<string, string> {
  return { "app.kubernetes.io/name": "login", "app.kubernetes.io/instance": `${SLURM_RELEASE}-login-${LOGIN_SET}` };
}

const SLINKY_REGISTRY = "ghcr.io/slinkyproject";
/** Slurm 26.05 on Ubuntu 26.04: the tag of every Slinky v1.2.1 image. */
const SLINKY_IMAGE_TAG = "26.05-ubuntu26.04";

/** Slinky v1.2.1's images (its chart's defaults), set explicitly: the users' init container runs the very image of the container it prepares. */
export const SLINKY_IMAGES = {
  slurmctld: { repository: `${SLINKY_REGISTRY}/slurmctld`, tag: SLINKY_IMAGE_TAG },
  login: { repository: `${SLINKY_REGISTRY}/login`, tag: SLINKY_IMAGE_TAG },
  slurmd: { repository: `${SLINKY_REGISTRY}/slurmd`, tag: SLINKY_IMAGE_TAG },
  // The slurm chart's helper containers (slurmctld's and slurmd's logfile sidecars, the
  // login's initconf), whose chart default is alpine:latest: pinned here for every one.
  helper: { repository: "docker.io/library/alpine", tag: "3.22" },
} as const;

/**
 * How a tenant's users reach a Slurm pod: a ConfigMap of their passwd and group lines,
 * mounted at `source` in an init container that writes the image's files plus those lines
 * to `merged` (an emptyDir); the Slurm container mounts the merged files over /etc's.
 */
export const USER_IDENTITY = { configMap: "clusterra-users", source: "/etc/clusterra/users", merged: "/run/clusterra/identity", files: ["passwd", "group"] } as const;

/** The ServiceAccount central ArgoCD acts as in a customer cluster (push model). */
export const ARGOCD_MANAGER = { serviceAccount: "argocd-manager", namespace: "kube-system", tokenSecret: "argocd-manager-token" } as const;

/** The namespace of the platform's own services on central (cluster-api). */
export const CLUSTER_API_NAMESPACE = "clusterra-system";
