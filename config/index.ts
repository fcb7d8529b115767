/**
 * Reading configuration: stack files from disk (for `clusterra plan` and the cross-stack
 * checks) and the Pulumi runtime's config (under `pulumi up`). Both go through
 * validateStack; a program never sees an unvalidated value.
 */
import * as fs from "fs";
import * as path from "path";
import { isPair, isScalar, LineCounter, parseDocument, visit } from "yaml";
import { centralScope, CONFIG_NAMESPACE, STACK_CONFIG_DIR } from "../facts/project";
import type { ConfigIssue, StackConfig, StackFile } from "./types";
import { formatIssues, stackShortName, validateStack } from "./validate";
import { nearest } from "./validate-text";
import type { TenantPorts } from "../facts/contract";
import { recordedPorts } from "./tenant-ports";
import { isDeepStrictEqual } from "util";
import { EXAMPLE_STACKS_DIR } from "../facts/project";

export * from "./types";
export { formatIssues, issueKey, issueReason, REMOVE_TENANTS_KEY, stackShortName, validateStack } from "./validate";

/**
 * The project root: the nearest folder above this module holding Pulumi.yaml (the module
 * runs as dist/config/ under node, as config/ under ts-node when the policy pack loads it).
 */
export const PROJECT_ROOT = findProjectRoot(__dirname);

function findProjectRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, "Pulumi.yaml"))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(start, "..", "..");
  }
}

/** Bad configuration: carries every issue, and prints as one line per issue. */
export class ConfigError extends Error {
  constructor(readonly issues: readonly ConfigIssue[]) {
    super(formatIssues(issues));
    this.name = "ConfigError";
  }
}

/**
 * Stack files read in this process, by name, path and text: a repository of a thousand
 * tenants is read by several checks in one command, and parsing is most of a read.
 */
const parsedStackFiles = new Map<string, { file?: StackFile; issues: ConfigIssue[] }>();

/** Reads one stack file; YAML or shape problems become issues, not exceptions. */
export function readStackFile(filePath: string, stack: string, root = PROJECT_ROOT): { file?: StackFile; issues: ConfigIssue[] } {
  const rel = path.relative(root, path.resolve(root, filePath)) || filePath;
  const issue = (problem: string, valid: string): { issues: ConfigIssue[] } => ({ issues: [{ file: rel, key: "(file)", value: undefined, problem, valid }] });
  let text: string;
  try {
    text = fs.readFileSync(path.resolve(root, filePath), "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return issue(code === "ENOENT" ? "does not exist" : `cannot be read (${code ?? "error"})`, existingStacksHint(stack, root));
  }
  const key = `${stack}\0${rel}\0${text}`;
  const known = parsedStackFiles.get(key);
  // A copy: no caller's change reaches another's read.
  if (known) return structuredClone(known);
  const result = parseStackFile(text, stack, rel);
  parsedStackFiles.set(key, result);
  return structuredClone(result);
}

/** A stack file's text as a StackFile, or the issues that stop it. Pure. */
function parseStackFile(text: string, stack: string, rel: string): { file?: StackFile; issues: ConfigIssue[] } {
  const issue = (problem: string, valid: string): { issues: ConfigIssue[] } => ({ issues: [{ file: rel, key: "(file)", value: undefined, problem, valid }] });
  const lines = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: false, lineCounter: lines, schema: "core", uniqueKeys: true });
  const yamlIssues: ConfigIssue[] = doc.errors.map((e) => ({
    file: rel,
    key: "(file)",
    value: undefined,
    problem: `is not valid YAML: ${e.message.split("\n")[0]} (line ${lines.linePos(e.pos[0]).line})`,
    valid: "a YAML mapping with a top-level `config:` key",
  }));
  // Keys that would reach an object's prototype are refused, not silently dropped.
  visit(doc, {
    Pair(_, pair) {
      if (isPair(pair) && isScalar(pair.key) && ["__proto__", "constructor", "prototype"].includes(String(pair.key.value))) {
        const at = pair.key.range ? ` (line ${lines.linePos(pair.key.range[0]).line})` : "";
        yamlIssues.push({ file: rel, key: String(pair.key.value), value: undefined, problem: `is a reserved name${at}`, valid: "configuration keys only" });
      }
    },
  });
  if (yamlIssues.length > 0) return { issues: yamlIssues };
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    return issue(`cannot be read as data: ${(e as Error).message}`, "plain YAML without alias expansion bombs");
  }
  const odd = nonPlainPath(data, "");
  if (odd) return issue(`holds a value YAML tags made into a ${odd.kind} at ${odd.path || "the top"}`, "plain strings, numbers, booleans, lists and mappings");
  const config = typeof data === "object" && data !== null ? (data as Record<string, unknown>).config : undefined;
  if (typeof config !== "object" || config === null || Array.isArray(config)) {
    return issue("has no `config:` mapping", "a YAML mapping with a top-level `config:` key");
  }
  return { file: { stack, file: rel, values: config as Record<string, unknown> }, issues: [] };
}

/** The stacks that do exist, nearest first: what a mistyped stack name should have been. */
function existingStacksHint(stack: string, root: string): string {
  const names = stackEntries(root).map((e) => e.stack);
  if (names.length === 0) return `a stack file in ${STACK_CONFIG_DIR}/ (there is none yet)`;
  const guess = nearest(stack, names);
  return `${guess ? `did you mean ${guess}? ` : ""}stacks with a file in ${STACK_CONFIG_DIR}/: ${names.join(", ")}`;
}

/** The stacks with a `Pulumi.<stack>.yaml` in the stacks folder, by name. */
function stackEntries(root: string): { stack: string; file: string }[] {
  const dir = path.join(root, STACK_CONFIG_DIR);
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .map((name) => ({ stack: /^Pulumi\.(.+)\.ya?ml$/.exec(name)?.[1], file: path.join(STACK_CONFIG_DIR, name) }))
    .filter((e): e is { stack: string; file: string } => e.stack !== undefined)
    .sort((a, b) => a.stack.localeCompare(b.stack));
}

/** The first value that is not plain JSON-like data (a Buffer from !!binary, a Date...). */
function nonPlainPath(value: unknown, at: string): { path: string; kind: string } | undefined {
  if (value === null || ["string", "number", "boolean"].includes(typeof value)) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nonPlainPath(value[i], `${at}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const found = nonPlainPath(v, at ? `${at}.${k}` : k);
      if (found) return found;
    }
    return undefined;
  }
  return { path: at, kind: (value as object)?.constructor?.name ?? typeof value };
}

/** Every `Pulumi.<stack>.yaml` in the stacks folder, with the problems of those that cannot be read. */
export function scanStackFiles(root = PROJECT_ROOT): { files: StackFile[]; broken: Map<string, ConfigIssue[]> } {
  const dir = path.join(root, STACK_CONFIG_DIR);
  const files: StackFile[] = [];
  const broken = new Map<string, ConfigIssue[]>();
  if (!fs.existsSync(dir)) return { files, broken };
  for (const entry of stackEntries(root)) {
    const { file, issues } = readStackFile(entry.file, entry.stack, root);
    if (file) files.push(file);
    else broken.set(entry.stack, issues);
  }
  return { files, broken };
}

/** Every readable `Pulumi.<stack>.yaml` in the stacks folder. */
export function readAllStackFiles(root = PROJECT_ROOT): StackFile[] {
  return scanStackFiles(root).files;
}

/**
 * The tenant each tenant stack file declares (`clusterra:tenant`): its id, its account when
 * it is 12 digits, and its VPC CIDR (`clusterra:network.vpcCidr`) when it is a string.
 */
function declaredTenants(root: string): { id: string; environment?: string; accountId?: string; vpcCidr?: string; ports?: TenantPorts }[] {
  return readAllStackFiles(root).flatMap((f) => {
    const t = f.values[`${CONFIG_NAMESPACE}:tenant`];
    const network = f.values[`${CONFIG_NAMESPACE}:network`];
    if (f.values[`${CONFIG_NAMESPACE}:kind`] !== "tenant" || typeof t !== "object" || t === null) return [];
    const { id, accountId } = t as Record<string, unknown>;
    const account = typeof accountId === "number" ? String(accountId) : accountId;
    const cidr = typeof network === "object" && network !== null ? (network as Record<string, unknown>).vpcCidr : undefined;
    if (typeof id !== "string" || id.length === 0) return [];
    const ports = recordedPorts(f.values);
    const environment = f.values[`${CONFIG_NAMESPACE}:environment`];
    return [{ id, ...(typeof environment === "string" ? { environment } : {}), ...(typeof account === "string" && /^\d{12}$/.test(account) ? { accountId: account } : {}), ...(typeof cidr === "string" && cidr.length > 0 ? { vpcCidr: cidr } : {}), ...(ports ? { ports } : {}) }];
  });
}

/**
 * Every central stack file's scope (facts/project.ts centralScope) and environment, by stack
 * name: what a fleet folder `fleet/{central,tenants}/<scope>/` belongs to.
 */
export function centralScopesFromStackFiles(root = PROJECT_ROOT): Map<string, { scope: string; environment: string }> {
  const out = new Map<string, { scope: string; environment: string }>();
  for (const f of readAllStackFiles(root)) {
    const [kind, environment, cell] = [f.values[`${CONFIG_NAMESPACE}:kind`], f.values[`${CONFIG_NAMESPACE}:environment`], f.values[`${CONFIG_NAMESPACE}:cell`]];
    if (kind === "central" && typeof environment === "string") out.set(f.stack, { scope: centralScope(environment, typeof cell === "string" ? cell : undefined), environment });
  }
  return out;
}

/** The environment a fleet folder's scope segment belongs to: its central's, or the segment itself when no central stack file gives it (an environment's first central). */
export function environmentOfScope(scope: string, centrals: ReadonlyMap<string, { scope: string; environment: string }>): string {
  return [...centrals.values()].find((c) => c.scope === scope)?.environment ?? scope;
}

/** The scope of the central a tenant or connector stack file joins (its `clusterra:central.stack`), else its environment's. */
export function joinedScope(file: StackFile, centrals: ReadonlyMap<string, { scope: string; environment: string }>): string {
  const central = file.values[`${CONFIG_NAMESPACE}:central`];
  const stack = typeof central === "object" && central !== null ? (central as Record<string, unknown>).stack : undefined;
  return (typeof stack === "string" ? centrals.get(stackShortName(stack))?.scope : undefined) ?? String(file.values[`${CONFIG_NAMESPACE}:environment`]);
}

/** VPC CIDR of every tenant stack file, by tenant id: an address inside another tenant's VPC is flagged. */
export function tenantVpcCidrsFromStackFiles(root = PROJECT_ROOT): Record<string, string> {
  return Object.fromEntries(declaredTenants(root).flatMap((t) => (t.vpcCidr ? [[t.id, t.vpcCidr]] : [])));
}

/**
 * Recorded ports of every tenant stack file, by `<environment>/<tenant id>` (ids are unique per
 * environment only), as the stack file writes them: the contract policy's `tenantPorts`.
 */
export function tenantPortsFromStackFiles(root = PROJECT_ROOT): Record<string, { slurmctld: number; srun: number }> {
  return Object.fromEntries(declaredTenants(root).flatMap((t) => (t.ports && t.environment ? [[`${t.environment}/${t.id}`, { slurmctld: t.ports.slurmctld, srun: t.ports.srunBlock.from }]] : [])));
}

/** Tenant ids of every tenant stack file, sorted: the policy pack's isolation default. */
export function tenantsFromStackFiles(root = PROJECT_ROOT): string[] {
  return [...new Set(declaredTenants(root).map((t) => t.id))].sort();
}

/** Account id of every tenant stack file, by tenant id: another tenant's account is flagged wherever it appears. */
export function tenantAccountsFromStackFiles(root = PROJECT_ROOT): Record<string, string> {
  return Object.fromEntries(declaredTenants(root).flatMap((t) => (t.accountId ? [[t.id, t.accountId]] : [])));
}

/**
 * Whether a stack file is one of the project's examples as shipped (the same values as its
 * fixture in EXAMPLE_STACKS_DIR): an example has no deployment, so its facts are offline.
 */
export function isExampleStack(file: StackFile): boolean {
  const fixture = readStackFile(path.join(PROJECT_ROOT, EXAMPLE_STACKS_DIR, `Pulumi.${file.stack}.yaml`), file.stack, PROJECT_ROOT).file;
  return fixture !== undefined && isDeepStrictEqual(fixture.values, file.values);
}

/** Stack file path for a stack name, as Pulumi.yaml's stackConfigDir lays them out. */
export function stackFilePath(stack: string): string {
  return path.join(STACK_CONFIG_DIR, `Pulumi.${stack}.yaml`);
}

/**
 * Validates one stack's values against the stack files beside it.
 * Throws ConfigError with every issue at once.
 */
export function resolveConfig(source: StackFile, root = PROJECT_ROOT): StackConfig {
  const { files, broken } = scanStackFiles(root);
  const result = validateStack(source, files.filter((f) => f.stack !== source.stack));
  if (!result.ok) {
    // A tenant whose central stack file is broken hears why, not just "no stack file".
    const central = source.values["clusterra:central"];
    const centralStack = typeof central === "object" && central !== null ? (central as Record<string, unknown>).stack : undefined;
    const extra = typeof centralStack === "string" ? (broken.get(stackShortName(centralStack)) ?? []) : [];
    throw new ConfigError([...result.issues, ...extra]);
  }
  return result.config;
}

/**
 * The running stack's configuration, from the Pulumi runtime (which JSON-encodes object
 * values). Used by the program under `pulumi up` and, identically, under `clusterra plan`.
 */
export function configFromRuntime(stack: string, all: Record<string, string>, root = PROJECT_ROOT): StackConfig {
  const values: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(all)) values[key] = decodeConfigValue(raw);
  return resolveConfig({ stack, file: stackFilePath(stack), values }, root);
}

/** Pulumi hands structured values (objects, lists) over as JSON text; top-level scalars stay strings. */
function decodeConfigValue(raw: string): unknown {
  if (/^[[{]/.test(raw)) {
    try {
      return JSON.parse(raw);
    } catch {
      return raw;
    }
  }
  return raw;
}

/** The inverse: how stack-file values are handed to the runtime's config. */
export function encodeConfigValues(values: Readonly<Record<string, unknown>>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]));
}
