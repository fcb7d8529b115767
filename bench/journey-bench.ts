/**
 * Journey benchmark: `npx tsc -b && node dist/bench/journey-bench.js`.
 *
 * Times the whole journey twice in one run: cold (the first run after the tools are built:
 * binaries not yet in the page cache, charts rendered for the first time) and warm (right
 * after), against a baseline measured in the same run: one offline plan of tenant-acme-dev,
 * the unit of work every journey starts with. Building the tools from an empty Go cache is
 * install-tools' cost, not the journey's, and is reported by it.
 */
import { execFileSync } from "child_process";
import * as path from "path";
import { defaultChartsDir } from "../fleet-tools/render";
import { PROJECT_ROOT } from "../config";
import { EXAMPLE_ENVIRONMENT, runJourney } from "../journey";
import { findTools } from "../journey/kube/tools";
import { keepToLoopback } from "../test/loopback-only";

// Benchmarks keep every packet on this machine (test/loopback-only.ts).
keepToLoopback();

async function timed(f: () => Promise<unknown>): Promise<number> {
  const t = Date.now();
  await f();
  return (Date.now() - t) / 1000;
}

async function main(): Promise<void> {
  if (!findTools(PROJECT_ROOT).tools) {
    console.log("journey bench: skipped, the journey's tools are not built (bash scripts/install-tools)");
    return;
  }
  const baseline = await timed(async () => execFileSync(process.execPath, [path.join(PROJECT_ROOT, "bin", "clusterra.js"), "plan", "--stack", "tenant-acme-dev", "--out", path.join(PROJECT_ROOT, ".clusterra", "bench-plan")], { stdio: "ignore" }));
  const runs: { label: string; seconds: number; failed: number }[] = [];
  for (const label of ["cold", "warm"]) {
    let failed = 0;
    const seconds = await timed(async () => {
      const steps = await runJourney({ root: PROJECT_ROOT, chartsDir: defaultChartsDir(PROJECT_ROOT), ...EXAMPLE_ENVIRONMENT, keep: false }, () => undefined);
      failed = steps.filter((s) => !s.passed && !s.skipped && !s.knownIssue).length;
    });
    runs.push({ label, seconds, failed });
  }
  console.log(`journey vs baseline (one offline plan of tenant-acme-dev: ${baseline.toFixed(1)} s)`);
  for (const r of runs) console.log(`journey ${r.label.padEnd(4)}  ${r.seconds.toFixed(1).padStart(6)} s  ${(r.seconds / baseline).toFixed(1).padStart(6)}x baseline  ${r.failed ? `${r.failed} step(s) failed` : "every step passed"}`);
}

main().catch((e: Error) => {
  console.error(`journey bench: ${e.message}`);
  process.exit(1);
});
