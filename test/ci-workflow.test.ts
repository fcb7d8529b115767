import * as assert from "node:assert/strict";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { validateWorkflow } from "@action-validator/core";
import { parse } from "yaml";
import { PROJECT_ROOT } from "../config";

const WORKFLOW = path.join(PROJECT_ROOT, ".github", "workflows", "ci.yml");

describe("the operators' CI workflow", () => {
  const text = fs.readFileSync(WORKFLOW, "utf8");
  const workflow = parse(text) as { on: Record<string, unknown>; jobs: Record<string, { steps?: { uses?: string; run?: string }[]; needs?: string[]; permissions?: Record<string, string> }> };

  it("is valid against the GitHub workflow schema (SchemaStore's, through action-validator)", () => {
    assert.deepEqual(validateWorkflow(text).errors, []);
    const broken = text.replace("runs-on: ubuntu-24.04\n    timeout-minutes: 60\n    steps:", "runs-on: ubuntu-24.04\n    timeout-minutes: 60\n    stepz:");
    assert.notEqual(broken, text);
    assert.notDeepEqual(validateWorkflow(broken).errors, []);
  });

  it("pins every action by a full commit SHA", () => {
    const uses = Object.values(workflow.jobs).flatMap((j) => (j.steps ?? []).flatMap((s) => (s.uses ? [s.uses] : [])));
    assert.ok(uses.length >= 5);
    for (const u of uses) assert.match(u, /^[\w.-]+\/[\w.-]+(\/[\w.-]+)*@[0-9a-f]{40}$/, `${u} is not pinned by commit`);
  });

  it("runs on pull requests: .ci/run (tests, fleet check --render, every plan), a policy preview per touched stack, one gate over all", () => {
    assert.ok("pull_request" in workflow.on);
    const runs = (job: string) => (workflow.jobs[job].steps ?? []).map((s) => s.run ?? "").join("\n");
    assert.match(runs("check"), /bash \.ci\/run/);
    assert.match(fs.readFileSync(path.join(PROJECT_ROOT, ".ci", "run"), "utf8"), /npm test\n[\s\S]*npm run test:end-to-end\n[\s\S]*fleet check --render[\s\S]*dist\/journey\/main\.js/);
    assert.match(runs("stacks"), /scripts\/touched-stacks/);
    assert.match(runs("preview"), /pulumi preview --stack "\$\{STACK\}" --policy-pack policies/);
    assert.deepEqual(workflow.jobs.preview.permissions, { contents: "read", "id-token": "write" });
    assert.deepEqual(workflow.jobs.ci.needs, ["check", "stacks", "preview", "facts"]);
  });

  it("checks a pull request's fleet for what it changes, from its base, and main's whole", () => {
    assert.deepEqual((workflow.on.push as { branches: string[] }).branches, ["main"]);
    const check = workflow.jobs.check.steps ?? [];
    const run = check.find((st) => /bash \.ci\/run/.test(st.run ?? "")) as { run: string; env?: Record<string, string> };
    assert.equal(run.env?.CLUSTERRA_FLEET_CHANGED, "${{ github.event.pull_request.base.sha }}");
    assert.match(run.run, /--preserve-env=[^ ]*CLUSTERRA_FLEET_CHANGED/);
    assert.ok(check.some((st) => (st as { with?: Record<string, unknown> }).with?.["fetch-depth"] === 0), "the base must be in the clone");
    assert.match(fs.readFileSync(path.join(PROJECT_ROOT, ".ci", "run"), "utf8"), /fleet check --render \$\{CLUSTERRA_FLEET_CHANGED:\+--changed "\$\{CLUSTERRA_FLEET_CHANGED\}"\}/);
    // On main there is no base and no role: the whole check, and no job that needs either.
    for (const job of ["stacks", "facts"]) assert.equal((workflow.jobs[job] as { if?: string }).if, "github.event_name == 'pull_request'", job);
  });

  it("checks the whole fleet again in the merge queue, on main with the pull requests queued ahead", () => {
    assert.deepEqual(workflow.on.merge_group, { types: ["checks_requested"] });
    const check = workflow.jobs.check as { if?: string; steps?: { run?: string; env?: Record<string, string> }[] };
    assert.equal(check.if, undefined, "check runs on every event, the merge queue's included");
    // No pull request in a merge_group event: the base is empty, so .ci/run checks the whole fleet and plans every stack.
    const run = (check.steps ?? []).find((st) => /bash \.ci\/run/.test(st.run ?? ""));
    assert.match(run?.env?.CLUSTERRA_FLEET_CHANGED ?? "", /github\.event\.pull_request\.base\.sha/);
    // The one required status reports there too, with the pull-request-only jobs skipped.
    assert.equal((workflow.jobs.ci as { if?: string }).if, "always()");
    assert.match(text, /Branch protection on main: require the `ci` check and the merge queue/);
  });

  it("previews a changed stack and, for a central, every stack joined to it (scripts/touched-stacks)", function () {
    if (spawnSync("jq", ["--version"]).status !== 0) return this.skip(); // Debian's jq (the runner image has it)
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "touched-"));
    fs.mkdirSync(path.join(root, "stacks"));
    fs.mkdirSync(path.join(root, "scripts"));
    fs.copyFileSync(path.join(PROJECT_ROOT, "scripts", "touched-stacks"), path.join(root, "scripts", "touched-stacks"));
    const write = (stack: string, text: string) => fs.writeFileSync(path.join(root, "stacks", `Pulumi.${stack}.yaml`), text);
    write("central-dev", "config:\n  clusterra:kind: central\n");
    write("central-dev-b", "config:\n  clusterra:kind: central\n  clusterra:cell: b\n");
    write("tenant-acme-dev", "config:\n  clusterra:central:\n    stack: central-dev\n");
    write("tenant-initech-dev", "config:\n  clusterra:central: { stack: central-dev-b, accountId: \"111122223333\" }\n");
    write("connector-demo", "config:\n  clusterra:central: {stack: \"central-dev\"}\n");
    const git = (...args: string[]) => spawnSync("git", ["-c", "user.email=t@clusterra.invalid", "-c", "user.name=t", ...args], { cwd: root, encoding: "utf8" });
    git("init", "-q");
    git("add", "-A");
    git("commit", "-qm", "base");
    const touched = (change: () => void) => {
      change();
      git("commit", "-qam", "change");
      const out = spawnSync("bash", ["scripts/touched-stacks", "HEAD~1"], { cwd: root, encoding: "utf8" });
      assert.equal(out.status, 0, out.stderr);
      return JSON.parse(out.stdout) as string[];
    };
    assert.deepEqual(touched(() => write("central-dev", "config:\n  clusterra:kind: central\n  # bigger\n")), ["central-dev", "connector-demo", "tenant-acme-dev"]);
    assert.deepEqual(touched(() => write("central-dev-b", "config:\n  clusterra:kind: central\n  clusterra:cell: b\n  # bigger\n")), ["central-dev-b", "tenant-initech-dev"]);
    assert.deepEqual(touched(() => write("tenant-acme-dev", "config:\n  clusterra:central:\n    stack: central-dev\n  # users\n")), ["tenant-acme-dev"]);
    // A removed tenant has nothing to preview; the central it joined (block or flow style) does.
    assert.deepEqual(touched(() => fs.rmSync(path.join(root, "stacks", "Pulumi.tenant-acme-dev.yaml"))), ["central-dev"]);
    assert.deepEqual(touched(() => fs.rmSync(path.join(root, "stacks", "Pulumi.tenant-initech-dev.yaml"))), ["central-dev-b"]);
    // A comment naming a stack is no join; a quoted key is one; a removed central is not previewed.
    write("tenant-hooli-dev", "# was on stack: central-old\nconfig:\n  clusterra:central: {\"stack\": \"central-dev-b\", accountId: \"111122223333\"}\n");
    git("add", "-A");
    assert.deepEqual(touched(() => undefined), ["tenant-hooli-dev"]);
    assert.deepEqual(touched(() => fs.rmSync(path.join(root, "stacks", "Pulumi.tenant-hooli-dev.yaml"))), ["central-dev-b"]);
    assert.deepEqual(touched(() => write("central-dev-b", "config:\n  clusterra:kind: central\n  clusterra:cell: b\n  # smaller\n")), ["central-dev-b"]);
    assert.deepEqual(touched(() => fs.rmSync(path.join(root, "stacks", "Pulumi.central-dev-b.yaml"))), []);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("compares every committed facts file with its stack's deployment, with the read-only role", () => {
    const runs = (workflow.jobs.facts.steps ?? []).map((s) => s.run ?? "").join("\n");
    assert.match(runs, /for file in stacks\/Pulumi\.\*\.yaml[\s\S]*pulumi stack output --json --stack "\$\{stack\}"[\s\S]*fleet check --changed "\$\{BASE_SHA\}" --outputs/);
    assert.deepEqual(workflow.jobs.facts.permissions, { contents: "read", "id-token": "write" });
    assert.deepEqual(workflow.jobs.facts.needs, ["check"]);
  });
});
