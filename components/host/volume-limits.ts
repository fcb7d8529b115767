/**
 * Each local volume on central's host held to its claim's size. K3s's local-path provisioner
 * makes a claim's volume as a plain folder on the data volume (`<volume>_<namespace>_<claim>`
 * under K3S_LOCAL_PATH.hostRoot) and enforces no size: a tenant's code that writes to its
 * slurmctld state or its MariaDB would fill the file system the K3s datastore and every other
 * tenant's control plane live on. The data volume is XFS mounted with project quotas
 * (CENTRAL_DATA_MOUNT), and this script, run by a path unit as soon as local-path makes a
 * folder and by a timer every minute, gives each folder an XFS project of its own with a hard
 * block limit at its volume's capacity (its claim's request until the volume exists).
 *
 * Why project quotas and not a volume per tenant: an EBS volume per claim would cost an
 * attachment each (a Nitro instance has 28 for volumes and network interfaces together), a
 * volume per tenant would need a provisioner of our own; a project quota is what the file
 * system enforces at each write, on the folder local-path already makes, kept on the volume
 * itself (a replacement host inherits every limit). Pure.
 */
import { K3S_LOCAL_PATH } from "../../facts/central-host";
import { HOST_COUNTS } from "../../facts/alarms";
import type { HostFile } from "./host-files";

/** The script, its units and how often the timer runs it. */
export const VOLUME_LIMITS = {
  script: "/usr/local/sbin/clusterra-volume-limits",
  service: "clusterra-volume-limits.service",
  path: "clusterra-volume-limits.path",
  timer: "clusterra-volume-limits.timer",
  interval: "1min",
} as const;

/**
 * The script: fails (and says which) when the file system does not enforce project quotas,
 * or when a folder under the root has neither a volume nor a claim to size it; every other
 * folder gets its limit whatever fails for one of them. A folder keeps its project once set
 * (the project id is stored in its inodes); a new one takes an id from its claim's uid, the
 * next free one on a clash. `k3s kubectl` reads the volumes and claims with the host's admin
 * credential.
 */
export function volumeLimitsScript(mount: string): string {
  return [
    "#!/usr/bin/python3",
    "# Holds each local volume to its size with an XFS project quota (components/host/volume-limits.ts).",
    "import json, math, os, re, subprocess, sys",
    `MOUNT, ROOT, COUNT = ${JSON.stringify(mount)}, ${JSON.stringify(K3S_LOCAL_PATH.hostRoot)}, ${JSON.stringify(HOST_COUNTS.VolumesUnlimited.file)}`,
    "# local-path's folder: pvc-<claim uid>_<namespace>_<claim>",
    'FOLDER = re.compile(r"pvc-([0-9a-f]{8})-[0-9a-f-]{27}_([a-z0-9-]+)_(.+)")',
    'UNITS = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}',
    "",
    "def quantity(text):",
    '    m = re.fullmatch(r"([0-9.]+)(?:e([0-9]+)|([kMGT]i?|))", str(text))',
    "    if not m:",
    '        raise ValueError(f"not a quantity: {text!r}")',
    "    return math.ceil(float(m[1]) * (10 ** int(m[2]) if m[2] else UNITS[m[3]]))",
    "",
    "def out(*argv):",
    "    return subprocess.run(argv, check=True, stdout=subprocess.PIPE, text=True).stdout",
    "",
    "def items(kind):",
    '    return json.loads(out("k3s", "kubectl", "get", kind, "-A", "-o", "json"))["items"]',
    "",
    "def xq(command):",
    '    return out("xfs_quota", "-x", "-c", command, MOUNT)',
    "",
    "def enforced(state):",
    '    return re.search(r"Accounting: ON\\s+Enforcement: ON", state) is not None',
    "",
    "def unlimited(n):",
    '    """What the disk metrics publish (VolumesUnlimited): folders left without their limit."""',
    "    os.makedirs(os.path.dirname(COUNT), exist_ok=True)",
    '    with open(COUNT, "w") as f:',
    '        f.write(f"{n}\\n")',
    "",
    "def main():",
    "    if not os.path.isdir(ROOT):",
    "        return unlimited(0)",
    "    folders = sorted(p for p in (os.path.join(ROOT, n) for n in os.listdir(ROOT)) if os.path.isdir(p) and not os.path.islink(p))",
    '    if not enforced(xq("state -p")):',
    "        unlimited(len(folders))",
    '        sys.exit(f"{MOUNT}: project quotas not enforced (no prjquota): no local volume is held to its size")',
    "    sizes = {}",
    '    for pv in items("persistentvolumes"):',
    '        spec = pv["spec"]',
    '        where = os.path.normpath((spec.get("hostPath") or spec.get("local") or {}).get("path", "/"))',
    '        if os.path.dirname(where) == ROOT and "storage" in spec.get("capacity", {}):',
    '            sizes[where] = quantity(spec["capacity"]["storage"])',
    '    for c in items("persistentvolumeclaims"):',
    '        want = c["spec"].get("resources", {}).get("requests", {}).get("storage")',
    "        if want:",
    '            sizes[(c["metadata"]["namespace"], c["metadata"]["name"])] = quantity(want)',
    '    ids = {f: int(re.search(r"projid = ([0-9]+)", out("xfs_io", "-r", "-c", "lsproj", f))[1]) for f in folders}',
    "    used = set(ids.values())",
    '    hard = {int(r[0][1:]): int(r[3]) for r in (line.split() for line in xq("report -p -n -b -N").splitlines()) if len(r) > 3 and r[0][1:].isdigit()}',
    "    problems = []",
    "    for f in folders:",
    "        m = FOLDER.fullmatch(os.path.basename(f))",
    "        size = sizes.get(f) or (sizes.get((m[2], m[3])) if m else None)",
    "        if size is None:",
    '            problems.append(f"{f}: no volume or claim gives its size: not limited")',
    "            continue",
    "        try:",
    "            pid = ids[f]",
    "            if pid == 0:",
    "                pid = (int(m[1], 16) & 0x7FFFFFFF or 1) if m else 1",
    "                while pid in used:",
    "                    pid = pid % 0x7FFFFFFF + 1",
    "                used.add(pid)",
    '                xq(f"project -s -p {f} {pid}")',
    "            kib = math.ceil(size / 1024)",
    "            if hard.get(pid) != kib:",
    '                xq(f"limit -p bhard={kib}k {pid}")',
    '                print(f"{f}: project {pid}, {kib} KiB")',
    "        except subprocess.CalledProcessError as e:",
    '            problems.append(f"{f}: {e}")',
    "    unlimited(len(problems))",
    "    if problems:",
    '        sys.exit("\\n".join(problems))',
    "",
    'if __name__ == "__main__":',
    "    main()",
    "",
  ].join("\n");
}

/**
 * The script and its units: a oneshot (systemd runs one at a time), a path unit that starts it
 * when local-path makes or removes a folder, and a timer (K3s may not answer yet when the
 * path unit fires; a failure is retried there). The host-files sync enables timers, so the
 * oneshot pulls the path unit in (Wants=) at its first run after each boot. `mount` is the
 * data volume's mount point.
 */
export function volumeLimitsFiles(mount: string): HostFile[] {
  const unit = (description: string, body: string[], install?: string) =>
    ["[Unit]", `Description=${description}`, ...body, ...(install ? ["", "[Install]", `WantedBy=${install}`] : []), ""].join("\n");
  return [
    { path: VOLUME_LIMITS.script, permissions: "0700", content: volumeLimitsScript(mount) },
    {
      path: `/etc/systemd/system/${VOLUME_LIMITS.service}`,
      permissions: "0644",
      content: unit("Hold each local volume to its size (XFS project quotas)", ["After=k3s.service", `RequiresMountsFor=${mount}`, `Wants=${VOLUME_LIMITS.path}`, "", "[Service]", "Type=oneshot", `ExecStart=${VOLUME_LIMITS.script}`]),
    },
    {
      path: `/etc/systemd/system/${VOLUME_LIMITS.path}`,
      permissions: "0644",
      content: unit("Hold a new local volume to its size as soon as local-path makes it", ["", "[Path]", `PathChanged=${K3S_LOCAL_PATH.hostRoot}`, `Unit=${VOLUME_LIMITS.service}`], "paths.target"),
    },
    {
      path: `/etc/systemd/system/${VOLUME_LIMITS.timer}`,
      permissions: "0644",
      content: unit("Hold each local volume to its size", ["", "[Timer]", "OnBootSec=2min", `OnUnitActiveSec=${VOLUME_LIMITS.interval}`], "timers.target"),
    },
  ];
}
