/**
 * Reading configuration: stack files from disk (for `clusterra plan` and the cross-stack
 * checks) and the Pulumi runtime's config (under `pulumi up`). Both go through
 * validateStack; a program never sees an unvalidated value.
 */
import * as fs from "fs";
import * as path from "path";
import { parseDocument } from "yaml";
import { STACK_CONFIG_DIR } from "../facts/project";
import type { ConfigIssue, StackConfig, StackFile } from "./types";
import { formatIssues, validateStack } from "./validate";

export * from "./types";
export { formatIssues, stackShortName, validateStack } from "./validate";

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

/** Reads one stack file; YAML or shape problems become issues, not exceptions. */
export function readStackFile(filePath: string, stack: string, root = PROJECT_ROOT): { file?: StackFile; issues: ConfigIssue[] } {
  const rel = path.relative(root, path.resolve(root, filePath)) || filePath;
  const issue = (problem: string, valid: string): { issues: ConfigIssue[] } => ({ issues: [{ file: rel, key: "(file)", value: undefined, problem, valid }] });
  let text: string;
  try {
    text = fs.readFileSync(path.resolve(root, filePath), "utf8");
  } catch (e) {
    return issue(`cannot be read (${(e as NodeJS.ErrnoException).code ?? "error"})`, `an existing stack file such as ${STACK_CONFIG_DIR}/Pulumi.${stack}.yaml`);
  }
  const doc = parseDocument(text, { prettyErrors: false });
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    return issue(`is not valid YAML: ${e.message.split("\n")[0]} (line ${e.linePos?.[0].line ?? "?"})`, "a YAML mapping with a top-level `config:` key");
  }
  const data = doc.toJS() as unknown;
  const config = typeof data === "object" && data !== null ? (data as Record<string, unknown>).config : undefined;
  if (typeof config !== "object" || config === null || Array.isArray(config)) {
    return issue("has no `config:` mapping", "a YAML mapping with a top-level `config:` key");
  }
  return { file: { stack, file: rel, values: config as Record<string, unknown> }, issues: [] };
}

/** Every `Pulumi.<stack>.yaml` in the stacks folder, unreadable ones skipped. */
export function readAllStackFiles(root = PROJECT_ROOT): StackFile[] {
  const dir = path.join(root, STACK_CONFIG_DIR);
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .map((name) => /^Pulumi\.(.+)\.ya?ml$/.exec(name))
    .filter((m): m is RegExpExecArray => m !== null)
    .sort((a, b) => a[1].localeCompare(b[1]))
    .flatMap((m) => readStackFile(path.join(STACK_CONFIG_DIR, m[0]), m[1], root).file ?? []);
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
  const siblings = readAllStackFiles(root).filter((f) => f.stack !== source.stack);
  const result = validateStack(source, siblings);
  if (!result.ok) throw new ConfigError(result.issues);
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
