/**
 * The Slurm configuration the Slurm part's daemons read: the slurm.conf, cgroup.conf and
 * Prolog scripts central's Slinky operator (v1.2.1) wrote for the tenant, taken from the
 * Kubernetes part (the controller pod's /etc/slurm), with the journey's overrides appended
 * (slurmctld keeps a key's last value), each a named stand-in; and the slurmdbd.conf it wrote,
 * with the Slurm part's own database password. Pure.
 */
import type { ControlPlaneValues } from "./world";

/**
 * What the journey changes in the operator's slurm.conf, and why: every value here is a
 * stand-in for something this machine cannot give its pods or a wait it shortens.
 */
export function journeyOverrides(slurmdTimeoutSeconds: number): string[] {
  return [
    "# --- The journey's overrides of the operator's file (the last value of a key wins) ---",
    "# Several slurmd share this machine's cgroup tree (cgroup.conf: CgroupPlugin=disabled): no cgroup tracking or confinement.",
    "ProctrackType=proctrack/linuxproc",
    "TaskPlugin=task/none",
    "JobAcctGatherType=jobacct_gather/none",
    "# slurmctld pings idle nodes every SlurmdTimeout/3: short, so a ping falls inside the journey.",
    `SlurmdTimeout=${slurmdTimeoutSeconds}`,
    "# debug: slurmctld logs each ping agent it spawns, the journey's evidence of 6818 pings.",
    "SlurmctldDebug=debug",
    "SlurmdDebug=debug",
    "",
  ];
}

/** The cgroup.conf the journey's pods get in place of the operator's (slurmd 26.05 needs a cgroup file system or none at all). */
const JOURNEY_CGROUP_CONF = "# The journey's stand-in for the operator's cgroup.conf: several slurmd share this machine's cgroup tree.\nCgroupPlugin=disabled\n";

/** The operator's slurm.conf with the journey's overrides after it. Pure. */
function journeySlurmConf(operatorConf: string, slurmdTimeoutSeconds: number): string {
  return [operatorConf.trimEnd(), "", ...journeyOverrides(slurmdTimeoutSeconds)].join("\n");
}

/**
 * The files of central's slurmctld /etc/slurm the Slurm part writes: the operator's, keys left
 * out (the part makes its own per-run slurm.key and jwt.key), slurm.conf with the overrides,
 * cgroup.conf replaced. Pure.
 */
export function journeyEtcSlurm(operatorEtc: Readonly<Record<string, string>>, slurmdTimeoutSeconds: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [file, text] of Object.entries(operatorEtc)) {
    if (file.endsWith(".key")) continue;
    out[file] = file === "slurm.conf" ? journeySlurmConf(text, slurmdTimeoutSeconds) : file === "cgroup.conf" ? JOURNEY_CGROUP_CONF : text;
  }
  return out;
}

/**
 * The slurmdbd.conf the Slurm part's slurmdbd reads: the one central's Slinky operator wrote
 * for the tenant, with one change: StoragePass is the password of the MariaDB the Slurm part
 * runs (the operator's names the Kubernetes part's, and the rotation drill changes it). The
 * line is replaced, not appended: the file holds one password, the part's. Pure.
 */
export function journeySlurmdbdConf(operatorConf: string, password: string): string {
  const storagePass = (l: string) => /^\s*StoragePass\s*=/i.test(l);
  const lines = operatorConf.trimEnd().split("\n");
  const first = lines.findIndex(storagePass);
  const own = `StoragePass=${password}`;
  // Every StoragePass line goes (slurmdbd keeps a key's last value); the part's takes the first one's place.
  const kept = lines.flatMap((l, i) => (!storagePass(l) ? [l] : i === first ? [own] : []));
  return [...kept, ...(first < 0 ? [own] : []), ""].join("\n");
}

/** What mariadb-operator would create for the MariaDB resource: the database and its user. */
export function mariadbInitSql(input: { readonly controlPlane: ControlPlaneValues; readonly password: string }): string {
  const { database, username } = input.controlPlane.accounting;
  return [
    `CREATE DATABASE IF NOT EXISTS \`${database}\`;`,
    `CREATE USER IF NOT EXISTS '${username}'@'%' IDENTIFIED BY '${input.password}';`,
    `GRANT ALL PRIVILEGES ON \`${database}\`.* TO '${username}'@'%';`,
    "FLUSH PRIVILEGES;",
    "",
  ].join("\n");
}

/** The NodeSet a slurmd's features put it in, by the extraConf's `NodeSet=<n> Feature=<f>` lines. */
export function nodeSetOf(extraConf: string, features: readonly string[]): string | undefined {
  for (const line of extraConf.split("\n")) {
    const m = /^\s*NodeSet=(\S+)\s+Feature=(\S+)/.exec(line);
    if (m && features.includes(m[2])) return m[1];
  }
  return undefined;
}

/** The partitions whose Nodes= name a NodeSet. */
export function partitionsOf(extraConf: string, nodeSet: string): string[] {
  const out: string[] = [];
  for (const line of extraConf.split("\n")) {
    const m = /^\s*PartitionName=(\S+).*\bNodes=(\S+)/.exec(line);
    if (m && m[2].split(",").includes(nodeSet)) out.push(m[1]);
  }
  return out;
}

/**
 * sshd's keywords the journey sets before the operator's sshd_config, and why: where the login
 * listens, its host key and the users' keys (on AWS the operator's host-key Secret and the
 * users' own), and no pid file in a shared /run. sshd keeps the first value of most keywords
 * (AuthorizedKeysFile, PidFile); ListenAddress and HostKey add up, and the operator's file sets
 * neither.
 */
export const SSHD_STAND_INS = ["ListenAddress", "HostKey", "AuthorizedKeysFile", "PidFile"] as const;

/** The login's sshd_config: the journey's stand-in lines, then the file central's Slinky operator wrote. Pure. */
export function journeySshdConfig(operatorConfig: string, at: { readonly address: string; readonly dir: string }): string {
  const values: Record<(typeof SSHD_STAND_INS)[number], string> = { ListenAddress: at.address, HostKey: `${at.dir}/host_ed25519`, AuthorizedKeysFile: `${at.dir}/authorized/%u`, PidFile: "none" };
  return ["# --- The journey's stand-ins (before the operator's lines: sshd keeps most keywords' first value) ---", ...SSHD_STAND_INS.map((k) => `${k} ${values[k]}`), "# --- central's Slinky operator's sshd_config ---", operatorConfig.trimEnd(), ""].join("\n");
}
