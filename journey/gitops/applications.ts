/**
 * What real ArgoCD did, read off central's API server: each Application's sync and health as
 * its controller reports them, an ApplicationSet's rollout (RollingSync's steps, in the order
 * the Applications were synced), and a refresh asked for as an operator asks for one (the
 * refresh annotation), waited on until the controller has acted.
 */
import { clusterParams, expandApplicationSet, TENANT_ADD_ONS, type ClusterParams, type GitFiles } from "../../components/fleet/application-set";
import { ARGOCD_CLUSTER_SELECTOR } from "../../facts/versions";
import { centralFleetPath, tenantEntryApplication, tenantNamespace, tenantsFleetPath } from "../../facts/fleet";
import type { Kubectl } from "../kube/kubectl";
import { waitFor } from "../kube/processes";

/** How long the journey lets ArgoCD take to sync the whole fleet from a fresh install. */
export const FLEET_SYNC_TIMEOUT_MS = 20 * 60_000;
/** How long a chart change's rollout may take, and how long nothing may move before it counts as stopped. */
export const ROLLOUT_TIMEOUT_MS = 10 * 60_000;
export const ROLLOUT_QUIET_MS = 90_000;
/** The annotation that asks the application controller for a refresh (it removes it once done). */
export const REFRESH_ANNOTATION = "argocd.argoproj.io/refresh";

interface Condition {
  type: string;
  message?: string;
  status?: string;
}

export interface ApplicationObject {
  metadata: { name: string; annotations?: Record<string, string>; ownerReferences?: { kind: string; name: string }[] };
  spec: { syncPolicy?: { retry?: unknown } };
  status?: {
    sync?: { status?: string; revision?: string };
    health?: { status?: string; message?: string };
    reconciledAt?: string;
    conditions?: Condition[];
    operationState?: { phase?: string; message?: string; startedAt?: string; finishedAt?: string; retryCount?: number };
    /** Each sync that deployed, oldest first. */
    history?: { deployStartedAt?: string; deployedAt?: string }[];
    resources?: { kind: string; name: string; namespace?: string; status?: string; health?: { status?: string; message?: string } }[];
  };
}

/** One Application as its controller reports it. */
export interface LiveApplication {
  readonly name: string;
  readonly sync: string;
  readonly health: string;
  /** The ApplicationSet that generated it, if one did. */
  readonly appSet?: string;
  readonly retry: boolean;
  readonly detail: string;
}

/** An Application's report line: its objects, its last operation, its conditions, and what is not healthy or not synced. Pure. */
export function applicationDetail(a: ApplicationObject): string {
  const st = a.status ?? {};
  const resources = st.resources ?? [];
  const unhealthy = resources.filter((r) => r.health?.status && r.health.status !== "Healthy").map((r) => `${r.kind}/${r.namespace ? `${r.namespace}/` : ""}${r.name} ${r.health?.status}${r.health?.message ? ` (${r.health.message})` : ""}`);
  const outOfSync = resources.filter((r) => r.status && r.status !== "Synced").map((r) => `${r.kind}/${r.name} ${r.status}`);
  const op = st.operationState;
  return [
    `${resources.length} objects`,
    `sync ${st.sync?.status ?? "Unknown"}, health ${st.health?.status ?? "Unknown"}${st.health?.message ? ` (${st.health.message})` : ""}`,
    op ? `last operation ${op.phase ?? "?"}${op.retryCount ? ` after ${op.retryCount} retries` : ""}${op.phase !== "Succeeded" && op.message ? `: ${op.message}` : ""}` : "no operation yet",
    ...(st.conditions ?? []).map((c) => `${c.type}: ${c.message ?? ""}`),
    unhealthy.length ? `not healthy: ${unhealthy.slice(0, 4).join("; ")}` : "",
    outOfSync.length ? `out of sync: ${outOfSync.slice(0, 4).join("; ")}` : "",
  ].filter(Boolean).join("; ").slice(0, 900);
}

/** An Application as the journey reports it. Pure. */
export function liveApplication(a: ApplicationObject): LiveApplication {
  const st = a.status ?? {};
  const owner = a.metadata.ownerReferences?.find((o) => o.kind === "ApplicationSet")?.name;
  return {
    name: a.metadata.name,
    sync: st.sync?.status ?? "Unknown",
    health: st.health?.status ?? "Unknown",
    ...(owner ? { appSet: owner } : {}),
    retry: !!a.spec.syncPolicy?.retry,
    detail: applicationDetail(a),
  };
}

/** Every Application in ArgoCD's namespace, by name. */
export async function liveApplications(kc: Kubectl, namespace: string): Promise<LiveApplication[]> {
  const list = await kc.get<{ items: ApplicationObject[] }>(["applications.argoproj.io", "-n", namespace]);
  return (list?.items ?? []).map(liveApplication).sort((a, b) => a.name.localeCompare(b.name));
}

/** One Application's part in a rollout. */
export interface RolloutEntry {
  readonly name: string;
  readonly step: number;
  /** Synced by this rollout. */
  readonly synced: boolean;
  readonly healthy: boolean;
}

export interface RolloutResult {
  /** In the order they were synced. */
  readonly entries: readonly RolloutEntry[];
  /** The step (0-based) the rollout stopped at, when one did not become healthy. */
  readonly stoppedAt?: number;
  readonly progressive: boolean;
  readonly problems: readonly string[];
}

interface ApplicationSetObject {
  status?: { conditions?: Condition[]; applicationStatus?: { application: string; status?: string; step?: string; message?: string }[] };
}

/**
 * When an Application's first sync of a rollout started: the first deployment in its history
 * that started at `since` or later (any, without `since`), else its running operation's start.
 * A later self-heal of the same Application does not move it. Pure.
 */
export function rolloutStart(a: ApplicationObject, since = ""): string {
  const deployed = (a.status?.history ?? []).map((h) => h.deployStartedAt ?? "").filter((t) => t && t >= since).sort();
  if (deployed.length) return deployed[0];
  const op = a.status?.operationState?.startedAt ?? "";
  return op && op >= since ? op : "";
}

/**
 * An ApplicationSet's rollout as real ArgoCD ran it: its Applications in the order their first
 * sync of the rollout started (`since`: only syncs that started then or later count), each
 * with its RollingSync step (the controller's applicationStatus) and health. Pure.
 */
export function rolloutOf(set: ApplicationSetObject, apps: readonly ApplicationObject[], setName: string, progressive: boolean, since?: string): RolloutResult {
  const steps = new Map((set.status?.applicationStatus ?? []).map((s) => [s.application, Number(s.step ?? "1") - 1]));
  const mine = apps.filter((a) => a.metadata.ownerReferences?.some((o) => o.kind === "ApplicationSet" && o.name === setName));
  const started = (a: ApplicationObject) => rolloutStart(a, since);
  const entries = [...mine].sort((a, b) => (started(a) || "~").localeCompare(started(b) || "~") || a.metadata.name.localeCompare(b.metadata.name)).map((a) => ({
    name: a.metadata.name,
    step: steps.get(a.metadata.name) ?? 0,
    synced: !!started(a),
    healthy: a.status?.health?.status === "Healthy" && a.status?.sync?.status === "Synced",
  }));
  const stuck = entries.filter((e) => !e.healthy).map((e) => e.step);
  const problems = (set.status?.conditions ?? []).filter((c) => /Error/.test(c.type) && c.status === "True").map((c) => `${c.type}: ${c.message ?? ""}`);
  return { entries, ...(stuck.length ? { stoppedAt: Math.min(...stuck) } : {}), progressive, problems };
}

/** An ApplicationSet's rollout, read live. */
export async function liveRollout(kc: Kubectl, namespace: string, setName: string, progressive: boolean, since?: string): Promise<RolloutResult> {
  const set = await kc.get<ApplicationSetObject>(["applicationsets.argoproj.io", setName, "-n", namespace]);
  if (!set) return { entries: [], progressive, problems: [`no ApplicationSet ${setName}`] };
  const apps = (await kc.get<{ items: ApplicationObject[] }>(["applications.argoproj.io", "-n", namespace]))?.items ?? [];
  return rolloutOf(set, apps, setName, progressive, since);
}

/**
 * Asks the application controller to refresh an Application (as `argocd app get --refresh`
 * does) and waits until it has: the annotation removed, its reconciliation newer than the
 * ask, and any sync that started running to its end. Returns what went wrong, if anything.
 */
export async function refreshApplication(kc: Kubectl, namespace: string, name: string, timeoutMs = 120_000): Promise<string[]> {
  const asked = new Date(Date.now() - 1000).toISOString().replace(/\.\d+Z$/, "Z");
  const r = await kc.run(["annotate", "--overwrite", "applications.argoproj.io", name, "-n", namespace, `${REFRESH_ANNOTATION}=normal`]);
  if (r.code !== 0) return [r.stderr.trim()];
  const done = await waitFor(async () => {
    const a = await kc.get<ApplicationObject>(["applications.argoproj.io", name, "-n", namespace]);
    if (!a || a.metadata.annotations?.[REFRESH_ANNOTATION] !== undefined) return undefined;
    if ((a.status?.reconciledAt ?? "") < asked) return undefined;
    return a.status?.operationState?.phase === "Running" ? undefined : a;
  }, timeoutMs, 1000);
  if (!done) return [`Application ${name} was not refreshed within ${timeoutMs / 1000} s`];
  const op = done.status?.operationState;
  return op && op.phase !== "Succeeded" && (op.startedAt ?? "") >= asked ? [`sync ${op.phase}: ${op.message ?? ""}`] : [];
}

/** The cluster generator's parameters from the cluster Secrets in ArgoCD's namespace, as the controller reads them. */
export async function liveClusterParams(kc: Kubectl, namespace: string): Promise<ClusterParams[]> {
  const secrets = await kc.get<{ items: { metadata: { labels?: Record<string, string>; annotations?: Record<string, string> }; data?: Record<string, string> }[] }>(["secrets", "-n", namespace, "-l", ARGOCD_CLUSTER_SELECTOR]);
  return (secrets?.items ?? []).map(clusterParams);
}

/** What an Application says that generation decides (project, destination, sources), with Go's omitempty applied: no null, empty or false leaf. Pure. */
export function generatedSpec(spec: Record<string, unknown>): unknown {
  const prune = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(prune);
    if (v && typeof v === "object") {
      const out = Object.fromEntries(Object.entries(v).map(([k, x]) => [k, prune(x)]).filter(([, x]) => !(x === null || x === undefined || x === "" || x === false || (Array.isArray(x) && x.length === 0) || (typeof x === "object" && x !== null && !Array.isArray(x) && Object.keys(x).length === 0))));
      return Object.keys(out).sort().reduce<Record<string, unknown>>((o, k) => ((o[k] = out[k]), o), {});
    }
    return v;
  };
  return prune({ project: spec.project, destination: spec.destination, source: spec.source, sources: spec.sources });
}

/**
 * Where the offline expander (`fleet check`'s, components/fleet/application-set.ts) and the real
 * ApplicationSet controller disagree on one set: Applications only one of them makes, and
 * each Application whose generated spec differs. Empty when they agree. Pure.
 */
export function expanderDifferences(set: Record<string, unknown>, clusters: readonly ClusterParams[], git: GitFiles, live: readonly { metadata: { name: string; ownerReferences?: { kind: string; name: string }[] }; spec: Record<string, unknown> }[]): string[] {
  const name = String((set.metadata as { name?: string } | undefined)?.name);
  const offline = new Map(expandApplicationSet(set, clusters, git).map((g) => [g.application.metadata.name, generatedSpec(g.application.spec as Record<string, unknown>)]));
  const real = new Map(live.filter((a) => a.metadata.ownerReferences?.some((o) => o.kind === "ApplicationSet" && o.name === name)).map((a) => [a.metadata.name, generatedSpec(a.spec)]));
  const out: string[] = [];
  for (const n of offline.keys()) if (!real.has(n)) out.push(`${name}: ${n} expanded offline, not generated by ArgoCD`);
  for (const n of real.keys()) if (!offline.has(n)) out.push(`${name}: ${n} generated by ArgoCD, not expanded offline`);
  for (const [n, spec] of offline) {
    const r = real.get(n);
    if (r !== undefined && JSON.stringify(r) !== JSON.stringify(spec)) out.push(`${name}: ${n}: offline ${JSON.stringify(spec).slice(0, 300)} != ArgoCD ${JSON.stringify(r).slice(0, 300)}`);
  }
  return out;
}

/** An Application's ExternalSecrets and when each became Ready ("" while it is not). */
export interface SecretsReady {
  readonly app: string;
  readonly secrets: readonly { readonly name: string; readonly readyAt: string }[];
}

/**
 * Where RollingSync moved on before an Application's ExternalSecrets were Ready: each
 * Application of a later step whose first sync of the rollout started before (or without) an
 * earlier step's ExternalSecret being Ready. Empty when every step waited. Pure.
 */
export function secretsGateViolations(steps: ReadonlyMap<string, number>, starts: ReadonlyMap<string, string>, ready: readonly SecretsReady[]): string[] {
  const out: string[] = [];
  for (const r of ready) {
    const step = steps.get(r.app);
    if (step === undefined) continue;
    for (const [later, s] of steps) {
      const started = starts.get(later) ?? "";
      if (s <= step || !started) continue;
      for (const es of r.secrets.filter((x) => !x.readyAt || x.readyAt > started)) {
        out.push(`${later} (step ${s + 1}) started ${started}, before ${r.app}'s ExternalSecret ${es.name} was Ready (${es.readyAt || "never"})`);
      }
    }
  }
  return out;
}

/** Another central of the environment (a cell): its scope, and the ids of its tenants. */
export interface OtherCentral {
  readonly scope: string;
  readonly tenants: readonly string[];
}

/**
 * What a central's ArgoCD holds of another central's: each Application whose sources read that
 * central's folders (fleet/central/<scope>, fleet/tenants/<scope>), or that is named for or
 * deploys into one of its tenants (`<id>-...`, namespace tenant-<id>). Each a line naming the
 * Application and why. Pure.
 */
export function crossCentralApplications(apps: readonly { metadata: { name: string }; spec: Record<string, unknown> }[], others: readonly OtherCentral[]): string[] {
  const found: string[] = [];
  for (const a of apps) {
    const strings: string[] = [];
    collectStrings(a.spec, strings);
    for (const o of others) {
      const folders = [centralFleetPath(o.scope), tenantsFleetPath(o.scope)];
      const folder = strings.find((s) => folders.some((f) => s === f || s.includes(`${f}/`)));
      if (folder) found.push(`${a.metadata.name} reads ${folder} (central ${o.scope}'s)`);
      const tenant = o.tenants.find((id) => tenantApplicationNames(id).includes(a.metadata.name) || strings.includes(tenantNamespace(id)));
      if (tenant) found.push(`${a.metadata.name} is tenant ${tenant}'s (central ${o.scope}'s)`);
    }
  }
  return found;
}

/** The Applications a central's ArgoCD holds for a tenant: its entry, and one per add-on its ApplicationSets generate. */
function tenantApplicationNames(id: string): string[] {
  return [tenantEntryApplication(id), ...TENANT_ADD_ONS.map((a) => `${id}-${a.addon}`)];
}

function collectStrings(v: unknown, into: string[]): void {
  if (typeof v === "string") into.push(v);
  else if (Array.isArray(v)) for (const x of v) collectStrings(x, into);
  else if (v && typeof v === "object") for (const x of Object.values(v)) collectStrings(x, into);
}
