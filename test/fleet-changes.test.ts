/**
 * `fleet check --changed <rev>`: a pull request is checked for what its files reach, not the
 * whole fleet, and still for everything they reach.
 */
import * as assert from "node:assert/strict";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { changedFiles, ChangedFilesError, reachOf, selectionOf, stackIndex, stackValuesAt, WHOLE_FLEET, type StackIndex } from "../fleet-tools/changes";
import { checkFleet, renderFleet, runFleetCheck } from "../fleet-tools/check";
import { fleetDocuments, isValuesFile, toolPath } from "../fleet-tools/files";
import { LABEL_KEYS } from "../facts/project";
import { centralFleetPath, connectorFleetPath, fleetPlace, fleetScopeOf, tenantFleetPath, tenantsFleetPath, tenantsSharedPath } from "../facts/fleet";
import { tenantClusterFleetPath } from "../components/fleet/tenant-cluster";
import { PROJECT_ROOT } from "../config";
import { exampleRoot } from "./helpers";

const INDEX: StackIndex = {
  tenants: new Map([
    ["tenant-acme-dev", { scope: "dev", id: "acme" }],
    ["tenant-globex-dev", { scope: "dev", id: "globex" }],
    ["tenant-initech-dev", { scope: "dev-b", id: "initech" }],
  ]),
  centrals: new Map([["central-dev", "dev"], ["central-dev-b", "dev-b"]]),
  connectors: new Map([["connector-demo", { name: "demo-pcluster", scope: "dev" }]]),
};

const select = (...changed: string[]) => selectionOf(reachOf(changed, INDEX), INDEX);

describe("a fleet file's place (the inverse of facts/fleet.ts's folders)", () => {
  it("reads back every folder function, and nothing outside them", () => {
    assert.deepEqual(fleetPlace(`${centralFleetPath("dev-b")}/root.yaml`), { kind: "central", scope: "dev-b", rest: "root.yaml" });
    assert.deepEqual(fleetPlace(`${tenantsSharedPath("dev")}/values/slurm.yaml`), { kind: "central", scope: "dev", rest: "tenants/values/slurm.yaml" });
    assert.deepEqual(fleetPlace(`${tenantClusterFleetPath("dev", "acme")}/values/slurm.yaml`), { kind: "tenant", scope: "dev", tenantId: "acme", rest: "cluster/values/slurm.yaml" });
    assert.deepEqual(fleetPlace(`${connectorFleetPath("pc1")}/connector.env`), { kind: "connector", clusterName: "pc1", rest: "connector.env" });
    for (const outside of ["fleet/README.md", `${tenantsFleetPath("dev")}/README.md`, `${tenantFleetPath("dev", "acme")}/`, "fleet/central//x.yaml", "stacks/Pulumi.central-dev.yaml", "docs/fleet/central/dev/x.yaml"]) assert.equal(fleetPlace(outside), undefined, outside);
    assert.equal(fleetScopeOf(`${tenantFleetPath("dev-b", "initech")}/entry.yaml`), "dev-b");
    assert.equal(fleetScopeOf(`${connectorFleetPath("pc1")}/connector.env`), undefined);
  });
});

describe("what a change reaches (fleet check --changed)", () => {
  it("a tenant's stack file or files reach that tenant, and its central's own files, no other tenant", () => {
    for (const changed of [["stacks/Pulumi.tenant-acme-dev.yaml"], ["fleet/tenants/dev/acme/users.yaml"]]) {
      const s = select(...changed);
      assert.equal(s.summary, "tenant dev/acme (with its central's own files)");
      assert.ok(s.tenant("dev", "acme") && !s.tenant("dev", "globex") && !s.tenant("dev-b", "initech"));
      assert.ok(s.file("fleet/tenants/dev/acme/facts.yaml") && !s.file("fleet/tenants/dev/globex/facts.yaml"));
      assert.ok(s.file("fleet/central/dev/tenants.yaml") && s.file("fleet/central/dev/cert-manager.yaml") && !s.file("fleet/central/dev-b/tenants.yaml"));
      assert.ok(s.stack("tenant-acme-dev") && s.stack("central-dev") && !s.stack("tenant-globex-dev") && !s.stack("central-dev-b") && !s.stack("connector-demo"));
    }
  });

  it("a central's stack file or files (its ApplicationSets, its shared values) reach every tenant of that central, and only of it", () => {
    for (const changed of ["stacks/Pulumi.central-dev.yaml", "fleet/central/dev/tenants/values/slurm.yaml", "fleet/central/dev/tenants.yaml"]) {
      const s = select(changed);
      assert.equal(s.summary, "central dev and its tenants", changed);
      assert.ok(s.tenant("dev", "acme") && s.tenant("dev", "globex") && !s.tenant("dev-b", "initech"), changed);
      assert.ok(s.stack("tenant-globex-dev") && !s.stack("tenant-initech-dev"), changed);
    }
  });

  it("the charts, the code, the facts, a removed stack file reach the whole fleet; documentation nothing", () => {
    for (const changed of ["fleet/charts/tenant-cluster/templates/slurmctld.yaml", "facts/charts.ts", "components/fleet/tenant.ts", "package-lock.json", "stacks/Pulumi.tenant-gone-dev.yaml"]) {
      const s = select("fleet/tenants/dev/acme/users.yaml", changed);
      assert.equal(s.summary, `the whole fleet (${changed} reaches all of it)`);
      assert.ok(s.tenant("dev-b", "initech") && s.file("fleet/tenants/dev/globex/facts.yaml") && s.stack("connector-demo"));
    }
    const docs = select("README.md", "fleet/README.md", "docs/architecture/central-dev.svg", "policies/README.md");
    assert.equal(docs.summary, "nothing (documentation only)");
    assert.ok(!docs.tenant("dev", "acme") && !docs.file("fleet/central/dev/tenants.yaml"));
    assert.equal(select("fleet/connector/demo-pcluster/facts.yaml").summary, "connector demo-pcluster");
    // Markdown under fleet/ is no documentation: a chart renders any file of its templates/, and a stray file in a tenant's folder is a problem.
    assert.equal(select("fleet/charts/tenant-entry/templates/extra.md").summary, "the whole fleet (fleet/charts/tenant-entry/templates/extra.md reaches all of it)");
    assert.equal(select("fleet/tenants/dev/acme/notes.md").summary, "tenant dev/acme (with its central's own files)");
  });

  it("a central's change reaches the connectors attached to it", () => {
    for (const changed of ["stacks/Pulumi.central-dev.yaml", "fleet/central/dev/values/facts.yaml"]) {
      const s = select(changed);
      assert.ok(s.stack("connector-demo") && s.file("fleet/connector/demo-pcluster/facts.yaml"), changed);
    }
    assert.ok(!select("stacks/Pulumi.central-dev-b.yaml").stack("connector-demo"));
  });

  it("a stack file that becomes another stack (its central, id, kind, environment or cell) reaches the whole fleet; a new one only itself", () => {
    const acme = { "clusterra:kind": "tenant", "clusterra:environment": "dev", "clusterra:tenant": { id: "acme" }, "clusterra:central": { stack: "central-dev" } };
    const rel = "stacks/Pulumi.tenant-acme-dev.yaml";
    const reach = (before: Record<string, unknown> | undefined, now: Record<string, unknown>) => selectionOf(reachOf([rel], INDEX, () => before, () => now), INDEX).summary;
    assert.equal(reach({ ...acme, "clusterra:central": { stack: "central-dev-b" } }, acme), `the whole fleet (${rel} reaches all of it)`);
    assert.equal(reach({ ...acme, "clusterra:tenant": { id: "acme-old" } }, acme), `the whole fleet (${rel} reaches all of it)`);
    assert.equal(reach({ ...acme, "clusterra:users": [] }, acme), "tenant dev/acme (with its central's own files)");
    assert.equal(reach(undefined, acme), "tenant dev/acme (with its central's own files)");
  });
});

describe("fleet check --changed on a repository", function () {
  this.timeout(120_000);
  let root: string;
  const git = (...args: string[]) => {
    const r = spawnSync("git", ["-c", "user.email=test@clusterra.invalid", "-c", "user.name=test", ...args], { cwd: root, encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    return r.stdout;
  };
  before(function () {
    if (!toolPath(PROJECT_ROOT, "helm")) this.skip(); // the check renders each tenant's entry (install-tools)
    root = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-changes-"));
    for (const f of ["fleet", "stacks", "Pulumi.yaml"]) fs.cpSync(path.join(exampleRoot(), f), path.join(root, f), { recursive: true });
    git("init", "-q");
    // main already holds a defect of globex's (a hand edit its stack file does not render).
    fs.appendFileSync(path.join(root, "fleet/tenants/dev/globex/cluster/values/slurm.yaml"), "# hand edit on main\n");
    git("add", "-A");
    git("commit", "-qm", "main");
  });
  after(() => root && fs.rmSync(root, { recursive: true, force: true }));

  it("checks what acme's change reaches, finds acme's defect, and leaves globex's to the whole check", async () => {
    fs.appendFileSync(path.join(root, "fleet/tenants/dev/acme/control-plane/values/slurm.yaml"), "# hand edit in the pull request\n");
    const changed = changedFiles(root, "HEAD");
    assert.deepEqual(changed, ["fleet/tenants/dev/acme/control-plane/values/slurm.yaml"]);
    const index = stackIndex(root);
    const selection = selectionOf(reachOf(changed, index), index);
    // Only acme's Applications are generated and rendered.
    const generated = fleetDocuments(root, (f) => isValuesFile(f) || !selection.file(f), selection.tenant).documents.filter((d) => d.generated);
    assert.deepEqual([...new Set(generated.map((d) => (d.object.metadata as { labels?: Record<string, string> }).labels?.[LABEL_KEYS.tenant]))], ["acme"]);
    const files = (problems: { file: string }[]) => [...new Set(problems.map((p) => p.file))].sort();
    const proportional = await checkFleet(root, { selection, rendered: renderFleet(root, selection.stack) });
    assert.deepEqual(files(proportional), ["fleet/tenants/dev/acme/control-plane/values/slurm.yaml"]);
    const whole = await checkFleet(root, { selection: WHOLE_FLEET, rendered: renderFleet(root) });
    assert.deepEqual(files(whole), ["fleet/tenants/dev/acme/control-plane/values/slurm.yaml", "fleet/tenants/dev/globex/cluster/values/slurm.yaml"]);
  });

  it("reads a stack file as the base had it, and nothing for one it did not have", () => {
    assert.deepEqual((stackValuesAt(root, "HEAD", "stacks/Pulumi.tenant-acme-dev.yaml")?.["clusterra:tenant"] as { id?: string } | undefined)?.id, "acme");
    assert.equal(stackValuesAt(root, "HEAD", "stacks/Pulumi.tenant-nobody-dev.yaml"), undefined);
  });

  it("refuses a revision git does not know, or one that reads as an option, saying so, and checks nothing", async () => {
    assert.throws(() => changedFiles(root, "--output=/tmp/clusterra-not-written"), ChangedFilesError);
    assert.ok(!fs.existsSync("/tmp/clusterra-not-written"));
    assert.throws(() => changedFiles(root, "no-such-branch"), ChangedFilesError);
    const out: string[] = [];
    const err: string[] = [];
    const code = await runFleetCheck(root, { render: false, changed: "no-such-branch" }, (s) => out.push(s), (s) => err.push(s));
    assert.equal(code, 2);
    assert.match(err.join("\n"), /--changed "no-such-branch": git cannot compare with "no-such-branch" .*; valid: a revision of this repository, such as origin\/main; nothing was checked/);
    assert.deepEqual(out, []);
  });
});
