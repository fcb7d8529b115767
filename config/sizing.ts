/**
 * What a slurmd pod may request so that exactly one fits the worker Karpenter launches for
 * its shape and size: the instance's capacity less what Karpenter assumes the hypervisor
 * keeps, kubelet's reservations and eviction threshold, and the daemon sets.
 */
import type { ShapeConfig } from "./types";
import { SHAPE_FAMILIES } from "../facts/shapes";
import { WORKER_NODE } from "../facts/tenant-cluster";

export interface SlurmdRequest {
  /** Millicores. */
  readonly cpuMillis: number;
  /** MiB. */
  readonly memoryMiB: number;
}

/**
 * Requests (= limits: slurmd takes POD_CPUS/POD_MEMORY from them) for one worker of `vcpus` x
 * `memoryPerCpuGiB`. CPUs are whole: slurm-operator v1.2.1 hands the limit to slurmd rounded
 * up (3700m became POD_CPUS=4, Slurm then placing four CPUs of work in a 3.7-CPU cgroup), so
 * the fraction left after the reservations stays with the node's daemons.
 */
export function slurmdRequest(vcpus: number, memoryPerCpuGiB: number): SlurmdRequest {
  const w = WORKER_NODE;
  const capacityMiB = vcpus * memoryPerCpuGiB * 1024;
  const usableMiB = Math.floor(capacityMiB * (1 - w.vmMemoryOverheadPercent));
  const memoryMiB = usableMiB - w.kubeReserved.memoryMiB - w.systemReserved.memoryMiB - w.evictionHardMemoryMiB - w.daemonSetRequests.memoryMiB;
  const cpuMillis = vcpus * 1000 - w.kubeReserved.cpuMillis - w.systemReserved.cpuMillis - w.daemonSetRequests.cpuMillis;
  // Whole CPUs and 64 MiB steps, rounded down: Slurm sees what the cgroup gives, and the pod still fits.
  return { cpuMillis: Math.floor(cpuMillis / 1000) * 1000, memoryMiB: Math.floor(memoryMiB / 64) * 64 };
}

/** One NodeSet per shape x size, named `<shape>-<vcpus>`. */
export interface NodeSetPlan {
  readonly name: string;
  readonly shape: ShapeConfig;
  readonly vcpus: number;
  readonly category: string;
  readonly request: SlurmdRequest;
}

export function nodeSetPlans(shapes: readonly ShapeConfig[]): NodeSetPlan[] {
  return shapes.flatMap((shape) =>
    shape.sizes.map((vcpus) => ({
      name: `${shape.name}-${vcpus}`,
      shape,
      vcpus,
      category: SHAPE_FAMILIES[shape.memoryPerCpuGiB].category,
      request: slurmdRequest(vcpus, shape.memoryPerCpuGiB),
    })),
  );
}
