/**
 * `fleet check` proportional to the change: `npx tsc -b && node dist/bench/fleet-check-bench.js`.
 *
 * Generates an operator's repository of FLEET_CHECK_TENANTS tenants (default 1,000: centrals
 * as full as one goes, bench/synthetic.ts), writes its fleet with `fleet write`, commits it, then
 * times `fleet check --render --changed HEAD` (every Application the change reaches rendered
 * with Helm and validated with kubectl-validate, the isolation and facts checks, the render
 * compared) after:
 *
 * - one tenant's change (a user added to its stack file, its fleet written): target under
 *   30 s at 1,000 tenants (issue 38);
 * - one central's shared change (its tenants' backup schedule): every tenant of that central.
 *
 * Baseline, in the same run: the whole `fleet check --render` of the project's example
 * environment (two tenants), what CI runs on main. Each command runs as the operator runs it
 * (`node bin/clusterra.js`, its own process).
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { PROJECT_ROOT } from "../config";
import { generateRepository } from "./synthetic";
import { keepToLoopback } from "../test/loopback-only";

// Benchmarks keep every packet on this machine (test/loopback-only.ts).
keepToLoopback();

const TENANTS = Number(process.env.FLEET_CHECK_TENANTS ?? 1000);
const TARGET_SECONDS = 30;
const reference = process.env.CLUSTERRA_REFERENCE ?? path.join(PROJECT_ROOT, "..", "shared", "reference");
const charts = path.join(reference, "charts");

/** Runs a command in `cwd`; its seconds and output, or an error with its output. */
function timed(cwd: string, command: string, args: readonly string[]): { seconds: number; stdout: string } {
  const start = process.hrtime.bigint();
  const run = spawnSync(command, args, { cwd, encoding: "utf8", maxBuffer: 256 * 1024 * 1024, env: { ...process.env, CLUSTERRA_REFERENCE: reference } });
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (run.status !== 0) throw new Error(`${command} ${args.join(" ")} in ${cwd}: exit ${run.status}\n${run.stdout}\n${run.stderr}`.slice(0, 4000));
  return { seconds, stdout: run.stdout };
}

const cli = (cwd: string, ...args: string[]) => timed(cwd, process.execPath, ["bin/clusterra.js", ...args]);
const git = (cwd: string, ...args: string[]) => timed(cwd, "git", ["-c", "user.email=bench@clusterra.invalid", "-c", "user.name=bench", ...args]);

/** A copy of this checkout's code (tracked and untracked files, its build, its tools and packages linked) with no stacks and no fleet of its own. */
function emptyRepository(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "clusterra-fleet-check-bench-"));
  const files = spawnSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: PROJECT_ROOT, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 }).stdout.split("\0").filter(Boolean);
  for (const f of files) {
    if (f.startsWith("stacks/") || /^fleet\/(central|tenants|connector)\//.test(f) || !fs.existsSync(path.join(PROJECT_ROOT, f))) continue;
    fs.mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
    fs.copyFileSync(path.join(PROJECT_ROOT, f), path.join(root, f));
  }
  fs.cpSync(path.join(PROJECT_ROOT, "dist"), path.join(root, "dist"), { recursive: true });
  for (const link of ["node_modules", ".tools"]) if (fs.existsSync(path.join(PROJECT_ROOT, link))) fs.symlinkSync(path.join(PROJECT_ROOT, link), path.join(root, link));
  return root;
}

function main(): void {
  if (!fs.existsSync(charts)) throw new Error(`fleet-check-bench: no chart sources at ${charts} (set CLUSTERRA_REFERENCE)`);
  const baseline = cli(PROJECT_ROOT, "fleet", "check", "--render", "--charts", charts);
  console.log(`fleet check, proportional to the change; baseline: the whole \`fleet check --render\` of the example environment (2 tenants) ${baseline.seconds.toFixed(1)} s`);

  const root = emptyRepository();
  try {
    const generated = generateRepository(root, TENANTS);
    const write = cli(root, "fleet", "write");
    console.log(`generated ${TENANTS.toLocaleString("en-US")} tenants on ${generated.centrals.length} centrals; fleet write ${write.seconds.toFixed(1)} s: ${write.stdout.split("\n")[0].replace(/^fleet write: /, "")}`);
    git(root, "init", "-q");
    git(root, "add", "-A");
    git(root, "commit", "-qm", "the operator's repository");

    // One tenant's change: a user added, its fleet written, as its pull request carries it.
    const one = generated.tenants[Math.floor(generated.tenants.length / 2)];
    const stackFile = path.join(root, "stacks", `Pulumi.${one.stack}.yaml`);
    fs.writeFileSync(stackFile, fs.readFileSync(stackFile, "utf8").replace(/(\n {4}- name: user4\n {6}uid: 10005\n)/, "$1    - name: newuser\n      uid: 10042\n"));
    cli(root, "fleet", "write");
    const tenantCheck = cli(root, "fleet", "check", "--render", "--changed", "HEAD", "--charts", charts);
    const reached = tenantCheck.stdout.split("\n").find((l) => l.includes("changed since")) ?? "";
    console.log(`one tenant's change (${one.stack}): ${tenantCheck.seconds.toFixed(1)} s  ${(tenantCheck.seconds / baseline.seconds).toFixed(2)}x baseline; ${reached.replace(/^fleet check: /, "")}`);
    git(root, "commit", "-qam", "a user for one tenant");

    // One central's shared change: its tenants' backups, in every tenant's values.
    const cell = generated.centrals[generated.centrals.length > 1 ? 1 : 0];
    const centralFile = path.join(root, "stacks", `Pulumi.${cell.stack}.yaml`);
    fs.appendFileSync(centralFile, `  clusterra:backups:\n    schedule: "0 */6 * * *"\n`);
    cli(root, "fleet", "write");
    const sharedCheck = cli(root, "fleet", "check", "--render", "--changed", "HEAD", "--charts", charts);
    const tenantsOfCell = generated.tenants.filter((t) => t.scope === cell.scope).length;
    console.log(`one central's shared change (${cell.stack}, ${tenantsOfCell} tenants): ${sharedCheck.seconds.toFixed(1)} s  ${(sharedCheck.seconds / baseline.seconds).toFixed(2)}x baseline`);
    console.log(`target: one tenant's change checked in under ${TARGET_SECONDS} s at ${TENANTS.toLocaleString("en-US")} tenants: ${tenantCheck.seconds.toFixed(1)} s -> ${tenantCheck.seconds < TARGET_SECONDS ? "met" : "NOT met"}`);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main();
