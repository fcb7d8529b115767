/**
 * Shared test fixtures: the suite's own example environment (test/fixtures/stacks), a
 * repository made of it once per test process, and plans run once per process. The suite
 * never reads the operator's stacks/ or fleet/: an operator's real tenants leave it green
 * (`fleet check --render` and `plan --check-fleet` guard the live files).
 */
import * as path from "path";
import { PROJECT_ROOT, readAllStackFiles } from "../config";
import { renderTenantAddOn, toolPath } from "../fleet-tools/render";
import { tenantCentralChartAddOns } from "../components/fleet/application-set";
import { fleetDocuments } from "../fleet-tools/files";
import type { StackFile } from "../config/types";
import type { DeploymentResource } from "../planning/deployment";
import { planStack, type PlanResult } from "../planning/plan";
import * as fs from "fs";
import * as os from "os";
import { stringify } from "yaml";
import type { TenantPorts } from "../facts/contract";
import { recordedPorts } from "../config/tenant-ports";
import { CELL_STACKS, copyExampleRepository, EXAMPLE_FIXTURES, EXAMPLE_STACKS } from "../journey/example/repository";

export { CELL_STACKS, EXAMPLE_STACKS };

/** The example environment's stack files, the suite's own. */
export const FIXTURES = path.join(PROJECT_ROOT, path.dirname(EXAMPLE_FIXTURES.stacks));

/**
 * The example repository: the fixtures' stack files, the project's charts, and (once the
 * root hook in setup.ts has planned every example stack into it) the fleet those stacks
 * write, as `plan --write-fleet` writes it. One per test process.
 */
export function exampleRoot(): string {
  const root = path.join(os.tmpdir(), "clusterra-examples");
  if (!fs.existsSync(root)) copyExampleRepository(PROJECT_ROOT, root, { cell: false });
  return root;
}

/**
 * The example repository with a second central of its environment (test/fixtures/cell: cell
 * b, and tenant initech joined to it): the examples' stack files and written fleet, the cell's
 * stack files, the fleet its two stacks write (`cellRepository` plans them). One per process.
 */
export async function cellRepository(): Promise<string> {
  const root = path.join(os.tmpdir(), "clusterra-cell");
  if (!fs.existsSync(path.join(root, "fleet", "central", "dev-b"))) {
    fs.rmSync(root, { recursive: true, force: true });
    fs.cpSync(exampleRoot(), root, { recursive: true, verbatimSymlinks: true });
    fs.cpSync(path.join(PROJECT_ROOT, EXAMPLE_FIXTURES.cell), path.join(root, "stacks"), { recursive: true });
    for (const stack of CELL_STACKS) await planIn(root, stack);
  }
  return root;
}

/** Plans a stack of another repository into it (serialized with every other plan of the process). */
export function planIn(root: string, stack: string, options: { centralCache?: string; fleetRoot?: string | null } = {}): Promise<PlanResult> {
  const p = chain.then(() => planStack({ stack, root, ...(options.centralCache ? { centralCache: options.centralCache } : {}) }, options.fleetRoot === null ? undefined : (options.fleetRoot ?? root)));
  chain = p.catch(() => undefined);
  return p;
}

/** Plans every example stack into the example repository (the root hook runs it before any test). */
export async function writeExampleFleet(): Promise<void> {
  for (const stack of EXAMPLE_STACKS) await plan(stack);
}

/** A tenant's ports as its example stack file records them (`clusterra:ports`). */
export function examplePorts(id: string): TenantPorts {
  const ports = recordedPorts(exampleFile(`tenant-${id}-dev`).values);
  if (!ports) throw new Error(`the example stack of ${id} records no ports`);
  return ports;
}

/** The example stack files, parsed. */
export function exampleFiles(): StackFile[] {
  return readAllStackFiles(exampleRoot());
}

export function exampleFile(stack: string): StackFile {
  const f = exampleFiles().find((s) => s.stack === stack);
  if (!f) throw new Error(`no example stack ${stack}`);
  return f;
}

/** A copy of a stack file's values with some keys replaced (undefined deletes). */
export function withValues(file: StackFile, changes: Record<string, unknown>, stack = file.stack): StackFile {
  const values: Record<string, unknown> = JSON.parse(JSON.stringify(file.values));
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined) delete values[k];
    else values[k] = v;
  }
  return { stack, file: `stacks/Pulumi.${stack}.yaml`, values };
}

const plans = new Map<string, Promise<PlanResult>>();
let chain: Promise<unknown> = Promise.resolve();

/**
 * Plans a stack once per process (with `changes` to its stack file's values, once per set of
 * changes); runs are serialized (the Pulumi runtime is global).
 */
export function plan(stack: string, changes?: Record<string, unknown>): Promise<PlanResult> {
  const key = changes ? `${stack} ${JSON.stringify(changes)}` : stack;
  let p = plans.get(key);
  if (!p) {
    const root = exampleRoot();
    // The examples write into the example repository; a changed stack into a folder of its own.
    let fleetRoot = root;
    let configFile: string | undefined;
    if (changes) {
      const dir = path.join(os.tmpdir(), `clusterra-plan-${plans.size}`);
      fs.mkdirSync(dir, { recursive: true });
      configFile = path.join(dir, `Pulumi.${stack}.yaml`);
      fs.writeFileSync(configFile, stringify({ config: withValues(exampleFile(stack), changes).values }));
      fleetRoot = path.join(dir, "fleet");
    }
    p = chain.then(() => planStack({ stack, configFile, root }, fleetRoot));
    chain = p.catch(() => undefined);
    plans.set(key, p);
  }
  return p;
}

export function byType(result: PlanResult, type: string): DeploymentResource[] {
  return result.deployment.deployment.resources.filter((r) => r.type === type);
}

export function named(result: PlanResult, type: string, name: string): DeploymentResource {
  const r = byType(result, type).find((x) => x.urn.endsWith(`::${name}`));
  if (!r) throw new Error(`no ${type} named ${name}`);
  return r;
}

/** A JSON-string input parsed (policies and patterns arrive as strings). */
export function json<T = Record<string, unknown>>(value: unknown): T {
  return (typeof value === "string" ? JSON.parse(value) : value) as T;
}

/**
 * A tenant cluster's own objects as ArgoCD renders them at sync time (the tenant-cluster
 * chart over the shared values, the tenant's facts file and its own values), from `root`'s
 * fleet; undefined without Helm (the caller skips: `bash scripts/install-tools`, CI has it).
 */
export function clusterObjects(tenant: string, root = exampleRoot()): any[] | undefined {
  const helm = toolPath(PROJECT_ROOT, "helm");
  return helm ? renderTenantAddOn(root, helm, "dev", tenant, "cluster-manifests") : undefined;
}

/** A tenant's objects on central as ArgoCD renders them at sync time (the tenant-control-plane and tenant-guards charts), or undefined without Helm. */
export function centralObjects(tenant: string, root = exampleRoot()): any[] | undefined {
  const helm = toolPath(PROJECT_ROOT, "helm");
  return helm ? tenantCentralChartAddOns().flatMap((addon) => renderTenantAddOn(root, helm, "dev", tenant, addon)) : undefined;
}

/** Central's entry for a tenant as ArgoCD renders it at sync time (the tenant-entry chart, generated from its folder), or undefined without Helm. */
export function entryObjects(tenant: string, root = exampleRoot()): any[] | undefined {
  const fleet = fleetDocuments(root);
  if (fleet.skipped) return undefined;
  return fleet.documents.filter((d) => d.renderedBy === `${tenant}-entry`).map((d) => d.object);
}

/**
 * Helm, for a test that needs it: run by hand without it, the test is skipped (install-tools
 * makes it); in CI (`CI` set) its absence is a failure, never a silent skip.
 */
export function needHelm(ctx: Mocha.Context): string {
  return toolPath(PROJECT_ROOT, "helm") ?? skipWithoutHelm(ctx);
}

/** For a test whose render needs Helm and got none: a failure in CI, else skipped (`bash scripts/install-tools` makes Helm). */
export function skipWithoutHelm(ctx: Mocha.Context): never {
  if (process.env.CI) throw new Error("helm is not installed: CI runs `bash scripts/install-tools` before the tests");
  return ctx.skip();
}
