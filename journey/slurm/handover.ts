/**
 * Where a journey run keeps what the Kubernetes part hands the Slurm part for a tenant: what
 * central's Slinky operator made for it and the slurmd pod its own operator made. The Slurm
 * part alone (main.ts) reads a kept run's back.
 */
import * as path from "path";
import { tenantSlurmFolder } from "../kube/tenant-slurm";

/** The tenant's handover files in a run's folder. Pure. */
export function handoverFiles(dir: string, tenantId: string): { readonly operatorFiles: string; readonly slurmdPod: string } {
  const folder = tenantSlurmFolder(dir, tenantId);
  return { operatorFiles: path.join(folder, "operator-files.json"), slurmdPod: path.join(folder, "slurmd-pod.json") };
}
