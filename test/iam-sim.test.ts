import * as assert from "node:assert/strict";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { decide, loadVerdicts, questionKey, saveVerdicts, verdictCounts, type Ask } from "../access/iam-sim";
import { main, verdictFile } from "../cli/main";
import { exampleRoot } from "./helpers";

/** A question no other test asks (its bucket is this run's own), allowed by its identity policy. */
function freshAsk(name: string, context: Record<string, string> = {}): Ask {
  const bucket = `arn:aws:s3:::clusterra-iam-sim-${process.pid}-${name}`;
  const identity = [{ Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: "s3:GetObject", Resource: `${bucket}/*`, Condition: { StringEquals: { "aws:RequestedRegion": "eu-west-1" } } }] }];
  return { identity, action: "s3:GetObject", resource: `${bucket}/key`, context: { "aws:RequestedRegion": "eu-west-1", ...context } };
}

describe("the IAM simulator's verdicts (access/iam-sim.ts)", () => {
  it("simulates a question once per process, and again when any part of it changes", async () => {
    const ask = freshAsk("once");
    const before = verdictCounts();
    assert.equal(await decide(ask), "Allowed");
    assert.equal(await decide(ask), "Allowed");
    assert.deepEqual(verdictCounts(), { asked: before.asked + 2, simulated: before.simulated + 1 });
    // The same question in another region: another key, simulated, refused by the condition.
    assert.equal(await decide(freshAsk("once", { "aws:RequestedRegion": "us-east-1" })), "ImplicitlyDenied");
    assert.equal(verdictCounts().simulated, before.simulated + 2);
    const deny = { Version: "2012-10-17", Statement: [{ Effect: "Deny", Action: "s3:*", Resource: "*" }] };
    assert.equal(await decide({ ...ask, identity: [...ask.identity, deny] }), "ExplicitlyDenied");
    assert.equal(await decide({ ...ask, principal: "arn:aws:iam::111122223333:role/other" }), "Allowed");
    assert.equal(verdictCounts().simulated, before.simulated + 4);
  });

  it("answers from a saved file only for the same simulator, and ignores a file it cannot read", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "iam-verdicts-"));
    const file = path.join(dir, "verdicts.json");
    await decide(freshAsk("saved"));
    saveVerdicts(file);
    const saved = JSON.parse(fs.readFileSync(file, "utf8")) as { simulator: string; verdicts: Record<string, string> };
    assert.match(saved.simulator, /^@cloud-copilot\/iam-simulate@\S+ @cloud-copilot\/iam-data@\S+/);
    assert.equal(saved.verdicts[questionKey(freshAsk("saved"))], "Allowed");
    // A verdict recorded for a question this process never asked is what decide answers (read, not simulated) ...
    const recorded = freshAsk("recorded");
    fs.writeFileSync(file, JSON.stringify({ simulator: saved.simulator, verdicts: { [questionKey(recorded)]: "ExplicitlyDenied" } }));
    assert.equal(loadVerdicts(file), 1);
    const before = verdictCounts().simulated;
    assert.equal(await decide(recorded), "ExplicitlyDenied");
    assert.equal(verdictCounts().simulated, before);
    // ... but not one from another simulator, and a broken file is no file.
    const other = freshAsk("other");
    fs.writeFileSync(file, JSON.stringify({ simulator: "@cloud-copilot/iam-simulate@0.0.1", verdicts: { [questionKey(other)]: "ExplicitlyDenied" } }));
    assert.equal(loadVerdicts(file), 0);
    assert.equal(await decide(other), "Allowed");
    fs.writeFileSync(file, JSON.stringify({ simulator: saved.simulator, verdicts: { [questionKey(other)]: "Maybe" } }));
    assert.equal(loadVerdicts(file), 0, "a verdict the simulator never gives is not read");
    fs.writeFileSync(file, "{ not json");
    assert.equal(loadVerdicts(file), 0);
    assert.equal(loadVerdicts(path.join(dir, "missing.json")), 0);
  });

  it("plan says how many questions it asked and simulated, keeps the verdicts in the repository's node_modules/.cache, and CI simulates all", async function () {
    this.timeout(60_000);
    const root = exampleRoot();
    const run = async (argv: string[]) => {
      const out: string[] = [];
      const code = await main(["plan", "--stack", "connector-demo", "--out", fs.mkdtempSync(path.join(os.tmpdir(), "plan-verdicts-")), ...argv], (s) => out.push(s), () => undefined, root);
      assert.equal(code, 0);
      return out.find((l) => l.startsWith("IAM simulator:")) ?? "";
    };
    const ci = process.env.CI;
    try {
      delete process.env.CI;
      fs.rmSync(verdictFile(root), { force: true });
      assert.match(await run([]), /^IAM simulator: \d+ questions, \d+ simulated, the rest answered by its earlier verdicts \(.*node_modules\/\.cache\/clusterra\/iam\/verdicts\.json\)$/);
      assert.ok(fs.existsSync(verdictFile(root)), "the verdicts are kept for the next plan");
      assert.match(await run(["--no-verdict-cache"]), /^IAM simulator: \d+ questions, \d+ simulated$/);
      process.env.CI = "true";
      fs.rmSync(verdictFile(root), { force: true });
      assert.match(await run([]), /^IAM simulator: \d+ questions, \d+ simulated$/);
      assert.ok(!fs.existsSync(verdictFile(root)), "CI keeps no verdicts");
    } finally {
      if (ci === undefined) delete process.env.CI;
      else process.env.CI = ci;
    }
  });
});
