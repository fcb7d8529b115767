/**
 * Where a journey run keeps what the Kubernetes part hands the Slurm part: the example
 * repository the plans came from, and per tenant what central's Slinky operator made for it and
 * the slurmd pod its own operator made. The Slurm part alone (main.ts) reads a kept run's back.
 */
import * as path from "path";
import { tenantSlurmFolder } from "../kube/tenant-slurm";

/** The example repository's folder in a run's folder (journey/example/repository.ts). Pure. */
export function exampleRepositoryFolder(dir: string): string {
  return path.join(dir, "example");
}

/** The tenant's handover files in a run's folder. Pure. */
export function handoverFiles(dir: string, tenantId: string): { readonly operatorFiles: string; readonly slurmdPod: string } {
  const folder = tenantSlurmFolder(dir, tenantId);
  return { operatorFiles: path.join(folder, "operator-files.json"), slurmdPod: path.join(folder, "slurmd-pod.json") };
}
