/**
 * Runs the Slurm part of the journey alone: `node dist/journey/slurm/main.js [workDir]
 * [controller etc]` (as root, after `tsc -b`), where `controller etc` is the folder of central's
 * slurmctld /etc/slurm a kept journey wrote (`<run>/slurm-<tenant>/slurmctld/volumes/slurm-etc`):
 * the Slinky operator's slurm.conf the daemons read. Prints one line per step; exit code 1 when a
 * step failed.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { formatStep } from "../host/step";
import { planSlurmJourney, runSlurmJourney } from "./index";

async function main(): Promise<number> {
  const workDir = process.argv[2] ?? fs.mkdtempSync(`${os.tmpdir()}/journey-slurm-`);
  const started = Date.now();
  const plans = await planSlurmJourney();
  const planned = Date.now();
  const etcDir = process.argv[3];
  const controllerEtc = etcDir ? Object.fromEntries(fs.readdirSync(etcDir).filter((f) => fs.statSync(path.join(etcDir, f)).isFile()).map((f) => [f, fs.readFileSync(path.join(etcDir, f), "utf8")])) : undefined;
  const steps = await runSlurmJourney({ workDir, plans, ...(controllerEtc ? { controllerEtc } : {}) });
  for (const s of steps) console.log(formatStep(s));
  const failed = steps.filter((s) => !s.passed).length;
  console.log(`slurm journey: ${steps.length - failed} passed, ${failed} failed (plans ${((planned - started) / 1000).toFixed(1)} s, journey ${((Date.now() - planned) / 1000).toFixed(1)} s; logs in ${workDir})`);
  return failed > 0 ? 1 : 0;
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (e: unknown) => {
      console.error(e);
      process.exit(3);
    },
  );
}
