/**
 * The `clusterra` command line. Exit codes: 0 success, 1 a mandatory policy failed,
 * 2 bad configuration or usage (with every problem listed), 3 an internal error.
 */
import * as fs from "fs";
import * as path from "path";
import { Command, CommanderError } from "commander";
import { ConfigError, PROJECT_ROOT, readAllStackFiles, tenantsFromStackFiles } from "../config";
import { cacheDir } from "../facts/project";
import { formatGrowth } from "../planning/capacity";
import { estimateCost, formatCost, writeCostFile } from "../planning/cost";
import { diagramContext, writeDiagram } from "../planning/diagram";
import { countByType, planStack, writePlan } from "../planning/plan";
import { checkDeployment, formatReport, type PolicyReport } from "../planning/policy-check";
import { runPolicyCommand } from "./policy";

export const EXIT = { ok: 0, policy: 1, usage: 2, internal: 3 } as const;

/** Verdicts of a repository's earlier plans, keyed by the whole question (access/iam-sim.ts); npm ci clears it. */
export function verdictFile(root: string): string {
  return path.join(cacheDir(root, "iam"), "verdicts.json");
}

const CHARTS_FOLDER = "a folder of <chart>-<version> chart sources, such as ../shared/reference/charts";

/** A stack name as Pulumi accepts it, and as a file name in stacks/: no path separators. */
const STACK_NAME = /^[A-Za-z0-9_.-]{1,100}$/;

/**
 * What is wrong with a folder flag's value, as typed: an input folder (`must: "exist"`) that
 * is missing or is a file, an output folder that is a file. Undefined: usable.
 */
export function folderProblem(flag: string, value: string, must: "exist" | "be writable", valid: string): string | undefined {
  // An empty value would name the current folder: say it, never fall back to the default.
  if (value.trim() === "") return `${flag} ${JSON.stringify(value)} is empty; valid: ${valid}`;
  let isDir: boolean | undefined;
  try {
    isDir = fs.statSync(path.resolve(value)).isDirectory();
  } catch {
    isDir = undefined;
  }
  if (isDir === false) return `${flag} ${JSON.stringify(value)} is a file, not a folder; valid: ${valid}`;
  if (isDir === undefined && must === "exist") return `${flag} ${JSON.stringify(value)}: no such folder; valid: ${valid}`;
  // A folder to make: the nearest part of its path that exists must be a folder.
  for (let at = path.dirname(path.resolve(value)); isDir === undefined; at = path.dirname(at)) {
    try {
      if (!fs.statSync(at).isDirectory()) return `${flag} ${JSON.stringify(value)} is under ${at}, a file; valid: ${valid}`;
      break;
    } catch {
      if (path.dirname(at) === at) break;
    }
  }
  return undefined;
}

/** One line: how many policies ran over how many resources, and how many of them failed. */
export function policySummary(report: PolicyReport): string {
  const failed = Object.keys(report.counts.byPolicy).length;
  const verdict = report.passed ? "PASSED" : "FAILED";
  const outcome = failed === 0 ? "none failed" : `${failed} failed (${report.counts.mandatory} mandatory, ${report.counts.advisory} advisory violations)`;
  return `${verdict}: ${report.policies} policies ran over ${report.resources} resources, ${outcome}`;
}

export async function main(
  argv: string[],
  out: (s: string) => void = (s) => process.stdout.write(s + "\n"),
  err: (s: string) => void = (s) => process.stderr.write(s + "\n"),
  /** The repository the commands act on: its stacks/ and fleet/. */
  root = PROJECT_ROOT,
): Promise<number> {
  let exitCode: number = EXIT.ok;
  /** Says every folder flag that cannot be used, as typed, and makes the exit a usage error; true when there was one. */
  const refusedFolders = (command: string, flags: readonly (readonly [flag: string, value: string | undefined, must: "exist" | "be writable", valid: string])[]): boolean => {
    const problems = flags.flatMap(([flag, value, must, valid]) => (value === undefined ? [] : [folderProblem(flag, value, must, valid)])).filter((p): p is string => p !== undefined);
    for (const p of problems) err(`clusterra ${command}: ${p}`);
    if (problems.length) exitCode = EXIT.usage;
    return problems.length > 0;
  };
  const program = new Command("clusterra")
    .description("Managed Slurm on AWS: plan stacks offline and check them against the policy pack")
    .exitOverride()
    .configureOutput({ writeOut: (s) => out(s.trimEnd()), writeErr: (s) => err(s.trimEnd()) });

  program
    .command("plan")
    .description("run the program offline for one stack and write what it would create")
    // Checked in the action, not by commander: a mistyped flag (--stak) must be reported as
    // unknown, which commander does only after its own required-option check.
    .option("-s, --stack <name>", "stack name (stacks/Pulumi.<name>.yaml); required")
    .option("--config-file <path>", "read this stack file instead of stacks/Pulumi.<name>.yaml")
    .option("--out <dir>", "output folder (default .clusterra/plan/<stack>/)")
    .option("--write-fleet", "write the fleet files into this repository's fleet/, as `pulumi up` does, instead of the output folder")
    .option("--no-verdict-cache", "simulate every IAM question afresh instead of reusing the simulator's earlier verdicts, and plan a tenant's central afresh instead of reusing its plan from the same stack files and build (CI always does)")
    .action(async (opts: { stack?: string; configFile?: string; out?: string; writeFleet?: boolean; verdictCache: boolean }) => {
      if (opts.stack === undefined) {
        err("clusterra plan: --stack <name> is required; valid: the NAME of a stacks/Pulumi.NAME.yaml, e.g. `plan --stack central-dev`");
        exitCode = EXIT.usage;
        return;
      }
      if (!STACK_NAME.test(opts.stack)) {
        err(`clusterra plan: --stack ${JSON.stringify(opts.stack)} is not a stack name; valid: letters, digits, '.', '_' and '-' (the NAME of stacks/Pulumi.NAME.yaml)`);
        exitCode = EXIT.usage;
        return;
      }
      const outProblem = opts.out === undefined ? undefined : folderProblem("--out", opts.out, "be writable", "a folder for the plan's files (made when missing)");
      if (outProblem) {
        err(`clusterra plan: ${outProblem}; nothing was written`);
        exitCode = EXIT.usage;
        return;
      }
      const outDir = path.resolve(opts.out ?? path.join(root, ".clusterra", "plan", opts.stack));
      // CI proves every verdict afresh; an operator's repeated plans reuse what the simulator said.
      const verdicts = opts.verdictCache && !process.env.CI ? verdictFile(root) : undefined;
      const sim = await import("../access/iam-sim");
      if (verdicts) sim.loadVerdicts(verdicts);
      const askedBefore = sim.verdictCounts();
      try {
        // A tenant's central planned earlier from the same files and build is not planned again (CI plans it afresh).
        const centralCache = verdicts ? cacheDir(root, "central-plans") : undefined;
        const result = await planStack({ stack: opts.stack, configFile: opts.configFile, root, ...(centralCache ? { centralCache } : {}) }, opts.writeFleet ? root : path.join(outDir, "fleet-root"));
        writePlan(outDir, result);
        const resources = result.deployment.deployment.resources;
        out(`stack ${result.config.stack} (${result.config.kind}, ${result.config.environment}, ${result.config.region})`);
        const cloud = resources.filter((r) => r.custom && !r.type.startsWith("pulumi:")).length;
        out(`${resources.length} resources: ${cloud} in the cloud, the rest components, providers and references:`);
        for (const [type, n] of countByType(result.deployment)) out(`  ${String(n).padStart(4)}  ${type}`);
        if (result.fleetFiles.length) out(`fleet files (${result.fleetFiles.length}):\n${result.fleetFiles.map((f) => `  ${f}`).join("\n")}`);
        const cost = estimateCost(result.deployment);
        out(formatCost(cost, result.config.region));
        const stackFiles = readAllStackFiles(root);
        const growth = formatGrowth(result.config, cost, stackFiles, result.central);
        if (growth) out(growth);
        writeCostFile(outDir, cost, result.config.region);
        await writeDiagram(outDir, result.deployment, diagramContext(result.config, stackFiles), cacheDir(root, "diagrams"));
        const { buildInventory, writeInventory } = await import("../access/inventory");
        const inventory = await buildInventory(result.config, result.deployment, result.central, cost, result.invokes);
        const { buildDeployRole, writeDeployRole } = await import("../access/deploy-role");
        const inventoryFiles = [...writeInventory(outDir, inventory), ...writeDeployRole(outDir, buildDeployRole(result.config, result.deployment, result.invokes))];
        if (inventory?.deployRole) out(`deploy role ${inventory.deployRole.name}: ${inventory.deployRole.statements} statements in ${inventory.deployRole.policies} managed policies; the simulator allows ${inventory.deployRole.allowedCalls} calls of the planned creates, refuses ${inventory.deployRole.deniedCalls.length}, and refuses ${inventory.deployRole.outside.filter((o) => o.verdict !== "Allowed").length} of ${inventory.deployRole.outside.length} outside requests`);
        if (inventory) out(`inventory: ${inventory.resourceCount} resources in account ${inventory.account}, ${inventory.roles.length} roles, ${inventory.cannot.length} requests of the platform refused (IAM simulator), ${inventory.can.length} allowed`);
        const asked = sim.verdictCounts();
        if (asked.asked > askedBefore.asked) out(`IAM simulator: ${asked.asked - askedBefore.asked} questions, ${asked.simulated - askedBefore.simulated} simulated${verdicts ? `, the rest answered by its earlier verdicts (${path.relative(process.cwd(), verdicts)})` : ""}`);
        if (verdicts) sim.saveVerdicts(verdicts);
        const report = checkDeployment(result.deployment, { tenants: tenantsFromStackFiles(root), root });
        for (const line of formatReport(report).split("\n").slice(0, report.violations.length)) out(`  ${line}`);
        out(`policy pack: ${policySummary(report)}`);
        out(`AWS limits: ${report.limits.values} values checked against ${report.limits.limits} limits (facts/aws-limits.ts), ${report.limits.over} over`);
        if (!report.passed) exitCode = EXIT.policy;
        const shown = (file: string) => path.relative(process.cwd(), path.join(outDir, file)) || file;
        out(`wrote ${["resources.json", "outputs.json", "cost.json", "architecture.svg", ...inventoryFiles].map(shown).join(", ")}`);
      } catch (e) {
        if (e instanceof ConfigError) {
          err(`clusterra plan: invalid configuration (${e.issues.length} ${e.issues.length === 1 ? "problem" : "problems"}); nothing was written:\n${e.message}`);
          exitCode = EXIT.usage;
          return;
        }
        throw e;
      }
    });

  program
    .command("policy")
    .description("policy pack commands")
    .command("check")
    .description("check a deployment file (plan output or `pulumi stack export`) against the policy pack")
    .argument("<resources.json>")
    .option("--json", "machine-readable output")
    .option("--tenants <ids>", "comma-separated tenant ids for the isolation policy (default: the stack files')")
    .action(async (file: string, opts: { json?: boolean; tenants?: string }) => {
      exitCode = await runPolicyCommand(["check", file, ...(opts.json ? ["--json"] : []), ...(opts.tenants ? ["--tenants", opts.tenants] : [])], out, err, root);
    });

  program
    .command("tenant")
    .description("tenant commands")
    .command("remove")
    .description("print the order that removes a tenant (its stack, then central's part and its fleet), what is retained and how to delete it for good; runs nothing against AWS")
    .option("-s, --stack <name>", "the tenant's stack name; required")
    .action(async (opts: { stack?: string }) => {
      if (opts.stack === undefined || !STACK_NAME.test(opts.stack)) {
        err(`clusterra tenant remove: --stack ${opts.stack === undefined ? "<name> is required" : `${JSON.stringify(opts.stack)} is not a stack name`}; valid: the NAME of a tenant's stacks/Pulumi.NAME.yaml, e.g. \`tenant remove --stack tenant-acme-dev\``);
        exitCode = EXIT.usage;
        return;
      }
      try {
        const tenant = await planStack({ stack: opts.stack, root }, undefined);
        if (tenant.config.kind !== "tenant" || !tenant.central) {
          err(`clusterra tenant remove: ${opts.stack} is a ${tenant.config.kind} stack; valid: a tenant's stack`);
          exitCode = EXIT.usage;
          return;
        }
        const { formatRemoval, removalPlan } = await import("../planning/tenant-remove");
        out(formatRemoval(removalPlan(tenant.config, tenant.deployment, tenant.central)));
      } catch (e) {
        if (e instanceof ConfigError) {
          err(`clusterra tenant remove: invalid configuration (${e.issues.length} ${e.issues.length === 1 ? "problem" : "problems"}):\n${e.message}`);
          exitCode = EXIT.usage;
          return;
        }
        throw e;
      }
    });

  const fleet = program.command("fleet").description("fleet commands");
  fleet
    .command("check")
    .description("check fleet/: schemas, tenant isolation, no secrets, pinned charts, and (with --render) equal to a fresh render, every Application rendered with Helm and validated")
    .option("--render", "also plan every stack file and compare what it renders with the committed files, render every Application with Helm and validate every object with kubectl-validate")
    .option("--charts <dir>", "chart sources, <chart>-<version> folders (default ../shared/reference/charts)")
    .option("--outputs <dir>", "also compare each facts file with its stack's `fleetFacts` output, from <dir>/<stack>.json (`pulumi stack output --json -s <stack>`): the operators' CI job with cloud credentials")
    .option("--allow-offline-facts", "accept facts files an offline plan wrote (invented ids) for stacks that are not the project's examples: a repository not deployed yet")
    .option("--changed <rev>", "check only what the files changed since <rev> reach (a pull request's: a tenant's files reach that tenant, a central's its tenants, the charts and code everything); main runs the whole check")
    .action(async (opts: { render?: boolean; charts?: string; outputs?: string; allowOfflineFacts?: boolean; changed?: string }) => {
      if (refusedFolders("fleet check", [["--charts", opts.charts, "exist", CHARTS_FOLDER], ["--outputs", opts.outputs, "exist", "a folder of <stack>.json files from `pulumi stack output --json -s <stack>`"]])) return;
      const { runFleetCheck } = await import("../fleet-tools/check");
      exitCode = await runFleetCheck(root, { render: !!opts.render, charts: opts.charts && path.resolve(opts.charts), outputs: opts.outputs && path.resolve(opts.outputs), allowOfflineFacts: !!opts.allowOfflineFacts, ...(opts.changed !== undefined ? { changed: opts.changed } : {}) }, out, err);
    });
  fleet
    .command("write")
    .description("regenerate every stack's fleet files offline from its stack file and its committed facts file (never a facts file): a fleet-wide change without `pulumi up`")
    .option("--allow-offline-facts", "accept facts files an offline plan wrote (invented ids) for stacks that are not the project's examples: a repository not deployed yet")
    .action(async (opts: { allowOfflineFacts?: boolean }) => {
      const { runFleetWrite } = await import("../fleet-tools/write");
      exitCode = runFleetWrite(root, out, err, { allowOfflineFacts: !!opts.allowOfflineFacts });
    });
  fleet
    .command("render")
    .description("render every Application under fleet/ with helm template, as ArgoCD would, one file per object")
    .option("--charts <dir>", "chart sources, <chart>-<version> folders (default ../shared/reference/charts)")
    .option("--out <dir>", "output folder (default .clusterra/fleet-render/)")
    .action(async (opts: { charts?: string; out?: string }) => {
      if (refusedFolders("fleet render", [["--charts", opts.charts, "exist", CHARTS_FOLDER], ["--out", opts.out, "be writable", "a folder for the rendered objects (made when missing)"]])) return;
      const { runFleetRender, defaultChartsDir } = await import("../fleet-tools/render");
      const charts = opts.charts ? path.resolve(opts.charts) : defaultChartsDir(root);
      exitCode = await runFleetRender(root, { charts, out: path.resolve(opts.out ?? path.join(root, ".clusterra", "fleet-render")) }, out, err);
    });

  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? EXIT.ok : EXIT.usage;
    throw e;
  }
  return exitCode;
}
