/**
 * Central's volume limits, played on a kernel that enforces them. Central's data volume is XFS
 * with project quotas, and the host's script (components/host/volume-limits.ts, one of its
 * host files) gives each local volume's folder a hard limit at its size. This machine's kernel
 * has no quota support, so the play runs in the journey's virtual machine (host/vm.ts, Debian's
 * kernel): a fresh XFS as large as the planned data volume, mounted with the options central's
 * user data gives it; a folder for every volume the journey's central holds, where local-path
 * makes them; the script as the plan delivers it, reading those volumes and claims from
 * central's API server (saved before the VM starts: it has no network). Then SlurmUser, in
 * the attacked tenant's slurmctld state volume, writes past its size: refused; the other
 * tenant's volume takes writes meanwhile; with the limit taken off the same write goes
 * through (the limit stopped it, not the file system's size), and the script's next run puts
 * it back.
 */
import * as fs from "fs";
import * as path from "path";
import type { Kubectl } from "./kube/kubectl";
import type { K3sServer } from "./kube/k3s";
import { findVmKernel, runInVm } from "./host/vm";
import { SLURM_USER } from "./host/image";
import { CENTRAL_DATA_MOUNT } from "../components/host/central-cloud-init";
import { quote } from "./host/processes";
import { step, type JourneyStep } from "./host/step";
import { K3S_LOCAL_PATH } from "../facts/central-host";
import { SLURMCTLD_TRIGGER_STATE } from "../facts/control-plane";
import { tenantNamespace } from "../facts/fleet";
import { VOLUME_LIMITS } from "../components/host/volume-limits";
import { HOST_COUNTS } from "../facts/alarms";

/** slurmctld writes its state as SlurmUser. */
const SLURM_UID = SLURM_USER.uid;
const MIB = 1024 * 1024;

export interface VolumeLimitsInput {
  readonly kc: Kubectl;
  /** Central's server as its user data and host files make it. */
  readonly server: K3sServer;
  /** The planned data volume's size. */
  readonly dataVolumeGiB: number;
  /** The attacked tenant, and the one whose volume must take writes meanwhile. */
  readonly tenants: readonly [string, string];
  readonly root: string;
  readonly dir: string;
  readonly report: (s: JourneyStep) => void;
}

interface Volume {
  metadata: { name: string };
  spec: { capacity?: { storage?: string }; hostPath?: { path: string }; claimRef?: { namespace: string; name: string } };
}

/** The folder of a tenant's slurmctld state volume on central, from the volumes the API server holds. Pure. */
export function stateFolder(volumes: readonly Volume[], tenantId: string): { folder: string; size: string } | undefined {
  const v = volumes.find((x) => x.spec.claimRef?.namespace === tenantNamespace(tenantId) && x.spec.claimRef.name.startsWith(`${SLURMCTLD_TRIGGER_STATE.volume}-`) && x.spec.hostPath);
  return v?.spec.hostPath && v.spec.capacity?.storage ? { folder: v.spec.hostPath.path, size: v.spec.capacity.storage } : undefined;
}

/** Bytes of a binary-suffixed quantity (`4Gi`, `512Mi`) as the fleet writes claim sizes. Pure. */
export function binaryBytes(q: string): number | undefined {
  const m = /^(\d+)(Ki|Mi|Gi|Ti)?$/.exec(q);
  return m ? Number(m[1]) * 1024 ** ["", "Ki", "Mi", "Gi", "Ti"].indexOf(m[2] ?? "") : undefined;
}

/** The VM's script: the data volume, the folders, the host's script, the attack and its control. Prints `key value` lines. Pure. */
export function vmScript(o: { options: readonly string[]; folders: readonly string[]; bin: string; limits: string; library: string; attacked: string; other: string; bytes: number }): string {
  const mount = path.dirname(path.dirname(K3S_LOCAL_PATH.hostRoot));
  const as = `setpriv --reuid ${SLURM_UID} --regid ${SLURM_UID} --clear-groups`;
  const write = (file: string, mib: number) => `${as} dd if=/dev/zero of=${quote(file)} bs=1M count=${mib} conv=fsync 2>&1 | grep -m 1 -E "error|copied"`;
  return [
    "set -u",
    `mkfs.xfs -q -f -L ${CENTRAL_DATA_MOUNT.label} /dev/vda || { echo "mkfs failed"; exit 10; }`,
    `mkdir -p ${mount}`,
    `mount -o ${o.options.join(",")} /dev/vda ${mount} || { echo "mount -o ${o.options.join(",")} failed"; exit 11; }`,
    // local-path's helper makes each folder world-writable before its volume exists.
    ...o.folders.map((f) => `mkdir -m 0777 -p ${quote(f)}`),
    `export PATH=${quote(o.bin)}:$PATH`,
    // The library where the host's sync writes it is not on this machine's (read-only) root: Python finds it on PYTHONPATH.
    `export PYTHONPATH=${quote(path.dirname(o.library))}`,
    // What the tenant wrote before its limit (local-path made the folder a moment earlier) is counted once it is set.
    `${as} dd if=/dev/zero of=${quote(`${o.attacked}/before`)} bs=1M count=1 conv=fsync 2>/dev/null`,
    `out=$(python3 ${quote(o.limits)} 2>&1); echo "limits $?"; echo "$out" | sed 's/^/limits-out /'`,
    `echo "unlimited $(cat ${HOST_COUNTS.VolumesUnlimited.file})"`,
    `id=$(xfs_io -r -c lsproj ${quote(o.attacked)} | sed 's/projid = //'); echo "project $id"`,
    `echo "counted $(xfs_quota -x -c "report -p -n -b -N" ${mount} | awk -v id="#$id" '$1 == id { print $2 }')"`,
    // SlurmUser fills its state volume to 1 MiB short of its size (the 1 MiB it wrote before included), then writes 2 MiB more.
    `${as} fallocate -l ${o.bytes - 2 * MIB} ${quote(`${o.attacked}/fill`)}; echo "fill $?"`,
    `echo "past $(${write(`${o.attacked}/past`, 2)})"`,
    `echo "past-bytes $(stat -c %s ${quote(`${o.attacked}/past`)} 2>/dev/null || echo 0)"`,
    `echo "other $(${write(`${o.other}/write`, 2)})"`,
    `echo "other-bytes $(stat -c %s ${quote(`${o.other}/write`)} 2>/dev/null || echo 0)"`,
    `echo "avail $(df -B1 --output=avail ${mount} | tail -n 1)"`,
    // The control: without the limit the same write goes through; the script's next run puts it back.
    `xfs_quota -x -c "limit -p bhard=0 $id" ${mount}`,
    `rm -f ${quote(`${o.attacked}/past`)}`,
    `echo "open $(${write(`${o.attacked}/past`, 2)})"`,
    `echo "open-bytes $(stat -c %s ${quote(`${o.attacked}/past`)} 2>/dev/null || echo 0)"`,
    `python3 ${quote(o.limits)} >/dev/null 2>&1; echo "again $?"`,
    `echo "hard $(xfs_quota -x -c "report -p -n -b -N" ${mount} | awk -v id="#$id" '$1 == id { print $4 }')"`,
    // A file's owner can move it out of its project (FS_IOC_FSSETXATTR, outside a user namespace): the next run moves it back.
    `rm -f ${quote(`${o.attacked}/fill`)} ${quote(`${o.attacked}/past`)}`,
    `${as} touch ${quote(`${o.attacked}/moved`)} && ${as} xfs_io -c "chproj 0" ${quote(`${o.attacked}/moved`)}; echo "moved $(xfs_io -r -c lsproj ${quote(`${o.attacked}/moved`)} | sed 's/projid = //')"`,
    `out=$(python3 ${quote(o.limits)} 2>&1); echo "back $?"; echo "back-out $out"`,
    `echo "back-project $(xfs_io -r -c lsproj ${quote(`${o.attacked}/moved`)} | sed 's/projid = //')"`,
    // Mounted without project quotas (an fstab line that lost prjquota): the script fails and counts every volume unlimited.
    `umount ${mount} && mount /dev/vda ${mount}`,
    `out=$(python3 ${quote(o.limits)} 2>&1); echo "unenforced $?"; echo "unenforced-out $out"`,
    `echo "unenforced-count $(cat ${HOST_COUNTS.VolumesUnlimited.file})"`,
    "",
  ].join("\n");
}

/** `key value` lines, the last value of each key. Pure. */
function lines(output: string): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const l of output.split("\n")) {
    const at = l.indexOf(" ");
    const [k, v] = at < 0 ? [l, ""] : [l.slice(0, at), l.slice(at + 1)];
    m.set(k, [...(m.get(k) ?? []), v]);
  }
  return m;
}

export async function volumeLimitsHold(i: VolumeLimitsInput): Promise<void> {
  const [attacked, other] = i.tenants;
  const name = `central's volume limits: SlurmUser in ${attacked}'s slurmctld state volume cannot write past its size, ${other}'s volume takes writes meanwhile (${VOLUME_LIMITS.script} from central's host-files parameter, on a kernel with XFS quotas)`;
  const skipped = (why: string) => i.report({ ...step(name, false, why), ...(process.env.CI ? {} : { skipped: true }) });
  if (!i.server.volumeLimits) return i.report(step(name, false, `central's user data and host files hold no ${VOLUME_LIMITS.script}, or its data volume's mount script no fstab line`));
  const { kernel, missing } = findVmKernel(i.root);
  if (!kernel) return skipped(missing ?? "no VM kernel");
  const volumes = (await i.kc.get<{ items: Volume[] }>(["persistentvolumes"]))?.items ?? [];
  const a = stateFolder(volumes, attacked);
  const b = stateFolder(volumes, other);
  const bytes = a ? binaryBytes(a.size) : undefined;
  if (!a || !b || !bytes) return i.report(step(name, false, `central holds no bound state volume for ${!a ? attacked : other} (volumes: ${volumes.map((v) => v.metadata.name).join(", ") || "none"})`));
  // What `k3s kubectl get <kind> -A -o json` answers on the host, saved: the VM has no network.
  fs.mkdirSync(path.join(i.dir, "bin"), { recursive: true });
  for (const kind of ["persistentvolumes", "persistentvolumeclaims"]) {
    const r = await i.kc.run(["get", kind, "-A", "-o", "json"]);
    if (r.code !== 0) return i.report(step(name, false, `kubectl get ${kind}: ${r.stderr.trim()}`));
    fs.writeFileSync(path.join(i.dir, `${kind}.json`), r.stdout);
  }
  fs.writeFileSync(path.join(i.dir, "bin", "k3s"), `#!/bin/sh\n# k3s kubectl get <kind> -A -o json, as central's API server answered it\nexec cat '${i.dir}'/"$3".json\n`, { mode: 0o755 });
  const limits = path.join(i.dir, path.basename(VOLUME_LIMITS.script));
  fs.writeFileSync(limits, i.server.volumeLimits.script, { mode: 0o755 });
  const library = path.join(i.dir, "lib", path.basename(VOLUME_LIMITS.library));
  fs.mkdirSync(path.dirname(library), { recursive: true });
  fs.writeFileSync(library, i.server.volumeLimits.library);
  const folders = volumes.map((v) => v.spec.hostPath?.path).filter((p): p is string => !!p && path.dirname(p) === K3S_LOCAL_PATH.hostRoot);
  const disk = path.join(i.dir, "data-volume.img");
  fs.rmSync(disk, { force: true });
  fs.writeFileSync(disk, "");
  fs.truncateSync(disk, i.dataVolumeGiB * 1024 * MIB);
  try {
    const vm = await runInVm({ kernel: kernel, disk, dir: path.join(i.dir, "vm"), timeoutMs: 300_000, script: vmScript({ options: i.server.volumeLimits.mountOptions, folders, bin: path.join(i.dir, "bin"), limits, library, attacked: a.folder, other: b.folder, bytes }) });
    const got = lines(vm.output);
    const one = (k: string) => got.get(k)?.at(-1) ?? "";
    const pastBytes = Number(one("past-bytes"));
    const ok = vm.code === 0 && one("limits") === "0" && one("unlimited") === "0" && Number(one("counted")) >= 1024 && one("fill") === "0" && pastBytes < 2 * MIB && Number(one("other-bytes")) === 2 * MIB && Number(one("open-bytes")) === 2 * MIB && one("again") === "0" && Number(one("hard")) === bytes / 1024
      && one("moved") === "0" && one("back") === "0" && one("back-project") === one("project") && one("unenforced") === "1" && one("unenforced-count") === String(folders.length);
    i.report(step(name, ok, ok
      ? `${kernel.version} in ${(vm.ms / 1000).toFixed(1)} s, data volume ${i.dataVolumeGiB} GiB mounted -o ${i.server.volumeLimits.mountOptions.join(",")}; the script limited ${folders.length} volumes (VolumesUnlimited ${one("unlimited")}; ${(got.get("limits-out") ?? []).find((l) => l.startsWith(a.folder))?.slice(a.folder.length + 2) ?? "?"} for ${attacked}'s ${a.size}, the ${one("counted")} KiB written before it counted); as uid ${SLURM_UID} after filling it to 1 MiB short: ${one("past")} (${pastBytes} of 2 MiB written); ${other}'s volume: ${Number(one("other-bytes")) / MIB} MiB written; ${Number(one("avail")) / 1024 ** 3 > 1 ? `${(Number(one("avail")) / 1024 ** 3).toFixed(1)} GiB` : `${one("avail")} bytes`} left on the data volume; without the limit the same write went through (${Number(one("open-bytes")) / MIB} MiB), and the script's next run put ${one("hard")} KiB back; a file SlurmUser moved out of its project (xfs_io chproj 0, as its owner may) was moved back by the next run ("${one("back-out")}", project ${one("back-project")}); mounted without prjquota, the script failed ("${one("unenforced-out")}") and counted ${one("unenforced-count")} volumes unlimited for the host's alarm`
      : `exit ${vm.code ?? "none (the VM did not finish)"}; ${vm.output.split("\n").slice(-25).join(" | ").slice(-1500)}`));
  } finally {
    fs.rmSync(disk, { force: true });
  }
}
