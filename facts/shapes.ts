/**
 * Node shapes: the scaling loop maps a job to a shape by RAM per vCPU; each ratio is one
 * EC2 instance category. NodePools, NodeSets and price estimates derive from this table.
 */
export const SHAPE_FAMILIES = {
  2: { category: "c", description: "compute optimized, about 2 GiB per vCPU" },
  4: { category: "m", description: "general purpose, 4 GiB per vCPU" },
  8: { category: "r", description: "memory optimized, 8 GiB per vCPU" },
  16: { category: "x", description: "memory intensive, 16 GiB per vCPU or more" },
} as const;

export const MEMORY_PER_CPU_GIB = Object.keys(SHAPE_FAMILIES).map(Number) as (keyof typeof SHAPE_FAMILIES)[];

/** vCPU counts EC2 sells in the c/m/r families (large through 48xlarge). */
export const SHAPE_SIZES = [2, 4, 8, 16, 32, 48, 64, 96, 192] as const;

/** Karpenter capacity types (`karpenter.sh/capacity-type`). */
export const CAPACITY_TYPES = ["spot", "on-demand"] as const;
