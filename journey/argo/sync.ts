/**
 * The journey's ArgoCD: syncs Applications into the journey's clusters with ArgoCD's
 * semantics, as the application controller would, and reports what a real one would show.
 *
 * - Sources: a directory of the fleet repository (its files' own text), or a Helm chart
 *   rendered as ArgoCD renders it (cli/fleet-render), `$values` from the same checkout.
 * - The AppProject's rules (sources, destinations, kinds), checked before anything applies.
 * - `resource.exclusions` from the installed chart's settings: an excluded kind is dropped
 *   from the sync with a warning, exactly as ArgoCD does.
 * - Phases, waves and kind order; each wave's workloads must become healthy before the next.
 * - Server-side apply as `argocd-controller`, conflicts forced, namespaces created
 *   (CreateNamespace with managedNamespaceMetadata); ignoreDifferences honoured on apply
 *   only with RespectIgnoreDifferences, as ArgoCD does.
 * - A remote cluster is reached only through its cluster Secret in `argocd` (label
 *   argocd.argoproj.io/secret-type=cluster) and that Secret's bearer token, never the
 *   journey's admin; its cache is built by listing every API the cluster serves, as
 *   ArgoCD's cluster cache does, and without respectRBAC one forbidden list fails it all.
 */
import * as fs from "fs";
import * as path from "path";
import { Kubectl } from "../kube/kubectl";
import { directoryManifests, groupOf, splitManifests, type KubeObject, type Manifest } from "./manifests";
import { syncSteps } from "./order";
import { destinationRefusal, kindRefusal, sourceRefusal, type AppProjectSpec } from "./project";
import { isExcluded, type ArgoSettings } from "./settings";
import { health, type Health } from "./health";

export { ARGOCD_IN_CLUSTER as IN_CLUSTER } from "../../facts/versions";
import { ARGOCD_CLUSTER_SELECTOR, ARGOCD_IN_CLUSTER as IN_CLUSTER } from "../../facts/versions";
const FIELD_MANAGER = "argocd-controller";

interface AppSource {
  repoURL: string;
  path?: string;
  chart?: string;
  ref?: string;
  targetRevision?: string;
  directory?: { recurse?: boolean };
}

export interface Application extends KubeObject {
  readonly spec: {
    project: string;
    source?: AppSource;
    sources?: AppSource[];
    destination: { server: string; namespace?: string };
    syncPolicy?: { automated?: { prune?: boolean; selfHeal?: boolean }; syncOptions?: string[]; managedNamespaceMetadata?: { labels?: Record<string, string>; annotations?: Record<string, string> } };
    ignoreDifferences?: { group?: string; kind: string; name?: string; namespace?: string; jsonPointers?: string[]; managedFieldsManagers?: string[] }[];
  };
}

/** What one sync of one Application came to. */
export interface AppResult {
  readonly name: string;
  readonly server: string;
  /** Every object applied (nothing refused, excluded or failed). */
  readonly synced: boolean;
  readonly healthy: boolean;
  /** Reasons, each naming the object. */
  readonly problems: string[];
  /** The sync failed before applying anything (ArgoCD's dry run). */
  readonly dryRunFailed: boolean;
  /** Objects excluded by resource.exclusions (ArgoCD's warning). */
  readonly excluded: string[];
  /** Applications among its objects (an app-of-apps's children), with the file each came from. */
  readonly children: { app: Application; file: string }[];
  /** ApplicationSets among its objects, for the journey's ApplicationSet controller. */
  readonly appSets: { object: KubeObject; file: string }[];
  readonly applied: number;
}

/** Renders an Application's Helm sources: the objects per source index, or a reason. */
export type HelmSourceRenderer = (app: Application, file: string | undefined, sourceIndex: number) => Manifest[] | string;

export interface ClusterAccess {
  /** The journey's local address of a destination's API (the peering's stand-in). */
  readonly localUrl: (server: string) => string | undefined;
  /** Where to keep generated kubeconfigs. */
  readonly dir: string;
  readonly kubectl: string;
}

interface ServedKind {
  readonly resource: string;
  readonly namespaced: boolean;
  readonly version: string;
  readonly listable: boolean;
}

interface Target {
  readonly kubectl: Kubectl;
  /** Kinds the API serves: kind key `group/Kind` -> plural resource and scope. */
  resources: Map<string, ServedKind>;
  /** The cache's first build: undefined while unbuilt, else the problems it met. */
  cacheProblems?: string[];
}

export class Argo {
  private readonly targets = new Map<string, Target>();

  constructor(
    private readonly central: Kubectl,
    private readonly settings: ArgoSettings,
    private readonly root: string,
    private readonly fleetRepo: string,
    private readonly renderHelm: HelmSourceRenderer,
    private readonly access: ClusterAccess,
  ) {}

  /** The AppProject as it lives on central (undefined: missing, which ArgoCD refuses). */
  private async project(name: string): Promise<AppProjectSpec | undefined> {
    return (await this.central.get<{ spec: AppProjectSpec }>(["appproject", name, "-n", "argocd"]))?.spec;
  }

  /** The destination's client, through its cluster Secret for a remote cluster. */
  private async target(server: string): Promise<Target | string> {
    const known = this.targets.get(server);
    if (known) return known;
    let kubectl: Kubectl;
    if (server === IN_CLUSTER) kubectl = this.central;
    else {
      const secrets = await this.central.get<{ items: { metadata: { name: string }; data?: Record<string, string> }[] }>(["secrets", "-n", "argocd", "-l", ARGOCD_CLUSTER_SELECTOR]);
      const decode = (v?: string) => (v ? Buffer.from(v, "base64").toString("utf8") : "");
      const secret = secrets?.items.find((s) => decode(s.data?.server) === server);
      if (!secret) return `no cluster Secret in argocd for ${server} (label ${ARGOCD_CLUSTER_SELECTOR}): ArgoCD does not know the cluster`;
      const local = this.access.localUrl(server);
      if (!local) return `${server} is not reachable from central`;
      let config: { bearerToken?: string; tlsClientConfig?: { caData?: string } };
      try {
        config = JSON.parse(decode(secret.data?.config)) as typeof config;
      } catch (e) {
        return `cluster Secret ${secret.metadata.name}: config is not JSON (${(e as Error).message})`;
      }
      const file = path.join(this.access.dir, `${secret.metadata.name}.kubeconfig`);
      fs.writeFileSync(file, JSON.stringify({
        apiVersion: "v1", kind: "Config", "current-context": "c",
        clusters: [{ name: "c", cluster: { server: local, "certificate-authority-data": config.tlsClientConfig?.caData ?? "" } }],
        users: [{ name: "u", user: { token: config.bearerToken ?? "" } }],
        contexts: [{ name: "c", context: { cluster: "c", user: "u" } }],
      }), { mode: 0o600 });
      kubectl = new Kubectl(this.access.kubectl, file);
    }
    const t: Target = { kubectl, resources: new Map() };
    await this.discover(t);
    this.targets.set(server, t);
    return t;
  }

  /** Refreshes what the cluster serves (after CRDs are created). */
  private async discover(t: Target): Promise<void> {
    const r = await t.kubectl.run(["api-resources", "-o", "wide", "--no-headers"]);
    t.resources.clear();
    for (const line of r.stdout.split("\n").filter(Boolean)) {
      // NAME SHORTNAMES APIVERSION NAMESPACED KIND VERBS CATEGORIES
      const cols = line.trim().split(/\s+/);
      const nsIndex = cols.findIndex((c) => c === "true" || c === "false");
      if (nsIndex < 2) continue;
      const apiVersion = cols[nsIndex - 1];
      const kind = cols[nsIndex + 1];
      const verbs = (cols[nsIndex + 2] ?? "").replace(/^\[|\]$/g, "").split(",");
      t.resources.set(`${groupOf(apiVersion)}/${kind}`, { resource: cols[0], namespaced: cols[nsIndex] === "true", version: apiVersion, listable: verbs.includes("list") });
    }
  }

  /**
   * ArgoCD's cluster cache of a remote cluster: every served, listable, non-excluded API,
   * listed with the cluster's credential. Without respectRBAC, one forbidden list fails it.
   */
  async cacheProblems(server: string): Promise<string[]> {
    const t = await this.target(server);
    if (typeof t === "string") return [t];
    await this.discover(t);
    const problems: string[] = [];
    const entries = [...t.resources.entries()].filter(([key, r]) => r.listable && !isExcluded(this.settings, key.split("/")[0], key.split("/")[1], server));
    const queue = [...entries];
    const worker = async () => {
      for (let e = queue.shift(); e; e = queue.shift()) {
        const [key, r] = e;
        const res = await t.kubectl.run(["get", `${r.resource}.${r.version.includes("/") ? r.version.split("/")[1] + "." + groupOf(r.version) : r.version}`.replace(/\.$/, ""), "-A", "--chunk-size=1", "-o", "name", "--request-timeout=10s"]);
        if (res.code !== 0 && /forbidden/i.test(res.stderr)) problems.push(`${key}: list forbidden`);
      }
    };
    await Promise.all(Array.from({ length: 6 }, worker));
    return problems.sort();
  }

  /** Whether the controller's cache of this cluster loads (ArgoCD's verdict for the whole cluster). */
  async cacheLoads(server: string): Promise<string | undefined> {
    const t = await this.target(server);
    if (typeof t === "string") return t;
    if (t.cacheProblems === undefined) t.cacheProblems = server === IN_CLUSTER ? [] : await this.cacheProblems(server);
    if (!t.cacheProblems.length || this.settings.respectRBAC) return undefined;
    return `failed to load initial state of resource ${t.cacheProblems[0].split(":")[0]} (${t.cacheProblems.length} APIs forbidden to the cluster credential: ${t.cacheProblems.slice(0, 6).join("; ")}${t.cacheProblems.length > 6 ? "; ..." : ""})`;
  }

  /** The Application's objects, from its sources; refusals as problems. */
  private manifests(app: Application, file: string | undefined, problems: string[]): Manifest[] {
    const sources = app.spec.sources ?? (app.spec.source ? [app.spec.source] : []);
    const out: Manifest[] = [];
    sources.forEach((s, i) => {
      if (s.ref) return;
      if (s.chart || (s.path && fs.existsSync(path.join(this.root, s.path, "Chart.yaml")))) {
        const rendered = this.renderHelm(app, file, i);
        if (typeof rendered === "string") problems.push(`source ${i}: ${rendered}`);
        else out.push(...rendered);
        return;
      }
      if (s.repoURL !== this.fleetRepo || !s.path) return void problems.push(`source ${i}: ${s.repoURL} ${s.path ?? ""} is not the fleet repository`);
      out.push(...directoryManifests(this.root, s.path, !!s.directory?.recurse));
    });
    return out;
  }

  /**
   * One sync of one Application (a later call is a later sync: self-heal or a new commit).
   * `file` is where the Application was read (for Helm sources' value files).
   */
  async sync(app: Application, file?: string, o: { partial?: boolean; healthTimeoutMs?: number } = {}): Promise<AppResult> {
    const healthTimeoutMs = o.healthTimeoutMs ?? 25_000;
    const name = app.metadata.name;
    const server = app.spec.destination.server;
    const problems: string[] = [];
    const excluded: string[] = [];
    const children: { app: Application; file: string }[] = [];
    const appSets: { object: KubeObject; file: string }[] = [];
    let dryRunFailed = false;
    const result = (synced: boolean, healthy: boolean, applied = 0): AppResult => ({ name, server, synced, healthy, problems, excluded, children, appSets, applied, dryRunFailed });

    const project = await this.project(app.spec.project);
    if (!project) return problems.push(`AppProject ${app.spec.project} does not exist`), result(false, false);
    const sources = app.spec.sources ?? (app.spec.source ? [app.spec.source] : []);
    for (const s of sources) {
      const refusal = sourceRefusal(project, s.repoURL, app.spec.project);
      if (refusal) problems.push(refusal);
    }
    const destNs = app.spec.destination.namespace ?? "";
    const destRefusal = destinationRefusal(project, server, destNs, app.spec.project);
    if (destRefusal) problems.push(destRefusal);
    if (problems.length) return result(false, false);

    const t = await this.target(server);
    if (typeof t === "string") return problems.push(t), result(false, false);
    // Other Applications may have added CRDs since: ArgoCD's cache follows them.
    await this.discover(t);
    const cache = await this.cacheLoads(server);
    if (cache) return problems.push(cache), result(false, false);

    const manifests = this.manifests(app, file, problems);
    if (problems.length) return result(false, false);
    const options = new Set(app.spec.syncPolicy?.syncOptions ?? []);

    // Refusals and exclusions are decided before anything applies, as ArgoCD does.
    const kept: Manifest[] = [];
    for (const m of manifests) {
      const group = groupOf(m.object.apiVersion);
      const id = `${m.object.kind}/${m.object.metadata.name}`;
      if (isExcluded(this.settings, group, m.object.kind, server)) {
        excluded.push(id);
        continue;
      }
      const info = t.resources.get(`${group}/${m.object.kind}`);
      // A kind whose CRD this sync creates is namespaced unless the CRD says otherwise.
      const crd = manifests.find((c) => c.object.kind === "CustomResourceDefinition" && (c.object.spec as { group?: string; names?: { kind?: string } } | undefined)?.group === group && (c.object.spec as { names?: { kind?: string } }).names?.kind === m.object.kind);
      const namespaced = info ? info.namespaced : crd ? (crd.object.spec as { scope?: string }).scope !== "Cluster" : true;
      const kindRef = kindRefusal(project, { group, kind: m.object.kind }, namespaced, app.spec.project);
      if (kindRef) {
        problems.push(`${id}: ${kindRef}`);
        continue;
      }
      if (namespaced) {
        const ns = m.object.metadata.namespace ?? destNs;
        const nsRef = destinationRefusal(project, server, ns, app.spec.project);
        if (nsRef) {
          problems.push(`${id}: ${nsRef}`);
          continue;
        }
      }
      kept.push(m);
    }
    if (problems.length) return result(false, false);

    // ArgoCD's dry run fails the whole sync on a kind the cluster does not serve, unless its
    // CRD is part of the same sync or the object (or app) skips the dry run for it.
    for (const m of kept) {
      const group = groupOf(m.object.apiVersion);
      if (t.resources.has(`${group}/${m.object.kind}`)) continue;
      const crdHere = kept.some((c) => c.object.kind === "CustomResourceDefinition" && (c.object.spec as { group?: string; names?: { kind?: string } } | undefined)?.group === group && (c.object.spec as { names?: { kind?: string } }).names?.kind === m.object.kind);
      const skip = `${m.object.metadata.annotations?.["argocd.argoproj.io/sync-options"] ?? ""},${[...options].join(",")}`.includes("SkipDryRunOnMissingResource=true");
      if (!crdHere && !skip) dryRunFailed = true;
      if (!crdHere && !skip) problems.push(`The Kubernetes API could not find ${group}/${m.object.kind} for requested resource ${m.object.metadata.namespace ?? destNs}/${m.object.metadata.name}. Make sure the "${m.object.kind}" CRD is installed on the destination cluster.`);
    }
    if (problems.length && !o.partial) return result(false, false);
    const dryRunProblems = problems.length;

    if (options.has("CreateNamespace=true") && destNs) {
      const meta = app.spec.syncPolicy?.managedNamespaceMetadata;
      const ns = { apiVersion: "v1", kind: "Namespace", metadata: { name: destNs, ...(meta?.labels ? { labels: meta.labels } : {}), ...(meta?.annotations ? { annotations: meta.annotations } : {}) } };
      const r = await t.kubectl.run(["apply", "--server-side", `--field-manager=${FIELD_MANAGER}`, "--force-conflicts", "-f", "-"], { input: JSON.stringify(ns) });
      if (r.code !== 0) problems.push(`Namespace/${destNs}: ${r.stderr.trim()}`);
    }

    let applied = 0;
    let healthy = true;
    for (const step of syncSteps(kept.map((m) => ({ ...m.object, manifest: m })))) {
      const workloads: { ref: string; ns?: string; kind: string }[] = [];
      const createdCrds: string[] = [];
      await Promise.all(chunks(step.objects, 4).map(async (batch) => {
        for (const o of batch) {
          const m = o.manifest;
          const id = `${m.object.kind}/${m.object.metadata.name}`;
          const info = t.resources.get(`${groupOf(m.object.apiVersion)}/${m.object.kind}`);
          const namespaced = info ? info.namespaced : m.object.kind !== "CustomResourceDefinition" && m.object.kind !== "Namespace";
          const ns = namespaced ? m.object.metadata.namespace ?? destNs : undefined;
          const text = await this.desiredText(app, t, m, ns, options.has("RespectIgnoreDifferences=true"));
          const r = await t.kubectl.run(["apply", "--server-side", `--field-manager=${FIELD_MANAGER}`, "--force-conflicts", ...(ns ? ["-n", ns] : []), "-f", "-"], { input: text });
          if (r.code !== 0) {
            problems.push(`${id}${ns ? ` (${ns})` : ""}: ${r.stderr.trim().split("\n").slice(-1)[0]}`);
            continue;
          }
          applied++;
          if (m.object.kind === "CustomResourceDefinition") createdCrds.push(m.object.metadata.name);
          if (m.object.kind === "Application" && m.object.apiVersion.startsWith("argoproj.io/")) children.push({ app: m.object as unknown as Application, file: m.origin });
          if (m.object.kind === "ApplicationSet" && m.object.apiVersion.startsWith("argoproj.io/")) appSets.push({ object: m.object, file: m.origin });
          workloads.push({ ref: `${info?.resource ?? m.object.kind.toLowerCase()}/${m.object.metadata.name}`, kind: m.object.kind, ...(ns ? { ns } : {}) });
        }
      }));
      if (createdCrds.length) {
        await t.kubectl.run(["wait", "--for=condition=Established", "--timeout=60s", ...createdCrds.map((c) => `crd/${c}`)]);
        await this.discover(t);
      }
      // A wave waits for its resources' health before the next.
      const verdicts = await Promise.all(workloads.map((w) => health(t.kubectl, w.kind, w.ref, w.ns, healthTimeoutMs)));
      verdicts.forEach((h: Health, i) => {
        if (h.status !== "Healthy") {
          healthy = false;
          problems.push(`${workloads[i].kind}/${workloads[i].ref.split("/")[1]}${workloads[i].ns ? ` (${workloads[i].ns})` : ""} ${h.status}: ${h.reason}`);
        }
      });
    }
    const synced = dryRunProblems === 0 && !problems.some((p) => !/ (Progressing|Degraded|Missing):/.test(p));
    return result(synced, healthy, applied);
  }

  /**
   * The text applied for one object: its own text, unless RespectIgnoreDifferences makes
   * ArgoCD carry the live values of ignored fields into the desired state.
   */
  private async desiredText(app: Application, t: Target, m: Manifest, ns: string | undefined, respect: boolean): Promise<string> {
    if (!respect) return m.text;
    const group = groupOf(m.object.apiVersion);
    const rules = (app.spec.ignoreDifferences ?? []).filter((d) => (d.group ?? "") === group && d.kind === m.object.kind && (!d.name || d.name === m.object.metadata.name) && (!d.namespace || d.namespace === ns));
    const pointers = rules.flatMap((r) => r.jsonPointers ?? []);
    if (!pointers.length) return m.text;
    const info = t.resources.get(`${group}/${m.object.kind}`);
    const live = info ? await t.kubectl.get<Record<string, unknown>>([`${info.resource}${group ? "." + group : ""}`, m.object.metadata.name, ...(ns ? ["-n", ns] : [])]) : undefined;
    // Only an object that exists keeps its live values: a new one is created whole.
    if (!live) return m.text;
    const desired = JSON.parse(JSON.stringify(m.object)) as Record<string, unknown>;
    for (const p of pointers) {
      const keys = p.split("/").slice(1).map((k) => k.replace(/~1/g, "/").replace(/~0/g, "~"));
      const liveValue = keys.reduce<unknown>((o, k) => (o && typeof o === "object" ? (o as Record<string, unknown>)[k] : undefined), live);
      let parent: Record<string, unknown> = desired;
      for (const k of keys.slice(0, -1)) parent = (parent[k] ??= {}) as Record<string, unknown>;
      const last = keys[keys.length - 1];
      if (liveValue === undefined) delete parent[last];
      else parent[last] = liveValue;
    }
    return JSON.stringify(desired);
  }
}

function chunks<T>(items: readonly T[], n: number): T[][] {
  const out: T[][] = Array.from({ length: n }, () => []);
  items.forEach((x, i) => out[i % n].push(x));
  return out.filter((c) => c.length);
}

/** Applications in a text (an app-of-apps directory, a tenant's entry file). */
export function applicationsIn(text: string, origin: string): Application[] {
  return splitManifests(text, origin).map((m) => m.object).filter((o): o is Application => o.kind === "Application" && o.apiVersion.startsWith("argoproj.io/"));
}
