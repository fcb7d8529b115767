/**
 * `clusterra fleet write`: every stack's fleet files regenerated offline from its stack file
 * and its committed facts file (components/fleet/facts.ts), never touching a facts file.
 * A chart bump in facts/, `fleet write` and a pull request is a fleet-wide change; no
 * `pulumi up`. `fleet check --render` renders the same way and compares.
 */
import * as fs from "fs";
import * as path from "path";
import { issueKey, issueReason, REMOVE_TENANTS_KEY, scanStackFiles, validateStack, type ConfigIssue, type StackConfig } from "../config";
import { strandedMessage, strandedTenants } from "../components/central/live-tenants";
import { centralStackFleetFiles } from "../components/fleet/central";
import { centralFactsPath, FACTS_FILE, parseFacts, tenantFactsPath, type FactsKind, OFFLINE_FACTS_KEY } from "../components/fleet/facts";
import { tenantStackFleetFiles } from "../components/fleet/tenant";
import { writeFleetFiles, type FleetFileSet } from "../components/fleet/writer";
import { connectorFactsPath, connectorStackFiles } from "../components/connector/cluster-files";
import { offlineFactsProblems, tenantFactsProblems } from "./facts";
import { fleetFiles, type FleetProblem } from "./files";

/** Where a stack's facts file is, by its kind. */
function factsPathOf(config: StackConfig): string {
  switch (config.kind) {
    case "tenant":
      return tenantFactsPath(config.central.scope, config.tenant.id);
    case "central":
      return centralFactsPath(config.scope);
    case "connector":
      return connectorFactsPath(config.connector.clusterName);
  }
}

/** One stack's files from its configuration and the facts file's text. */
function stackFiles(config: StackConfig, text: string, file: string): { files?: FleetFileSet; problems: FleetProblem[] } {
  const parsed = parseFacts(config.kind as FactsKind, text);
  if ("problems" in parsed) return { problems: parsed.problems.map((p) => ({ file, at: p.key, reason: `${p.value === undefined ? "" : `${JSON.stringify(p.value)} `}${p.problem}` })) };
  switch (config.kind) {
    case "tenant":
      return { files: tenantStackFleetFiles(config, parsed.facts as never), problems: [] };
    case "central":
      return { files: centralStackFleetFiles(config, parsed.facts as never), problems: [] };
    case "connector":
      return { files: connectorStackFiles(config, parsed.facts as never), problems: [] };
  }
}

export interface FleetFromFacts {
  /** Path -> content of every file the stack files render, facts files included (as committed). */
  readonly files: FleetFileSet;
  /** The facts files' paths. */
  readonly factsFiles: ReadonlySet<string>;
  /** Stack files that do not validate, facts files missing or off their schema: every one. */
  readonly problems: FleetProblem[];
}

/** Stack files that cannot be read, each issue with its value as typed and what is valid. */
function brokenStackProblems(broken: ReadonlyMap<string, readonly ConfigIssue[]>): FleetProblem[] {
  return [...broken.entries()].flatMap(([stack, issues]) => issues.map((i) => ({ file: i.file, at: issueKey(i), reason: `${stack}: ${issueReason(i)}` })));
}

/** Every stack file's fleet files, from its configuration and its committed facts file. Pure reads. */
export function fleetFromFacts(root: string, only: (stack: string) => boolean = () => true): FleetFromFacts {
  const { files: stackFiles_, broken } = scanStackFiles(root);
  const problems: FleetProblem[] = brokenStackProblems(broken);
  const files: FleetFileSet = {};
  const factsFiles = new Set<string>();
  // Each selected stack validated against every other: a proportional check still sees a clash with any sibling.
  for (const source of stackFiles_.filter((f) => only(f.stack))) {
    const result = validateStack(source, stackFiles_.filter((f) => f.stack !== source.stack));
    if (!result.ok) {
      problems.push(...result.issues.map((i) => ({ file: i.file, at: issueKey(i), reason: issueReason(i) })));
      continue;
    }
    const rel = factsPathOf(result.config);
    factsFiles.add(rel);
    const abs = path.join(root, rel);
    if (!fs.existsSync(abs)) {
      problems.push({ file: rel, at: "(file)", reason: `is missing: ${source.stack}'s cloud facts are written by \`pulumi up -s ${source.stack}\` (offline: \`clusterra plan --stack ${source.stack} --write-fleet\`)` });
      continue;
    }
    const r = stackFiles(result.config, fs.readFileSync(abs, "utf8"), rel);
    problems.push(...r.problems);
    if (r.files) Object.assign(files, r.files, { [rel]: fs.readFileSync(abs, "utf8") });
  }
  return { files, factsFiles, problems };
}

/** `fleet write`: every problem and nothing written, or every derived file written (facts files left as they are). */
export function runFleetWrite(root: string, out: (s: string) => void, err: (s: string) => void, options: { allowOfflineFacts?: boolean } = {}): number {
  const started = process.hrtime.bigint();
  const fleet = fleetFromFacts(root);
  // The facts checks `fleet check` runs: a facts file naming another tenant's server, role, key or port, or written offline, writes nothing.
  const problems = [...fleet.problems, ...tenantFactsProblems(root), ...(options.allowOfflineFacts ? [] : offlineFactsProblems(root))];
  if (problems.length > 0) {
    for (const p of problems) err(`${p.file}: ${p.at}: ${p.reason}`);
    err(`fleet write: ${problems.length} problem(s); nothing written`);
    return 1;
  }
  const derived = Object.fromEntries(Object.entries(fleet.files).filter(([rel]) => !fleet.factsFiles.has(rel)));
  const before = new Map(Object.keys(derived).map((rel) => [rel, fs.existsSync(path.join(root, rel)) ? fs.readFileSync(path.join(root, rel), "utf8") : undefined]));
  writeFleetFiles(root, derived);
  // Files no stack renders any more go: derived ones (a layout change, a removed add-on), and a
  // removed stack's facts file, as central's `pulumi up` removes a removed tenant's folder whole
  // (every stack file validated above, so a facts file no stack claims has no stack file).
  const stale = fleetFiles(root).filter((rel) => !(rel in fleet.files));
  for (const rel of stale) {
    fs.rmSync(path.join(root, rel));
    removeEmptyFolders(root, path.dirname(rel));
  }
  const changed = [...before.entries()].filter(([rel, text]) => text !== derived[rel]).map(([rel]) => rel).sort();
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const lines = [...changed.map((c) => `  ${c}`), ...stale.map((c) => `  ${c} (removed${path.basename(c) === FACTS_FILE ? ": its stack file is gone" : ""})`)];
  out(`fleet write: ${Object.keys(derived).length} files from ${fleet.factsFiles.size} stacks' facts in ${ms.toFixed(0)} ms; ${changed.length} changed, ${stale.length} removed${lines.length ? `:\n${lines.join("\n")}` : ""}`);
  return 0;
}

/** Removes `rel` and the folders above it up to fleet/ while they are empty. */
function removeEmptyFolders(root: string, rel: string): void {
  for (let dir = rel; dir.startsWith("fleet/"); dir = path.dirname(dir)) {
    const abs = path.join(root, dir);
    if (!fs.existsSync(abs) || fs.readdirSync(abs).length > 0) return;
    fs.rmdirSync(abs);
  }
}

/** Leaf values of a JSON value by dotted path. */
function leaves(v: unknown, at = ""): Map<string, unknown> {
  const out = new Map<string, unknown>();
  if (v && typeof v === "object" && !Array.isArray(v)) for (const [k, x] of Object.entries(v)) for (const [p, y] of leaves(x, at ? `${at}.${k}` : k)) out.set(p, y);
  else out.set(at || "(top)", v);
  return out;
}

/**
 * Each committed facts file against what its stack says it should hold: the `fleetFacts`
 * output of `pulumi stack output --json -s <stack> > <dir>/<stack>.json` (the operators' CI
 * job that has cloud credentials writes them). Every difference, key by key, all at once.
 */
export function factsAgainstOutputs(root: string, outputsDir: string): FleetProblem[] {
  const { files: stackFiles_, broken } = scanStackFiles(root);
  const problems: FleetProblem[] = brokenStackProblems(broken);
  for (const source of stackFiles_) {
    const result = validateStack(source, stackFiles_.filter((f) => f.stack !== source.stack));
    if (!result.ok) continue; // `fleet write` and `fleet check` name these
    const rel = factsPathOf(result.config);
    const outputsFile = path.join(outputsDir, `${source.stack}.json`);
    if (!fs.existsSync(outputsFile)) {
      problems.push({ file: path.relative(root, outputsFile) || outputsFile, at: "(file)", reason: `is missing: write it with \`pulumi stack output --json -s ${source.stack} > ${path.join(outputsDir, `${source.stack}.json`)}\`` });
      continue;
    }
    let outputs: { fleetFacts?: unknown };
    try {
      outputs = JSON.parse(fs.readFileSync(outputsFile, "utf8")) as { fleetFacts?: unknown };
    } catch (e) {
      problems.push({ file: outputsFile, at: "(file)", reason: `is not JSON: ${e instanceof Error ? e.message : String(e)}` });
      continue;
    }
    // A central's deployment serving a tenant no stack file here joins: its next `pulumi up` would refuse (live-tenants.ts).
    if (result.config.kind === "central") {
      const stranded = strandedTenants((outputs as { tenantRoleArns?: unknown }).tenantRoleArns, result.config);
      if (stranded.length) problems.push({ file: source.file, at: REMOVE_TENANTS_KEY, reason: strandedMessage(result.config, stranded) });
    }
    if (outputs.fleetFacts === undefined) {
      problems.push({ file: outputsFile, at: "fleetFacts", reason: `is missing: ${source.stack} has not been deployed by a version of the program that publishes its facts (run \`pulumi up -s ${source.stack}\`)` });
      continue;
    }
    const abs = path.join(root, rel);
    const parsed = fs.existsSync(abs) ? parseFacts(result.config.kind as FactsKind, fs.readFileSync(abs, "utf8")) : undefined;
    if (!parsed || "problems" in parsed) continue; // fleet check names a missing or malformed facts file
    const want = leaves(outputs.fleetFacts);
    // The offline mark is no fact of the cloud's (offlineFactsProblems names it).
    const have = leaves(parsed.facts);
    have.delete(OFFLINE_FACTS_KEY);
    for (const key of [...new Set([...want.keys(), ...have.keys()])].sort()) {
      if (JSON.stringify(want.get(key)) === JSON.stringify(have.get(key))) continue;
      problems.push({ file: rel, at: key, reason: `is ${JSON.stringify(have.get(key) ?? null)} here but ${JSON.stringify(want.get(key) ?? null)} in ${source.stack}'s deployment: commit the facts file \`pulumi up -s ${source.stack}\` writes, then \`clusterra fleet write\`` });
    }
  }
  return problems;
}
