/**
 * The Slurm configuration central's Slinky serves a tenant, rebuilt from the committed
 * fleet: the controller's name and port, configless, accounting through slurmdbd, and the
 * partition and NodeSet lines of the central release's `controller.extraConf` (Slinky's
 * hybrid mode puts every remote NodeSet's lines there). Where this machine's Slurm (22.05,
 * Debian) differs from Slinky's (auth/slurm, cgroup tracking), the stand-in is named. Pure.
 */
import { SLURM_PORTS } from "../../facts/contract";
import { SLURM_RELEASE } from "../../facts/fleet";
import { POD_MOUNTS } from "./processes";
import type { ControlPlaneValues, TenantSide } from "./world";
import { slinkyNames } from "./world";

export interface SlurmConfInput {
  readonly tenant: TenantSide;
  readonly controlPlane: ControlPlaneValues;
  /** How often slurmctld pings idle nodes is SlurmdTimeout/3: short, so a ping falls inside the journey. */
  readonly slurmdTimeoutSeconds: number;
}

export function slurmConf(input: SlurmConfInput): string {
  const { tenant, controlPlane } = input;
  const names = slinkyNames(tenant);
  return [
    `# slurm.conf of ${tenant.namespace} as central's Slinky serves it (configless), for the journey.`,
    `ClusterName=${controlPlane.clusterName}`,
    `SlurmctldHost=${names.controllerPod}(${names.controllerService})`,
    `SlurmctldPort=${SLURM_PORTS.slurmctld}`,
    `SlurmdPort=${SLURM_PORTS.slurmd}`,
    "SlurmctldParameters=enable_configless",
    "# Stand-in: Slinky uses auth/slurm and cred/slurm (Slurm >= 23.11) with the shared slurm.key; munge with one shared key is 22.05's equivalent.",
    "AuthType=auth/munge",
    "CredType=cred/munge",
    "# Stand-in: every daemon of the journey runs as root.",
    "SlurmUser=root",
    `StateSaveLocation=${POD_MOUNTS.spool}/slurmctld`,
    `SlurmdSpoolDir=${POD_MOUNTS.spool}/slurmd`,
    `SlurmctldPidFile=${POD_MOUNTS.run}/slurmctld.pid`,
    `SlurmdPidFile=${POD_MOUNTS.run}/slurmd.pid`,
    "# Stand-in for proctrack/cgroup and task/cgroup: several slurmd share this machine's cgroup tree.",
    "ProctrackType=proctrack/linuxproc",
    "TaskPlugin=task/none",
    "JobAcctGatherType=jobacct_gather/none",
    "SelectType=select/cons_tres",
    "SelectTypeParameters=CR_CPU",
    "ReturnToService=2",
    "# Slurm 22.05 sizes its node table for dynamic nodes (slurmd -Z) by MaxNodeCount; slurmctld reaches each directly.",
    "MaxNodeCount=64",
    "TreeWidth=65533",
    `SlurmdTimeout=${input.slurmdTimeoutSeconds}`,
    "AccountingStorageType=accounting_storage/slurmdbd",
    `AccountingStorageHost=${SLURM_RELEASE}-accounting`,
    `AccountingStoragePort=${SLURM_PORTS.slurmdbd}`,
    "JobCompType=jobcomp/none",
    "MpiDefault=none",
    "MailProg=/bin/true",
    "# debug: slurmctld logs each ping agent it spawns, the journey's evidence of 6818 pings.",
    "SlurmctldDebug=debug",
    "SlurmdDebug=debug",
    "# prologScripts of the central release (fleet), where Slinky puts them; 22.05 takes one Prolog.",
    ...prologPaths(controlPlane).map((p) => `Prolog=${p}`),
    "# controller.extraConf of the central release (fleet):",
    controlPlane.extraConf.trim(),
    "",
  ].join("\n");
}

/** Where each of the release's Prolog scripts lives on a slurmd pod (the chart's ConfigMap key `prolog-<key>`). */
export function prologPaths(controlPlane: Pick<ControlPlaneValues, "prologs">): string[] {
  const keys = Object.keys(controlPlane.prologs);
  if (keys.length > 1) throw new Error(`journey: Slurm 22.05 runs one Prolog; the central release has ${keys.length} (${keys.join(", ")})`);
  return keys.map((k) => `${POD_MOUNTS.etc}/prolog-${k}`);
}

export function slurmdbdConf(input: { readonly tenant: TenantSide; readonly controlPlane: ControlPlaneValues; readonly password: string }): string {
  const { accounting } = input.controlPlane;
  return [
    `# slurmdbd.conf of ${input.tenant.namespace}: Slinky's accounting storageConfig from the fleet.`,
    "AuthType=auth/munge",
    `DbdHost=${slinkyNames(input.tenant).accountingPod}`,
    `DbdPort=${SLURM_PORTS.slurmdbd}`,
    "SlurmUser=root",
    `PidFile=${POD_MOUNTS.run}/slurmdbd.pid`,
    "DebugLevel=info",
    "StorageType=accounting_storage/mysql",
    `StorageHost=${accounting.host}`,
    `StoragePort=${accounting.port}`,
    `StorageLoc=${accounting.database}`,
    `StorageUser=${accounting.username}`,
    `StoragePass=${input.password}`,
    "",
  ].join("\n");
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
