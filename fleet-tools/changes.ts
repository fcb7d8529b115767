/**
 * What a pull request's change reaches in the fleet, so `fleet check --changed <base>` checks
 * that and no more: a tenant's files or stack file reach that tenant; a central's files or
 * stack file reach the central and every tenant of it (its ApplicationSets and shared values
 * make their Applications); a connector's, that connector; anything else the fleet is made
 * from (the local charts, the project's code, facts/, package files) reaches the whole fleet,
 * and documentation nothing. The whole check still runs on main.
 */
import { spawnSync } from "child_process";
import { parse } from "yaml";
import { centralScopesFromStackFiles, joinedScope, readAllStackFiles, stackShortName } from "../config";
import { CONFIG_NAMESPACE, STACK_CONFIG_DIR } from "../facts/project";
import { fleetPlace } from "../facts/fleet";

/** What a fleet check looks at. */
export interface FleetSelection {
  /** Whether a fleet file (a path from the repository's root) is checked. */
  readonly file: (rel: string) => boolean;
  /** Whether a tenant's entry is rendered and its Applications generated and checked (its central's scope, its id). */
  readonly tenant: (scope: string, id: string) => boolean;
  /** Whether a stack file's fleet is rendered and compared with what is committed. */
  readonly stack: (stack: string) => boolean;
  /** What is checked, in words. */
  readonly summary: string;
}

/** Every file, tenant and stack: the check on main. */
export const WHOLE_FLEET: FleetSelection = { file: () => true, tenant: () => true, stack: () => true, summary: "the whole fleet" };

/** A change the fleet is made from, by what it reaches. */
export interface Reach {
  /** Central scopes reached whole: their own files and every tenant of theirs. */
  readonly scopes: ReadonlySet<string>;
  /** Tenants reached, as `<scope>/<id>`. */
  readonly tenants: ReadonlySet<string>;
  /** Connectors reached, by cluster name. */
  readonly connectors: ReadonlySet<string>;
  /** The first path that reaches everything, when one does. */
  readonly everything?: string;
}

/** What the repository's stack files say each stack is: a tenant's scope and id, a central's scope, a connector's name and its central's scope. */
export interface StackIndex {
  readonly tenants: ReadonlyMap<string, { scope: string; id: string }>;
  readonly centrals: ReadonlyMap<string, string>;
  readonly connectors: ReadonlyMap<string, { name: string; scope: string }>;
}

/** The index of root's stack files. */
export function stackIndex(root: string): StackIndex {
  const centrals = centralScopesFromStackFiles(root);
  const tenants = new Map<string, { scope: string; id: string }>();
  const connectors = new Map<string, { name: string; scope: string }>();
  for (const f of readAllStackFiles(root)) {
    const kind = f.values["clusterra:kind"];
    const field = (key: string, name: string): unknown => { const v = f.values[key]; return v && typeof v === "object" ? (v as Record<string, unknown>)[name] : undefined; };
    const id = field("clusterra:tenant", "id");
    const cluster = field("clusterra:connector", "clusterName");
    if (kind === "tenant" && typeof id === "string") tenants.set(f.stack, { scope: joinedScope(f, centrals), id });
    if (kind === "connector" && typeof cluster === "string") connectors.set(f.stack, { name: cluster, scope: joinedScope(f, centrals) });
  }
  return { tenants, centrals: new Map([...centrals].map(([stack, c]) => [stack, c.scope])), connectors };
}

/**
 * Files that change nothing the fleet is made from: Markdown outside fleet/ (a chart renders
 * any file in its templates/, and a stray file in a tenant's folder is the whole check's
 * problem), fleet's own README, docs/.
 */
const DOCUMENTATION = /^(?!fleet\/)(?:[^/]+\/)*[^/]+\.md$|^fleet\/README\.md$|^docs\//;

/** What makes a stack file the stack it is: a change to any of it moves files the new stack files cannot name. */
function identity(values: Readonly<Record<string, unknown>> | undefined): string {
  const v = (key: string, field?: string) => {
    const x = values?.[`${CONFIG_NAMESPACE}:${key}`];
    return field === undefined ? x : x && typeof x === "object" ? (x as Record<string, unknown>)[field] : undefined;
  };
  const central = v("central", "stack");
  return JSON.stringify([v("kind"), v("environment"), v("cell"), v("tenant", "id"), typeof central === "string" ? stackShortName(central) : central, v("connector", "clusterName")]);
}

/**
 * What each changed path reaches (pure: the paths, the stack files' index, and a stack file's
 * values at the base, `before(rel)`, undefined for a file the base did not have).
 */
export function reachOf(changed: readonly string[], index: StackIndex, before: (rel: string) => Readonly<Record<string, unknown>> | undefined = () => undefined, now: (rel: string) => Readonly<Record<string, unknown>> | undefined = () => undefined): Reach {
  const scopes = new Set<string>();
  const tenants = new Set<string>();
  const connectors = new Set<string>();
  let everything: string | undefined;
  for (const rel of changed) {
    if (DOCUMENTATION.test(rel)) continue;
    const stack = new RegExp(`^${STACK_CONFIG_DIR}/Pulumi\\.(.+)\\.yaml$`).exec(rel)?.[1];
    const place = fleetPlace(rel);
    // A stack file that became another stack (its central, id, kind, environment or cell) leaves its old folders where the new files do not look.
    const old = stack !== undefined ? before(rel) : undefined;
    if (old !== undefined && identity(old) !== identity(now(rel))) {
      everything ??= rel;
      continue;
    }
    if (stack !== undefined && index.tenants.has(stack)) {
      const t = index.tenants.get(stack) as { scope: string; id: string };
      tenants.add(`${t.scope}/${t.id}`);
    } else if (stack !== undefined && index.centrals.has(stack)) scopes.add(index.centrals.get(stack) as string);
    else if (stack !== undefined && index.connectors.has(stack)) connectors.add((index.connectors.get(stack) as { name: string }).name);
    else if (place?.kind === "tenant") tenants.add(`${place.scope}/${place.tenantId}`);
    else if (place?.kind === "central") scopes.add(place.scope);
    else if (place?.kind === "connector") connectors.add(place.clusterName);
    // A stack file gone (its siblings' checks change), the charts, the code, facts/, packages: all of it.
    else everything ??= rel;
  }
  return { scopes, tenants, connectors, ...(everything !== undefined ? { everything } : {}) };
}

/** The files, tenants and stacks a reach covers. */
export function selectionOf(reach: Reach, index: StackIndex): FleetSelection {
  if (reach.everything !== undefined) return { ...WHOLE_FLEET, summary: `the whole fleet (${reach.everything} reaches all of it)` };
  const tenant = (scope: string, id: string) => reach.scopes.has(scope) || reach.tenants.has(`${scope}/${id}`);
  // A central's change reaches its connectors too (validated against it; a cell names their bridge role).
  const connector = (name: string) => reach.connectors.has(name) || [...index.connectors.values()].some((c) => c.name === name && reach.scopes.has(c.scope));
  // A reached tenant's Applications come from its central's ApplicationSets and shared values,
  // and their custom resources are validated against the CRDs its central's own Applications
  // install: its central's files are checked with it (a constant per central, not per tenant).
  const centrals = new Set([...reach.scopes, ...[...reach.tenants].map((t) => t.split("/")[0])]);
  const file = (rel: string): boolean => {
    const place = fleetPlace(rel);
    if (place?.kind === "tenant") return tenant(place.scope, place.tenantId);
    if (place?.kind === "central") return centrals.has(place.scope);
    return place?.kind === "connector" ? connector(place.clusterName) : false;
  };
  const stack = (name: string): boolean => {
    const t = index.tenants.get(name);
    if (t) return tenant(t.scope, t.id);
    const c = index.centrals.get(name);
    if (c !== undefined) return centrals.has(c);
    const k = index.connectors.get(name);
    return k !== undefined && connector(k.name);
  };
  const parts = [
    ...[...reach.scopes].sort().map((s) => `central ${s} and its tenants`),
    ...[...reach.tenants].filter((t) => !reach.scopes.has(t.split("/")[0])).sort().map((t) => `tenant ${t} (with its central's own files)`),
    ...[...reach.connectors].sort().map((c) => `connector ${c}`),
  ];
  return { file, tenant, stack, summary: parts.length ? parts.join(", ") : "nothing (documentation only)" };
}

/**
 * Paths that differ between `base` and the working tree (committed since, changed, added or
 * deleted), and files git does not track yet. A base git does not know is a usage error.
 */
export function changedFiles(root: string, base: string): string[] {
  const commit = baseCommit(root, base);
  const diff = git(root, "diff", "--name-only", "--no-renames", commit, "--");
  if (diff.status !== 0) throw new ChangedFilesError(`git cannot compare with ${JSON.stringify(base)} in ${root}: ${(diff.stderr || diff.error?.message || "").trim().split("\n")[0]}`);
  const untracked = git(root, "ls-files", "--others", "--exclude-standard");
  return [...new Set([...diff.stdout.split("\n"), ...untracked.stdout.split("\n")].filter(Boolean))].sort();
}

function git(root: string, ...args: string[]) {
  return spawnSync("git", args, { cwd: root, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
}

/** The commit a revision names (never read as an option of git's), or a ChangedFilesError. */
function baseCommit(root: string, base: string): string {
  const parsed = git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", `${base}^{commit}`);
  if (parsed.status !== 0) throw new ChangedFilesError(`git cannot compare with ${JSON.stringify(base)} in ${root}: ${(parsed.stderr || parsed.error?.message || "not a commit of this repository").trim().split("\n")[0]}`);
  return parsed.stdout.trim();
}

/** A stack file's values at a revision (undefined when it had none there, or it was not YAML). */
export function stackValuesAt(root: string, base: string, rel: string): Record<string, unknown> | undefined {
  const shown = git(root, "show", `${baseCommit(root, base)}:${rel}`);
  if (shown.status !== 0) return undefined;
  try {
    const config = (parse(shown.stdout) as { config?: unknown } | null)?.config;
    return config && typeof config === "object" ? (config as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** `--changed` named something git cannot compare with. */
export class ChangedFilesError extends Error {}
