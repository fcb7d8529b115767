/**
 * Runs the Slurm part of the journey alone: `node dist/journey/slurm/main.js [workDir]
 * [tenant run folder]` (as root, after `tsc -b`), where `tenant run folder` is what a kept
 * journey wrote for the tenant (`<run>/slurm-<tenant>`): central's slurmctld and slurmdbd
 * /etc/slurm (`slurmctld/volumes/slurm-etc`, `slurmdbd/volumes/slurm-etc`: the Slinky operator's
 * slurm.conf and slurmdbd.conf the daemons read) and the
 * slurmd pod the tenant's operator made (`slurmd-pod.json`). Prints one line per step; exit
 * code 1 when a step failed.
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { formatStep } from "../host/step";
import { planSlurmJourney, runSlurmJourney } from "./index";
import type { OperatorPod } from "./slurmd-pod";
import { etcFiles } from "../kube/tenant-slurm";

async function main(): Promise<number> {
  const workDir = process.argv[2] ?? fs.mkdtempSync(`${os.tmpdir()}/journey-slurm-`);
  const started = Date.now();
  const plans = await planSlurmJourney();
  const planned = Date.now();
  const kept = process.argv[3];
  // Each pod's /etc/slurm as the kept run's kubelet stand-in made it (its volume folders).
  const etcDir = (pod: string) => kept && path.join(kept, pod, "volumes", "slurm-etc");
  const [ctldEtc, dbdEtc] = [etcDir("slurmctld"), etcDir("slurmdbd")];
  const podFile = kept && path.join(kept, "slurmd-pod.json");
  const controlPlaneEtc = ctldEtc && dbdEtc && fs.existsSync(ctldEtc) && fs.existsSync(dbdEtc) ? { slurmctld: etcFiles(ctldEtc), slurmdbd: etcFiles(dbdEtc) } : undefined;
  const slurmdPod = podFile && fs.existsSync(podFile) ? (JSON.parse(fs.readFileSync(podFile, "utf8")) as OperatorPod) : undefined;
  const steps = await runSlurmJourney({ workDir, plans, ...(controlPlaneEtc ? { controlPlaneEtc } : {}), ...(slurmdPod ? { slurmdPod } : {}) });
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
