/**
 * Runs the Slurm part of the journey alone: `node dist/journey/slurm/main.js [workDir] [run]`
 * (as root, after `tsc -b`), where `run` is the folder of a journey run kept with `--keep`: its
 * example repository, and what it handed the Slurm part for the example tenant (handover.ts:
 * what central's Slinky operator made for it, the slurmd pod its own operator made; the other tenant's too, whose own Slurm then runs beside it). Without
 * `run`, the example repository is written afresh in workDir. Prints one line per step; exit
 * code 1 when a step failed.
 */
import * as fs from "fs";
import * as os from "os";
import { formatStep } from "../host/step";
import { planSlurmJourney, runSlurmJourney } from "./index";
import type { OperatorPod } from "./slurmd-pod";
import type { OperatorFiles } from "../kube/tenant-slurm";
import { exampleRepositoryFolder, handoverFiles } from "./handover";
import type { TenantConfig } from "../../config/types";

async function main(): Promise<number> {
  const workDir = process.argv[2] ?? fs.mkdtempSync(`${os.tmpdir()}/journey-slurm-`);
  const started = Date.now();
  const kept = process.argv[3];
  const repository = exampleRepositoryFolder(kept ?? workDir);
  const plans = await planSlurmJourney(repository);
  const planned = Date.now();
  const read = <T>(file: string): T | undefined => (fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, "utf8")) as T) : undefined);
  const files = kept ? handoverFiles(kept, (plans.tenant.config as TenantConfig).tenant.id) : undefined;
  const operatorFiles = files && read<OperatorFiles>(files.operatorFiles);
  const slurmdPod = files && read<OperatorPod>(files.slurmdPod);
  // The other tenant's, where the run kept them: its own Slurm then runs beside the tenant's.
  const otherFiles = kept ? handoverFiles(kept, (plans.other.config as TenantConfig).tenant.id) : undefined;
  const otherEtc = otherFiles && read<OperatorFiles>(otherFiles.operatorFiles);
  const otherPod = otherFiles && read<OperatorPod>(otherFiles.slurmdPod);
  const steps = await runSlurmJourney({ workDir, plans, repository, ...(operatorFiles ? { operatorFiles } : {}), ...(slurmdPod ? { slurmdPod } : {}), ...(otherEtc && otherPod ? { other: { operatorFiles: otherEtc, slurmdPod: otherPod } } : {}) });
  for (const s of steps) console.log(formatStep(s));
  const failed = steps.filter((s) => !s.passed && !s.note).length;
  console.log(`slurm journey: ${steps.filter((s) => s.passed && !s.note).length} passed, ${failed} failed (plans ${((planned - started) / 1000).toFixed(1)} s, journey ${((Date.now() - planned) / 1000).toFixed(1)} s; logs in ${workDir})`);
  return failed > 0 ? 1 : 0;
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (e: unknown) => {
      // As the whole journey does (journey/main.ts): the message, never a stack.
      process.stderr.write(`slurm journey: internal error: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exit(3);
    },
  );
}
