import * as assert from "node:assert/strict";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { main } from "../cli/main";
import { parseDeployment, SECRET_SIG, SECRET_SIG_KEY } from "../planning/deployment";
import { redactSecrets } from "../planning/engine";
import { exampleRoot, plan, planIn } from "./helpers";

describe("clusterra plan output", function () {
  this.timeout(60000);

  it("writes resources.json in Pulumi's deployment export format, with options and secrets redacted", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "clusterra-out-"));
    const out: string[] = [];
    const code = await main(["plan", "--stack", "central-dev", "--out", dir], (s) => out.push(s), (s) => out.push(s), exampleRoot());
    assert.equal(code, 0, out.join("\n"));
    const deployment = parseDeployment(fs.readFileSync(path.join(dir, "resources.json"), "utf8"), "resources.json");
    const resources = deployment.deployment.resources;
    assert.equal(deployment.version, 3);
    assert.equal(resources[0].type, "pulumi:pulumi:Stack");
    const urns = new Set(resources.map((r) => r.urn));
    for (const r of resources) {
      assert.match(r.urn, /^urn:pulumi:central-dev::clusterra::/);
      for (const key of ["urn", "custom", "type", "inputs", "outputs", "protect", "dependencies"]) assert.ok(key in r, `${key} on ${r.urn}`);
      if (r.parent) assert.ok(urns.has(r.parent), `parent of ${r.urn} is in the file`);
      for (const d of r.dependencies ?? []) assert.ok(urns.has(d), `dependency ${d}`);
      if (r.provider) assert.ok(urns.has(r.provider.split("::").slice(0, -1).join("::")), `provider of ${r.urn}`);
    }
    const table = resources.find((r) => r.type === "aws:dynamodb/table:Table")!;
    assert.match(table.parent!, /clusterra:central:StateTables/);
    assert.match(table.provider!, /pulumi:providers:aws::aws::/);
    assert.doesNotMatch(fs.readFileSync(path.join(dir, "resources.json"), "utf8"), /offline-plan-placeholder/, "the kubeconfig stays redacted");
    assert.ok(out.some((l) => /^stack central-dev \(central, dev, us-east-1\)$/.test(l)));
    assert.ok(out.some((l) => /^\s+6\s+aws:dynamodb\/table:Table$/.test(l)));
    assert.ok(fs.existsSync(path.join(dir, "outputs.json")));
  });

  it("redacts every secret-marked value", () => {
    const marked = { [SECRET_SIG_KEY]: SECRET_SIG, value: "hunter2" };
    assert.deepEqual(redactSecrets({ a: [marked], b: "plain" }), { a: [{ [SECRET_SIG_KEY]: SECRET_SIG, ciphertext: "[secret]" }], b: "plain" });
  });

  it("plans every example stack the same way twice (deterministic ids)", async () => {
    const first = await plan("tenant-globex-dev");
    const { planStack } = await import("../planning/plan");
    const again = await planStack({ stack: "tenant-globex-dev", root: exampleRoot() }, fs.mkdtempSync(path.join(os.tmpdir(), "clusterra-again-")));
    assert.deepEqual(again.deployment.deployment.resources.map((r) => [r.urn, r.id]), first.deployment.deployment.resources.map((r) => [r.urn, r.id]));
  });
});

describe("a tenant's plan keeps its central's", function () {
  this.timeout(120_000);

  it("plans central once for the same stack files and build, and again when any stack file changes", async () => {
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), "central-plans-"));
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "central-plan-root-"));
    fs.cpSync(path.join(exampleRoot(), "stacks"), path.join(root, "stacks"), { recursive: true });
    const first = await planIn(root, "tenant-acme-dev", { centralCache: cache, fleetRoot: null });
    const [kept] = fs.readdirSync(cache);
    assert.ok(kept?.endsWith(".json"));
    // What is kept is what the next plan uses: a kept host address reaches the tenant's rules.
    const entry = JSON.parse(fs.readFileSync(path.join(cache, kept), "utf8"));
    const host = String(entry.outputs.hostPrivateIp);
    entry.outputs.hostPrivateIp = "10.0.0.99";
    fs.writeFileSync(path.join(cache, kept), JSON.stringify(entry));
    const again = await planIn(root, "tenant-acme-dev", { centralCache: cache, fleetRoot: null });
    assert.match(JSON.stringify(again.deployment), /10\.0\.0\.99\/32/);
    assert.doesNotMatch(JSON.stringify(first.deployment), /10\.0\.0\.99/);
    assert.match(JSON.stringify(first.deployment), new RegExp(`${host.replace(/\./g, "\\.")}/32`));
    // Any stack file changed (here another tenant's): central planned afresh, kept under its own key.
    fs.appendFileSync(path.join(root, "stacks", "Pulumi.tenant-globex-dev.yaml"), "# a comment\n");
    const fresh = await planIn(root, "tenant-acme-dev", { centralCache: cache, fleetRoot: null });
    assert.doesNotMatch(JSON.stringify(fresh.deployment), /10\.0\.0\.99/);
    assert.equal(fs.readdirSync(cache).length, 2);
    fs.rmSync(cache, { recursive: true, force: true });
    fs.rmSync(root, { recursive: true, force: true });
  });
});
