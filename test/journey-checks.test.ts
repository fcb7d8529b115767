import * as assert from "assert";
import * as fs from "fs";
import * as path from "path";
import * as ts from "typescript";
import { PROJECT_ROOT } from "../config";
import { journeyPassed, summary } from "../journey/index";
import { note, step } from "../journey/host/step";
import { healedStep, managedObject, putBack, rollingSyncDriftDetail } from "../journey/gitops/self-heal";

/**
 * Every place a journey source gives a step a literal `passed: true` (`step(name, true, ...)`,
 * `{ passed: true }`): a step that cannot fail. A report is a note (journey/host/step.ts). Pure.
 */
export function literalPasses(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const where = (n: ts.Node) => `${file}:${source.getLineAndCharacterOfPosition(n.getStart()).line + 1}`;
  const visit = (n: ts.Node): void => {
    if (ts.isCallExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === "step" && n.arguments[1]?.kind === ts.SyntaxKind.TrueKeyword) found.push(`${where(n)}: step(..., true, ...)`);
    if (ts.isPropertyAssignment(n) && n.name.getText(source) === "passed" && n.initializer.kind === ts.SyntaxKind.TrueKeyword) found.push(`${where(n)}: passed: true`);
    ts.forEachChild(n, visit);
  };
  visit(source);
  return found;
}

function journeySources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? journeySources(path.join(dir, e.name)) : e.name.endsWith(".ts") ? [path.join(dir, e.name)] : []));
}

describe("the journey's steps are checks or notes, never constants", () => {
  it("finds a literal pass, as a step call or an object (the control)", () => {
    const text = 'report(step("x", true, "d")); const s = { name: "y", passed: true, detail: "" }; report(step("z", ok, "d"));';
    assert.deepEqual(literalPasses("f.ts", text), ["f.ts:1: step(..., true, ...)", "f.ts:1: passed: true"]);
  });

  it("no journey source gives a step a literal pass", () => {
    const found = journeySources(path.join(PROJECT_ROOT, "journey")).flatMap((f) => literalPasses(path.relative(PROJECT_ROOT, f), fs.readFileSync(f, "utf8")));
    assert.deepEqual(found, []);
  });

  it("counts notes apart: never passed, never failed, never what fails a run", () => {
    const steps = [step("a", true, ""), note("what a stand-in wrote", "3 objects"), step("b", false, "why")];
    assert.equal(summary(steps), "journey: 1 passed, 1 failed; 1 notes (reports, not counted)");
    assert.equal(journeyPassed(steps.slice(0, 2)), true);
    assert.equal(journeyPassed(steps), false);
  });
});

describe("drift on central, as the journey judges ArgoCD's self-heal", () => {
  const before = { state: '{"hard":{"pods":"10"}}', uid: "u1", resourceVersion: "5" };
  it("takes an object for put back only when written back after the change: a new uid or version with git's spec", () => {
    assert.equal(putBack(before, { state: before.state, uid: "u2", resourceVersion: "9" }), true, "deleted and made again");
    assert.equal(putBack(before, { state: before.state, uid: "u1", resourceVersion: "7" }), true, "written back");
    assert.equal(putBack(before, { ...before }), false, "a change that changed nothing is not a heal (the control)");
    assert.equal(putBack(before, { state: '{"hard":{"pods":"1000"}}', uid: "u1", resourceVersion: "6" }), false, "still raised");
    assert.equal(putBack(before, {}), false, "still deleted");
  });
  it("passes the heal only when every drift is back, and says what became of the RollingSync Application's drift", () => {
    assert.equal(healedStep("h", [{ what: "a", backAfterMs: 3000 }, { what: "b", backAfterMs: 5000 }], 60_000).passed, true);
    assert.equal(healedStep("h", [{ what: "a", backAfterMs: 3000 }, { what: "b" }], 60_000).passed, false);
    assert.equal(healedStep("h", [{ what: "a", backAfterMs: 3000 }, { what: "NetworkPolicy", problem: "acme-guards manages no NetworkPolicy" }], 60_000).passed, false);
    assert.equal(healedStep("h", [], 60_000).passed, false);
    assert.equal(rollingSyncDriftDetail({ what: "users", backAfterMs: 4900 }, "Synced", 60_000), "users: back after 4.9 s; its Application Synced");
    assert.equal(rollingSyncDriftDetail({ what: "users" }, "OutOfSync", 60_000), "users: still as left after 60 s; its Application OutOfSync");
  });
  it("finds the objects an Application manages from its status", () => {
    const app = { metadata: { name: "acme-guards" }, spec: {}, status: { resources: [{ kind: "NetworkPolicy", name: "same-namespace-only", namespace: "tenant-acme" }, { kind: "ResourceQuota", name: "control-plane", namespace: "tenant-acme" }] } };
    assert.deepEqual(managedObject(app, "ResourceQuota"), { kind: "ResourceQuota", name: "control-plane", namespace: "tenant-acme" });
    assert.equal(managedObject(app, "LimitRange"), undefined);
    assert.equal(managedObject(undefined, "NetworkPolicy"), undefined);
  });
});
