/**
 * `clusterra fleet render`: every Helm source of every Application under fleet/ rendered as
 * ArgoCD would (release name, namespace, `$values` value files from this repository, inline
 * values, parameters, CRDs included), with `helm template` at the Kubernetes version of the
 * destination cluster, from a folder of chart sources (`<dir>/<chart>-<version>`) or the
 * local charts in fleet/charts. Each rendered object goes to its own file, so a validator's
 * verdict names the Application and the object.
 */
import { execFile, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { promisify } from "util";
import { parse, parseAllDocuments, stringify } from "yaml";
import { centralScopesFromStackFiles, joinedScope, readAllStackFiles } from "../config";
import { TENANT_K3S_VERSION } from "../facts/tenant-cluster";
import { ARGOCD_CHART, ARGOCD_IN_CLUSTER } from "../facts/versions";
import { fleetDocuments, fleetRepos, isValuesFile, referenceDir, toolPath, type FleetProblem } from "./files";
import { WHOLE_FLEET, type FleetSelection } from "./changes";

export { toolPath } from "./files";
import { LABEL_KEYS } from "../facts/project";
import { fleetPlace, fleetScopeOf, tenantNamespace } from "../facts/fleet";
import { TENANT_ADD_ONS, tenantAddOnValueFiles } from "../components/fleet/application-set";

const run = promisify(execFile);

/** The chart sources beside the project (../shared/reference/charts), where CI has them. */
export function defaultChartsDir(root: string): string {
  const reference = referenceDir(root);
  return reference ? path.join(reference, "charts") : path.join(root, "..", "shared", "reference", "charts");
}

/** One `helm template` ArgoCD would run for one source of one Application. */
export interface HelmRender {
  /** The Application's file under fleet/ and its name. */
  readonly file: string;
  readonly application: string;
  /** Index of the source in spec.sources (0 for spec.source). */
  readonly source: number;
  /** `<chart>-<version>` for a repository chart, the repository path for a local one. */
  readonly chartLabel: string;
  readonly chartDir: string;
  readonly release: string;
  readonly namespace: string;
  /** Destination cluster (server URL). */
  readonly server: string;
  /** Kubernetes version of that cluster, as Helm takes it (v1.35.3). */
  readonly kubeVersion: string;
  /** Value files in ArgoCD's order, absolute. */
  readonly valueFiles: readonly string[];
  /** `helm.values` then `helm.valuesObject`, parsed (valuesObject wins, as in ArgoCD). */
  readonly inlineValues: Readonly<Record<string, unknown>> | undefined;
  readonly parameters: readonly { name: string; value: string; forceString?: boolean }[];
  readonly includeCrds: boolean;
  /** `helm.skipTests` and `helm.skipSchemaValidation`, passed on as ArgoCD does. */
  readonly skipTests: boolean;
  readonly skipSchemaValidation: boolean;
}

interface AppSourceDoc {
  repoURL?: string;
  chart?: string;
  path?: string;
  targetRevision?: string;
  ref?: string;
  helm?: {
    releaseName?: string;
    valueFiles?: string[];
    values?: string;
    valuesObject?: Record<string, unknown>;
    parameters?: { name: string; value: string; forceString?: boolean }[];
    skipCrds?: boolean;
    skipTests?: boolean;
    skipSchemaValidation?: boolean;
  };
}

/** `v1.35.3+k3s1` -> `v1.35.3`: the Kubernetes version a K3s release runs. */
export function kubernetesVersion(k3sVersion: string): string {
  return k3sVersion.replace(/\+.*$/, "");
}

/** Each tenant's Kubernetes version, by `<its central's scope>/<tenant id>` as its fleet folder (its stack file's k3sVersion, else the default). */
export function tenantVersions(root: string): Map<string, string> {
  const versions = new Map<string, string>();
  const centrals = centralScopesFromStackFiles(root);
  for (const f of readAllStackFiles(root)) {
    const tenant = f.values["clusterra:tenant"] as { id?: unknown } | undefined;
    const own = f.values["clusterra:k3sVersion"];
    if (f.values["clusterra:kind"] === "tenant" && typeof tenant?.id === "string") {
      versions.set(`${joinedScope(f, centrals)}/${tenant.id}`, kubernetesVersion(typeof own === "string" ? own : TENANT_K3S_VERSION));
    }
  }
  return versions;
}

/** The Kubernetes version of a tenant's cluster (tenantVersions), or the default. */
function tenantVersion(scope: string, tenantId: string, versions: ReadonlyMap<string, string>): string {
  return versions.get(`${scope}/${tenantId}`) ?? kubernetesVersion(TENANT_K3S_VERSION);
}

/** The Kubernetes version a tenant's fleet file is rendered for (from its path), or the default. */
export function tenantVersionOf(file: string, versions: ReadonlyMap<string, string>): string {
  const place = fleetPlace(file);
  return place?.kind === "tenant" ? tenantVersion(place.scope, place.tenantId, versions) : kubernetesVersion(TENANT_K3S_VERSION);
}

/** The Kubernetes version of each central's cluster, by its scope (its fleet folder), from its stack file. */
function centralVersions(root: string): Map<string, string> {
  const versions = new Map<string, string>();
  const centrals = centralScopesFromStackFiles(root);
  for (const f of readAllStackFiles(root)) {
    const controlPlane = f.values["clusterra:controlPlane"] as { k3sVersion?: unknown } | undefined;
    const scope = centrals.get(f.stack)?.scope;
    if (scope !== undefined && typeof controlPlane?.k3sVersion === "string") versions.set(scope, kubernetesVersion(controlPlane.k3sVersion));
  }
  return versions;
}

/**
 * Every Helm source of every Application under root's fleet/, resolved against the chart
 * folder; problems name the Application file, the Application and the source.
 */
export function helmRenders(root: string, chartsDir: string, selection: FleetSelection = WHOLE_FLEET): { renders: HelmRender[]; problems: FleetProblem[] } {
  const fleet = fleetDocuments(root, (f) => isValuesFile(f) || !selection.file(f), selection.tenant);
  const result = applicationRenders(root, chartsDir, fleet.documents);
  return { renders: result.renders, problems: [...fleet.problems, ...result.problems] };
}

/** The Helm sources of these documents' Applications (the fleet's, or ones an ApplicationSet generates), resolved as helmRenders does. */
export function applicationRenders(root: string, chartsDir: string, documents: readonly { file: string; index: number; object: Record<string, unknown> }[]): { renders: HelmRender[]; problems: FleetProblem[] } {
  const renders: HelmRender[] = [];
  const problems: FleetProblem[] = [];
  const versions = centralVersions(root);
  const tenants = tenantVersions(root);
  const repos = fleetRepos(root);
  for (const { file, index, object } of documents) {
    {
      const app = object as { kind?: string; metadata?: { name?: string; labels?: Record<string, string> }; spec?: { source?: AppSourceDoc; sources?: AppSourceDoc[]; destination?: { server?: string; namespace?: string } } };
      if (app.kind !== "Application" || !app.spec) continue;
      const name = String(app.metadata?.name);
      const sources = app.spec.sources ?? (app.spec.source ? [app.spec.source] : []);
      const refs = new Map(sources.filter((s) => s.ref).map((s) => [s.ref as string, s.repoURL ?? ""]));
      const server = app.spec.destination?.server ?? "";
      const scope = fleetScopeOf(file) ?? "";
      // A generated Application's tenant is its label; a written one's, its folder.
      const tenant = app.metadata?.labels?.[LABEL_KEYS.tenant];
      const kubeVersion = server === ARGOCD_IN_CLUSTER ? versions.get(scope) : tenant ? tenantVersion(scope, tenant, tenants) : tenantVersionOf(file, tenants);
      sources.forEach((source, i) => {
        const at = `document ${index} Application/${name}/spec/sources/${i}`;
        const problem = (reason: string): void => void problems.push({ file, at, reason });
        let chartDir: string;
        let chartLabel: string;
        if (source.chart) {
          chartLabel = `${source.chart}-${source.targetRevision}`;
          chartDir = path.join(chartsDir, chartLabel);
          const chartYaml = path.join(chartDir, "Chart.yaml");
          if (!fs.existsSync(chartYaml)) return problem(`chart ${source.chart} ${source.targetRevision} is not in ${chartsDir} (no ${chartLabel}/Chart.yaml); the pin in facts/charts.ts and the chart folder must agree`);
          const meta = parse(fs.readFileSync(chartYaml, "utf8")) as { name?: string; version?: string };
          if (meta.name !== source.chart || String(meta.version) !== String(source.targetRevision)) return problem(`${chartLabel}/Chart.yaml is ${meta.name} ${meta.version}, not ${source.chart} ${source.targetRevision}`);
        } else if (source.path && fs.existsSync(path.join(root, source.path, "Chart.yaml"))) {
          if (!repos.has(source.repoURL ?? "")) return problem(`${source.repoURL} is not the fleet repository, so its chart ${source.path} cannot be rendered from this checkout`);
          chartLabel = source.path;
          chartDir = path.join(root, source.path);
        } else return; // a ref or a plain directory: its objects are checked as they are
        if (!kubeVersion) return problem(`no stack file gives the Kubernetes version of ${server} (fleet folder ${JSON.stringify(scope)})`);
        const helm = source.helm ?? {};
        const valueFiles: string[] = [];
        for (const v of helm.valueFiles ?? []) {
          const ref = /^\$([^/]+)\/(.*)$/.exec(v);
          const target = ref ? (refs.has(ref[1]) && repos.has(refs.get(ref[1]) ?? "") ? path.join(root, ref[2]) : undefined) : path.join(chartDir, v);
          if (!target) problem(`value file ${v}: $${ref?.[1]} is not a source of the fleet repository (its ref: sources are ${[...refs.keys()].join(", ") || "none"})`);
          else if (!fs.existsSync(target)) problem(`value file ${v} does not exist (${path.relative(root, target)})`);
          else valueFiles.push(target);
        }
        const inline = { ...(helm.values ? (parse(helm.values) as Record<string, unknown>) : {}), ...(helm.valuesObject ?? {}) };
        renders.push({
          file, application: name, source: i, chartLabel, chartDir, release: helm.releaseName ?? name, namespace: app.spec?.destination?.namespace ?? "default",
          server, kubeVersion, valueFiles, inlineValues: Object.keys(inline).length ? inline : undefined, parameters: helm.parameters ?? [], includeCrds: !helm.skipCrds,
          skipTests: !!helm.skipTests, skipSchemaValidation: !!helm.skipSchemaValidation,
        });
      });
    }
  }
  return { renders, problems };
}

/** The arguments of `helm template` for one render, as ArgoCD v3.4 builds them (inline values through a file in tmp). */
function helmArgs(r: HelmRender, tmp: string): string[] {
  const args = ["template", r.release, r.chartDir, "--namespace", r.namespace, "--kube-version", r.kubeVersion];
  if (r.includeCrds) args.push("--include-crds");
  if (r.skipTests) args.push("--skip-tests");
  if (r.skipSchemaValidation) args.push("--skip-schema-validation");
  for (const f of r.valueFiles) args.push("--values", f);
  if (r.inlineValues) {
    const inline = path.join(tmp, `${r.application}-${r.source}-values.yaml`);
    fs.writeFileSync(inline, stringify(r.inlineValues));
    args.push("--values", inline);
  }
  for (const p of r.parameters) args.push(p.forceString ? "--set-string" : "--set", `${p.name}=${p.value}`);
  return args;
}

/** One object a render produced, written to its own file. */
export interface RenderedObject {
  readonly render: HelmRender;
  /** Path of the object's file, relative to the output folder. */
  readonly out: string;
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

/** Where a render's objects go under the output folder: beside the Application's file path. */
export function renderFolder(r: HelmRender): string {
  return path.posix.join(path.posix.dirname(r.file).replace(/^fleet\//, ""), r.application, String(r.source));
}

/**
 * Runs `helm template` for every render (two at a time), writing each object to
 * `<out>/<renderFolder>/<NNN>-<kind>-<name>.yaml`. A failed render is a problem naming the
 * Application and Helm's message (a values.schema.json violation among them).
 */
export async function renderCharts(helm: string, renders: readonly HelmRender[], outDir: string, apiVersions: ReadonlyMap<string, readonly string[]> = new Map()): Promise<{ objects: RenderedObject[]; problems: FleetProblem[] }> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "clusterra-helm-"));
  // Helm's own folders in tmp: no repository configuration or cache of the user's is read.
  const env = { ...process.env, HELM_CACHE_HOME: path.join(tmp, "cache"), HELM_CONFIG_HOME: path.join(tmp, "config"), HELM_DATA_HOME: path.join(tmp, "data") };
  const objects: RenderedObject[] = [];
  const problems: FleetProblem[] = [];
  const queue = [...renders];
  const worker = async () => {
    for (let r = queue.shift(); r; r = queue.shift()) {
      const at = `Application/${r.application}/spec/sources/${r.source} (${r.chartLabel})`;
      let stdout: string;
      try {
        const apis = (apiVersions.get(r.server) ?? []).flatMap((v) => ["--api-versions", v]);
        stdout = (await run(helm, [...helmArgs(r, tmp), ...apis], { env, maxBuffer: 256 * 1024 * 1024 })).stdout;
      } catch (e) {
        const message = ((e as { stderr?: string }).stderr || (e as Error).message).trim();
        problems.push({ file: r.file, at, reason: `helm template failed: ${message}` });
        continue;
      }
      const folder = renderFolder(r);
      fs.rmSync(path.join(outDir, folder), { recursive: true, force: true });
      fs.mkdirSync(path.join(outDir, folder), { recursive: true });
      let n = 0;
      for (const doc of parseAllDocuments(stdout)) {
        // ArgoCD refuses a manifest that is not YAML (a key twice in one map): so does the check, by name.
        if (doc.errors.length) {
          problems.push({ file: r.file, at, reason: `renders a document that is not YAML, which ArgoCD cannot apply: ${doc.errors[0].message.split("\n")[0]}` });
          continue;
        }
        const object = doc.toJS() as { kind?: string; metadata?: { name?: string; namespace?: string } } | null;
        if (!object || typeof object !== "object") continue;
        const kind = String(object.kind);
        const name = String(object.metadata?.name);
        const out = path.posix.join(folder, `${String(n++).padStart(3, "0")}-${kind}-${name}.yaml`.replace(/[^A-Za-z0-9._/-]/g, "_"));
        // The object's own text as Helm printed it: re-serialising can change a value's type
        // for a YAML 1.1 reader such as kubectl's ("no" unquoted becomes false).
        const [start, , end] = doc.range;
        fs.writeFileSync(path.join(outDir, out), stdout.slice(start, end).trimEnd() + "\n");
        objects.push({ render: r, out, kind, name, namespace: object.metadata?.namespace });
      }
    }
  };
  try {
    await Promise.all([worker(), worker()]);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  objects.sort((a, b) => a.out.localeCompare(b.out));
  return { objects, problems };
}

/** Whether a chart (or a subchart) renders differently by the APIs the cluster serves. */
function gatesOnApis(dir: string): boolean {
  return fs.readdirSync(dir, { withFileTypes: true }).some((e) =>
    e.isDirectory() ? gatesOnApis(path.join(dir, e.name)) : /\.(yaml|tpl)$/.test(e.name) && fs.readFileSync(path.join(dir, e.name), "utf8").includes("Capabilities.APIVersions"),
  );
}

/**
 * The API versions each destination serves once synced, from the CRDs the renders create
 * there: `group/version` and `group/version/Kind`, as ArgoCD passes them to Helm.
 */
export function servedApis(objects: readonly RenderedObject[], outDir: string): Map<string, string[]> {
  const served = new Map<string, Set<string>>();
  for (const o of objects.filter((x) => x.kind === "CustomResourceDefinition")) {
    const crd = parse(fs.readFileSync(path.join(outDir, o.out), "utf8")) as { spec?: { group?: string; names?: { kind?: string }; versions?: { name: string; served?: boolean }[] } };
    const set = served.get(o.render.server) ?? new Set<string>();
    for (const v of (crd.spec?.versions ?? []).filter((x) => x.served !== false)) set.add(`${crd.spec?.group}/${v.name}`).add(`${crd.spec?.group}/${v.name}/${crd.spec?.names?.kind}`);
    served.set(o.render.server, set);
  }
  return new Map([...served].map(([server, set]) => [server, [...set].sort()]));
}

/**
 * Renders every Application, then once more those whose charts ask which APIs the cluster
 * serves, with the CRDs the fleet installs on the same cluster (ArgoCD passes the live
 * cluster's; after a first sync those are the same).
 */
export async function renderFleetCharts(helm: string, renders: readonly HelmRender[], outDir: string): Promise<{ objects: RenderedObject[]; problems: FleetProblem[] }> {
  const first = await renderCharts(helm, renders, outDir);
  const apis = servedApis(first.objects, outDir);
  const gated = new Set(renders.filter((r) => apis.has(r.server) && gatesOnApis(r.chartDir)));
  if (!gated.size) return first;
  const second = await renderCharts(helm, [...gated], outDir, apis);
  return {
    objects: [...first.objects.filter((o) => !gated.has(o.render)), ...second.objects].sort((a, b) => a.out.localeCompare(b.out)),
    problems: [...first.problems.filter((p) => ![...gated].some((r) => p.file === r.file && p.at.startsWith(`Application/${r.application}/spec/sources/${r.source} `))), ...second.problems],
  };
}

/** The ArgoCD chart Pulumi installs on central, as a render: its CRDs (Application, AppProject) validate the fleet's own objects. */
export function argoCdRender(chartsDir: string, kubeVersion: string): HelmRender {
  const chartLabel = `${ARGOCD_CHART.chart}-${ARGOCD_CHART.version}`;
  return {
    file: "(central stack: ArgoCD)", application: ARGOCD_CHART.chart, source: 0, chartLabel, chartDir: path.join(chartsDir, chartLabel),
    release: ARGOCD_CHART.release, namespace: ARGOCD_CHART.namespace, server: ARGOCD_IN_CLUSTER, kubeVersion, valueFiles: [], inlineValues: undefined, parameters: [], includeCrds: true, skipTests: false, skipSchemaValidation: false,
  };
}

/** Marks an output folder as a render, which the next render may replace. */
const RENDER_MARKER = ".clusterra-fleet-render";

/** The command: renders every Application into `out`; exit 0, 1 on a problem, 2 when Helm is missing. */
export async function runFleetRender(root: string, options: { charts: string; out: string }, out: (s: string) => void, err: (s: string) => void): Promise<number> {
  const helm = toolPath(root, "helm");
  if (!helm) {
    err("clusterra fleet render: helm is not installed; run `bash scripts/install-tools` (it builds the pinned Helm into .tools/bin)");
    return 2;
  }
  if (!fs.existsSync(options.charts)) {
    err(`clusterra fleet render: --charts ${options.charts} does not exist; valid: a folder of chart sources named <chart>-<version> (CI passes ../shared/reference/charts)`);
    return 2;
  }
  // The output folder is replaced: only an empty one or an earlier render (its marker file).
  const marker = path.join(options.out, RENDER_MARKER);
  if (fs.existsSync(options.out) && fs.readdirSync(options.out).length && !fs.existsSync(marker)) {
    err(`clusterra fleet render: --out ${options.out} is not empty and not an earlier render (no ${RENDER_MARKER}); valid: a new or empty folder`);
    return 2;
  }
  const started = Date.now();
  const { renders, problems } = helmRenders(root, options.charts);
  fs.rmSync(options.out, { recursive: true, force: true });
  fs.mkdirSync(options.out, { recursive: true });
  fs.writeFileSync(marker, "Written by `clusterra fleet render`; the next render replaces this folder.\n");
  const result = await renderFleetCharts(helm, renders, options.out);
  problems.push(...result.problems);
  for (const p of problems) err(`${p.file}: ${p.at}: ${p.reason}`);
  const counts = new Map<string, number>();
  for (const o of result.objects) counts.set(`${o.render.file} ${o.render.application}`, (counts.get(`${o.render.file} ${o.render.application}`) ?? 0) + 1);
  for (const [app, n] of counts) out(`  ${String(n).padStart(4)}  ${app}`);
  out(`fleet render: ${renders.length} Helm sources, ${result.objects.length} objects in ${path.relative(process.cwd(), options.out) || "."} (${((Date.now() - started) / 1000).toFixed(1)} s)${problems.length ? `, ${problems.length} problem(s)` : ""}`);
  return problems.length ? 1 : 0;
}

/**
 * One of a tenant's local-chart add-ons rendered now, as its generated Application renders
 * it (the chart in this checkout, its release and namespace, its value files in the
 * ApplicationSet's order): the objects. For readers of the rendered fleet that run without
 * ArgoCD (the journey's Slurm world, tests); a Helm failure is an error naming the add-on.
 */
export function renderTenantAddOn(root: string, helm: string, scope: string, tenantId: string, addon: string): Record<string, unknown>[] {
  const row = TENANT_ADD_ONS.find((a) => a.addon === addon);
  if (!row || row.source.kind !== "local-chart") throw new Error(`${addon} is not a local-chart add-on of TENANT_ADD_ONS`);
  const args = ["template", row.releaseName ?? row.addon, path.join(root, row.source.path), "--namespace", row.namespace || tenantNamespace(tenantId)];
  for (const f of tenantAddOnValueFiles(scope, tenantId, addon)) args.push("--values", path.join(root, f));
  const run = spawnSync(helm, args, { encoding: "utf8" });
  if (run.status !== 0) throw new Error(`helm template of ${tenantId}'s ${addon} failed: ${run.stderr.trim() || run.error?.message}`);
  return parseAllDocuments(run.stdout).map((d) => d.toJS() as Record<string, unknown>).filter((o) => o !== null && typeof o === "object");
}
