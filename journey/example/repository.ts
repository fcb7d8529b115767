/**
 * The project's example environment as a repository of its own: the example stack files
 * (test/fixtures/stacks, and test/fixtures/cell: a second central of the same environment
 * with a tenant of its own), the project's charts and docs, and the fleet those stacks write,
 * as `plan --write-fleet` writes it. The suite and the journey both plan, render and sync
 * this, never the operator's stacks/ and fleet/: an operator's own tenants, or an example it
 * removed, leave them as they are (`fleet check --render` guards the live files).
 */
import * as fs from "fs";
import * as path from "path";
import { planStack, type PlanResult } from "../../planning/plan";
import { EXAMPLE_STACKS_DIR } from "../../facts/project";

/** The example stack files, under the project: the examples, and the cell's. */
export const EXAMPLE_FIXTURES = { stacks: EXAMPLE_STACKS_DIR, cell: path.join(path.dirname(EXAMPLE_STACKS_DIR), "cell") } as const;

/** The examples' stacks, in the order they plan (a central before its tenants). */
export const EXAMPLE_STACKS = ["central-dev", "tenant-acme-dev", "tenant-globex-dev", "connector-demo", "connector-offline"] as const;

/** The second central's stacks (test/fixtures/cell), in the order they plan. */
export const CELL_STACKS = ["central-dev-b", "tenant-initech-dev"] as const;

/** The Pulumi project file every repository of the project has at its root. */
const PULUMI_PROJECT_FILE = "Pulumi.yaml";

/** What a repository holds besides its stack files and written fleet: the project's own charts and docs. */
const PROJECT_FILES = [PULUMI_PROJECT_FILE, "fleet/charts", "fleet/README.md"];

/** What an example repository commits: everything but the tools' link (a link out of the repository, which ArgoCD refuses to check out). */
export const EXAMPLE_REPOSITORY_CONTENT = [PULUMI_PROJECT_FILE, "stacks", "fleet"] as const;

/**
 * Makes `root` an example repository without its fleet: the project's files above, the example
 * stack files (with the cell's when asked), and the tools install-tools built (a link), where
 * a repository's commands look for them. Throws when `root` already holds stack files.
 */
export function copyExampleRepository(project: string, root: string, options: { readonly cell: boolean }): void {
  if (fs.existsSync(path.join(root, "stacks"))) throw new Error(`${root} already holds stacks/: an example repository is made in a folder of its own`);
  fs.mkdirSync(root, { recursive: true });
  fs.cpSync(path.join(project, EXAMPLE_FIXTURES.stacks), path.join(root, "stacks"), { recursive: true });
  if (options.cell) fs.cpSync(path.join(project, EXAMPLE_FIXTURES.cell), path.join(root, "stacks"), { recursive: true });
  for (const f of PROJECT_FILES) fs.cpSync(path.join(project, f), path.join(root, f), { recursive: true });
  if (fs.existsSync(path.join(project, ".tools"))) fs.symlinkSync(path.join(project, ".tools"), path.join(root, ".tools"));
}

/**
 * Makes the whole example repository, the cell included, in `root` (a new folder): its files,
 * then each stack planned in order with its fleet written into it. Returns the plans by stack.
 */
export async function writeExampleRepository(project: string, root: string): Promise<Map<string, PlanResult>> {
  copyExampleRepository(project, root, { cell: true });
  const plans = new Map<string, PlanResult>();
  // The Pulumi runtime is global: one plan at a time.
  for (const stack of [...EXAMPLE_STACKS, ...CELL_STACKS]) plans.set(stack, await planStack({ stack, root }, root));
  return plans;
}

/** One stack's plan among an example repository's; an error names a stack that is not an example. Pure. */
export function examplePlan(plans: ReadonlyMap<string, PlanResult>, stack: string): PlanResult {
  const p = plans.get(stack);
  if (!p) throw new Error(`${stack} is not an example stack (journey/example/repository.ts: ${[...plans.keys()].join(", ")})`);
  return p;
}
