/**
 * The example environment the suite and the journey plan, render and sync: made from the
 * project's fixtures (test/fixtures), never from the operator's stacks/ and fleet/. A
 * repository whose live stack files hold the operator's own tenants, and lack an example, gives
 * the same example repository.
 */
import * as assert from "node:assert/strict";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { PROJECT_ROOT } from "../config";
import { CELL_STACKS, copyExampleRepository, EXAMPLE_FIXTURES, EXAMPLE_STACKS, examplePlan } from "../journey/example/repository";
import { loadStackConfig, type PlanResult } from "../planning/plan";
import { crossCentralApplications } from "../journey/gitops/applications";
import { otherCentralsOf } from "../journey/index";
import { cellRepository } from "./helpers";

/** A project whose live stacks/ and fleet/ are an operator's: its tenant hooli, globex removed, a fleet of its own. */
function operatorProject(): string {
  const project = fs.mkdtempSync(path.join(os.tmpdir(), "operator-project-"));
  for (const f of ["test", "Pulumi.yaml"]) fs.symlinkSync(path.join(PROJECT_ROOT, f), path.join(project, f));
  fs.mkdirSync(path.join(project, "fleet", "tenants", "dev", "hooli"), { recursive: true });
  fs.symlinkSync(path.join(PROJECT_ROOT, "fleet", "charts"), path.join(project, "fleet", "charts"));
  fs.copyFileSync(path.join(PROJECT_ROOT, "fleet", "README.md"), path.join(project, "fleet", "README.md"));
  fs.writeFileSync(path.join(project, "fleet", "tenants", "dev", "hooli", "facts.yaml"), "serverAddress: 10.16.48.10\n");
  fs.mkdirSync(path.join(project, "stacks"));
  fs.copyFileSync(path.join(PROJECT_ROOT, EXAMPLE_FIXTURES.stacks, "Pulumi.central-dev.yaml"), path.join(project, "stacks", "Pulumi.central-dev.yaml"));
  fs.writeFileSync(path.join(project, "stacks", "Pulumi.tenant-hooli-dev.yaml"), "config:\n  clusterra:kind: tenant\n");
  return project;
}

const stackFiles = (dir: string) => fs.readdirSync(dir).sort();

describe("the example repository (journey/example/repository.ts)", () => {
  it("is made of the fixtures' stack files and the project's charts, whatever the operator's stacks/ and fleet/ hold", () => {
    const project = operatorProject();
    const root = path.join(project, "example");
    copyExampleRepository(project, root, { cell: true });
    assert.deepEqual(stackFiles(path.join(root, "stacks")), [...EXAMPLE_STACKS, ...CELL_STACKS].map((s) => `Pulumi.${s}.yaml`).sort());
    for (const s of EXAMPLE_STACKS) assert.equal(fs.readFileSync(path.join(root, "stacks", `Pulumi.${s}.yaml`), "utf8"), fs.readFileSync(path.join(PROJECT_ROOT, EXAMPLE_FIXTURES.stacks, `Pulumi.${s}.yaml`), "utf8"), s);
    // No written fleet of the operator's: the plans write it afresh.
    assert.deepEqual(fs.readdirSync(path.join(root, "fleet")).sort(), ["README.md", "charts"]);
    assert.ok(fs.existsSync(path.join(root, "fleet", "charts", "tenant-entry", "Chart.yaml")));
  });

  it("without the cell, holds the examples alone", () => {
    const root = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "examples-")), "example");
    copyExampleRepository(PROJECT_ROOT, root, { cell: false });
    assert.deepEqual(stackFiles(path.join(root, "stacks")), [...EXAMPLE_STACKS].map((s) => `Pulumi.${s}.yaml`).sort());
  });

  it("is made in a folder of its own: one holding stack files is refused, and left as it was", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "examples-"));
    fs.mkdirSync(path.join(root, "stacks"));
    fs.writeFileSync(path.join(root, "stacks", "Pulumi.mine.yaml"), "config: {}\n");
    assert.throws(() => copyExampleRepository(PROJECT_ROOT, root, { cell: true }), /already holds stacks\/: an example repository is made in a folder of its own/);
    assert.deepEqual(fs.readdirSync(path.join(root, "stacks")), ["Pulumi.mine.yaml"]);
  });

  it("names the example stacks when asked for one that is not", () => {
    const plans = new Map<string, PlanResult>([["central-dev", {} as PlanResult]]);
    assert.equal(examplePlan(plans, "central-dev"), plans.get("central-dev"));
    assert.throws(() => examplePlan(plans, "central-prod"), /^Error: central-prod is not an example stack \(journey\/example\/repository\.ts: central-dev\)$/);
  });
});

describe("a central's ArgoCD and the environment's other centrals (the journey's cell check)", () => {
  it("finds the cell among the example repository's plans, with its tenant, from either central", async () => {
    const root = await cellRepository();
    const plans = ["central-dev", "tenant-acme-dev", "tenant-globex-dev", ...CELL_STACKS].map((stack) => ({ config: loadStackConfig({ stack, root }).config }) as PlanResult);
    assert.deepEqual(otherCentralsOf(plans[0], plans), [{ scope: "dev-b", tenants: ["initech"] }]);
    assert.deepEqual(otherCentralsOf(plans[3], plans), [{ scope: "dev", tenants: ["acme", "globex"] }]);
    assert.deepEqual(otherCentralsOf(plans[0], plans.slice(0, 3)), []);
  });

  it("names each Application that reads another central's folders or is one of its tenants', and no other", () => {
    const app = (name: string, spec: Record<string, unknown>) => ({ metadata: { name }, spec });
    const apps = [
      app("acme-entry", { source: { repoURL: "https://github.com/clusterra/infra.git", path: "fleet/charts/tenant-entry", helm: { valueFiles: ["$values/fleet/tenants/dev/acme/entry.yaml"] } }, destination: { namespace: "tenant-acme" } }),
      app("tenants", { source: { path: "fleet/central/dev/tenants" } }),
      app("reads-cell", { sources: [{ path: "fleet/charts/tenant-cluster" }, { ref: "values", path: "fleet/tenants/dev-b/initech/cluster" }] }),
      app("initech-entry", { source: { path: "fleet/charts/tenant-entry" } }),
      app("into-cell-namespace", { destination: { namespace: "tenant-initech" } }),
      app("cell-root", { source: { path: "fleet/central/dev-b" } }),
    ];
    assert.deepEqual(crossCentralApplications(apps, [{ scope: "dev-b", tenants: ["initech"] }]), [
      "reads-cell reads fleet/tenants/dev-b/initech/cluster (central dev-b's)",
      "initech-entry is tenant initech's (central dev-b's)",
      "into-cell-namespace is tenant initech's (central dev-b's)",
      "cell-root reads fleet/central/dev-b (central dev-b's)",
    ]);
    // A cell tenant named like the start of another Application is not it: only the names the fleet gives a tenant's.
    assert.deepEqual(crossCentralApplications([app("cert-manager", { source: { path: "fleet/central/dev" } }), app("cert-control-plane", {})], [{ scope: "dev-b", tenants: ["cert"] }]), ["cert-control-plane is tenant cert's (central dev-b's)"]);
    // Seen from the cell: dev's folders are not dev-b's, though one name begins the other.
    assert.deepEqual(crossCentralApplications(apps.slice(2), [{ scope: "dev", tenants: ["acme"] }]), []);
  });
});
