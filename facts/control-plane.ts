/**
 * What one tenant's Slurm control plane on central asks of the central host: the requests
 * the fleet gives each component, and the capacity check sums. Limits are the fleet's
 * business; requests are what the scheduler (and the capacity check) count.
 */
export interface ComponentRequest {
  /** Millicores. */
  readonly cpuMillis: number;
  /** MiB. */
  readonly memoryMiB: number;
}

export const TENANT_CONTROL_PLANE: Readonly<Record<"slurmctld" | "slurmdbd" | "slurmrestd" | "mariadb" | "login", ComponentRequest>> = {
  slurmctld: { cpuMillis: 100, memoryMiB: 256 },
  slurmdbd: { cpuMillis: 50, memoryMiB: 128 },
  slurmrestd: { cpuMillis: 50, memoryMiB: 128 },
  mariadb: { cpuMillis: 100, memoryMiB: 384 },
  login: { cpuMillis: 50, memoryMiB: 128 },
};

/** The sum over one tenant's components. */
export function tenantControlPlaneRequest(): ComponentRequest {
  const parts = Object.values(TENANT_CONTROL_PLANE);
  return { cpuMillis: parts.reduce((s, p) => s + p.cpuMillis, 0), memoryMiB: parts.reduce((s, p) => s + p.memoryMiB, 0) };
}
