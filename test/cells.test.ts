/**
 * An environment outgrows one central: a second central stack of it (a cell, test/fixtures/cell)
 * takes new tenants while the first keeps its own. Each central's names and fleet folders are
 * its own, each tenant's fleet lives under its central's, and each central's ArgoCD generates
 * its own tenants' Applications only.
 */
import * as assert from "node:assert/strict";
import * as fs from "fs";
import * as path from "path";
import { validateStack } from "../config";
import type { ConfigIssue, StackFile } from "../config/types";
import { fleetDocuments } from "../fleet-tools/files";
import { checkFleet } from "../fleet-tools/check";
import { isValuesFile } from "../fleet-tools/files";
import { LABEL_KEYS } from "../facts/project";
import type { PlanResult } from "../planning/plan";
import type { DeploymentResource } from "../planning/deployment";
import { CELL_STACKS, cellRepository, exampleFile, exampleFiles, exampleRoot, plan, planIn, withValues } from "./helpers";
import { readAllStackFiles } from "../config";

/** Every physical name a plan gives AWS (names, name prefixes, aliases, paths), by resource type. */
function physicalNames(result: PlanResult): Set<string> {
  const names = new Set<string>();
  const keys = /^(name|namePrefix|alias|roleName|policyName|bucket|tableName|functionName|topicName|alarmName|ruleName|queueName|logGroupName|sinkName)$/;
  for (const r of result.deployment.deployment.resources as DeploymentResource[]) {
    if (!r.custom || !r.type.startsWith("aws:")) continue;
    for (const [k, v] of Object.entries(r.inputs ?? {})) if (keys.test(k) && typeof v === "string") names.add(`${r.type} ${v}`);
  }
  return names;
}

/** The issues of a stack file validated against the cell repository's others (and `extra`). */
function issuesIn(files: readonly StackFile[], file: StackFile, extra: readonly StackFile[] = []): ConfigIssue[] {
  const result = validateStack(file, [...files.filter((f) => f.stack !== file.stack), ...extra]);
  return result.ok ? [] : result.issues;
}

describe("a second central of an environment (a cell)", function () {
  this.timeout(120_000);
  let root: string;
  let files: StackFile[];
  before(async () => {
    root = await cellRepository();
    files = readAllStackFiles(root);
  });

  it("shares no AWS name with the environment's first central, which keeps its own", async () => {
    const first = physicalNames(await plan("central-dev"));
    const cell = physicalNames(await planIn(root, "central-dev-b"));
    // Inline policies are named within their role; nothing else may meet.
    const shared = [...cell].filter((n) => first.has(n) && !n.startsWith("aws:iam/rolePolicy:RolePolicy "));
    assert.deepEqual(shared, []);
    assert.ok(cell.has("aws:dynamodb/table:Table clusterra-dev-b-tenants"), [...cell].join("\n"));
    assert.ok(first.has("aws:dynamodb/table:Table clusterra-dev-tenants"), "the first central's names are the environment's, as before cells");
  });

  it("writes its fleet in folders of its own and leaves the first central's files as they were", () => {
    const under = (dir: string) => fs.readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => path.relative(root, path.join(e.parentPath, e.name))).sort();
    assert.ok(under("fleet/central/dev-b").includes("fleet/central/dev-b/tenants.yaml"));
    assert.deepEqual(fs.readdirSync(path.join(root, "fleet/tenants/dev-b")), ["initech"]);
    assert.deepEqual(fs.readdirSync(path.join(root, "fleet/tenants/dev")).sort(), ["acme", "globex"]);
    for (const f of [...under("fleet/central/dev"), ...under("fleet/tenants/dev")]) {
      assert.equal(fs.readFileSync(path.join(root, f), "utf8"), fs.readFileSync(path.join(exampleRoot(), f), "utf8"), `${f} changed when a cell joined the environment`);
    }
  });

  it("gives each central's ApplicationSets its own tenants only", () => {
    const generated = fleetDocuments(root, isValuesFile).documents.filter((d) => d.generated);
    const tenantsBy = (scope: string) => [...new Set(generated.filter((d) => d.file.startsWith(`fleet/central/${scope}/`)).map((d) => (d.object.metadata as { labels?: Record<string, string> }).labels?.[LABEL_KEYS.tenant]))].sort();
    assert.deepEqual(tenantsBy("dev"), ["acme", "globex"]);
    assert.deepEqual(tenantsBy("dev-b"), ["initech"]);
  });

  it("points the cell's tenant at its own central: cluster-api's role, the heartbeat's audience, its fleet folder", async () => {
    const initech = await planIn(root, "tenant-initech-dev");
    assert.equal(initech.config.kind === "tenant" && initech.config.central.scope, "dev-b");
    const trust = (initech.deployment.deployment.resources as DeploymentResource[]).filter((r) => r.type === "aws:iam/role:Role" && r.inputs?.name === "clusterra-dev-initech-files").map((r) => String(r.inputs?.assumeRolePolicy)).join("\n");
    assert.match(trust, /role\/clusterra-dev-b-cluster-api"/, "its files role trusts the cell's cluster-api");
    assert.doesNotMatch(trust, /role\/clusterra-dev-cluster-api"/);
    const shared = fs.readFileSync(path.join(root, "fleet/central/dev-b/tenants/values/edge-agent.yaml"), "utf8");
    assert.match(shared, /audience: clusterra-dev-b-cluster-api/);
    assert.ok(fs.existsSync(path.join(root, "fleet/tenants/dev-b/initech/facts.yaml")));
  });

  it("passes fleet check: each tenant's facts and entry read against its environment's names under its central's folder", async () => {
    const problems = await checkFleet(root, { allowOfflineFacts: true });
    assert.deepEqual(problems.map((p) => `${p.file}: ${p.at}: ${p.reason}`), []);
  });

  it("refuses a second central of an environment without a cell of its own, naming the first", () => {
    const twin = withValues(exampleFile("central-dev"), {}, "central-dev-2");
    const issues = issuesIn(files, twin).filter((i) => i.key === "clusterra:cell");
    assert.equal(issues.length, 1, JSON.stringify(issues));
    assert.match(issues[0].problem, /stacks\/Pulumi\.central-dev\.yaml is a central of environment dev without a cell/);
    const sameCell = withValues(exampleFile("central-dev"), { "clusterra:cell": "b" }, "central-dev-c");
    assert.match(issuesIn(files, sameCell).find((i) => i.key === "clusterra:cell")?.problem ?? "", /Pulumi\.central-dev-b\.yaml .* with the same cell/);
    // Another environment's first central has no cell either, and clashes with nothing.
    const prod = withValues(exampleFile("central-dev"), { "clusterra:environment": "prod" }, "central-prod");
    assert.deepEqual(issuesIn(files, prod).filter((i) => i.key === "clusterra:cell"), []);
  });

  it("refuses a cell that a tenant id of the environment is, or starts with and '-', and a tenant id so named, from both sides", () => {
    const cell = (name: string) => withValues(exampleFile("central-dev"), { "clusterra:cell": name }, `central-dev-${name}`);
    assert.match(issuesIn(files, cell("acme")).find((i) => i.key === "clusterra:cell")?.problem ?? "", /tenant acme of stacks\/Pulumi\.tenant-acme-dev\.yaml: its id is this cell/);
    const hyphenated = withValues(exampleFile("tenant-acme-dev"), { "clusterra:tenant": { id: "b-labs", accountId: "444455556666" } }, "tenant-b-labs-dev");
    assert.match(issuesIn(files, hyphenated).find((i) => i.key === "clusterra:tenant.id")?.problem ?? "", /starts with the cell b and '-' of stacks\/Pulumi\.central-dev-b\.yaml/);
    assert.match(issuesIn(files, cell("b"), [hyphenated]).find((i) => i.key === "clusterra:cell")?.problem ?? "", /tenant b-labs .*starts with this cell b and '-'/);
    // One of the platform's own name slots (the first central's clusterra-dev-alarms) would read as a cell's.
    assert.match(issuesIn(files, cell("alarms")).find((i) => i.key === "clusterra:cell")?.problem ?? "", /first central's own names/);
    // Longer than a cell's names allow, or not a plain name.
    for (const bad of ["toolong1", "B", "b-1"]) assert.ok(issuesIn(files, cell(bad)).some((i) => i.key === "clusterra:cell"), bad);
  });

  it("keeps the examples valid and each central's tenants its own: the cell's stacks join their central", () => {
    for (const stack of CELL_STACKS) assert.deepEqual(issuesIn(files, files.find((f) => f.stack === stack) as StackFile), [], stack);
    const first = validateStack(exampleFile("central-dev"), files.filter((f) => f.stack !== "central-dev"));
    const cell = validateStack(files.find((f) => f.stack === "central-dev-b") as StackFile, files.filter((f) => f.stack !== "central-dev-b"));
    assert.ok(first.ok && first.config.kind === "central" && cell.ok && cell.config.kind === "central");
    assert.deepEqual([first.config.scope, first.config.cell, first.config.tenants.map((t) => t.id)], ["dev", undefined, ["acme", "globex"]]);
    assert.deepEqual([cell.config.scope, cell.config.cell, cell.config.tenants.map((t) => t.id)], ["dev-b", "b", ["initech"]]);
    assert.equal(exampleFiles().length, 5, "the examples themselves hold one central");
  });
});
