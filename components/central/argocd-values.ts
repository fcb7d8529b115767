/**
 * Helm values for the argo-cd chart (version pinned in facts/versions.ts): only what differs
 * from the chart's defaults. Every key path exists in the chart's values.yaml, and none
 * restates its default; tests check both against the reference copy.
 */
import { stringify } from "yaml";
import { CHARTS } from "../../facts/charts";
import { LABEL_KEYS } from "../../facts/project";
import { ARGOCD_IN_CLUSTER } from "../../facts/versions";
import { ARGOCD_CONTROLLER_SHARDS, ARGOCD_PRIORITY, CENTRAL_HOST_RESERVED, perPod, type HostReservation } from "../../facts/central-host";
import { argocdNetworkPolicies } from "./argocd-network-policies";
import { TENANT_CLUSTER_NAMESPACED_RESOURCES, TENANT_CLUSTER_RESOURCES, tenantClusterServer } from "../fleet/tenant-entry";

/**
 * The OCI registries the fleet's charts come from: ArgoCD pulls Helm charts from a registry
 * (repoURL without the oci:// scheme) only through a repository declared with enableOCI.
 * Public registries: no credentials, so nothing secret in the declaration.
 */
export function ociRepositories(): Record<string, Record<string, string>> {
  const registries = [...new Set(Object.values(CHARTS).map((c) => c.repo).filter((r) => r.startsWith("oci://")))].sort();
  return Object.fromEntries(
    registries.map((repo) => {
      const url = repo.slice("oci://".length);
      return [url.replace(/[^a-z0-9]+/g, "-"), { name: url, url, type: "helm", enableOCI: "true" }];
    }),
  );
}

/**
 * The chart's default exclusions, but for one: EndpointSlices are managed on tenant clusters,
 * where the fleet's own EndpointSlice gives `slurm-controller.tenant-<id>` its endpoint (the
 * central host on the tenant's NodePort). ArgoCD drops an excluded kind from a sync with only
 * a warning, so that name would resolve to nothing and slurmd could never reach slurmctld.
 * On central (in-cluster) they stay excluded, as do Endpoints everywhere.
 */
export function resourceExclusions(): { apiGroups: string[]; kinds: string[]; clusters?: string[] }[] {
  return [
    { apiGroups: [""], kinds: ["Endpoints"] },
    { apiGroups: ["discovery.k8s.io"], kinds: ["EndpointSlice"], clusters: [ARGOCD_IN_CLUSTER] },
    { apiGroups: ["coordination.k8s.io"], kinds: ["Lease"] },
    { apiGroups: ["authentication.k8s.io", "authorization.k8s.io"], kinds: ["SelfSubjectReview", "TokenReview", "LocalSubjectAccessReview", "SelfSubjectAccessReview", "SelfSubjectRulesReview", "SubjectAccessReview"] },
    { apiGroups: ["certificates.k8s.io"], kinds: ["CertificateSigningRequest"] },
    { apiGroups: ["cert-manager.io"], kinds: ["CertificateRequest"] },
    { apiGroups: ["cilium.io"], kinds: ["CiliumIdentity", "CiliumEndpoint", "CiliumEndpointSlice"] },
    { apiGroups: ["kyverno.io", "reports.kyverno.io", "wgpolicyk8s.io"], kinds: ["PolicyReport", "ClusterPolicyReport"] },
  ];
}

/**
 * What ArgoCD caches of each tenant cluster (every server URL of a tenant's shape; central's own
 * has no inclusion rule, so everything): only the kinds the tenants' Applications deploy. Pure.
 */
export function resourceInclusions(): { apiGroups: string[]; kinds: string[]; clusters: string[] }[] {
  const byGroup = new Map<string, string[]>();
  for (const r of [...TENANT_CLUSTER_RESOURCES, ...TENANT_CLUSTER_NAMESPACED_RESOURCES]) byGroup.set(r.group, [...(byGroup.get(r.group) ?? []), r.kind]);
  return [...byGroup].map(([group, kinds]) => ({ apiGroups: [group], kinds, clusters: [tenantClusterServer("*")] }));
}

/** argocd-cm's key for a health check of ArgoCD's own Applications (resource.customizations.health.<group>_<kind>). */
export const APPLICATION_HEALTH_KEY = "resource.customizations.health.argoproj.io_Application";

/** Health of a child Application: its own reported health, Progressing until it has one. */
export const APPLICATION_HEALTH_LUA = [
  "hs = { status = \"Progressing\", message = \"\" }",
  "if obj.status ~= nil and obj.status.health ~= nil and obj.status.health.status ~= nil then",
  "  hs.status = obj.status.health.status",
  "  hs.message = obj.status.health.message or \"\"",
  "end",
  "return hs",
  "",
].join("\n");

/**
 * Health of a CustomResourceDefinition: Degraded on what ArgoCD's own check (v3.4.4's built-in
 * Lua) calls Degraded when the CRD says so (names refused, a non-structural schema),
 * Progressing while it terminates, otherwise Healthy, where the built-in check says Degraded
 * ("not established") or Progressing ("status conditions not found"). Why: ArgoCD's sync
 * itself waits for each CRD to be established before it goes on (gitops-engine's
 * ensureCRDReady), but the application controller's cache kept the CRDs as created, with no
 * or partial conditions, for minutes after the API server established them (the journey, real
 * ArgoCD v3.4.4 on a real API server): the built-in check held each CRD Application Degraded
 * or Progressing until its next reconciliation (three to six minutes with the 180 s timeout),
 * and the root's wave, and every tenant's RollingSync step behind it, waited or failed on it.
 */
export const CRD_HEALTH_LUA = [
  "if obj.metadata.deletionTimestamp ~= nil then",
  "  return { status = \"Progressing\", message = \"CRD is terminating\" }",
  "end",
  "if obj.status ~= nil and obj.status.conditions ~= nil then",
  "  for _, c in ipairs(obj.status.conditions) do",
  "    if c.type == \"NamesAccepted\" and c.status == \"False\" then",
  "      return { status = \"Degraded\", message = \"CRD names have not been accepted: \" .. (c.message or \"\") }",
  "    end",
  "    if c.type == \"NonStructuralSchema\" and c.status == \"True\" then",
  "      return { status = \"Degraded\", message = \"Schema violations found: \" .. (c.message or \"\") }",
  "    end",
  "    if c.type == \"Terminating\" and c.status == \"True\" then",
  "      return { status = \"Progressing\", message = \"CRD is terminating\" }",
  "    end",
  "  end",
  "end",
  "return { status = \"Healthy\", message = \"CRD accepted (ArgoCD's sync waits for it to be established)\" }",
  "",
].join("\n");

/**
 * Health of a mariadb-operator Backup: Healthy once its schedule is in place ("Scheduled"), while
 * a scheduled run goes on ("Running") and after a run succeeded; Degraded when the operator says
 * a run or the Backup itself failed; Progressing until the operator has reported. Why: ArgoCD v3.4.4's built-in check
 * calls every condition with status False Progressing, and mariadb-operator 26.6.0 reports a
 * scheduled Backup `Complete=False` ("Scheduled") until its first run succeeds (journey, the real
 * operator): a new tenant's control-plane-manifests stayed Progressing until the first nightly
 * backup, holding its RollingSync step and every later wave for up to a day. A one-off Backup
 * (no schedule) stays Progressing until its Job completes, as the built-in check has it.
 * Blind spot, the operator's: it reports "Scheduled" again after a failed run while no run has
 * ever succeeded, so health cannot tell a first night's failure; the backup Job's own failure is
 * what an operator's alerting watches for that.
 */
export const BACKUP_HEALTH_LUA = [
  "if obj.status == nil or obj.status.conditions == nil then",
  "  return { status = \"Progressing\", message = \"No status info available\" }",
  "end",
  "for _, c in ipairs(obj.status.conditions) do",
  "  if c.type == \"Complete\" then",
  "    local said = (c.reason or \"\") .. \" \" .. (c.message or \"\")",
  "    if c.message == \"Failed\" or c.reason == \"Failed\" then return { status = \"Degraded\", message = said } end",
  "    if c.status == \"True\" then return { status = \"Healthy\", message = said } end",
  "    if obj.spec ~= nil and obj.spec.schedule ~= nil and (c.message == \"Scheduled\" or c.message == \"Running\") then",
  "      return { status = \"Healthy\", message = said }",
  "    end",
  "    return { status = \"Progressing\", message = said }",
  "  end",
  "end",
  "return { status = \"Progressing\", message = \"No Complete condition yet\" }",
  "",
].join("\n");

/**
 * Health of an ExternalSecret: Degraded when External Secrets says it is not Ready; Healthy only
 * when it is Ready for the generation ArgoCD applied (`status.syncedResourceVersion` is
 * `<generation>-<hash of labels and annotations>`, External Secrets' own record of what it
 * synced); Progressing until then. Why: ArgoCD v3.4.4's built-in check reads the Ready condition
 * alone, which still holds the previous generation's verdict right after a sync changes the
 * spec, so an ExternalSecret naming a secret that does not exist counted Healthy for the moment
 * before the controller answered, and RollingSync moved every later wave onto it (the journey,
 * real ArgoCD: globex synced 3 s after the canary, argo-cd#22707 and external-secrets#4685 say the same).
 */
export const EXTERNAL_SECRET_HEALTH_LUA = [
  "if obj.status == nil or obj.status.conditions == nil then",
  "  return { status = \"Progressing\", message = \"Waiting for External Secrets to sync\" }",
  "end",
  // `<generation>-` begins the synced version exactly when it sorts from `<generation>-` up to
  // `<generation>.` ('-' and '.' are neighbours): base Lua, no library to open.
  "local g = tostring(obj.metadata.generation or 0)",
  "local synced = obj.status.syncedResourceVersion or \"\"",
  "for _, c in ipairs(obj.status.conditions) do",
  "  if c.type == \"Ready\" and c.status == \"False\" then",
  "    return { status = \"Degraded\", message = c.message or \"\" }",
  "  end",
  "  if c.type == \"Ready\" and c.status == \"True\" then",
  "    if synced >= g .. \"-\" and synced < g .. \".\" then",
  "      return { status = \"Healthy\", message = c.message or \"\" }",
  "    end",
  "    return { status = \"Progressing\", message = \"External Secrets has not synced generation \" .. g .. \" yet\" }",
  "  end",
  "end",
  "return { status = \"Progressing\", message = \"Waiting for External Secrets to sync\" }",
  "",
].join("\n");

/** argocd-cm's key for the ExternalSecret health check. */
export const EXTERNAL_SECRET_HEALTH_KEY = "resource.customizations.health.external-secrets.io_ExternalSecret";

/**
 * Health of an ApplicationSet, as the root Application waits on it: Degraded when it cannot
 * generate (ErrorOccurred, or its Applications not up to date), Healthy once it has generated
 * them, Progressing until then. ArgoCD's built-in check also calls it Progressing while a
 * RollingSync rollout runs, so the root's sync waited on the rollout, and a rollout stuck on a
 * broken canary held the root's sync forever: the commit that reverts the change was never
 * synced (the journey, real ArgoCD v3.4.4). A rollout's progress is each Application's own.
 */
export const APPLICATIONSET_HEALTH_LUA = [
  "if obj.status ~= nil and obj.status.conditions ~= nil then",
  "  for _, c in ipairs(obj.status.conditions) do",
  "    if (c.type == \"ErrorOccurred\" and c.status == \"True\") or (c.type == \"ResourcesUpToDate\" and c.status == \"False\") then",
  "      return { status = \"Degraded\", message = c.message or \"\" }",
  "    end",
  "  end",
  "  for _, c in ipairs(obj.status.conditions) do",
  "    if c.type == \"ResourcesUpToDate\" and c.status == \"True\" then",
  "      return { status = \"Healthy\", message = c.message or \"\" }",
  "    end",
  "  end",
  "end",
  "return { status = \"Progressing\", message = \"Waiting for the status to be reported\" }",
  "",
].join("\n");

/** argocd-cmd-params-cm's key that lets the ApplicationSet controller run RollingSync (beta in 3.x, off by default). */
export const PROGRESSIVE_SYNCS_PARAM = "applicationsetcontroller.enable.progressive.syncs";

/**
 * argocd-cmd-params-cm's key for the git files generator's new globbing: a `*` stays within
 * one folder, so the tenant-entries pattern (fleet/tenants/<env>/<any>/entry.yaml) finds the
 * tenants' folders and no file deeper in one of them (its `.path.basename` would name
 * another tenant).
 */
export const NEW_GIT_FILE_GLOBBING_PARAM = "applicationsetcontroller.enable.new.git.file.globbing";

/**
 * Memory limits of ArgoCD's components, as multiples of the requests the central host reserves
 * for each of their pods (facts/central-host.ts). The tenants' controller shard caches every
 * tenant cluster, and a tenant's API server decides how much it returns: bounded (2 GiB a
 * shard), a runaway cache gets that shard restarted before it starves the tenants' control
 * planes on the same host.
 */
const ARGOCD_MEMORY_LIMIT_FACTOR = { controller: 16, repoServer: 8, other: 4 } as const;

/** A component's requests (the host's reservation for it) and memory limit. Pure. */
export function argocdResources(r: HostReservation, factor: number): Record<string, Record<string, string>> {
  return { requests: { cpu: `${r.cpuMillis}m`, memory: `${r.memoryMiB}Mi` }, limits: { memory: `${r.memoryMiB * factor}Mi` } };
}

/** ArgoCD's PriorityClass (ARGOCD_PRIORITY: why), rendered with the release. Pure. */
export function argocdPriorityClass(): Record<string, unknown> {
  return {
    apiVersion: "scheduling.k8s.io/v1",
    kind: "PriorityClass",
    metadata: { name: ARGOCD_PRIORITY.name },
    value: ARGOCD_PRIORITY.value,
    globalDefault: false,
    preemptionPolicy: "Never",
    description: "ArgoCD on central: below every tenant's control plane, never preempting",
  };
}

export function argocdValues(environment: string): Record<string, unknown> {
  // Each long-running component in ARGOCD_PRIORITY's class, set per component: not globally, which
  // would reach the chart's redis-secret-init Job, a pre-install hook that runs before the release
  // has made the class (Helm would wait on a Job whose pods are refused, and roll the install back).
  const bounded = (r: HostReservation, factor: number = ARGOCD_MEMORY_LIMIT_FACTOR.other) => ({ resources: argocdResources(r, factor), priorityClassName: ARGOCD_PRIORITY.name });
  return {
    global: {
      logging: { format: "json" },
      // The chart's policies admit metrics from every namespace: ours instead (extraObjects).
      networkPolicy: { create: false },
      securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
    },
    configs: {
      cm: {
        "timeout.reconciliation": "180s",
        // The cache of a tenant cluster lists only what argocd-manager may list; without this
        // one forbidden list (argocd-manager is least-privilege) fails the whole cluster.
        "resource.respectRBAC": "normal",
        "resource.exclusions": stringify(resourceExclusions()),
        // A tenant's API server decides how much it returns: its cache holds only what the fleet deploys there.
        "resource.inclusions": stringify(resourceInclusions()),
        // An app-of-apps waits for each child's health before its next wave (ArgoCD assesses
        // no Application's health by default): CRDs, then operators, then tenants.
        [APPLICATION_HEALTH_KEY]: APPLICATION_HEALTH_LUA,
        // The root does not wait on the tenants' rollouts (APPLICATIONSET_HEALTH_LUA: why).
        "resource.customizations.health.argoproj.io_ApplicationSet": APPLICATIONSET_HEALTH_LUA,
        // A CRD Application Healthy once its CRDs are accepted (CRD_HEALTH_LUA: why).
        "resource.customizations.health.apiextensions.k8s.io_CustomResourceDefinition": CRD_HEALTH_LUA,
        // A scheduled Backup Healthy once scheduled, not only after its first run (BACKUP_HEALTH_LUA: why).
        "resource.customizations.health.k8s.mariadb.com_Backup": BACKUP_HEALTH_LUA,
        // An ExternalSecret Healthy only once synced for the generation applied (EXTERNAL_SECRET_HEALTH_LUA: why).
        [EXTERNAL_SECRET_HEALTH_KEY]: EXTERNAL_SECRET_HEALTH_LUA,
      },
      repositories: ociRepositories(),
      // The tenants' ApplicationSets roll a fleet-wide change out wave by wave (RollingSync).
      params: { [PROGRESSIVE_SYNCS_PARAM]: true, [NEW_GIT_FILE_GLOBBING_PARAM]: true },
    },
    // No SSO and no notification channels on this cluster: both controllers would idle.
    dex: { enabled: false },
    notifications: { enabled: false },
    // Central's cluster on one shard, the tenants' clusters on another (ARGOCD_CONTROLLER_SHARDS: why).
    controller: { replicas: ARGOCD_CONTROLLER_SHARDS.replicas, podLabels: { [LABEL_KEYS.environment]: environment }, ...bounded(perPod(CENTRAL_HOST_RESERVED.argocdController), ARGOCD_MEMORY_LIMIT_FACTOR.controller) },
    // It runs `helm template` for every tenant's Applications.
    repoServer: bounded(CENTRAL_HOST_RESERVED.argocdRepoServer, ARGOCD_MEMORY_LIMIT_FACTOR.repoServer),
    server: bounded(CENTRAL_HOST_RESERVED.argocdServer),
    redis: bounded(CENTRAL_HOST_RESERVED.argocdRedis),
    applicationSet: bounded(CENTRAL_HOST_RESERVED.argocdApplicationSet),
    extraObjects: [argocdPriorityClass(), ...argocdNetworkPolicies()],
  };
}
