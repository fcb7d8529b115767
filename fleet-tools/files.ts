/**
 * What every fleet command shares: where the fleet's files are, where the upstream reference
 * is, and how a problem is reported. The check, the render and the validation build on it;
 * none of them on each other's internals.
 */
import { spawnSync } from "child_process";
import { createHash } from "crypto";
import * as fs from "fs";
import * as path from "path";
import { parse, parseAllDocuments } from "yaml";
import { centralScopesFromStackFiles, joinedScope, PROJECT_ROOT, readAllStackFiles } from "../config";
import { clusterParams, expandApplicationSet, globRegExp, readsClusterSecrets, type ClusterParams, type GitFiles } from "../components/fleet/application-set";
import { GoTemplateError } from "../components/fleet/go-template";
import { fleetPlace, fleetScopeOf, TENANT_ENTRY_FILE, tenantFleetPath } from "../facts/fleet";
import { FACTS_FILE } from "../components/fleet/facts";
import { LABEL_KEYS } from "../facts/project";
import { ARGOCD_CLUSTER_SECRET } from "../facts/versions";
import type { TenantPorts } from "../facts/contract";
import { recordedPorts } from "../config/tenant-ports";

export interface FleetProblem {
  readonly file: string;
  /** Where in the file: document index and field path. */
  readonly at: string;
  readonly reason: string;
}

/** The upstream reference folder (../shared/reference beside the project, or $CLUSTERRA_REFERENCE). */
export function referenceDir(root = PROJECT_ROOT): string | undefined {
  const candidates = [process.env.CLUSTERRA_REFERENCE, path.join(root, "..", "shared", "reference"), path.join(root, "..", "..", "shared", "reference")];
  return candidates.find((c): c is string => !!c && fs.existsSync(path.join(c, "README.md")));
}

function walk(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

/**
 * Folders under fleet/ that ArgoCD never syncs: the local charts' sources, and the
 * connector's ParallelCluster patches (applied by the operator with `pcluster`).
 */
const NOT_KUBERNETES = ["fleet/charts/", "fleet/connector/"];

/**
 * Helm value files, not objects: values/ folders, facts files, and the files at the top of a
 * tenant's folder (its entry, its users: the charts read them; `fleet check --render` checks them).
 */
function isTenantTopFile(file: string): boolean {
  const place = fleetPlace(file);
  return place?.kind === "tenant" && !place.rest.includes("/");
}

export function isValuesFile(file: string): boolean {
  return file.includes("/values/") || path.posix.basename(file) === FACTS_FILE || isTenantTopFile(file);
}

/** The fleet's own documentation: the one file under fleet/ no stack writes and ArgoCD never reads. */
const FLEET_README = "fleet/README.md";

/**
 * Every file under fleet/ but the local charts' sources, the connector's patches and the
 * README: what a stack writes and ArgoCD may sync. Whatever its extension: a directory source
 * applies `.yml` and `.json` too, so a file no stack renders is named, never overlooked.
 */
export function fleetFiles(root: string): string[] {
  return walk(path.join(root, "fleet"))
    .map((f) => path.relative(root, f).split(path.sep).join("/"))
    .filter((f) => !NOT_KUBERNETES.some((dir) => f.startsWith(dir)) && f !== FLEET_README)
    .sort();
}

/** A tool from `scripts/install-tools` (.tools/bin), else from PATH; undefined when absent. */
export function toolPath(root: string, name: "helm" | "kubectl-validate"): string | undefined {
  const local = path.join(root, ".tools", "bin", name);
  if (fs.existsSync(local)) return local;
  return (process.env.PATH ?? "").split(path.delimiter).map((d) => path.join(d, name)).find((p) => fs.existsSync(p));
}

/** Repository URLs the stack files name as the fleet repository: `$values` and git generators resolve against this checkout. */
export function fleetRepos(root: string): Set<string> {
  return new Set(readAllStackFiles(root).map((f) => (f.values["clusterra:fleet"] as { repoUrl?: unknown } | undefined)?.repoUrl).filter((r): r is string => typeof r === "string"));
}

/** The fleet repository as a git files generator reads it: this checkout (its revision is the one under review). */
export function checkoutFiles(root: string): GitFiles {
  const repos = fleetRepos(root);
  return (repoURL, _revision, glob) => {
    if (!repos.has(repoURL)) throw new GoTemplateError(`git generator: ${repoURL} is not the fleet repository (${[...repos].join(", ")})`);
    const pattern = globRegExp(glob);
    return walk(path.join(root, "fleet"))
      .map((f) => path.relative(root, f).split(path.sep).join("/"))
      .filter((f) => pattern.test(f))
      .sort()
      .map((f) => ({ path: f, content: parse(fs.readFileSync(path.join(root, f), "utf8")) as unknown }));
  };
}

/** One document of a fleet file; `generated` when an ApplicationSet in that file makes it. */
export interface FleetDocument {
  readonly file: string;
  readonly index: number;
  readonly object: Record<string, unknown>;
  /** The ApplicationSet that generates it, and its RollingSync step (0-based; -1: none), when the set is RollingSync. */
  readonly generated?: { readonly by: string; readonly step: number; readonly rollingSync: boolean };
  /** Rendered at sync time by this generated Application's local chart (file: the tenant's file it renders from). */
  readonly renderedBy?: string;
}

interface ClusterExternalSecret {
  kind?: string;
  spec?: { target?: { template?: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; data?: Record<string, string> } } };
}

/**
 * The ArgoCD cluster Secrets the fleet's ExternalSecrets write (their templates' labels,
 * annotations and name/server/project): what the cluster generator reads on central.
 */
export function fleetClusterSecrets(documents: readonly FleetDocument[]): ClusterParams[] {
  return documents
    .map((d) => d.object as ClusterExternalSecret)
    .filter((o) => o.kind === "ExternalSecret" && o.spec?.target?.template?.metadata?.labels?.[ARGOCD_CLUSTER_SECRET.label] === ARGOCD_CLUSTER_SECRET.value)
    .map((o) => {
      const t = o.spec?.target?.template ?? {};
      return clusterParams({ metadata: { labels: t.metadata?.labels, annotations: t.metadata?.annotations }, stringData: t.data ?? {} });
    });
}

interface LocalChartSource {
  repoURL?: string;
  path?: string;
  ref?: string;
  chart?: string;
  helm?: { releaseName?: string; valueFiles?: string[]; parameters?: { name: string; value: string; forceString?: boolean }[] };
}

/**
 * A generated Application's local charts rendered now, as ArgoCD's repo server renders them
 * (release, namespace, `$values` files from this checkout, parameters): their objects.
 */
export function renderLocalCharts(root: string, helm: string, app: Record<string, unknown>): Record<string, unknown>[] {
  const spec = app.spec as { sources?: LocalChartSource[]; destination?: { namespace?: string } };
  const sources = spec.sources ?? [];
  const repos = fleetRepos(root);
  const refs = new Map(sources.filter((s) => s.ref).map((s) => [s.ref as string, s.repoURL ?? ""]));
  return sources.filter((s) => !s.ref && !s.chart && s.path && repos.has(s.repoURL ?? "")).flatMap((s) => {
    const name = String((app.metadata as { name?: string }).name);
    const args = ["template", s.helm?.releaseName ?? name, path.join(root, s.path as string), "--namespace", spec.destination?.namespace ?? "default"];
    for (const v of s.helm?.valueFiles ?? []) {
      const ref = /^\$([^/]+)\/(.*)$/.exec(v);
      if (!ref || !repos.has(refs.get(ref[1]) ?? "")) throw new Error(`value file ${v} is not in the fleet repository`);
      args.push("--values", path.join(root, ref[2]));
    }
    for (const p of s.helm?.parameters ?? []) args.push(p.forceString ? "--set-string" : "--set", `${p.name}=${p.value}`);
    const key = renderKey(helm, args, root, path.join(root, s.path as string));
    let stdout = rendered.get(key);
    if (stdout === undefined) {
      const run = spawnSync(helm, args, { encoding: "utf8" });
      if (run.status !== 0) throw new Error(`helm template of ${s.path} for Application ${name} failed: ${(run.stderr || run.error?.message || "").trim().split("\n")[0]}`);
      stdout = run.stdout;
      rendered.set(key, stdout);
    }
    const docs = parseAllDocuments(stdout);
    const broken = docs.find((d) => d.errors.length);
    if (broken) throw new Error(`helm template of ${s.path} for Application ${name} renders a document that is not YAML, which ArgoCD cannot apply: ${broken.errors[0].message.split("\n")[0]}`);
    return docs.map((d) => d.toJS() as unknown).filter((o): o is Record<string, unknown> => !!o && typeof o === "object");
  });
}

/** Renders already made in this process, by everything they depend on (a checker renders each tenant's entry once). */
const rendered = new Map<string, string>();

/**
 * What a render depends on: Helm, its arguments, the chart's files and the value files'
 * contents; not where the checkout is (Helm's output names no path), so a copy of the
 * repository renders from what an earlier check of the same files made.
 */
function renderKey(helm: string, args: readonly string[], root: string, chartDir: string): string {
  const relative = (p: string) => (p.startsWith(root + path.sep) ? path.relative(root, p) : p);
  // Each part with its length: two different inputs never run together into one.
  const hash = createHash("sha256");
  const part = (data: string | Buffer) => hash.update(`${Buffer.byteLength(data)}:`).update(data);
  part(helm);
  part(JSON.stringify(args.map(relative)));
  for (const f of walk(chartDir).sort()) [relative(f), fs.readFileSync(f)].forEach(part);
  args.forEach((a, i) => args[i - 1] === "--values" && part(fs.readFileSync(a)));
  return hash.digest("hex");
}

/**
 * Every document of every fleet file ArgoCD syncs, then what the ApplicationSets make of
 * them, in ArgoCD's order: the Applications of the ApplicationSets that read the repository
 * (each tenant's entry), the objects their local charts render (filed under the tenant's
 * entry file: its namespace, projects and cluster Secret's ExternalSecret), then the
 * Applications of those that read the cluster Secrets. Each generated Application is filed
 * under its ApplicationSet's file; what stops a generation or a render is a problem naming it.
 * Without Helm the entries cannot render: `skipped` says so, and no cluster generator runs.
 */
export function fleetDocuments(root: string, skip: (file: string) => boolean = () => false, tenant: (scope: string, id: string) => boolean = () => true): { documents: FleetDocument[]; problems: FleetProblem[]; skipped?: string } {
  const documents: FleetDocument[] = [];
  const problems: FleetProblem[] = [];
  for (const file of fleetFiles(root).filter((f) => !skip(f))) {
    parseAllDocuments(fs.readFileSync(path.join(root, file), "utf8")).forEach((d, index) => {
      if (d.errors.length) return; // not YAML: fleet check names it
      const object = d.toJS() as unknown;
      if (object && typeof object === "object") documents.push({ file, index, object: object as Record<string, unknown> });
    });
  }
  const appsets = documents.filter((x) => x.object.kind === "ApplicationSet");
  const readsClusters = (d: FleetDocument) => readsClusterSecrets(d.object);
  const expand = (d: FleetDocument, clusters: ClusterParams[]): FleetDocument[] => {
    const name = String((d.object.metadata as { name?: string } | undefined)?.name);
    try {
      return expandApplicationSet(d.object, clusters, checkoutFiles(root)).map((g) => ({ file: d.file, index: d.index, object: g.application, generated: { by: name, step: g.step, rollingSync: g.rollingSync } }));
    } catch (e) {
      // The expansion is pure: whatever stops it (a template, a patch that is not YAML, a missing field) is this document's problem.
      problems.push({ file: d.file, at: `document ${d.index} ApplicationSet/${name}`, reason: `ArgoCD could not generate its Applications: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}` });
      return [];
    }
  };
  // The entries a check looks at: a proportional check renders the reached tenants' only.
  const reached = (d: FleetDocument) => {
    const id = (d.object.metadata as { labels?: Record<string, string> } | undefined)?.labels?.[LABEL_KEYS.tenant];
    return id === undefined || tenant(fleetScopeOf(d.file) ?? "", id);
  };
  const first = appsets.filter((d) => !readsClusters(d)).flatMap((d) => expand(d, [])).filter(reached);
  documents.push(...first);
  // The checked tree's Helm, else this program's (a copy of the fleet has no tools of its own).
  const helm = toolPath(root, "helm") ?? toolPath(PROJECT_ROOT, "helm");
  if (!helm && first.length) return { documents, problems, skipped: "helm is not installed: the tenants' entries are not rendered, so the Applications made from their cluster Secrets are not generated (run `bash scripts/install-tools`)" };
  for (const d of first) {
    if (!helm) break;
    const tenant = (d.object.metadata as { labels?: Record<string, string> }).labels?.[LABEL_KEYS.tenant];
    const place = fleetPlace(d.file);
    const scope = place?.kind === "central" ? place.scope : undefined;
    const file = tenant && scope ? `${tenantFleetPath(scope, tenant)}/${TENANT_ENTRY_FILE}` : d.file;
    const name = String((d.object.metadata as { name?: string }).name);
    try {
      renderLocalCharts(root, helm, d.object).forEach((object, index) => documents.push({ file, index, object, renderedBy: name }));
    } catch (e) {
      problems.push({ file: d.file, at: `ApplicationSet/${d.generated?.by} generates Application/${name}`, reason: (e as Error).message });
    }
  }
  // Each central's ArgoCD holds the cluster Secrets its own entries make (from its scope's
  // tenant folders): a cell's ApplicationSets generate its tenants' Applications only.
  const entries = [...documents];
  for (const d of appsets.filter(readsClusters)) documents.push(...expand(d, fleetClusterSecrets(entries.filter((x) => fleetScopeOf(x.file) === fleetScopeOf(d.file)))));
  return { documents, problems };
}

/** Each tenant stack file's path, environment, central account, VPC CIDR and ports (when it gives them), by `<its central's scope>/<id>`: its fleet folder's. */
export function tenantStacks(root: string): Map<string, { file: string; environment: string; centralAccountId?: string; vpcCidr?: string; ports?: TenantPorts }> {
  const out = new Map<string, { file: string; environment: string; centralAccountId?: string; vpcCidr?: string; ports?: TenantPorts }>();
  const centrals = centralScopesFromStackFiles(root);
  for (const f of readAllStackFiles(root)) {
    if (f.values["clusterra:kind"] !== "tenant") continue;
    const field = (key: string, name: string): unknown => { const v = f.values[key]; return v && typeof v === "object" ? (v as Record<string, unknown>)[name] : undefined; };
    const id = field("clusterra:tenant", "id");
    const account = field("clusterra:central", "accountId");
    const cidr = field("clusterra:network", "vpcCidr");
    out.set(`${joinedScope(f, centrals)}/${String(id)}`, {
      file: f.file,
      environment: String(f.values["clusterra:environment"]),
      ...(/^[0-9]{12}$/.test(String(account)) ? { centralAccountId: String(account) } : {}),
      ...(typeof cidr === "string" ? { vpcCidr: cidr } : {}),
      ...(recordedPorts(f.values) ? { ports: recordedPorts(f.values) } : {}),
    });
  }
  return out;
}
