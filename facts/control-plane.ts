import { CENTRAL_K3S_RANGES, SLURM_PORTS } from "./contract";
import { ACCOUNTING_DATABASE, MARIADB_BACKUP_POD_LABELS, MARIADB_POD_LABELS, slinkyLoginPodLabels, slinkyPodLabels } from "./fleet";

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
  "ResumeProgram", "ResumeFailProgram", "SuspendProgram", "SlurmctldPrimaryOnProg", "SlurmctldPrimaryOffProg", "PowerAction",
  "JobSubmitPlugins", "JobCompType", "JobCompLoc", "JobCompPassScript", "BurstBufferType", "PrEpPlugins", "SlurmctldPlugstack",
  "CertmgrType", "CertmgrParameters", "CertgenType", "CertgenParameters",
  "PluginDir", "Include",
] as const;

/**
 * The only slurm.conf keys a tenant controller's own lines (its `extraConf`) may set: the
 * remote NodeSets and partitions, the srun block, the containing parameters and the job
 * limits. Anything else is refused, so a key this list of programs misses cannot slip in.
 */
export const TENANT_CONTROLLER_CONF_KEYS = ["NodeSet", "PartitionName", "SrunPortRange", "SlurmctldParameters", "MaxJobCount", "SchedulerParameters"] as const;

/** SlurmctldParameters flags with which slurmctld runs a program itself (RebootProgram, from the controller). */
export const CONTROLLER_PROGRAM_PARAMETERS = ["reboot_from_controller"] as const;

/**
 * Where slurmctld keeps its event triggers, as Slinky mounts its state: the StatefulSet's
 * claim `statesave` (slurm-operator v1.2.1), and the files slurmctld saves them in. A
 * permanent trigger stored before `disable_triggers` still fires, so they are removed at
 * every start.
 */
export const SLURMCTLD_TRIGGER_STATE = { volume: "statesave", files: ["trigger_state", "trigger_state.old"] } as const;

/** The pods of a tenant's namespace on central, as its egress policies name them. */
export type ControlPlanePod = "slurmctld" | "slurmdbd" | "slurmrestd" | "login" | "mariadb" | "backup";

/** A peer in the tenant's own namespace and the port it listens on (`srun-block`: the tenant's SrunPortRange on the login). */
export interface EgressPeer {
  readonly pod: ControlPlanePod;
  readonly port: number | "srun-block";
}

/**
 * Where each pod of a tenant's namespace on central may open connections, and nothing else:
 * a tenant's pods run code the tenant controls (its slurm.key makes it SlurmUser of its
 * slurmctld), so egress is denied by default and each flow Slurm needs is listed. `slurmd`:
 * the tenant's own VPC on 6818 only; `dns`: the tenant's own DNS (TENANT_DNS), which forwards nothing. Never IMDS, the API server,
 * the central VPC, another namespace or the internet; MariaDB nowhere (skip-name-resolve).
 */
export const CONTROL_PLANE_EGRESS: Readonly<Record<ControlPlanePod, { readonly peers: readonly EgressPeer[]; readonly slurmd: boolean; readonly dns: boolean }>> = {
  // Its accounting; allocation and step messages to srun/salloc on the login, and each
  // reconfigure pushed to the login's sackd (it listens on SlurmdPort); its slurmd.
  slurmctld: { peers: [{ pod: "slurmdbd", port: SLURM_PORTS.slurmdbd }, { pod: "login", port: "srun-block" }, { pod: "login", port: SLURM_PORTS.slurmd }], slurmd: true, dns: true },
  // Its database; accounting updates pushed to slurmctld.
  slurmdbd: { peers: [{ pod: "mariadb", port: ACCOUNTING_DATABASE.port }, { pod: "slurmctld", port: SLURM_PORTS.slurmctld }], slurmd: false, dns: true },
  slurmrestd: { peers: [{ pod: "slurmctld", port: SLURM_PORTS.slurmctld }, { pod: "slurmdbd", port: SLURM_PORTS.slurmdbd }], slurmd: false, dns: true },
  // sackd and the clients (scontrol, sbatch, sacct through slurmdbd, the REST API); srun's steps to slurmd.
  login: { peers: [{ pod: "slurmctld", port: SLURM_PORTS.slurmctld }, { pod: "slurmdbd", port: SLURM_PORTS.slurmdbd }, { pod: "slurmrestd", port: SLURM_PORTS.slurmrestd }], slurmd: true, dns: true },
  mariadb: { peers: [], slurmd: false, dns: false },
  // mariadb-operator's nightly dump, into its claim.
  backup: { peers: [{ pod: "mariadb", port: ACCOUNTING_DATABASE.port }], slurmd: false, dns: true },
};

/** The labels each pod of a tenant's namespace carries, as its operator (or the fleet) sets them. */
export function controlPlanePodLabels(pod: ControlPlanePod): Readonly<Record<string, string>> {
  switch (pod) {
    case "login": return slinkyLoginPodLabels();
    case "mariadb": return MARIADB_POD_LABELS;
    case "backup": return MARIADB_BACKUP_POD_LABELS;
    default: return slinkyPodLabels(pod);
  }
}

/** The name every object of the tenants' DNS starts from (its ServiceAccount, the resolver its pods name, each tenant's `<stem>-<id>`). */
const TENANT_DNS_STEM = "tenant-dns";

/**
 * Each tenant's own DNS on central, the one peer outside its namespace its pods may reach
 * (components/fleet/tenant-dns.ts): CoreDNS answering the names of that tenant's namespace
 * alone and refusing every other. K3s's packaged CoreDNS forwards every name it does not hold
 * to the VPC's resolver, and a name is data: code in a tenant's pod could send anything out
 * of central one query at a time. One per tenant, in the platform's namespace: a tenant learns
 * no other tenant's names, and a flood of queries takes its own DNS's CPU, never another's.
 * Its Service address is the API server's to allocate (pods are given it by central's
 * admission policy, which reads the Service); the image is the CoreDNS release kubeadm
 * installs with Kubernetes 1.35, the one scripts/install-tools builds for the journey.
 */
export const TENANT_DNS = {
  namespace: "clusterra-dns",
  /** The ServiceAccount every tenant's DNS runs as (read-only access to Services, EndpointSlices, namespaces). */
  serviceAccount: TENANT_DNS_STEM,
  /** Not the retiring shared DNS's label (RETIRING_SHARED_DNS): the egress of the release before, still live until a tenant rolls out, selects by that one alone. */
  labels: { "app.kubernetes.io/name": "tenant-own-dns" },
  /** The label on a tenant's DNS pods naming the namespace they answer: the tenant's egress selects its own DNS by it. */
  answersLabel: "clusterra.io/answers-namespace",
  port: 53,
  domain: "cluster.local",
  image: { repository: "registry.k8s.io/coredns/coredns", tag: "v1.13.1" },
  /**
   * The pod annotation naming the resolver a tenant pod was made for: central's admission
   * policy gives the tenant's DNS to the pods that carry it with this value, which the
   * fleet's templates do from the release whose egress reaches it.
   */
  resolverAnnotation: "clusterra.io/resolver",
  /** The annotation's value: the tenant's own DNS (the earlier shared resolver's pods carried its address). */
  resolver: TENANT_DNS_STEM,
  /** CoreDNS's own probes: liveness (health) and readiness (ready). */
  probes: { health: 8080, ready: 8181 },
  /** The image's non-root user (distroless's nonroot), which the pod runs as. */
  user: 65532,
  /** One per tenant on the one host: a rolling replacement surges a second before the first goes. */
  replicas: 1,
  /** Its load is one tenant's few pods (CoreDNS idles at a few millicores and ~30 MiB); the memory limit is Kubernetes' own CoreDNS manifest's. */
  request: { cpuMillis: 15, memoryMiB: 48 },
  memoryLimitMiB: 170,
  /** A flood of queries from the tenant's pods takes this much of the host at most. */
  cpuLimitMillis: 200,
} as const;

/**
 * Retiring: the one DNS every tenant's pods asked in the release before each tenant had its
 * own (components/fleet/retiring-shared-dns.ts). A tenant's pods made by that release keep its
 * address until the tenant's RollingSync wave rolls this release out (new templates, new
 * egress, its own DNS); it is kept, unchanged, until every tenant has, and the release after
 * removes it. Only those pods' egress reaches it; this release's reach their own DNS alone.
 */
export const RETIRING_SHARED_DNS = {
  name: TENANT_DNS_STEM,
  labels: { "app.kubernetes.io/name": TENANT_DNS_STEM },
  clusterIp: CENTRAL_K3S_RANGES.sharedTenantDns,
  /** The resolver annotation value that release's pod templates carry (its address). */
  resolver: CENTRAL_K3S_RANGES.sharedTenantDns,
  replicas: 2,
} as const;

/** The name of a tenant's DNS (its Deployment, Service, ConfigMap, policies and admission binding), in TENANT_DNS.namespace. Pure. */
export function tenantDnsName(tenantId: string): string {
  return `${TENANT_DNS_STEM}-${tenantId}`;
}

/** Per-pod PID limit of central's kubelet (K3s sets none): a fork bomb in a tenant's pod exhausts its own pod, not the host's PIDs. */
export const CENTRAL_POD_MAX_PIDS = 4096;

/** The largest batch script a tenant's slurmctld accepts (`SchedulerParameters=max_script_size`, Slurm's default 4 MiB): each pending job keeps its script in the state volume. */
export const MAX_SCRIPT_BYTES = 256 * 1024;

/** What a job record holds besides its script (environment, arguments, the record), budgeted per job. */
const JOB_RECORD_BYTES = 64 * 1024;

/** The share of slurmctld's state volume pending jobs may fill: the rest keeps node and reservation state and the previous save. */
const JOB_STATE_SHARE = 0.5;

/** MaxJobCount for a state volume of `stateGiB`: the jobs, each at its budget, fill no more than their share of it. Pure. */
export function maxJobCount(stateGiB: number): number {
  return Math.floor((stateGiB * 1024 ** 3 * JOB_STATE_SHARE) / (MAX_SCRIPT_BYTES + JOB_RECORD_BYTES));
}

/**
 * The securityContext of every container of a tenant's control plane on central but the
 * login's sshd (which needs root's capabilities to switch users): no capability, no privilege
 * gain (setuid binaries do nothing), the runtime's seccomp profile. A tenant that finds a way
 * to run code in its controller's pod gets an unprivileged process, nothing more.
 */
export const HARDENED_CONTAINER = { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] }, seccompProfile: { type: "RuntimeDefault" } } as const;

/**
 * What the login's sshd needs of root's capabilities, and nothing else (NET_RAW, MKNOD,
 * SETPCAP, SETFCAP and FSETID of the runtime's default set are dropped): it binds port 22,
 * chroots its unprivileged child (privilege separation), switches to the user, hands the pty
 * to them, writes the login's audit record, reads a user's authorized_keys, and ends their
 * processes at logout. The journey runs Debian's sshd with exactly these and logs a user in.
 */
export const LOGIN_CAPABILITIES = ["AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "KILL", "NET_BIND_SERVICE", "SETGID", "SETUID", "SYS_CHROOT"] as const;

/**
 * The login container's securityContext: root's sshd with LOGIN_CAPABILITIES only, the
 * runtime's seccomp profile. Privilege gain stays allowed (the image's sshd and sssd helpers
 * may rely on it); Pod Security `restricted` would refuse a container that runs as root, so the
 * namespace enforces `baseline`, which these capabilities pass.
 */
export const LOGIN_CONTAINER = { capabilities: { drop: ["ALL"], add: [...LOGIN_CAPABILITIES] }, seccompProfile: HARDENED_CONTAINER.seccompProfile } as const;

/**
 * What the login's sshd accepts, appended to Slinky's sshd_config (the LoginSet's
 * extraSshdConfig): keys only. Users have no password (`*`), root has no key from the fleet;
 * without these lines sshd offers password and keyboard-interactive logins to PAM all the same.
 */
export const LOGIN_SSHD_CONFIG = { PasswordAuthentication: "no", KbdInteractiveAuthentication: "no", PermitRootLogin: "no" } as const;

/** The only way a user logs in to the login, as sshd lists what it accepts. */
export const LOGIN_SSH_METHODS = ["publickey"] as const;

/** HARDENED_CONTAINER with a read-only image: for containers that write only to their volumes (Slurm's daemons, the init containers). */
export const HARDENED_READ_ONLY_CONTAINER = { ...HARDENED_CONTAINER, readOnlyRootFilesystem: true } as const;

/** Requests and limits of the fleet's own init containers (the users' merge, clear-triggers): a shell and a few files. */
export const INIT_CONTAINER_RESOURCES = { requests: { cpu: "10m", memory: "16Mi" }, limits: { memory: "32Mi" } } as const;
