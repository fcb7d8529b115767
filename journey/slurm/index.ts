/**
 * The journey's Slurm part: a tenant's Slurm control plane on central and its slurmd pods in
 * the tenant's VPC, on Slurm 26.05 and MariaDB from the image install-tools makes (auth/slurm
 * with the tenant's slurm.key, sackd on the login), in network namespaces wired
 * and filtered as the planned stacks say (see journey.ts for the steps, topology.ts for the
 * network). Needs root; everything it starts is stopped before it returns.
 */
import * as path from "path";
import * as fs from "fs";
import { planStack, type PlanResult } from "../../planning/plan";
import { examplePlan, writeExampleRepository } from "../example/repository";
import { PROJECT_ROOT } from "../../config";
import { step, type JourneyStep } from "../host/step";
import { findSlurmImage } from "../host/image";
import { runJourney } from "./journey";
import type { JourneyPlans } from "./world";
import type { OperatorPod } from "./slurmd-pod";
import type { OperatorFiles } from "../kube/tenant-slurm";

export type { JourneyPlans } from "./world";

export interface SlurmJourneyOptions {
  /** Scratch directory (under /tmp): each run makes its own folder in it (logs, pods' files, the shared /mnt/efs). */
  readonly workDir: string;
  /** The planned central, tenant and other tenant (isolation): `planSlurmJourney()` makes them. */
  readonly plans: JourneyPlans;
  /** slurmd pods in the tenant (1 or 2; 2 adds the two-node job). Default 2. */
  readonly slurmdCount?: number;
  /** How long the interactive srun may wait. Default 20 s. */
  readonly srunTimeoutMs?: number;
  /** The project, whose tools and image it runs (default: this checkout). */
  readonly root?: string;
  /** The example repository the plans came from, with the fleet they wrote (journey/example/repository.ts). */
  readonly repository: string;
  /** central's slurmctld and slurmdbd /etc/slurm as Slinky's operator wrote them for the tenant (the Kubernetes part; by hand, a kept run's folder). */
  readonly operatorFiles?: OperatorFiles;
  /** The slurmd pod the tenant's Slinky operator made (the Kubernetes part; by hand, a kept run's `slurm-<tenant>/slurmd-pod.json`). */
  readonly slurmdPod?: OperatorPod;
  /** The other tenant's same two (a kept run's `slurm-<other>/`): its own Slurm then runs beside the tenant's. */
  readonly other?: { readonly operatorFiles: OperatorFiles; readonly slurmdPod: OperatorPod };
}

export const DEFAULT_STACKS = { central: "central-dev", tenant: "tenant-acme-dev", other: "tenant-globex-dev" } as const;

/**
 * The three stacks' plans from an example repository (journey/example/repository.ts) in `repository`:
 * a kept run's (its fleet already written), else one written there afresh. A tenant's plan
 * includes its central's, but the journey reads central's own plan for the host's groups and
 * address.
 */
export async function planSlurmJourney(repository: string, stacks: { central: string; tenant: string; other: string } = DEFAULT_STACKS): Promise<JourneyPlans> {
  let plans: ReadonlyMap<string, PlanResult>;
  if (fs.existsSync(path.join(repository, "stacks"))) {
    const kept = new Map<string, PlanResult>();
    // The Pulumi runtime is global: one plan at a time.
    for (const stack of Object.values(stacks)) kept.set(stack, await planStack({ stack, root: repository }, undefined));
    plans = kept;
  } else plans = await writeExampleRepository(PROJECT_ROOT, repository);
  return { central: examplePlan(plans, stacks.central), tenant: examplePlan(plans, stacks.tenant), other: examplePlan(plans, stacks.other) };
}

export async function runSlurmJourney(options: SlurmJourneyOptions): Promise<JourneyStep[]> {
  if (typeof process.getuid !== "function" || process.getuid() !== 0) {
    return [step("Slurm journey (network namespaces, nftables, Slurm daemons)", false, `needs root to create network namespaces and run slurmctld/slurmd; running as uid ${process.getuid?.() ?? "unknown"}`)];
  }
  const { image, missing } = findSlurmImage(options.root ?? path.resolve(__dirname, "..", "..", ".."));
  if (!image) {
    // By hand the part is skipped with how to get the image; in CI a missing image fails.
    return [{ ...step("Slurm journey: the Slurm 26.05 image is made", false, missing ?? "no image"), ...(process.env.CI ? {} : { skipped: true }) }];
  }
  return runJourney({
    image,
    workDir: options.workDir,
    plans: options.plans,
    slurmdCount: Math.max(1, Math.min(2, options.slurmdCount ?? 2)),
    srunTimeoutMs: options.srunTimeoutMs ?? 20_000,
    repository: options.repository,
    ...(options.operatorFiles ? { operatorFiles: options.operatorFiles } : {}),
    ...(options.slurmdPod ? { slurmdPod: options.slurmdPod } : {}),
    ...(options.other ? { other: options.other } : {}),
  });
}
