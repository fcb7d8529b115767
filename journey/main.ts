/**
 * `npm run journey [-- --keep] [--charts <dir>]`: runs the journey on the example
 * environment. Exit 0 when every step passed, 1 when one failed, 2 on bad usage. In CI (`CI`
 * set) a missing tool is a failed step; by hand too, with how to get it.
 */
import * as path from "path";
import { Command, CommanderError } from "commander";
import { PROJECT_ROOT } from "../config";
import { defaultChartsDir } from "../fleet-tools/render";
import { EXAMPLE_ENVIRONMENT, journeyPassed, runJourney, summary } from "./index";

async function main(argv: string[]): Promise<number> {
  let code = 0;
  const program = new Command("journey")
    .description("run the whole user journey on real components: control planes, the fleet synced as ArgoCD syncs it, real Slurm across the plans' rules")
    .option("--charts <dir>", "chart sources, <chart>-<version> folders (default ../shared/reference/charts)")
    .option("--keep", "keep the run's folder (logs, kubeconfigs) and say where it is")
    .exitOverride()
    .action(async (opts: { charts?: string; keep?: boolean }) => {
      const steps = await runJourney({ root: PROJECT_ROOT, chartsDir: opts.charts ? path.resolve(opts.charts) : defaultChartsDir(PROJECT_ROOT), ...EXAMPLE_ENVIRONMENT, keep: !!opts.keep }, (s) => process.stdout.write(s + "\n"));
      process.stdout.write(summary(steps) + "\n");
      code = journeyPassed(steps) ? 0 : 1;
    });
  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    throw e;
  }
  return code;
}

main(process.argv.slice(2)).then((c) => process.exit(c), (e: Error) => {
  process.stderr.write(`journey: internal error: ${e.message}\n`);
  process.exit(3);
});
