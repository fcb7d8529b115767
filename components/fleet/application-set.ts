/**
 * One ApplicationSet per environment makes every tenant's Applications: ArgoCD's cluster
 * generator over the tenants' cluster Secrets (GitOps Bridge's way: the Secret's labels say
 * whose cluster it is and which rollout wave it is in) crossed with the add-on table below.
 * A tenant's folder holds only what really differs (its facts, its values, its manifests);
 * the Applications themselves are written once.
 *
 * Order: RollingSync steps are wave x stage (canary's CRDs, operators, secrets, control
 * plane, slurmd; then early's; then general's), so a fleet-wide change reaches canary
 * tenants first, each tenant's Slurm daemons in Slurm's upgrade order (the control plane's
 * slurmdbd and slurmctld, then slurmd), and stops at the first step that does not become
 * healthy. ArgoCD runs it with progressive syncs on (components/central/argocd-values.ts).
 *
 * `expandApplicationSet` is what ArgoCD's controller does with it (matrix, cluster and list
 * generators, goTemplate, templatePatch, RollingSync's autosync off), for `fleet check` and
 * the journey.
 */
import type { HeartbeatScope } from "./heartbeat";
import { parse } from "yaml";
import { CHARTS, type ChartKey, type ChartPin } from "../../facts/charts";
import { LABEL_KEYS } from "../../facts/project";
import {
  ARGOCD_MANAGER, CLUSTER_SECRET_FACTS, LOCAL_CHARTS, ROLLOUT_STAGES, ROLLOUT_WAVES, SLURM_RELEASE, TENANT_USERS_FILE, tenantsFleetPath, tenantsSharedPath, tenantProject, TENANTS_APPLICATION_SET, type ClusterSecretFact,
} from "../../facts/fleet";
import { SLINKY_API_GROUP, TENANT_NAMESPACES } from "../../facts/tenant-cluster";
import { ARGOCD_CHART, ARGOCD_IN_CLUSTER } from "../../facts/versions";
import { helmRepoUrl, syncRetry, type FleetRepo } from "./argo";
import { GoTemplateError, renderGoTemplate } from "./go-template";
import { controlPlaneManifestsSharedValues, controlPlaneSharedValues, type CentralBackups } from "./control-plane";
import { centralFactsPath, FACTS_FILE } from "./facts";
import {
  argocdManagerObjects, ciliumSharedValues, clusterManifestsSharedValues, edgeAgentSharedValues, externalSecretsValues, karpenterSharedValues, slurmOperatorValues, slurmSharedValues,
} from "./tenant-cluster";
import type { FleetFileSet } from "./writer";
import { yamlFile } from "./yaml-file";

/** Where an add-on runs: the tenant's namespace on central, or the tenant's own cluster. */
type Side = "central" | "cluster";

/** One of a tenant's Applications, as a row of the list generator. */

/** The add-on that renders a tenant cluster's own objects (fleet/charts/tenant-cluster): the one that may carry its admission policy. */
export const CLUSTER_MANIFESTS_ADDON = "cluster-manifests";
export interface TenantAddOn {
  /** Application name after `<tenant>-`. */
  readonly addon: string;
  readonly side: Side;
  /** Namespace on the tenant's cluster (central's side uses the tenant's namespace). */
  readonly namespace: string;
  readonly stage: (typeof ROLLOUT_STAGES)[number];
  readonly source:
    | ({ readonly kind: "chart"; readonly chart: ChartKey } & HelmValues)
    | ({ readonly kind: "local-chart"; readonly path: string } & HelmValues)
    /** The tenant's own manifests, a folder of its fleet folder. */
    | { readonly kind: "directory"; readonly path: string }
    /** Manifests every tenant gets alike: written once, beside the ApplicationSet. */
    | { readonly kind: "shared-directory"; readonly objects: () => unknown[] };
  readonly releaseName?: string;
  /** Helm parameters from the tenant's cluster Secret: its name, its server, or a fact it carries (facts/fleet.ts CLUSTER_SECRET_FACTS). */
  readonly parameters?: readonly { readonly name: string; readonly from: "name" | "server" | ClusterSecretFact }[];
  /** Fields ArgoCD must not compare (a value the cluster sets, never git). */
  readonly ignoreDifferences?: readonly { group: string; kind: string; name?: string; jsonPointers?: string[]; jqPathExpressions?: string[] }[];
}

type Values = Record<string, unknown>;

/** What every tenant's shared values may depend on besides facts/: the central stack's settings. */
interface SharedContext {
  readonly backups: CentralBackups;
  /** Central's environment, region and partition: what an edge-agent's heartbeats are signed for. */
  readonly heartbeat: HeartbeatScope;
}

/**
 * A Helm add-on's values: the tenant's own (in its folder), its users file and its facts file
 * for the local charts written against their keys, then what every tenant shares (written
 * once, beside the ApplicationSet). Maps merge across Helm value files, so the tenant's file
 * holds only its own keys; the shared file comes last, so no tenant's file can change what
 * every tenant shares (a worker's IMDS hop limit, an image), and its facts beat its own values.
 */
interface HelmValues {
  readonly shared: (c: SharedContext) => Values;
  /** Also reads the tenant's users file, after its own (a local chart that delivers them). */
  readonly users?: boolean;
  /** Also reads the tenant's facts file, before the shared values (a local chart written against its keys). */
  readonly facts?: boolean;
  /** Also reads central's facts file after the tenant's (its host's address, cluster-api's endpoint and CA). */
  readonly centralFacts?: boolean;
  /** The tenant's values file, relative to its folder; none when nothing differs. */
  readonly values?: string;
}

/** Paths below are relative to the tenant's folder (facts/fleet.ts tenantFleetPath). */
export const TENANT_ADD_ONS: readonly TenantAddOn[] = [
  {
    addon: "control-plane-manifests", side: "central", namespace: "", stage: "secrets",
    source: { kind: "local-chart", path: LOCAL_CHARTS.tenantControlPlane, shared: (c) => controlPlaneManifestsSharedValues(c.backups), users: true, facts: true, centralFacts: true, values: "control-plane/values/control-plane-manifests.yaml" },
  },
  { addon: "control-plane", side: "central", namespace: "", stage: "workloads", releaseName: SLURM_RELEASE, source: { kind: "chart", chart: "slurm", shared: controlPlaneSharedValues, values: "control-plane/values/slurm.yaml" } },
  {
    addon: "cilium", side: "cluster", namespace: TENANT_NAMESPACES.cilium, stage: "crds", releaseName: "cilium", source: { kind: "chart", chart: "cilium", shared: ciliumSharedValues, values: "cluster/values/cilium.yaml" },
    parameters: [{ name: "cluster.name", from: "name" }, { name: "k8sServiceHost", from: "serverAddress" }],
  },
  { addon: "external-secrets", side: "cluster", namespace: TENANT_NAMESPACES.externalSecrets, stage: "crds", releaseName: "external-secrets", source: { kind: "chart", chart: "externalSecrets", shared: externalSecretsValues } },
  { addon: "slurm-operator-crds", side: "cluster", namespace: TENANT_NAMESPACES.slurmOperator, stage: "crds", releaseName: "slurm-operator-crds", source: { kind: "chart", chart: "slurmOperatorCrds", shared: () => ({}) } },
  {
    addon: "karpenter", side: "cluster", namespace: TENANT_NAMESPACES.karpenter, stage: "operators", releaseName: "karpenter", source: { kind: "chart", chart: "karpenter", shared: karpenterSharedValues },
    // Off EKS, Karpenter needs the cluster's endpoint (else it calls eks:DescribeCluster at start-up and exits).
    parameters: [{ name: "settings.clusterName", from: "name" }, { name: "settings.clusterEndpoint", from: "server" }, { name: "settings.interruptionQueue", from: "interruptionQueueName" }],
  },
  {
    addon: "slurm-operator", side: "cluster", namespace: TENANT_NAMESPACES.slurmOperator, stage: "operators", releaseName: "slurm-operator",
    source: { kind: "chart", chart: "slurmOperator", shared: slurmOperatorValues },
    // Without cert-manager (no room on a 4 GiB server) the chart makes a new webhook CA on every
    // render: the first sync's CA stays, in the Secret and in every webhook's caBundle (the
    // validating configuration has six webhooks; ignoring the first only, self-heal rewrote the
    // other five with each render's CA, which the served certificate no longer matched: the
    // journey, real ArgoCD v3.4.4).
    ignoreDifferences: [
      { group: "", kind: "Secret", name: "slurm-operator-webhook-ca", jsonPointers: ["/data"] },
      { group: "admissionregistration.k8s.io", kind: "MutatingWebhookConfiguration", name: "slurm-operator-webhook", jqPathExpressions: [".webhooks[]?.clientConfig.caBundle"] },
      { group: "admissionregistration.k8s.io", kind: "ValidatingWebhookConfiguration", name: "slurm-operator-webhook", jqPathExpressions: [".webhooks[]?.clientConfig.caBundle"] },
    ],
  },
  // ArgoCD's own account there (the server's bootstrap makes it first; this keeps it as git says).
  { addon: "argocd-manager", side: "cluster", namespace: ARGOCD_MANAGER.namespace, stage: "crds", source: { kind: "shared-directory", objects: argocdManagerObjects } },
  {
    addon: CLUSTER_MANIFESTS_ADDON, side: "cluster", namespace: TENANT_NAMESPACES.slurm, stage: "secrets",
    source: { kind: "local-chart", path: LOCAL_CHARTS.tenantCluster, shared: clusterManifestsSharedValues, users: true, facts: true, centralFacts: true, values: "cluster/values/cluster-manifests.yaml" },
  },
  {
    addon: "slurm", side: "cluster", namespace: TENANT_NAMESPACES.slurm, releaseName: SLURM_RELEASE, source: { kind: "chart", chart: "slurm", shared: slurmSharedValues, values: "cluster/values/slurm.yaml" },
    // After the control plane on central: a Slurm upgrade reaches slurmd last.
    stage: "slurmd",
    // The scaling loop owns every NodeSet's replicas (git says 0): neither a diff nor a sync may take them back.
    ignoreDifferences: [{ group: SLINKY_API_GROUP, kind: "NodeSet", jsonPointers: ["/spec/replicas"] }],
  },
  { addon: "edge-agent", side: "cluster", namespace: TENANT_NAMESPACES.edgeAgent, stage: "workloads", releaseName: "edge-agent", source: { kind: "local-chart", path: LOCAL_CHARTS.edgeAgent, shared: (c) => edgeAgentSharedValues(c.heartbeat), facts: true, centralFacts: true, values: "cluster/values/edge-agent.yaml" } },
];

const TENANT = `{{ index .metadata.labels "${LABEL_KEYS.tenant}" }}`;

/** An add-on's shared values file, relative to the environment's shared folder. */
function sharedValuesFile(addon: string): string {
  return `values/${addon}.yaml`;
}

/** Helm's merge of value files: maps merge key by key; anything else the later file replaces. */
export function mergeHelmValues(base: unknown, over: unknown): unknown {
  const isMap = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);
  if (!isMap(base) || !isMap(over)) return over === undefined ? base : over;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) out[k] = mergeHelmValues(base[k], v);
  return out;
}

/** The value files one tenant's Helm add-on reads, in Helm's order (its own, its facts, then what every tenant shares), as the template names them. */
export function tenantAddOnValueFiles(scope: string, tenantId: string, addon: string): string[] {
  const row = TENANT_ADD_ONS.find((a) => a.addon === addon);
  const s = row?.source;
  if (!s || (s.kind !== "chart" && s.kind !== "local-chart")) throw new Error(`${addon} is not a Helm add-on of TENANT_ADD_ONS`);
  const folder = `${tenantsFleetPath(scope)}/${tenantId}`;
  return [
    ...(s.values ? [`${folder}/${s.values}`] : []),
    ...(s.users ? [`${folder}/${TENANT_USERS_FILE}`] : []),
    ...(s.facts ? [`${folder}/${FACTS_FILE}`] : []),
    ...(s.centralFacts ? [centralFactsPath(scope)] : []),
    `${tenantsSharedPath(scope)}/${sharedValuesFile(addon)}`,
  ];
}

/**
 * What every tenant of the environment reads alike: each Helm add-on's shared values and
 * each shared directory's manifests, in `central/<env>/tenants/`. The central stack writes
 * them with the ApplicationSet (a change to them is a fleet-wide change, rolled out in waves).
 */
export function tenantsSharedFiles(scope: string, source: string, backups: CentralBackups, heartbeat: HeartbeatScope): FleetFileSet {
  const dir = tenantsSharedPath(scope);
  return Object.fromEntries(TENANT_ADD_ONS.flatMap((a) => {
    const s = a.source;
    if (s.kind === "shared-directory") return [[`${dir}/${a.addon}/${a.addon}.yaml`, yamlFile(source, ...s.objects())]];
    if (s.kind === "chart" || s.kind === "local-chart") return [[`${dir}/${sharedValuesFile(a.addon)}`, yamlFile(source, s.shared({ backups, heartbeat }))]];
    return [];
  }));
}

/** The list generator's row for an add-on: strings the template reads (none named like a cluster parameter). */
function element(a: TenantAddOn, charts: Readonly<Record<ChartKey, ChartPin>>): Record<string, unknown> {
  const s = a.source;
  const pin = s.kind === "chart" ? charts[s.chart] : undefined;
  return {
    addon: a.addon,
    stage: a.stage,
    side: a.side,
    projectSuffix: a.side === "cluster" ? "-cluster" : "",
    namespace: a.namespace,
    kind: s.kind,
    repoURL: pin ? helmRepoUrl(pin.repo) : "",
    chart: pin ? pin.chart : "",
    version: pin ? pin.version : "",
    path: s.kind === "directory" || s.kind === "local-chart" ? s.path : s.kind === "shared-directory" ? a.addon : "",
    shared: s.kind === "shared-directory",
    sharedValues: s.kind === "chart" || s.kind === "local-chart" ? sharedValuesFile(a.addon) : "",
    users: s.kind === "chart" || s.kind === "local-chart" ? (s.users ? TENANT_USERS_FILE : "") : "",
    facts: s.kind === "chart" || s.kind === "local-chart" ? (s.facts ? FACTS_FILE : "") : "",
    centralFacts: (s.kind === "chart" || s.kind === "local-chart") && !!s.centralFacts,
    values: s.kind === "chart" || s.kind === "local-chart" ? s.values ?? "" : "",
    releaseName: a.releaseName ?? a.addon,
    syncOptions: ["CreateNamespace=true", "ServerSideApply=true", ...(a.ignoreDifferences ? ["RespectIgnoreDifferences=true"] : [])],
    ignoreDifferences: a.ignoreDifferences ?? [],
  };
}

/** An add-on's Helm parameters as the template writes them: each from the cluster Secret the generator reads. */
function parameterBlock(a: TenantAddOn): string[] {
  if (!a.parameters?.length) return [];
  // As a JSON string: whatever the Secret says stays one value (no quote or newline adds a field).
  const value = (from: NonNullable<TenantAddOn["parameters"]>[number]["from"]) => (from === "name" || from === "server" ? `{{ toJson .${from} }}` : `{{ toJson (index .metadata.annotations "${CLUSTER_SECRET_FACTS[from]}") }}`);
  return [
    `  {{- if eq .addon "${a.addon}" }}`,
    "        parameters:",
    ...a.parameters.flatMap((p) => [`          - name: ${p.name}`, `            value: ${value(p.from)}`, "            forceString: true"]),
    "  {{- end }}",
  ];
}

/**
 * What a row cannot say in the template's plain fields (sources and destination by kind
 * and side, ignoreDifferences): a patch ArgoCD renders per Application, YAML with JSON
 * lists. It cannot change the project (ArgoCD keeps the template's).
 */
function templatePatch(scope: string, repo: FleetRepo): string {
  const folder = `${tenantsFleetPath(scope)}/${TENANT}`;
  const shared = tenantsSharedPath(scope);
  return [
    "spec:",
    "  destination:",
    '  {{- if eq .side "central" }}',
    `    server: ${ARGOCD_IN_CLUSTER}`,
    `    namespace: ${tenantProject(TENANT)}`,
    "  {{- else }}",
    "    server: {{ .server }}",
    "    namespace: {{ .namespace }}",
    "  {{- end }}",
    "  sources:",
    '  {{- if .shared }}',
    `    - repoURL: ${repo.repoUrl}`,
    `      targetRevision: ${repo.revision}`,
    `      path: ${shared}/{{ .path }}`,
    "      directory:",
    "        recurse: false",
    '  {{- else }}',
    '  {{- if eq .kind "directory" }}',
    `    - repoURL: ${repo.repoUrl}`,
    `      targetRevision: ${repo.revision}`,
    `      path: ${folder}/{{ .path }}`,
    "      directory:",
    "        recurse: false",
    "  {{- else }}",
    `    - repoURL: ${repo.repoUrl}`,
    `      targetRevision: ${repo.revision}`,
    "      ref: values",
    '  {{- if eq .kind "chart" }}',
    "    - repoURL: {{ .repoURL }}",
    "      chart: {{ .chart }}",
    "      targetRevision: {{ .version }}",
    "  {{- else }}",
    `    - repoURL: ${repo.repoUrl}`,
    `      targetRevision: ${repo.revision}`,
    "      path: {{ .path }}",
    "  {{- end }}",
    "      helm:",
    "        releaseName: {{ .releaseName }}",
    "        valueFiles:",
    "  {{- if .values }}",
    `          - $values/${folder}/{{ .values }}`,
    "  {{- end }}",
    "  {{- if .users }}",
    `          - $values/${folder}/{{ .users }}`,
    "  {{- end }}",
    "  {{- if .facts }}",
    `          - $values/${folder}/{{ .facts }}`,
    "  {{- end }}",
    "  {{- if .centralFacts }}",
    `          - $values/${centralFactsPath(scope)}`,
    "  {{- end }}",
    `          - $values/${shared}/{{ .sharedValues }}`,
    ...TENANT_ADD_ONS.flatMap(parameterBlock),
    "  {{- end }}",
    "  {{- end }}",
    "  syncPolicy:",
    "    syncOptions: {{ toJson .syncOptions }}",
    "  ignoreDifferences: {{ toJson .ignoreDifferences }}",
    "",
  ].join("\n");
}

/** RollingSync's steps: each wave's stages in order, canary first. */
export function rolloutSteps(): { matchExpressions: { key: string; operator: "In"; values: string[] }[] }[] {
  return ROLLOUT_WAVES.flatMap((wave) => ROLLOUT_STAGES.map((stage) => ({
    matchExpressions: [
      { key: LABEL_KEYS.wave, operator: "In" as const, values: [wave] },
      { key: LABEL_KEYS.stage, operator: "In" as const, values: [stage] },
    ],
  })));
}

/** A central's tenants' Applications, as one ApplicationSet: its tenants' cluster Secrets (labelled with the environment) and its scope's folders (charts: facts/charts.ts unless a test or the journey bumps one). */
export function tenantsApplicationSet(environment: string, scope: string, repo: FleetRepo, charts: Readonly<Record<ChartKey, ChartPin>> = CHARTS): Record<string, unknown> {
  return {
    apiVersion: "argoproj.io/v1alpha1",
    kind: "ApplicationSet",
    metadata: { name: TENANTS_APPLICATION_SET, namespace: ARGOCD_CHART.namespace },
    spec: {
      goTemplate: true,
      goTemplateOptions: ["missingkey=error"],
      generators: [{
        matrix: {
          generators: [
            { clusters: { selector: { matchLabels: { [LABEL_KEYS.environment]: environment } } } },
            { list: { elements: TENANT_ADD_ONS.map((a) => element(a, charts)) } },
          ],
        },
      }],
      // A tenant whose cluster Secret goes missing for a while (a failed refresh) keeps its
      // Applications; `clusterra tenant remove` deletes them on purpose. Deleting the
      // ApplicationSet itself keeps what they deployed (every tenant's control plane).
      syncPolicy: { applicationsSync: "create-update", preserveResourcesOnDeletion: true },
      strategy: { type: "RollingSync", rollingSync: { steps: rolloutSteps() } },
      template: {
        metadata: {
          name: `${TENANT}-{{ .addon }}`,
          labels: {
            [LABEL_KEYS.tenant]: TENANT,
            [LABEL_KEYS.wave]: `{{ index .metadata.labels "${LABEL_KEYS.wave}" }}`,
            [LABEL_KEYS.stage]: "{{ .stage }}",
          },
          finalizers: ["resources-finalizer.argocd.argoproj.io"],
        },
        spec: {
          project: `${tenantProject(TENANT)}{{ .projectSuffix }}`,
          destination: { namespace: "{{ .namespace }}" },
          sources: [],
          syncPolicy: {
            // RollingSync turns automation off and triggers each sync itself, pruning as
            // `prune` says. Between rollouts nothing self-heals: drift on a cluster shows as
            // OutOfSync until the next change rolls out (or an operator syncs by hand).
            automated: { prune: true, selfHeal: true },
            retry: syncRetry(),
          },
        },
      },
      templatePatch: templatePatch(scope, repo),
    },
  };
}

/** A cluster Secret's parameters, as the cluster generator gives them with goTemplate. */
export interface ClusterParams {
  readonly name: string;
  readonly server: string;
  readonly project: string;
  readonly metadata: { readonly labels?: Readonly<Record<string, string>>; readonly annotations?: Readonly<Record<string, string>> };
}

/** A cluster Secret (string data or base64 data) as the generator reads it. */
export function clusterParams(secret: { metadata: { labels?: Record<string, string>; annotations?: Record<string, string> }; data?: Record<string, string>; stringData?: Record<string, string> }): ClusterParams {
  const field = (k: string) => secret.stringData?.[k] ?? (secret.data?.[k] !== undefined ? Buffer.from(secret.data[k], "base64").toString("utf8") : "");
  const labels = secret.metadata.labels ?? {};
  const annotations = secret.metadata.annotations ?? {};
  return {
    name: field("name"), server: field("server"), project: field("project"),
    metadata: { ...(Object.keys(annotations).length ? { annotations } : {}), ...(Object.keys(labels).length ? { labels } : {}) },
  };
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function renderStrings(v: Json, params: unknown): Json {
  if (typeof v === "string") return renderGoTemplate(v, params);
  if (Array.isArray(v)) return v.map((x) => renderStrings(x, params));
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [renderGoTemplate(k, params), renderStrings(x, params)]));
  return v;
}

/** A strategic merge patch on Application (no merge keys there): maps merge, lists and scalars replace, null deletes. */
function mergePatch(target: Json, patch: Json): Json {
  if (!patch || typeof patch !== "object" || Array.isArray(patch) || !target || typeof target !== "object" || Array.isArray(target)) return patch;
  const out: Record<string, Json> = { ...target };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k] ?? {}, v);
  }
  return out;
}

function matches(selector: { matchLabels?: Record<string, string> } | undefined, labels: Readonly<Record<string, string>>): boolean {
  return Object.entries(selector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
}

type Generator = {
  clusters?: { selector?: { matchLabels?: Record<string, string> } };
  list?: { elements: Record<string, unknown>[] };
  matrix?: { generators: Generator[] };
  git?: { repoURL: string; revision: string; files?: { path: string }[] };
};

/** A file of the fleet repository at a revision, parsed (what a git files generator reads). */
export interface GitFile {
  /** Path in the repository. */
  readonly path: string;
  readonly content: unknown;
}

/** The files of a repository at a revision whose paths match a glob (`*` within one folder, as ArgoCD's new globbing). */
export type GitFiles = (repoURL: string, revision: string, glob: string) => readonly GitFile[];

/** A glob as ArgoCD's git files generator matches it with the new globbing: `**` across folders, `*` and `?` within one. */
export function globRegExp(glob: string): RegExp {
  const body = glob.split(/(\*\*\/?|\*|\?)/).map((part) => (part.startsWith("**") ? "(?:.*/)?" + (part.endsWith("/") ? "" : ".*") : part === "*" ? "[^/]*" : part === "?" ? "[^/]" : part.replace(/[.+^${}()|[\]\\]/g, "\\$&"))).join("");
  return new RegExp(`^${body}$`);
}

/**
 * A git files generator's parameters for one file (goTemplate): the file's keys, then `path`
 * (the generator's own: a file cannot set it), so `.path.basename` is the file's folder.
 */
export function gitFileParams(file: GitFile): Record<string, unknown> {
  const segments = file.path.split("/");
  const filename = segments[segments.length - 1];
  const dir = segments.slice(0, -1);
  const basename = dir[dir.length - 1] ?? "";
  const normalize = (s: string) => s.toLowerCase().replace(/[^a-z0-9-.]/g, "-");
  const content = file.content && typeof file.content === "object" && !Array.isArray(file.content) ? (file.content as Record<string, unknown>) : {};
  return { ...content, path: { path: dir.join("/"), basename, filename, basenameNormalized: normalize(basename), filenameNormalized: normalize(filename), segments: dir } };
}

function generate(g: Generator, clusters: readonly ClusterParams[], git: GitFiles | undefined): Record<string, unknown>[] {
  if (g.clusters) return clusters.filter((c) => matches(g.clusters?.selector, { ...(c.metadata.labels ?? {}) })).map((c) => ({ ...c }));
  if (g.list) return g.list.elements.map((e) => ({ ...e }));
  if (g.git) {
    const { repoURL, revision, files } = g.git;
    if (!files?.length) throw new GoTemplateError("the fleet's git generators read files (git.files), not directories");
    if (!git) throw new GoTemplateError(`a git files generator needs the repository ${repoURL} at ${revision}`);
    return files.flatMap((f) => git(repoURL, revision, f.path).map(gitFileParams));
  }
  if (g.matrix) {
    const [a, b] = g.matrix.generators;
    if (!a || !b || g.matrix.generators.length !== 2) throw new GoTemplateError("a matrix takes exactly two generators");
    return generate(a, clusters, git).flatMap((x) => generate(b, clusters, git).map((y) => ({ ...x, ...y })));
  }
  throw new GoTemplateError(`generator ${Object.keys(g).join(", ") || "(empty)"} is not one the fleet writes (clusters, git files, list, matrix)`);
}

/**
 * Whether an ApplicationSet's generators read the cluster Secrets: ArgoCD can generate its
 * Applications only once those exist (the tenants' are made by the entries' ApplicationSet).
 */
export function readsClusterSecrets(appset: { spec?: unknown }): boolean {
  return JSON.stringify((appset.spec as { generators?: unknown } | undefined)?.generators ?? []).includes('"clusters"');
}

/** An Application the ApplicationSet generates, and the step RollingSync puts it in (0-based; -1 none). */
export interface GeneratedApplication {
  readonly application: Record<string, unknown> & { metadata: { name: string; labels?: Record<string, string> } };
  readonly step: number;
}

/**
 * The Applications an ApplicationSet generates for these cluster Secrets and repository files, as ArgoCD's
 * controller makes them; a GoTemplateError names the first template it cannot render.
 */
export function expandApplicationSet(appset: Record<string, unknown>, clusters: readonly ClusterParams[], git?: GitFiles): GeneratedApplication[] {
  const spec = appset.spec as { goTemplate?: boolean; generators: Generator[]; template: Json; templatePatch?: string; strategy?: { type?: string; rollingSync?: { steps?: { matchExpressions: { key: string; operator: string; values: string[] }[] }[] } } };
  if (!spec.goTemplate) throw new GoTemplateError("the fleet's ApplicationSets use goTemplate");
  const steps = spec.strategy?.type === "RollingSync" ? spec.strategy.rollingSync?.steps ?? [] : [];
  const out: GeneratedApplication[] = [];
  for (const params of spec.generators.flatMap((g) => generate(g, clusters, git))) {
    let app = renderStrings(spec.template, params) as Record<string, Json>;
    if (spec.templatePatch) {
      const patch = parse(renderGoTemplate(spec.templatePatch, params)) as Json;
      const project = (app.spec as Record<string, Json>).project;
      app = mergePatch(app, patch) as Record<string, Json>;
      (app.spec as Record<string, Json>).project = project;
    }
    const application = { apiVersion: "argoproj.io/v1alpha1", kind: "Application", ...app, metadata: { ...(app.metadata as Record<string, Json>), namespace: (appset.metadata as { namespace: string }).namespace } } as unknown as GeneratedApplication["application"];
    if (steps.length) {
      const automated = ((application.spec as Record<string, Record<string, Record<string, unknown>>>).syncPolicy ?? {}).automated;
      if (automated) automated.enabled = false;
    }
    const labels = application.metadata.labels ?? {};
    const step = steps.findIndex((s) => s.matchExpressions.every((m) => (m.operator === "In" ? m.values.includes(labels[m.key] ?? "\u0000") : !m.values.includes(labels[m.key] ?? "\u0000"))));
    out.push({ application, step });
  }
  return out;
}
