/**
 * The Slurm configuration central's Slinky serves a tenant, rebuilt from the committed
 * fleet: the controller's name and port, configless, accounting through slurmdbd, and the
 * partition and NodeSet lines of the central release's `controller.extraConf` (Slinky's
 * hybrid mode puts every remote NodeSet's lines there), with the authentication Slinky
 * v1.2.1's operator writes (auth/slurm, cred/slurm, use_client_ids). Where the journey's
 * pods differ from Slinky's (cgroup tracking), the stand-in is named. Pure.
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
    "# As Slinky's operator writes them: the tenant's slurm.key in /etc/slurm of every pod.",
    "AuthType=auth/slurm",
    "CredType=cred/slurm",
    "AuthInfo=use_client_ids",
    "SlurmUser=slurm",
    "SlurmdUser=root",
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
    "# Dynamic nodes (slurmd -Z) need room in the node table, as the operator's MaxNodeCount gives; slurmctld reaches each directly.",
    "MaxNodeCount=1024",
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
    "# prologScripts of the central release (fleet), by file name as the operator writes them: in /etc/slurm, sent to slurmd configless.",
    ...Object.keys(controlPlane.prologs).sort().map((k) => `Prolog=${prologFile(k)}`),
    "# controller.extraConf of the central release (fleet):",
    controlPlane.extraConf.trim(),
    "",
  ].join("\n");
}

/** The file name of one of the release's Prolog scripts in /etc/slurm (the chart's ConfigMap key `prolog-<key>`). */
export function prologFile(key: string): string {
  return `prolog-${key}`;
}

export function slurmdbdConf(input: { readonly tenant: TenantSide; readonly controlPlane: ControlPlaneValues; readonly password: string }): string {
  const { accounting } = input.controlPlane;
  return [
    `# slurmdbd.conf of ${input.tenant.namespace}: Slinky's accounting storageConfig from the fleet.`,
    "AuthType=auth/slurm",
    "AuthInfo=use_client_ids",
    `DbdHost=${slinkyNames(input.tenant).accountingPod}`,
    `DbdPort=${SLURM_PORTS.slurmdbd}`,
    "SlurmUser=slurm",
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
