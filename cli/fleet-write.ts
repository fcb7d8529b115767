/**
 * `clusterra fleet write`: every stack's fleet files regenerated offline from its stack file
 * and its committed facts file (components/fleet/facts.ts), never touching a facts file.
 * A chart bump in facts/, `fleet write` and a pull request is a fleet-wide change; no
 * `pulumi up`. `fleet check --render` renders the same way and compares.
 */
import * as fs from "fs";
import * as path from "path";
import { ConfigError, scanStackFiles, validateStack, type StackConfig } from "../config";
import { centralStackFleetFiles } from "../components/fleet/central";
import { centralFactsPath, FACTS_FILE, parseFacts, tenantFactsPath, type FactsKind } from "../components/fleet/facts";
import { tenantStackFleetFiles } from "../components/fleet/tenant";
import { writeFleetFiles, type FleetFileSet } from "../components/fleet/writer";
import { connectorFactsPath, connectorStackFiles } from "../components/connector/cluster-files";
import { fleetFiles, type FleetProblem } from "./fleet-files";

/** Where a stack's facts file is, by its kind. */
function factsPathOf(config: StackConfig): string {
  switch (config.kind) {
    case "tenant":
      return tenantFactsPath(config.environment, config.tenant.id);
    case "central":
      return centralFactsPath(config.environment);
    case "connector":
      return connectorFactsPath(config.connector.clusterName);
  }
}

/** One stack's files from its configuration and the facts file's text. */
function stackFiles(config: StackConfig, text: string, file: string, root: string): { files?: FleetFileSet; problems: FleetProblem[] } {
  const parsed = parseFacts(config.kind as FactsKind, text);
  if ("problems" in parsed) return { problems: parsed.problems.map((p) => ({ file, at: p.key, reason: `${p.value === undefined ? "" : `${JSON.stringify(p.value)} `}${p.problem}` })) };
  switch (config.kind) {
    case "tenant":
      return { files: tenantStackFleetFiles(config, parsed.facts as never, root), problems: [] };
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

/** Every stack file's fleet files, from its configuration and its committed facts file. Pure reads. */
export function fleetFromFacts(root: string): FleetFromFacts {
  const { files: stackFiles_, broken } = scanStackFiles(root);
  const problems: FleetProblem[] = [...broken.entries()].flatMap(([stack, issues]) => issues.map((i) => ({ file: i.file, at: i.key, reason: `${stack}: ${i.problem}` })));
  const files: FleetFileSet = {};
  const factsFiles = new Set<string>();
  for (const source of stackFiles_) {
    const result = validateStack(source, stackFiles_.filter((f) => f.stack !== source.stack));
    if (!result.ok) {
      problems.push(...result.issues.map((i) => ({ file: i.file, at: i.key, reason: i.problem })));
      continue;
    }
    const rel = factsPathOf(result.config);
    factsFiles.add(rel);
    const abs = path.join(root, rel);
    if (!fs.existsSync(abs)) {
      problems.push({ file: rel, at: "(file)", reason: `is missing: ${source.stack}'s cloud facts are written by \`pulumi up -s ${source.stack}\` (offline: \`clusterra plan --stack ${source.stack} --write-fleet\`)` });
      continue;
    }
    let r: ReturnType<typeof stackFiles>;
    try {
      r = stackFiles(result.config, fs.readFileSync(abs, "utf8"), rel, root);
    } catch (e) {
      // A tenant's central stack file that does not validate: its own problems, by key.
      if (!(e instanceof ConfigError)) throw e;
      problems.push(...e.issues.map((i) => ({ file: i.file, at: i.key, reason: `${source.stack} reads it: ${i.problem}` })));
      continue;
    }
    problems.push(...r.problems);
    if (r.files) Object.assign(files, r.files, { [rel]: fs.readFileSync(abs, "utf8") });
  }
  return { files, factsFiles, problems };
}

/** `fleet write`: every problem and nothing written, or every derived file written (facts files left as they are). */
export function runFleetWrite(root: string, out: (s: string) => void, err: (s: string) => void): number {
  const started = process.hrtime.bigint();
  const fleet = fleetFromFacts(root);
  if (fleet.problems.length > 0) {
    for (const p of fleet.problems) err(`${p.file}: ${p.at}: ${p.reason}`);
    err(`fleet write: ${fleet.problems.length} problem(s); nothing written`);
    return 1;
  }
  const derived = Object.fromEntries(Object.entries(fleet.files).filter(([rel]) => !fleet.factsFiles.has(rel)));
  const before = new Map(Object.keys(derived).map((rel) => [rel, fs.existsSync(path.join(root, rel)) ? fs.readFileSync(path.join(root, rel), "utf8") : undefined]));
  writeFleetFiles(root, derived);
  // Derived files no stack renders any more (a layout change, a removed add-on) go; a facts file never does.
  const stale = fleetFiles(root).filter((rel) => !(rel in fleet.files) && path.basename(rel) !== FACTS_FILE);
  for (const rel of stale) fs.rmSync(path.join(root, rel));
  const changed = [...before.entries()].filter(([rel, text]) => text !== derived[rel]).map(([rel]) => rel).sort();
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const lines = [...changed.map((c) => `  ${c}`), ...stale.map((c) => `  ${c} (removed)`)];
  out(`fleet write: ${Object.keys(derived).length} files from ${fleet.factsFiles.size} stacks' facts in ${ms.toFixed(0)} ms; ${changed.length} changed, ${stale.length} removed${lines.length ? `:\n${lines.join("\n")}` : ""}`);
  return 0;
}
