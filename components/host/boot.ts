/**
 * A host's first boot, shared by central's host, the tenant's server and its workers: the
 * boot script runs as a systemd unit that starts it again until it completes (a failed
 * download, a route not there yet, a package mirror down), never once and given up as
 * cloud-init's runcmd would; and the data volumes that outlive an instance. Pure.
 */

import { BOOT } from "../../facts/host-boot";

/**
 * The boot unit: after the network is up, again every BOOT.retrySeconds while it fails, with
 * no start limit. Type=exec: the unit counts as started once the script runs, so nothing
 * waits on it (multi-user.target would wait on a oneshot, on a reboot before the boot
 * completed); the mark is written by the same command, only when the script succeeded.
 */
export function bootUnit(description: string): string {
  return [
    "[Unit]",
    `Description=${description} (started again until it completes)`,
    "Wants=network-online.target",
    "After=network-online.target",
    `ConditionPathExists=!${BOOT.done}`,
    // A boot that keeps failing keeps trying: the host is useless until it completes.
    "StartLimitIntervalSec=0",
    "",
    "[Service]",
    "Type=exec",
    `ExecStart=${bootCommand()}`,
    "Restart=on-failure",
    `RestartSec=${BOOT.retrySeconds}`,
    "",
    "[Install]",
    "WantedBy=multi-user.target",
    "",
  ].join("\n");
}

/** The unit's command: the script, then the mark that it completed. */
export function bootCommand(script: string = BOOT.script): string {
  return `/bin/sh -c '${script} && mkdir -p ${BOOT.done.slice(0, BOOT.done.lastIndexOf("/"))} && touch ${BOOT.done}'`;
}

/** cloud-init's files for the boot: the script and its unit. */
export function bootFiles(script: string, description: string): { path: string; permissions: string; content: string }[] {
  return [
    { path: BOOT.script, permissions: "0700", content: script },
    { path: `/etc/systemd/system/${BOOT.unit}`, permissions: "0644", content: bootUnit(description) },
  ];
}

/** cloud-init's runcmd entry that starts the boot and returns (the unit retries on its own). */
export const START_BOOT = ["systemctl", "enable", "--now", "--no-block", BOOT.unit] as const;

/** Where a host keeps what must outlive its instance, on an EBS volume of its own. */
export interface DataVolumeMount {
  readonly mountPoint: string;
  /** XFS label (fstab mounts by it). */
  readonly label: string;
  /** Mount options besides fstab's defaults (read at mount time: an option added later takes effect at the next boot). */
  readonly options?: readonly string[];
}

/**
 * The volume's fstab line. With options of its own it is written afresh at each run (a root
 * disk kept across a change of options takes the new ones); without, kept as first written.
 */
function fstabLines(mount: DataVolumeMount): string[] {
  const at = mount.mountPoint;
  const line = `LABEL=${mount.label} ${at} xfs ${["defaults", "nofail", ...(mount.options ?? [])].join(",")} 0 2`;
  return mount.options?.length ? [`sed -i '\\| ${at} |d' /etc/fstab`, `echo "${line}" >> /etc/fstab`] : [`grep -q ' ${at} ' /etc/fstab || echo "${line}" >> /etc/fstab`];
}

/**
 * Mounts a data volume, formatting it only when it is blank, grows its file system to the
 * volume (EBS grows volumes in place), and keeps the node's identity (/etc/rancher/node) on
 * it, so a replacement host is the same node.
 */
export function mountDataVolumeScript(volumeId: string, mount: DataVolumeMount): string {
  const device = `/dev/disk/by-id/nvme-Amazon_Elastic_Block_Store_${volumeId.replace("-", "")}`;
  const at = mount.mountPoint;
  return [
    "#!/bin/bash",
    "set -euo pipefail",
    `DEV=${device}`,
    "for _ in $(seq 1 120); do [ -e \"$DEV\" ] && break; sleep 5; done",
    "[ -e \"$DEV\" ] || { echo \"data volume $DEV never attached\" >&2; exit 1; }",
    `blkid "$DEV" >/dev/null || mkfs.xfs -L ${mount.label} "$DEV"`,
    `mkdir -p ${at}`,
    ...fstabLines(mount),
    `mountpoint -q ${at} || mount ${at}`,
    // A volume EBS grew since (more tenants): the file system takes the new size, online.
    `xfs_growfs ${at} >/dev/null`,
    `mkdir -p ${at}/node-identity /etc/rancher`,
    `[ -L /etc/rancher/node ] || { rm -rf /etc/rancher/node; ln -s ${at}/node-identity /etc/rancher/node; }`,
    "",
  ].join("\n");
}

