import * as assert from "node:assert/strict";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { main } from "../cli/main";
import { PROJECT_ROOT } from "../config";
import { validateStack } from "../config/validate";
import { exampleFile, exampleRoot, withValues } from "./helpers";

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, (s) => out.push(s), (s) => err.push(s), exampleRoot());
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("clusterra CLI, as a new user meets it", function () {
  this.timeout(60000);

  it("before a build, says what to run instead of a stack trace, with the internal-error code", () => {
    const copy = fs.mkdtempSync(path.join(os.tmpdir(), "clusterra-unbuilt-"));
    fs.mkdirSync(path.join(copy, "bin"));
    fs.copyFileSync(path.join(PROJECT_ROOT, "bin", "clusterra.js"), path.join(copy, "bin", "clusterra.js"));
    const r = spawnSync(process.execPath, [path.join(copy, "bin", "clusterra.js"), "plan", "--stack", "central-dev"], { encoding: "utf8" });
    assert.equal(r.status, 3);
    assert.match(r.stderr, /not built yet.*npm run build/s);
    assert.doesNotMatch(r.stderr, /MODULE_NOT_FOUND|at Module\./);
  });

  it("rebuilds a stale dist/ before it runs: a source whose text differs from the last build's #end-to-end", () => {
    const copy = fs.mkdtempSync(path.join(os.tmpdir(), "clusterra-stale-"));
    fs.mkdirSync(path.join(copy, "bin"));
    fs.mkdirSync(path.join(copy, "cli"));
    fs.copyFileSync(path.join(PROJECT_ROOT, "bin", "clusterra.js"), path.join(copy, "bin", "clusterra.js"));
    fs.symlinkSync(path.join(PROJECT_ROOT, "node_modules"), path.join(copy, "node_modules"));
    fs.writeFileSync(path.join(copy, "tsconfig.json"), JSON.stringify({ compilerOptions: { target: "ES2022", module: "commonjs", rootDir: ".", outDir: "dist", incremental: true, tsBuildInfoFile: "dist/.tsbuildinfo", types: [] }, include: ["cli/*.ts"] }));
    const source = (word: string) => fs.writeFileSync(path.join(copy, "cli", "main.ts"), `export async function main(): Promise<number> { console.log("${word}"); return 0; }\n`);
    const cli = () => spawnSync(process.execPath, [path.join(copy, "bin", "clusterra.js")], { encoding: "utf8" });
    source("old");
    assert.equal(spawnSync(process.execPath, [require.resolve("typescript/bin/tsc"), "-b"], { cwd: copy, encoding: "utf8" }).status, 0);
    assert.deepEqual([cli().stdout, cli().stderr], ["old\n", ""], "a fresh build runs as it is");
    source("new");
    const stale = cli();
    assert.equal(stale.stdout, "new\n");
    assert.match(stale.stderr, /^clusterra: 1 source file\(s\) changed since dist\/ was built \(cli\/main\.ts\); rebuilding with tsc -b$/m);
    fs.writeFileSync(path.join(copy, "cli", "main.ts"), "export const main: number = 'not a number';\n");
    const broken = cli();
    assert.equal(broken.status, 3);
    assert.match(broken.stdout + broken.stderr, /TS2322[\s\S]*the build failed \(above\); nothing was run/);
  });

  it("refuses a folder flag naming a file or a missing folder, with the value as typed, before doing anything", async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "clusterra-flags-")), "a-file");
    fs.writeFileSync(file, "");
    const plan = await run(["plan", "--stack", "connector-demo", "--out", file]);
    assert.deepEqual([plan.code, plan.err], [2, `clusterra plan: --out ${JSON.stringify(file)} is a file, not a folder; valid: a folder for the plan's files (made when missing); nothing was written`]);
    const under = await run(["plan", "--stack", "connector-demo", "--out", path.join(file, "sub", "dir")]);
    assert.deepEqual([under.code, under.err], [2, `clusterra plan: --out ${JSON.stringify(path.join(file, "sub", "dir"))} is under ${file}, a file; valid: a folder for the plan's files (made when missing); nothing was written`]);
    const check = await run(["fleet", "check", "--render", "--charts", "no/such/charts", "--outputs", file]);
    assert.equal(check.code, 2);
    assert.deepEqual(check.err.split("\n"), [
      'clusterra fleet check: --charts "no/such/charts": no such folder; valid: a folder of <chart>-<version> chart sources, such as ../shared/reference/charts',
      `clusterra fleet check: --outputs ${JSON.stringify(file)} is a file, not a folder; valid: a folder of <stack>.json files from \`pulumi stack output --json -s <stack>\``,
    ]);
    assert.equal(check.out, "", "nothing checked");
    const empty = await run(["fleet", "check", "--render", "--charts", ""]);
    assert.deepEqual([empty.code, empty.err], [2, 'clusterra fleet check: --charts "" is empty; valid: a folder of <chart>-<version> chart sources, such as ../shared/reference/charts']);
    const render = await run(["fleet", "render", "--charts", "no/such/charts"]);
    assert.deepEqual([render.code, render.err], [2, 'clusterra fleet render: --charts "no/such/charts": no such folder; valid: a folder of <chart>-<version> chart sources, such as ../shared/reference/charts']);
  });

  it("reports a mistyped flag as unknown, with the flag it resembles", async () => {
    const r = await run(["plan", "--stak", "central-dev"]);
    assert.equal(r.code, 2);
    assert.match(r.err, /unknown option '--stak'/);
    assert.match(r.err, /--stack/);
    assert.doesNotMatch(r.err, /required option/);
  });

  it("answers a wrong stack name with the stacks that exist, nearest first", async () => {
    const r = await run(["plan", "--stack", "central-devv"]);
    assert.equal(r.code, 2);
    assert.match(r.err, /does not exist; valid: did you mean central-dev\? stacks with a file in stacks\/: central-dev, connector-demo, connector-offline, tenant-acme-dev, tenant-globex-dev/);
    assert.doesNotMatch(r.err, /such as stacks\/Pulumi\.central-devv\.yaml/);
  });

  it("says how many policies ran and failed, and names both files it wrote", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "clusterra-cli-"));
    const r = await run(["plan", "--stack", "connector-demo", "--out", dir]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^policy pack: PASSED: \d+ policies ran over \d+ resources, none failed$/m);
    assert.doesNotMatch(r.out, /from 0 of/);
    assert.match(r.out, /^wrote .*resources\.json, .*outputs\.json, .*cost\.json, .*architecture\.svg, .*inventory\.md, .*inventory\.json, .*deploy-role\.yaml, .*deploy-role\.json$/m);
  });

  it("rejects an instance type AWS does not list, suggesting the nearest", () => {
    const result = validateStack(withValues(exampleFile("central-dev"), { "clusterra:controlPlane": { instanceType: "t4g.mediun", k3sVersion: "v1.35.3+k3s1" } }));
    assert.equal(result.ok, false);
    const issue = !result.ok ? result.issues.find((i) => i.key === "clusterra:controlPlane.instanceType") : undefined;
    assert.match(issue?.problem ?? "", /not an EC2 instance type \(did you mean t4g\.medium\?\)/);
  });

  it("README shows only commands that work after the quick start (npm run ..., with scripts that exist)", () => {
    const readme = fs.readFileSync(path.join(PROJECT_ROOT, "README.md"), "utf8");
    const scripts = Object.keys(JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, "package.json"), "utf8")).scripts);
    const commands = [...readme.matchAll(/`((?:clusterra|npm run|npx clusterra)[^`]*)`/g)].map((m) => m[1]);
    assert.ok(commands.length > 0);
    for (const c of commands) {
      assert.doesNotMatch(c, /^clusterra /, `bare \`clusterra\` is on no PATH: ${c}`);
      const script = /^npm run (\S+)/.exec(c)?.[1];
      if (script) assert.ok(scripts.includes(script), `no npm script ${script}: ${c}`);
    }
  });
});
