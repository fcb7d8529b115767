/**
 * `clusterra fleet check`: every object under fleet/ against its schema (CRDs from the
 * upstream reference with ajv, unknown fields refused; Kubernetes built-ins through
 * kubernetes-models), tenant isolation in the AppProjects and Applications, no Secret and
 * no secret value, every chart pinned as facts/charts.ts says, and (with `render`) the
 * committed files equal to a fresh render of every stack file.
 */
import * as fs from "fs";
import * as path from "path";
import { createHash } from "crypto";
import Ajv, { type ValidateFunction } from "ajv";
import standaloneCode from "ajv/dist/standalone";
import { parseAllDocuments } from "yaml";
import { centralScopesFromStackFiles, environmentOfScope, PROJECT_ROOT, readAllStackFiles, readStackFile } from "../config";
import { ARGOCD_CONTROLLER_SHARDS } from "../facts/central-host";
import { CHARTS } from "../facts/charts";
import { LOCAL_CHARTS, TENANT_ENTRIES_APPLICATION_SET, TENANT_ENTRY_FILE, tenantNamespace, tenantProject } from "../facts/fleet";
import { tenantClusterName } from "../facts/tenant-cluster";
import { tenantClusterProject } from "../components/fleet/tenant-entry";
import { ARGOCD_CHART, ARGOCD_CLUSTER_SECRET, ARGOCD_IN_CLUSTER, ENTRIES_PROJECT } from "../facts/versions";
import { helmRepoUrl } from "../components/fleet/argo";
import { factsAgainstOutputs, fleetFromFacts } from "./write";
import { offlineFactsProblems, tenantFactsProblems } from "./facts";
import { fleetDocuments, fleetFiles, isValuesFile, referenceDir, type FleetProblem } from "./files";
import { ChangedFilesError, changedFiles, reachOf, selectionOf, stackIndex, stackValuesAt, WHOLE_FLEET, type FleetSelection } from "./changes";
import { controlPlaneSecretsRoleName, LABEL_KEYS } from "../facts/project";
import { cacheDir } from "../facts/project";

// The shared base, for callers of the check (tests, the CLI).
export { fleetFiles, referenceDir, type FleetProblem } from "./files";

/** CRD files in the reference, by the group and kind they define. */
const CRD_FILES: Readonly<Record<string, string>> = {
  "slinky.slurm.net/Controller": "slinky-v1.2.1/slinky.slurm.net_controllers.yaml",
  "slinky.slurm.net/NodeSet": "slinky-v1.2.1/slinky.slurm.net_nodesets.yaml",
  "slinky.slurm.net/LoginSet": "slinky-v1.2.1/slinky.slurm.net_loginsets.yaml",
  "slinky.slurm.net/RestApi": "slinky-v1.2.1/slinky.slurm.net_restapis.yaml",
  "slinky.slurm.net/Accounting": "slinky-v1.2.1/slinky.slurm.net_accountings.yaml",
  "karpenter.sh/NodePool": "karpenter-v1.14.1/karpenter.sh_nodepools.yaml",
  "karpenter.k8s.aws/EC2NodeClass": "karpenter-v1.14.1/karpenter.k8s.aws_ec2nodeclasses.yaml",
  "k8s.mariadb.com/MariaDB": "mariadb-operator-26.6.0/k8s.mariadb.com_mariadbs.yaml",
  "k8s.mariadb.com/Backup": "charts/mariadb-operator-crds-26.6.0/templates/crds.yaml",
  "external-secrets.io/ExternalSecret": "external-secrets-chart-2.9.0/external-secrets.io_externalsecrets.yaml",
  "external-secrets.io/SecretStore": "external-secrets-chart-2.9.0/external-secrets.io_secretstores.yaml",
  "argoproj.io/Application": "charts/argo-cd-10.1.1/templates/crds/crd-application.yaml",
  "argoproj.io/AppProject": "charts/argo-cd-10.1.1/templates/crds/crd-appproject.yaml",
  "argoproj.io/ApplicationSet": "charts/argo-cd-10.1.1/templates/crds/crd-applicationset.yaml",
};

/**
 * A structural schema closed as the API server treats it: an object with `properties`
 * and no `x-kubernetes-preserve-unknown-fields` takes no other field (the server prunes
 * or, with strict field validation, refuses them: either way the value is lost).
 */
function closeSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === "properties" && v && typeof v === "object") out[k] = Object.fromEntries(Object.entries(v).map(([p, s]) => [p, closeSchema(s as Record<string, unknown>)]));
    else if ((k === "items" || k === "additionalProperties") && v && typeof v === "object") out[k] = closeSchema(v as Record<string, unknown>);
    else if ((k === "allOf" || k === "anyOf" || k === "oneOf") && Array.isArray(v)) out[k] = v.map((s) => closeSchema(s as Record<string, unknown>));
    else if (k !== "nullable") out[k] = v;
  }
  // OpenAPI's nullable, as JSON Schema says it.
  if (schema.nullable === true && typeof schema.type === "string") out.type = [schema.type, "null"];
  if (schema.properties && schema.additionalProperties === undefined && !schema["x-kubernetes-preserve-unknown-fields"]) out.additionalProperties = false;
  return out;
}

/** A validator per apiVersion/kind, read and compiled on first use (a large CRD takes a second). */
export interface CrdValidators {
  get(apiVersionKind: string): ValidateFunction | undefined;
}

const compiled = new Map<string, CrdValidators>();

interface Crd {
  kind?: string;
  spec: { names?: { kind?: string }; versions: { name: string; schema: { openAPIV3Schema: Record<string, unknown> } }[] };
}

/** ajv's options for a CRD: every error, formats aside (the API server checks few of them). */
const CRD_AJV_OPTIONS = { strict: false, allErrors: true, validateFormats: false, code: { source: true, optimize: false } } as const;

/**
 * Compiled validators, kept as ajv's standalone modules: compiling the large CRDs
 * (ApplicationSet alone takes two seconds) is most of a check's time, and their source
 * changes only with the reference, ajv or this module's reading of a CRD. ajv's code
 * optimizer is off: it costs more than it saves for the few objects a check meets.
 */
const VALIDATOR_CACHE = cacheDir(PROJECT_ROOT, "crd-validators");

/** A CRD file as YAML: the chart's CRD templates wrap the CRD in Helm conditionals, whose lines go. */
function withoutHelmLines(text: string): string {
  return text.split("\n").filter((l) => !/^\s*\{\{.*\}\}\s*$/.test(l)).join("\n");
}

/** Everything a compiled validator depends on besides the CRD file's text: ajv, its options and how this module reads a CRD. */
const VALIDATOR_KEY = JSON.stringify([(require("ajv/package.json") as { version: string }).version, CRD_AJV_OPTIONS, closeSchema.toString(), crdSchema.toString(), withoutHelmLines.toString(), crdValidators.toString()]);

/** A served version's schema, closed as the API server treats it, for ajv. */
function crdSchema(served: { schema: { openAPIV3Schema: Record<string, unknown> } }): Record<string, unknown> {
  const schema = closeSchema(served.schema.openAPIV3Schema);
  return { ...schema, properties: { ...(schema.properties as Record<string, unknown>), apiVersion: { type: "string" }, kind: { type: "string" }, metadata: { type: "object" } } };
}

/** Validators for the reference CRDs' kinds, keyed `<group>/<version>/<kind>`. */
export function crdValidators(reference: string): CrdValidators {
  const known = compiled.get(reference);
  if (known) return known;
  const ajv = new Ajv(CRD_AJV_OPTIONS);
  const validators = new Map<string, ValidateFunction | undefined>();
  const files = new Map<string, (Crd | null)[]>();
  const crdFile = (file: string): (Crd | null)[] => {
    let crds = files.get(file);
    if (!crds) {
      const text = withoutHelmLines(fs.readFileSync(file, "utf8"));
      crds = parseAllDocuments(text).map((d) => d.toJS() as Crd | null);
      files.set(file, crds);
    }
    return crds;
  };
  const build = (file: string, version: string, kind: string): ValidateFunction | undefined => {
    const key = createHash("sha256").update(VALIDATOR_KEY).update(`${version}/${kind}\n`).update(fs.readFileSync(file)).digest("hex");
    const cached = path.join(VALIDATOR_CACHE, `${kind}-${version}-${key.slice(0, 16)}.js`);
    if (fs.existsSync(cached)) return require(cached) as ValidateFunction;
    // A file may hold every CRD of a chart (read once): the one that names this kind.
    const crd = crdFile(file).find((c) => c?.kind === "CustomResourceDefinition" && c.spec.names?.kind === kind);
    const served = crd?.spec.versions.find((v) => v.name === version);
    if (!served) return undefined;
    const validate = ajv.compile(crdSchema(served));
    try {
      fs.mkdirSync(VALIDATOR_CACHE, { recursive: true });
      const temporary = `${cached}.${process.pid}`;
      fs.writeFileSync(temporary, standaloneCode(ajv, validate));
      fs.renameSync(temporary, cached);
    } catch {
      // A read-only checkout compiles again next time; the check itself is unaffected.
    }
    return validate;
  };
  const lazy: CrdValidators = {
    get(key) {
      if (validators.has(key)) return validators.get(key);
      const [group, version, kind] = key.includes("/") && key.split("/").length === 3 ? key.split("/") : ["", "", ""];
      const file = CRD_FILES[`${group}/${kind}`];
      const validator = file ? build(path.join(reference, file), version, kind) : undefined;
      validators.set(key, validator);
      return validator;
    },
  };
  compiled.set(reference, lazy);
  return lazy;
}

/** Built-in kinds, validated by kubernetes-models (ES modules: loaded with a real import()). */
const BUILT_INS: Record<string, string> = {
  "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy": "kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy",
  "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding": "kubernetes-models/admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding",
  "apps/v1/Deployment": "kubernetes-models/apps/v1/Deployment",
  "discovery.k8s.io/v1/EndpointSlice": "kubernetes-models/discovery.k8s.io/v1/EndpointSlice",
  "v1/ConfigMap": "kubernetes-models/v1/ConfigMap",
  "v1/Namespace": "kubernetes-models/v1/Namespace",
  "v1/Service": "kubernetes-models/v1/Service",
  "v1/ServiceAccount": "kubernetes-models/v1/ServiceAccount",
  "networking.k8s.io/v1/NetworkPolicy": "kubernetes-models/networking.k8s.io/v1/NetworkPolicy",
  "rbac.authorization.k8s.io/v1/ClusterRole": "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole",
  "rbac.authorization.k8s.io/v1/ClusterRoleBinding": "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding",
};
/**
 * Built-in kinds kubernetes-models has no schema for (beta APIs of Kubernetes 1.35): the
 * `--render` half validates them with kubectl-validate against the cluster's own version.
 */
const KUBECTL_VALIDATED = new Set(["admissionregistration.k8s.io/v1beta1/MutatingAdmissionPolicy", "admissionregistration.k8s.io/v1beta1/MutatingAdmissionPolicyBinding"]);
// TypeScript's CommonJS output would turn import() into require(), which these packages refuse.
const esmImport = new Function("specifier", "return import(specifier)") as (s: string) => Promise<Record<string, new (data: unknown) => { validate(): void }>>;

interface FleetDoc {
  readonly file: string;
  readonly index: number;
  readonly object: Record<string, unknown>;
  /** Made by an ApplicationSet in that file (see fleet-tools/files.ts). */
  readonly generated?: { readonly by: string; readonly step: number; readonly rollingSync: boolean };
  /** Rendered by this generated Application's local chart (a tenant's entry). */
  readonly renderedBy?: string;
}

const SECRET_VALUE = /BEGIN [A-Z ]*PRIVATE KEY|AKIA[0-9A-Z]{16}|(password|secretString|jwt_hs256|bearerToken|token)\s*:\s*["']?[A-Za-z0-9+/=_-]{16,}/i;

function get(o: unknown, ...keys: string[]): unknown {
  return keys.reduce<unknown>((v, k) => (v && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined), o);
}

/** Checks the fleet under root; returns every problem (none: the fleet is good). */
export async function checkFleet(root: string, options: { reference?: string; render?: boolean; rendered?: RenderedFleet; skipped?: (message: string) => void; allowOfflineFacts?: boolean; selection?: FleetSelection } = {}): Promise<FleetProblem[]> {
  const problems: FleetProblem[] = [];
  const docs: FleetDoc[] = [];
  const selection = options.selection ?? WHOLE_FLEET;
  for (const file of fleetFiles(root).filter(selection.file)) {
    const text = fs.readFileSync(path.join(root, file), "utf8");
    if (SECRET_VALUE.test(text)) problems.push({ file, at: "(text)", reason: "holds what looks like a secret value; secrets live in Secrets Manager and arrive through External Secrets" });
    const parsed = parseAllDocuments(text);
    parsed.forEach((d, index) => {
      if (d.errors.length) problems.push({ file, at: `document ${index}`, reason: `is not valid YAML: ${d.errors[0].message.split("\n")[0]}` });
      const object = d.toJS() as unknown;
      // values/ files are Helm values, facts files a stack's cloud facts: not objects (the render checks them).
      if (object && typeof object === "object" && !isValuesFile(file)) docs.push({ file, index, object: object as Record<string, unknown> });
    });
  }
  // The Applications each ApplicationSet generates, checked as if they were written.
  const generated = fleetDocuments(root, (f) => isValuesFile(f) || !selection.file(f), selection.tenant);
  problems.push(...generated.problems);
  if (generated.skipped) {
    if (process.env.CI) problems.push({ file: "(tools)", at: "fleet check", reason: generated.skipped });
    else options.skipped?.(generated.skipped);
  }
  docs.push(...generated.documents.filter((d) => d.generated || d.renderedBy));
  problems.push(...(await schemaProblems(docs, options.reference)));
  problems.push(...secretObjects(docs), ...chartPins(root, docs), ...isolation(root, docs, selection), ...unstepped(docs));
  if (!options.allowOfflineFacts) problems.push(...offlineFactsProblems(root).filter((p) => selection.file(p.file)));
  if (options.render || options.rendered) problems.push(...renderDrift(root, options.rendered ?? renderFleet(root, selection.stack), selection));
  return problems;
}

async function schemaProblems(docs: readonly FleetDoc[], reference: string | undefined): Promise<FleetProblem[]> {
  const problems: FleetProblem[] = [];
  const crds = reference ? crdValidators(reference) : undefined;
  for (const d of docs) {
    const at = (p: string) => `document ${d.index} ${String(d.object.kind)}/${String(get(d.object, "metadata", "name"))}${p}`;
    const apiVersion = String(d.object.apiVersion ?? "");
    const kind = String(d.object.kind ?? "");
    if (!apiVersion || !kind) {
      problems.push({ file: d.file, at: at(""), reason: "is not a Kubernetes object (no apiVersion/kind)" });
      continue;
    }
    const builtIn = BUILT_INS[`${apiVersion}/${kind}`];
    if (builtIn) {
      const module = await esmImport(builtIn);
      try {
        new module[kind](d.object).validate();
      } catch (e) {
        problems.push({ file: d.file, at: at(""), reason: `fails the ${kind} schema: ${(e as Error).message.split("\n")[0]}` });
      }
      continue;
    }
    if (!crds || KUBECTL_VALIDATED.has(`${apiVersion}/${kind}`)) continue;
    const validate = crds.get(`${apiVersion}/${kind}`);
    if (!validate) {
      if (kind !== "Secret") problems.push({ file: d.file, at: at(""), reason: `${apiVersion} ${kind} has no schema the check knows (reference CRDs or kubernetes-models)` });
      continue;
    }
    if (!validate(d.object)) {
      for (const e of validate.errors ?? []) {
        const extra = e.keyword === "additionalProperties" ? ` (unknown field "${String((e.params as { additionalProperty: string }).additionalProperty)}")` : "";
        problems.push({ file: d.file, at: at(e.instancePath || "/"), reason: `${e.message ?? "invalid"}${extra}` });
      }
    }
  }
  return problems;
}

/** A generated Application no RollingSync step selects is never synced: RollingSync turned its automation off. */
function unstepped(docs: readonly FleetDoc[]): FleetProblem[] {
  return docs.filter((d) => d.generated?.rollingSync && d.generated.step < 0).map((d) => {
    const labels = (get(d.object, "metadata", "labels") ?? {}) as Record<string, string>;
    return { file: d.file, at: `ApplicationSet/${d.generated?.by} generates Application/${String(get(d.object, "metadata", "name"))}`, reason: `no RollingSync step selects it (${LABEL_KEYS.wave}=${labels[LABEL_KEYS.wave]}, ${LABEL_KEYS.stage}=${labels[LABEL_KEYS.stage]}): it would never sync` };
  });
}

function secretObjects(docs: readonly FleetDoc[]): FleetProblem[] {
  return docs
    .filter((d) => d.object.kind === "Secret")
    .map((d) => ({ file: d.file, at: `document ${d.index} Secret/${String(get(d.object, "metadata", "name"))}`, reason: "is a Secret: secrets reach clusters through External Secrets, never git" }));
}

/** Chart repository, name and version of every Helm source exactly as facts/charts.ts pins them. */
function chartPins(root: string, docs: readonly FleetDoc[]): FleetProblem[] {
  const problems: FleetProblem[] = [];
  const pins = Object.values(CHARTS).map((c) => ({ ...c, repoURL: helmRepoUrl(c.repo) }));
  for (const d of docs.filter((x) => x.object.kind === "Application")) {
    const sources = (get(d.object, "spec", "sources") ?? [get(d.object, "spec", "source")]) as Record<string, unknown>[];
    sources.forEach((s, i) => {
      const at = `${d.generated ? `ApplicationSet/${d.generated.by} generates` : `document ${d.index}`} Application/${String(get(d.object, "metadata", "name"))}/spec/sources/${i}`;
      if (!s) return;
      if (typeof s.chart === "string") {
        const pin = pins.find((p) => p.chart === s.chart && p.repoURL === s.repoURL);
        if (!pin) problems.push({ file: d.file, at, reason: `chart ${String(s.repoURL)}/${s.chart} is not in facts/charts.ts` });
        else if (s.targetRevision !== pin.version) problems.push({ file: d.file, at: `${at}/targetRevision`, reason: `chart ${s.chart} must be pinned to ${pin.version} (facts/charts.ts), not ${JSON.stringify(s.targetRevision)}` });
      } else if (typeof s.path === "string" && s.path.startsWith("fleet/charts/")) {
        if (!Object.values(LOCAL_CHARTS).includes(s.path as never) || !fs.existsSync(path.join(root, s.path, "Chart.yaml"))) problems.push({ file: d.file, at: `${at}/path`, reason: `local chart ${s.path} does not exist` });
      }
    });
  }
  return problems;
}

/**
 * AppProjects of tenants reach only their namespace on central and their own cluster,
 * create no cluster-scoped kind on central, read only the fleet repository and pinned
 * chart registries; each tenant's Applications use only its projects.
 */
function isolation(root: string, docs: readonly FleetDoc[], selection: FleetSelection): FleetProblem[] {
  const problems: FleetProblem[] = [];
  const allowedRepos = new Set(Object.values(CHARTS).map((c) => helmRepoUrl(c.repo)));
  const projects = new Map<string, FleetDoc>();
  for (const d of docs.filter((x) => x.object.kind === "AppProject")) {
    const name = String(get(d.object, "metadata", "name"));
    const earlier = projects.get(name);
    // ArgoCD applies both and one wins: one tenant's Applications would run under the other's rules.
    if (earlier) problems.push({ file: d.file, at: `document ${d.index} AppProject/${name}`, reason: `is also defined in ${earlier.file}: two tenants would share one project` });
    projects.set(name, d);
  }
  const fleetRepos = new Set(readAllStackFiles(root).map((f) => get(f.values["clusterra:fleet"], "repoUrl")).filter((r): r is string => typeof r === "string"));
  const serversOf = new Map<string, { tenant: string; file: string; at: string }>();
  for (const [name, d] of projects) {
    const match = /^tenant-([a-z0-9-]+?)(-cluster)?$/.exec(name);
    if (!match) continue;
    const [, tenant, cluster] = match;
    const at = (p: string) => `document ${d.index} AppProject/${name}${p}`;
    const destinations = (get(d.object, "spec", "destinations") ?? []) as { server?: string; namespace?: string; name?: string }[];
    destinations.forEach((dest, i) => {
      if (dest.namespace === ARGOCD_CHART.namespace) problems.push({ file: d.file, at: at(`/spec/destinations/${i}`), reason: `may deploy into the ArgoCD namespace (${ARGOCD_CHART.namespace}): that makes it an admin` });
      if (!dest.server || dest.name) problems.push({ file: d.file, at: at(`/spec/destinations/${i}`), reason: "names its cluster by name or not at all: tenant projects name one server URL" });
      if (dest.server === ARGOCD_IN_CLUSTER && (cluster || dest.namespace !== `tenant-${tenant}`)) {
        problems.push({ file: d.file, at: at(`/spec/destinations/${i}`), reason: `reaches namespace ${JSON.stringify(dest.namespace)} on central; tenant ${tenant} may reach only tenant-${tenant} there` });
      }
      if (dest.server && dest.server !== ARGOCD_IN_CLUSTER) {
        if (!cluster) problems.push({ file: d.file, at: at(`/spec/destinations/${i}`), reason: `the control-plane project reaches cluster ${dest.server}; it may reach central's tenant-${tenant} only` });
        const owner = serversOf.get(dest.server);
        // Either tenant's facts may be the wrong one: both are named.
        if (owner && owner.tenant !== tenant) {
          problems.push({ file: d.file, at: at(`/spec/destinations/${i}`), reason: `reaches ${dest.server}, tenant ${owner.tenant}'s cluster` });
          problems.push({ file: owner.file, at: owner.at, reason: `reaches ${dest.server}, tenant ${tenant}'s cluster too` });
        }
        serversOf.set(dest.server, { tenant, file: d.file, at: at(`/spec/destinations/${i}`) });
      }
    });
    const whitelist = (get(d.object, "spec", "clusterResourceWhitelist") ?? []) as { group: string; kind: string }[];
    whitelist.forEach((w, i) => {
      if (w.group === "*" || w.kind === "*") problems.push({ file: d.file, at: at(`/spec/clusterResourceWhitelist/${i}`), reason: "allows every cluster-scoped kind; list the kinds the add-ons need" });
    });
    if (!cluster && whitelist.length) problems.push({ file: d.file, at: at("/spec/clusterResourceWhitelist"), reason: "lets a tenant create cluster-scoped objects on central, which every tenant shares" });
    ((get(d.object, "spec", "sourceRepos") ?? []) as string[]).forEach((r, i) => {
      if (!allowedRepos.has(r) && !fleetRepos.has(r)) problems.push({ file: d.file, at: at(`/spec/sourceRepos/${i}`), reason: `${r} is neither the fleet repository nor a chart registry pinned in facts/charts.ts` });
    });
  }
  problems.push(...tenantFactsProblems(root, selection.tenant));
  // Tenant names are per environment; a tenant's folder is under its central's scope.
  const centrals = centralScopesFromStackFiles(root);
  // A tenant's entry makes exactly its namespace, its two projects, its store and its cluster credential: a change to the entry chart that makes anything else is refused.
  for (const d of docs.filter((x) => x.renderedBy)) {
    const owner = ENTRY_FILE.exec(d.file);
    if (!owner) continue;
    const [, scope, id] = owner;
    const env = environmentOfScope(scope, centrals);
    const allowed = [
      `v1/Namespace//${tenantNamespace(id)}`,
      `argoproj.io/v1alpha1/AppProject/${ARGOCD_CHART.namespace}/${tenantProject(id)}`,
      `argoproj.io/v1alpha1/AppProject/${ARGOCD_CHART.namespace}/${tenantClusterProject(id)}`,
      `external-secrets.io/v1/SecretStore/${ARGOCD_CHART.namespace}/${tenantProject(id)}`,
      `external-secrets.io/v1/ExternalSecret/${ARGOCD_CHART.namespace}/cluster-${tenantClusterName(env, id)}`,
    ];
    const key = `${String(d.object.apiVersion)}/${String(d.object.kind)}/${String(get(d.object, "metadata", "namespace") ?? "")}/${String(get(d.object, "metadata", "name"))}`;
    if (!allowed.includes(key)) problems.push({ file: d.file, at: `Application/${d.renderedBy} renders ${String(d.object.kind)}/${String(get(d.object, "metadata", "name"))}`, reason: `a tenant's entry makes only its namespace, its two AppProjects, its store and its cluster credential (${allowed.join(", ")}); not ${key}` });
  }
  for (const d of docs.filter((x) => x.object.kind === "SecretStore")) {
    const owner = ENTRY_FILE.exec(d.file);
    if (!owner) continue;
    const role = String(get(d.object, "spec", "provider", "aws", "role") ?? "");
    const expected = `:role/${controlPlaneSecretsRoleName(environmentOfScope(owner[1], centrals), owner[2])}`;
    if (!role.endsWith(expected)) problems.push({ file: d.file, at: `document ${d.index} SecretStore/${String(get(d.object, "metadata", "name"))}/spec/provider/aws/role`, reason: `${role || "no role"} is not tenant ${owner[2]}'s secrets role (…${expected})` });
  }
  // A tenant's cluster Secret says whose cluster it is (the generated Applications' project follows): its own entry's tenant only.
  for (const d of docs.filter((x) => x.object.kind === "ExternalSecret" && get(x.object, "spec", "target", "template", "metadata", "labels", ARGOCD_CLUSTER_SECRET.label) === ARGOCD_CLUSTER_SECRET.value)) {
    const owner = ENTRY_FILE.exec(d.file)?.[2];
    const label = get(d.object, "spec", "target", "template", "metadata", "labels", LABEL_KEYS.tenant);
    if (label !== owner) problems.push({ file: d.file, at: `document ${d.index} ExternalSecret/${String(get(d.object, "metadata", "name"))}/spec/target/template/metadata/labels`, reason: `labels a cluster Secret ${LABEL_KEYS.tenant}=${String(label)}; only tenant ${owner ?? "(none: not rendered from a tenant's entry)"}'s entry may name its cluster, and only as ${owner ?? "its own"}` });
    // Its shard: the tenants' controller shard, never central's (facts/central-host.ts ARGOCD_CONTROLLER_SHARDS: why).
    const shard = get(d.object, "spec", "target", "template", "data", "shard");
    if (shard !== String(ARGOCD_CONTROLLER_SHARDS.tenantClusters)) problems.push({ file: d.file, at: `document ${d.index} ExternalSecret/${String(get(d.object, "metadata", "name"))}/spec/target/template/data/shard`, reason: `puts a tenant cluster on controller shard ${shard === undefined ? "(none: ArgoCD would hash it onto any shard, central's included)" : JSON.stringify(shard)}; tenant clusters go on shard "${ARGOCD_CONTROLLER_SHARDS.tenantClusters}" only, so a tenant's API server can never stall central's` });
  }
  for (const d of docs.filter((x) => x.object.kind === "Application")) {
    const tenant = d.generated ? (get(d.object, "metadata", "labels", LABEL_KEYS.tenant) as string | undefined) : /^fleet\/tenants\/[^/]+\/([^/]+)\//.exec(d.file)?.[1];
    if (d.generated && !tenant) {
      problems.push({ file: d.file, at: `ApplicationSet/${d.generated.by} generates Application/${String(get(d.object, "metadata", "name"))}`, reason: `has no ${LABEL_KEYS.tenant}: its cluster Secret names no tenant` });
      continue;
    }
    if (!tenant) continue;
    const project = String(get(d.object, "spec", "project"));
    const at = `${d.generated ? `ApplicationSet/${d.generated.by} generates` : `document ${d.index}`} Application/${String(get(d.object, "metadata", "name"))}`;
    // A tenant's entry writes the tenant's projects in ArgoCD's namespace: the entries project, the entry chart, there only.
    if (d.generated?.by === TENANT_ENTRIES_APPLICATION_SET) {
      const sources = (get(d.object, "spec", "sources") ?? []) as { path?: string; ref?: string }[];
      const dest = get(d.object, "spec", "destination") as { server?: string; namespace?: string };
      const ok = project === ENTRIES_PROJECT && dest.server === ARGOCD_IN_CLUSTER && dest.namespace === ARGOCD_CHART.namespace && sources.every((x) => x.ref || x.path === LOCAL_CHARTS.tenantEntry);
      if (!ok) problems.push({ file: d.file, at, reason: `a tenant's entry runs in project ${ENTRIES_PROJECT} with ${LOCAL_CHARTS.tenantEntry} only, into ${ARGOCD_CHART.namespace} on central; this one uses project ${project}, ${dest.server} ${dest.namespace}, sources ${sources.map((x) => x.path ?? x.ref).join(", ")}` });
      continue;
    }
    if (project !== `tenant-${tenant}` && project !== `tenant-${tenant}-cluster`) {
      problems.push({ file: d.file, at: `${at}/spec/project`, reason: `uses project ${project}; tenant ${tenant}'s Applications use tenant-${tenant} or tenant-${tenant}-cluster only` });
      continue;
    }
    const dest = get(d.object, "spec", "destination") as { server?: string; namespace?: string };
    const allowed = ((get(projects.get(project)?.object, "spec", "destinations") ?? []) as { server?: string; namespace?: string }[]).some(
      (p) => p.server === dest.server && (p.namespace === "*" || p.namespace === dest.namespace),
    );
    if (!allowed) problems.push({ file: d.file, at: `${at}/spec/destination`, reason: `${dest.server} namespace ${dest.namespace} is not a destination of project ${project}` });
  }
  return problems;
}

/** A tenant's entry file, what its entry's objects render from: its central's scope and the tenant. */
const ENTRY_FILE = new RegExp(`^fleet/tenants/([^/]+)/([^/]+)/${TENANT_ENTRY_FILE.replace(".", "\\.")}$`);


/** A fresh render of every stack file from its configuration and its committed facts file (fleet-tools/write.ts). */
export interface RenderedFleet {
  /** Path -> content. */
  readonly files: Readonly<Record<string, string>>;
  /** Stack files that do not validate, facts files missing or off their schema. */
  readonly problems: readonly FleetProblem[];
}

export function renderFleet(root: string, stack: (name: string) => boolean = () => true): RenderedFleet {
  const { files, problems } = fleetFromFacts(root, stack);
  return { files, problems };
}

/** Committed files against a fresh render, both ways (the selection's files: a render of the selected stacks has no others). */
function renderDrift(root: string, rendered: RenderedFleet, selection: FleetSelection = WHOLE_FLEET): FleetProblem[] {
  const problems: FleetProblem[] = [...rendered.problems];
  for (const rel of Object.keys(rendered.files).sort()) {
    const committed = path.join(root, rel);
    if (!fs.existsSync(committed)) problems.push({ file: rel, at: "(file)", reason: "is rendered by the stack files but not committed (run `clusterra fleet write`)" });
    else if (fs.readFileSync(committed, "utf8") !== rendered.files[rel]) problems.push({ file: rel, at: "(file)", reason: "differs from its render from the stack files and the facts files (edit the stack file or facts/, then `clusterra fleet write`)" });
  }
  for (const rel of fleetFiles(root).filter(selection.file)) if (!(rel in rendered.files)) problems.push({ file: rel, at: "(file)", reason: "is committed but no stack file renders it" });
  return problems;
}

/**
 * The Helm part of `--render`: every Application rendered from the chart folder and
 * validated with kubectl-validate. Without the tools it says how to get them and skips,
 * except in CI (CI is set), where their absence is a problem.
 */
export async function checkWithCharts(root: string, charts: string | undefined, reference: string | undefined, out: (s: string) => void, err: (s: string) => void, selection: FleetSelection = WHOLE_FLEET): Promise<FleetProblem[]> {
  const { defaultChartsDir, toolPath } = await import("./render");
  const { checkAgainstCharts } = await import("./validate");
  const chartsDir = charts ?? defaultChartsDir(root);
  const helm = toolPath(root, "helm");
  const kubectlValidate = toolPath(root, "kubectl-validate");
  const missing = [...(helm ? [] : ["helm"]), ...(kubectlValidate ? [] : ["kubectl-validate"]), ...(fs.existsSync(chartsDir) ? [] : [`the chart folder ${chartsDir}`])];
  if (!helm || !kubectlValidate || missing.length) {
    const message = `${missing.join(" and ")} missing: Applications are not rendered with Helm nor validated with kubectl-validate (run \`bash scripts/install-tools\`; pass --charts <dir>)`;
    if (process.env.CI) return [{ file: "(tools)", at: "fleet check --render", reason: message }];
    err(`clusterra fleet check: ${message}; skipped`);
    return [];
  }
  const result = await checkAgainstCharts(root, { helm, kubectlValidate }, chartsDir, reference, selection);
  for (const [app, n] of result.objects) out(`  ${String(n).padStart(4)} objects  ${app}`);
  const total = [...result.objects.values()].reduce((a, b) => a + b, 0);
  out(`fleet check: ${result.objects.size} Helm sources rendered from ${chartsDir} (${total} objects) and validated with ${result.plainDocuments} plain documents in ${result.seconds.toFixed(1)} s`);
  return result.problems;
}

/**
 * The command: prints each problem as `file: at: reason`; exit 0 clean, 1 problems, 2 a
 * `changed` base git cannot compare with. With `changed`, it checks what the files changed
 * since that revision reach (fleet-tools/changes.ts), and says what.
 */
export async function runFleetCheck(root: string, options: { render: boolean; charts?: string; outputs?: string; allowOfflineFacts?: boolean; changed?: string }, out: (s: string) => void, err: (s: string) => void): Promise<number> {
  let selection = WHOLE_FLEET;
  if (options.changed !== undefined) {
    let changed: string[];
    try {
      changed = changedFiles(root, options.changed);
    } catch (e) {
      if (!(e instanceof ChangedFilesError)) throw e;
      err(`clusterra fleet check: --changed ${JSON.stringify(options.changed)}: ${e.message}; valid: a revision of this repository, such as origin/main; nothing was checked`);
      return 2;
    }
    const index = stackIndex(root);
    const base = options.changed;
    const now = (rel: string) => readStackFile(rel, path.basename(rel).replace(/^Pulumi\.|\.yaml$/g, ""), root).file?.values;
    selection = selectionOf(reachOf(changed, index, (rel) => stackValuesAt(root, base, rel), now), index);
    out(`fleet check: ${changed.length} file(s) changed since ${options.changed}; checking ${selection.summary}`);
  }
  const reference = referenceDir(root);
  if (!reference) err("clusterra fleet check: ../shared/reference not found (set CLUSTERRA_REFERENCE): custom resources are checked for isolation and pins, not against their CRDs");
  const problems = await checkFleet(root, { reference, render: options.render, allowOfflineFacts: options.allowOfflineFacts, skipped: (m) => err(`clusterra fleet check: ${m}; skipped`), selection });
  if (options.render) problems.push(...(await checkWithCharts(root, options.charts, reference, out, err, selection)));
  if (options.outputs) problems.push(...factsAgainstOutputs(root, options.outputs));
  for (const p of problems) err(`${p.file}: ${p.at}: ${p.reason}`);
  out(problems.length ? `fleet check: ${problems.length} problem(s)` : `fleet check: ${fleetFiles(root).filter(selection.file).length} files good`);
  return problems.length ? 1 : 0;
}
