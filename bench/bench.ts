/**
 * `npm run bench`: times `clusterra plan` for every example stack against a baseline
 * measured in the same run (bench/baseline: a ten-resource Pulumi program importing all of
 * @pulumi/aws, run through ts-node with type-checking). Median of five runs; peak memory
 * is the largest resident set of the five. Plans reuse the IAM simulator's earlier verdicts
 * as an operator's repeated plans do (the first run fills them); the cold row simulates
 * every question (`--no-verdict-cache`, as CI does). Then `npm test`'s suite, once.
 * Targets (issue 38): every plan within 0.20x of the baseline and 250 MiB; the suite in 60 s.
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { keepToLoopback } from "../test/loopback-only";

// Benchmarks keep every packet on this machine (test/loopback-only.ts).
keepToLoopback();

const ROOT = path.resolve(__dirname, "..", "..");
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const STACKS = ["central-dev", "tenant-acme-dev", "tenant-globex-dev", "connector-demo"];
const TARGET_RATIO = 0.2;
const TARGET_MIB = 250;
const TARGET_SUITE_S = 60;

interface Measure {
  readonly label: string;
  readonly medianMs: number;
  readonly peakMiB: number;
}

function measure(label: string, args: string[]): Measure {
  const times: number[] = [];
  let peakKiB = 0;
  const rssFile = path.join(os.tmpdir(), `clusterra-bench-${process.pid}.rss`);
  for (let i = 0; i < RUNS; i++) {
    const start = process.hrtime.bigint();
    const run = spawnSync(process.execPath, ["--require", path.join(ROOT, "bench", "rss.js"), ...args], { cwd: ROOT, env: { ...process.env, BENCH_RSS_FILE: rssFile }, encoding: "utf8" });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (run.status !== 0 && run.status !== 1) throw new Error(`${label} failed (exit ${run.status}):\n${run.stderr}`);
    times.push(ms);
    peakKiB = Math.max(peakKiB, Number(fs.readFileSync(rssFile, "utf8")));
  }
  times.sort((a, b) => a - b);
  return { label, medianMs: times[Math.floor(times.length / 2)], peakMiB: peakKiB / 1024 };
}

function main(): void {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "clusterra-bench-"));
  console.log(`clusterra plan vs baseline, median of ${RUNS} runs on ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "unknown cpu"})`);
  const baseline = measure("baseline: 10 resources, import * from @pulumi/aws, ts-node type-checked", [path.join(ROOT, "bench", "baseline", "run.js")]);
  const plans = STACKS.map((s) => measure(`plan ${s}`, [path.join(ROOT, "bin", "clusterra.js"), "plan", "--stack", s, "--out", path.join(out, s)]));
  const cold = measure("plan tenant-acme-dev, every IAM question simulated", [path.join(ROOT, "bin", "clusterra.js"), "plan", "--stack", "tenant-acme-dev", "--no-verdict-cache", "--out", path.join(out, "cold")]);
  const rows = [baseline, ...plans, cold];
  const width = Math.max(...rows.map((r) => r.label.length));
  for (const r of rows) {
    const ratio = r === baseline ? "1.00x" : `${(r.medianMs / baseline.medianMs).toFixed(2)}x`;
    console.log(`${r.label.padEnd(width)}  ${r.medianMs.toFixed(0).padStart(6)} ms  ${ratio.padStart(6)} of baseline  peak ${r.peakMiB.toFixed(0)} MiB`);
  }
  for (const r of plans) {
    const ratio = r.medianMs / baseline.medianMs;
    console.log(`target: ${r.label} <= ${TARGET_RATIO.toFixed(2)}x baseline and < ${TARGET_MIB} MiB: ${ratio.toFixed(2)}x, ${r.peakMiB.toFixed(0)} MiB -> ${ratio <= TARGET_RATIO && r.peakMiB < TARGET_MIB ? "met" : "NOT met"}`);
  }
  // The unit suite as `npm test` runs it, the build already made.
  const start = process.hrtime.bigint();
  const suite = spawnSync(process.execPath, [require.resolve("mocha/bin/mocha.js", { paths: [ROOT] }), "--reporter", "dot"], { cwd: ROOT, encoding: "utf8" });
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const passing = /(\d+) passing/.exec(suite.stdout)?.[1] ?? "?";
  console.log(`target: npm test's suite (${passing} tests, ${os.cpus().length} cores) < ${TARGET_SUITE_S} s: ${seconds.toFixed(1)} s${suite.status === 0 ? "" : " (it FAILED)"} -> ${seconds < TARGET_SUITE_S && suite.status === 0 ? "met" : "NOT met"}`);
}

main();
