/**
 * What a slurmd pod may request so that exactly one fits the worker Karpenter launches for
 * its shape and size: the instance's capacity less what Karpenter assumes the hypervisor
 * keeps, kubelet's reservations and eviction threshold, and the daemon sets.
 */
import type { ShapeConfig } from "../../config/types";
import { SHAPE_FAMILIES } from "../../facts/shapes";
import { WORKER_NODE } from "../../facts/tenant-cluster";

export interface SlurmdRequest {
  /** Millicores. */
  readonly cpuMillis: number;
  /** MiB. */
  readonly memoryMiB: number;
}

/** Requests (= limits: slurmd takes POD_CPUS/POD_MEMORY from them) for one worker of `vcpus` x `memoryPerCpuGiB`. */
export function slurmdRequest(vcpus: number, memoryPerCpuGiB: number): SlurmdRequest {
  const w = WORKER_NODE;
  const capacityMiB = vcpus * memoryPerCpuGiB * 1024;
  const usableMiB = Math.floor(capacityMiB * (1 - w.vmMemoryOverheadPercent));
  const memoryMiB = usableMiB - w.kubeReserved.memoryMiB - w.systemReserved.memoryMiB - w.evictionHardMemoryMiB - w.daemonSetRequests.memoryMiB;
  const cpuMillis = vcpus * 1000 - w.kubeReserved.cpuMillis - w.systemReserved.cpuMillis - w.daemonSetRequests.cpuMillis;
  // Whole 100m and 64 MiB steps: Slurm sees round numbers, and rounding down keeps the fit.
  return { cpuMillis: Math.floor(cpuMillis / 100) * 100, memoryMiB: Math.floor(memoryMiB / 64) * 64 };
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
