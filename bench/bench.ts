/**
 * `npm run bench`: times `clusterra plan` for every example stack against a baseline
 * measured in the same run (bench/baseline: a ten-resource Pulumi program importing all of
 * @pulumi/aws, run through ts-node with type-checking). Median of five runs; peak memory
 * is the largest resident set of the five.
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
  const rows = [baseline, ...STACKS.map((s) => measure(`plan ${s}`, [path.join(ROOT, "bin", "clusterra.js"), "plan", "--stack", s, "--out", path.join(out, s)]))];
  const width = Math.max(...rows.map((r) => r.label.length));
  for (const r of rows) {
    const ratio = r === baseline ? "1.00x" : `${(r.medianMs / baseline.medianMs).toFixed(2)}x`;
    console.log(`${r.label.padEnd(width)}  ${r.medianMs.toFixed(0).padStart(6)} ms  ${ratio.padStart(6)} of baseline  peak ${r.peakMiB.toFixed(0)} MiB`);
  }
  const tenant = rows.find((r) => r.label === "plan tenant-acme-dev")!;
  const ratio = tenant.medianMs / baseline.medianMs;
  console.log(`target: plan tenant-acme-dev <= 0.30x baseline and < 400 MiB: ${ratio.toFixed(2)}x, ${tenant.peakMiB.toFixed(0)} MiB -> ${ratio <= 0.3 && tenant.peakMiB < 400 ? "met" : "NOT met"}`);
}

main();
