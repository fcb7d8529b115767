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

/**
 * A tenant holds its own slurm.key, and with auth/slurm that key signs a credential for any
 * uid: the tenant is SlurmUser of its own slurmctld on central. What SlurmUser could make that
 * slurmctld run there is closed in its slurm.conf. `disable_triggers`: no new event trigger
 * (`strigger --set --program=...` runs the program in the controller's pod).
 */
export const TENANT_SLURMCTLD_PARAMETERS = ["disable_triggers"] as const;

/**
 * slurm.conf keys with which slurmctld runs a program, script, Lua file or plugin the
 * configuration names (slurm.conf(5) of Slurm 26.05). None may be set on a tenant's
 * controller: it runs on central, and the tenant can reach whatever it runs.
 */
export const CONTROLLER_PROGRAM_KEYS = [
  "PrologSlurmctld", "EpilogSlurmctld", "MailProg", "ResvProlog", "ResvEpilog",
  "ResumeProgram", "ResumeFailProgram", "SuspendProgram", "SlurmctldPrimaryOnProg", "SlurmctldPrimaryOffProg",
  "JobSubmitPlugins", "JobCompType", "JobCompLoc", "BurstBufferType", "PrEpPlugins", "SlurmctldPlugstack",
  "PluginDir", "Include",
] as const;

/** SlurmctldParameters flags with which slurmctld runs a program itself (RebootProgram, from the controller). */
export const CONTROLLER_PROGRAM_PARAMETERS = ["reboot_from_controller"] as const;

/**
 * Where slurmctld keeps its event triggers, as Slinky mounts its state: the StatefulSet's
 * claim `statesave` (slurm-operator v1.2.1), and the files slurmctld saves them in. A
 * permanent trigger stored before `disable_triggers` still fires, so they are removed at
 * every start.
 */
export const SLURMCTLD_TRIGGER_STATE = { volume: "statesave", files: ["trigger_state", "trigger_state.old"] } as const;
