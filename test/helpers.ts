/** Shared test fixtures: example stack values, and plans run once per test process. */
import * as path from "path";
import { readAllStackFiles } from "../config";
import type { StackFile } from "../config/types";
import type { DeploymentResource } from "../cli/deployment";
import { planStack, type PlanResult } from "../cli/plan";
import * as os from "os";

export const EXAMPLE_STACKS = ["central-dev", "tenant-acme-dev", "tenant-globex-dev", "connector-demo", "connector-offline"] as const;

/** The shipped stack files, parsed. */
export function exampleFiles(): StackFile[] {
  return readAllStackFiles();
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

/** Plans a stack once per process; runs are serialized (the Pulumi runtime is global). */
export function plan(stack: string): Promise<PlanResult> {
  let p = plans.get(stack);
  if (!p) {
    const fleetRoot = path.join(os.tmpdir(), `clusterra-test-${process.pid}`, stack);
    p = chain.then(() => planStack({ stack }, fleetRoot));
    chain = p.catch(() => undefined);
    plans.set(stack, p);
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
