/**
 * `clusterra plan`: validates a stack's configuration, runs the real program offline on
 * the mock engine, and writes what `pulumi up` would create as a deployment export.
 */
import { createHash } from "crypto";
import * as fs from "fs";
import * as path from "path";
import { ConfigError, encodeConfigValues, PROJECT_ROOT, readStackFile, resolveConfig, stackFilePath, stackShortName, type StackConfig } from "../config";
import { CENTRAL_PROVIDER_NAME, STACK_CONFIG_DIR } from "../facts/project";
import type { Deployment } from "./deployment";
import type { MockContext } from "./mocks";

export interface PlanOptions {
  readonly stack: string;
  /** Stack file to read instead of stacks/Pulumi.<stack>.yaml. */
  readonly configFile?: string;
  readonly root?: string;
  /** Where a tenant's plan keeps its central's plan (outputs and deployment) between runs; none: planned afresh. */
  readonly centralCache?: string;
}

export interface PlanResult {
  readonly config: StackConfig;
  readonly deployment: Deployment;
  readonly outputs: Record<string, unknown>;
  /** Fleet files the run wrote, relative to the fleet root. */
  readonly fleetFiles: string[];
  /** Where they were written (undefined: not written). */
  readonly fleetRoot: string | undefined;
  /** The reads the program made through the customer's provider (not the central one): the deploy role allows them. */
  readonly invokes: readonly string[];
  /** A tenant's central, planned first: what central builds for this tenant is billed there. */
  readonly central?: Deployment;
}

/** The account a plan pretends to act in: the first allowed one, else AWS's documentation account. */
const DOCUMENTATION_ACCOUNT = "123456789012";

function accountOf(config: StackConfig): string {
  if (config.kind === "tenant") return config.tenant.accountId;
  return config.allowedAccountIds?.[0] ?? DOCUMENTATION_ACCOUNT;
}

/** Reads and validates a stack's configuration. Throws ConfigError listing every issue. */
export function loadStackConfig(options: PlanOptions): { config: StackConfig; values: Record<string, unknown> } {
  const root = options.root ?? PROJECT_ROOT;
  const { file, issues } = readStackFile(options.configFile ?? stackFilePath(options.stack), options.stack, root);
  if (!file) throw new ConfigError(issues);
  return { config: resolveConfig(file, root), values: { ...file.values } };
}

/**
 * Plans one stack (and first, for a tenant, its central stack, for a central its connector
 * stacks, whose outputs its StackReferences read). Fleet files go under `fleetRoot`.
 */
export async function planStack(options: PlanOptions, fleetRoot: string | undefined): Promise<PlanResult> {
  const { config, values } = loadStackConfig(options);
  const stackOutputs = new Map<string, Record<string, unknown>>();
  let centralDeployment: Deployment | undefined;
  if (config.kind === "tenant") {
    const centralName = stackShortName(config.central.stack);
    // Only central's outputs (and its deployment, for the inventory) are needed here: its fleet files are not written.
    const central = await centralPlan(centralName, options);
    stackOutputs.set(centralName, central.outputs);
    centralDeployment = central.deployment;
  }
  // A central reads its own last deployment's outputs (components/central/live-tenants.ts): offline there is none.
  if (config.kind === "central") stackOutputs.set(config.stack, {});
  // A central stack reads each connector naming it (their shared services) through a StackReference.
  for (const connector of config.kind === "central" ? config.connectors : []) {
    stackOutputs.set(connector.stack, (await planStack({ stack: connector.stack, root: options.root }, undefined)).outputs);
  }
  // Heavy modules load only after the configuration has proved valid.
  const [{ runOffline }, { clusterraProgram }, fleet] = await Promise.all([import("./engine"), import("../program"), import("../components/fleet/writer")]);
  fleet.setFleetRoot(fleetRoot, true);
  const run = await runOffline(
    config.stack,
    encodeConfigValues(values),
    { region: config.region, partition: config.partition, accountId: accountOf(config), stackOutputs, ...existingNetworkOf(config) },
    () => clusterraProgram(options.root),
  );
  const fleetFiles = await fleet.flushFleetFiles();
  const invokes = run.invokes.filter((i) => !new RegExp(`pulumi:providers:aws::${CENTRAL_PROVIDER_NAME}::`).test(i.provider)).map((i) => i.token);
  return { config, deployment: run.deployment, outputs: run.outputs, invokes: [...new Set(invokes)].sort(), fleetFiles, fleetRoot, ...(centralDeployment ? { central: centralDeployment } : {}) };
}

/** Central plans kept in a cache folder at most: an operator's recent repository states. */
const KEPT_CENTRAL_PLANS = 20;

/**
 * A central's plan as a tenant's plan needs it, kept in `options.centralCache` by everything
 * it is made from: every stack file's text (its tenants and connectors are among them), the
 * build (dist/.tsbuildinfo holds every source's hash) and the lockfile. The offline plan is
 * deterministic in these, so a kept one is the one a fresh run would make; a tenant's plan
 * then runs one program, not four (the connectors, central, the tenant).
 */
async function centralPlan(stack: string, options: PlanOptions): Promise<{ outputs: Record<string, unknown>; deployment: Deployment }> {
  const root = options.root ?? PROJECT_ROOT;
  const saved = options.centralCache ? path.join(options.centralCache, `${centralPlanKey(root, stack)}.json`) : undefined;
  if (saved && fs.existsSync(saved)) {
    try {
      return JSON.parse(fs.readFileSync(saved, "utf8")) as { outputs: Record<string, unknown>; deployment: Deployment };
    } catch {
      // Unreadable (a run cut short): planned afresh below.
    }
  }
  const central = await planStack({ stack, root }, undefined);
  if (saved) {
    fs.mkdirSync(path.dirname(saved), { recursive: true });
    fs.writeFileSync(`${saved}.${process.pid}`, JSON.stringify({ outputs: central.outputs, deployment: central.deployment }));
    fs.renameSync(`${saved}.${process.pid}`, saved);
    const kept = fs.readdirSync(path.dirname(saved)).filter((f) => f.endsWith(".json")).map((f) => path.join(path.dirname(saved), f));
    for (const old of kept.sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs).slice(KEPT_CENTRAL_PLANS)) fs.rmSync(old, { force: true });
  }
  return { outputs: central.outputs, deployment: central.deployment };
}

/** What a central's plan is made from, hashed: its name, every stack file, the build, the lockfile. */
function centralPlanKey(root: string, stack: string): string {
  const hash = createHash("sha256");
  const part = (s: string) => hash.update(`${Buffer.byteLength(s)}:`).update(s);
  part(stack);
  for (const f of [path.join(PROJECT_ROOT, "dist", ".tsbuildinfo"), path.join(PROJECT_ROOT, "package-lock.json")]) part(fs.existsSync(f) ? fs.readFileSync(f, "utf8") : "absent");
  const dir = path.join(root, STACK_CONFIG_DIR);
  for (const name of (fs.existsSync(dir) ? fs.readdirSync(dir) : []).sort()) {
    part(name);
    part(fs.readFileSync(path.join(dir, name), "utf8"));
  }
  return hash.digest("hex");
}

/**
 * An adopted VPC, as the account would describe it offline: with the configured CIDR, and
 * its first subnet (the server's) spanning it, since its real range is not in the stack
 * file; the configured server address is then checked against what validation guarantees.
 */
function existingNetworkOf(config: StackConfig): Pick<MockContext, "existingVpcs" | "existingSubnets"> {
  if (config.kind !== "tenant" || !("vpcId" in config.network)) return {};
  const { vpcId, vpcCidr, subnetIds } = config.network;
  return { existingVpcs: new Map([[vpcId, vpcCidr]]), existingSubnets: new Map([[subnetIds[0], { vpcId, cidrBlock: vpcCidr }]]) };
}

/** Writes resources.json and outputs.json into the plan folder. */
export function writePlan(outDir: string, result: PlanResult): void {
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, "resources.json"), JSON.stringify(result.deployment, null, 2) + "\n");
  fs.writeFileSync(path.join(outDir, "outputs.json"), JSON.stringify(result.outputs, null, 2) + "\n");
}

/** Resource counts by type, most first. */
export function countByType(deployment: Deployment): [string, number][] {
  const counts = new Map<string, number>();
  for (const r of deployment.deployment.resources) counts.set(r.type, (counts.get(r.type) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}
