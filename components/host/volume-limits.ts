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

/** The script, its library, its units and how often the timer runs it. */
export const VOLUME_LIMITS = {
  script: "/usr/local/sbin/clusterra-volume-limits",
  library: "/usr/local/lib/clusterra/clusterra_volumes.py",
  service: "clusterra-volume-limits.service",
  path: "clusterra-volume-limits.path",
  timer: "clusterra-volume-limits.timer",
  interval: "1min",
  /** How long one run may take before systemd stops it (the next starts afresh). */
  timeout: "5min",
} as const;

/**
 * The script's pure parts (a file of their own: each host file must fit a Standard parameter,
 * and the tests import it): Kubernetes quantities in bytes (None for what is not one, so a
 * claim written oddly leaves that folder unsized, never the run stopped), local-path's folder
 * names, each folder's size from the volumes and claims, and xfs_quota's and xfs_io's answers.
 */
export function volumeLimitsLibrary(): string {
  return [
    "# The pure parts of clusterra-volume-limits (components/host/volume-limits.ts).",
    "import math, os, re",
    "# local-path's folder: pvc-<claim uid>_<namespace>_<claim>",
    'FOLDER = re.compile(r"pvc-([0-9a-f]{8})-[0-9a-f-]{27}_([a-z0-9-]+)_(.+)")',
    'SUFFIXES = {"m": 1e-3, "": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,',
    '            "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}',
    "",
    "def quantity(text):",
    '    m = re.fullmatch(r"\\+?([0-9]+\\.?[0-9]*|\\.[0-9]+)(?:[eE]([+-]?[0-9]+)|(m|[kMGTPE]i?|))", str(text))',
    "    return math.ceil(float(m[1]) * (10 ** int(m[2]) if m[2] else SUFFIXES[m[3]])) if m else None",
    "",
    "def sizes(volumes, claims, root):",
    '    """By folder (its volume\'s capacity) and by (namespace, claim) (its request)."""',
    "    out = {}",
    "    for pv in volumes:",
    '        spec = pv.get("spec", {})',
    '        where = os.path.normpath((spec.get("hostPath") or spec.get("local") or {}).get("path", "/"))',
    '        size = quantity(spec.get("capacity", {}).get("storage"))',
    "        if os.path.dirname(where) == root and size:",
    "            out[where] = size",
    "    for c in claims:",
    '        size = quantity(c.get("spec", {}).get("resources", {}).get("requests", {}).get("storage"))',
    "        if size:",
    '            out[(c["metadata"]["namespace"], c["metadata"]["name"])] = size',
    "    return out",
    "",
    "def size_of(folder, known):",
    "    m = FOLDER.fullmatch(os.path.basename(folder))",
    "    return known.get(folder) or (known.get((m[2], m[3])) if m else None)",
    "",
    "def new_id(folder, used):",
    '    """A free project id, from the claim\'s uid where the name has one."""',
    "    m = FOLDER.fullmatch(os.path.basename(folder))",
    "    pid = (int(m[1], 16) & 0x7FFFFFFF or 1) if m else 1",
    "    while pid in used:",
    "        pid = pid % 0x7FFFFFFF + 1",
    "    return pid",
    "",
    "def enforced(state):",
    '    """`xfs_quota -x -c \'state -p\'`: project quotas counted and enforced (prjquota)."""',
    '    return re.search(r"Accounting: ON\\s+Enforcement: ON", state) is not None',
    "",
    "def hard_limits(report):",
    '    """`report -p -n -b -N`: each project\'s hard block limit, in KiB."""',
    "    rows = (line.split() for line in report.splitlines())",
    '    return {int(r[0][1:]): int(r[3]) for r in rows if len(r) > 3 and r[0].startswith("#") and r[0][1:].isdigit()}',
    "",
    "def project_of(lsproj):",
    '    m = re.search(r"projid = ([0-9]+)", lsproj)',
    "    return int(m[1]) if m else 0",
    "",
    "def strays(check):",
    '    """`project -c`: files under a folder that left its project (a file\'s owner can move it)."""',
    '    return sum("project identifier is not set" in line for line in check.splitlines())',
    "",
  ].join("\n");
}

/**
 * The script: limits every folder it can, whatever fails for one of them, and writes how
 * many it left without their limit (HOST_COUNTS.VolumesUnlimited) at every run, every folder
 * when the file system does not enforce project quotas or the run fails before the end; then
 * fails, naming each. A folder keeps its project once set (the id is stored in its inodes); a
 * file moved out of it (by its owner, FS_IOC_FSSETXATTR) is moved back at the next run and
 * logged. `k3s kubectl` reads the volumes and claims with the host's admin credential; every
 * command has a time limit.
 */
export function volumeLimitsScript(mount: string): string {
  return [
    "#!/usr/bin/python3",
    "# Holds each local volume to its size with an XFS project quota (components/host/volume-limits.ts).",
    "import json, math, os, subprocess, sys",
    `sys.path.insert(0, ${JSON.stringify(VOLUME_LIMITS.library.slice(0, VOLUME_LIMITS.library.lastIndexOf("/")))})`,
    `from ${VOLUME_LIMITS.library.slice(VOLUME_LIMITS.library.lastIndexOf("/") + 1, -3)} import enforced, hard_limits, new_id, project_of, size_of, sizes, strays`,
    `MOUNT, ROOT, COUNT = ${JSON.stringify(mount)}, ${JSON.stringify(K3S_LOCAL_PATH.hostRoot)}, ${JSON.stringify(HOST_COUNTS.VolumesUnlimited.file)}`,
    "",
    "def out(*argv):",
    "    return subprocess.run(argv, check=True, stdout=subprocess.PIPE, text=True, timeout=120).stdout",
    "",
    "def xq(command):",
    '    return out("xfs_quota", "-x", "-c", command, MOUNT)',
    "",
    "def items(kind):",
    '    return json.loads(out("k3s", "kubectl", "get", kind, "-A", "-o", "json", "--request-timeout=60s"))["items"]',
    "",
    "def unlimited(n):",
    "    os.makedirs(os.path.dirname(COUNT), exist_ok=True)",
    '    with open(COUNT + ".new", "w") as f:',
    '        f.write(f"{n}\\n")',
    '    os.replace(COUNT + ".new", COUNT)',
    "",
    "def limit(folders):",
    '    if not enforced(xq("state -p")):',
    '        return [f"{f}: not limited: {MOUNT} does not enforce project quotas (mounted without prjquota)" for f in folders]',
    '    known = sizes(items("persistentvolumes"), items("persistentvolumeclaims"), ROOT)',
    '    hard = hard_limits(xq("report -p -n -b -N"))',
    "    ids, problems = {}, []",
    "    for f in folders:",
    "        try:",
    '            ids[f] = project_of(out("xfs_io", "-r", "-c", "lsproj", f))',
    "        except (subprocess.SubprocessError, OSError):",
    "            pass",
    "    used = set(hard) | set(ids.values())",
    "    for f in folders:",
    "        size = size_of(f, known)",
    "        try:",
    "            if f not in ids:",
    '                raise OSError("its project cannot be read")',
    "            if size is None:",
    '                raise ValueError("no volume or claim gives its size")',
    "            pid = ids[f]",
    "            if pid == 0:",
    "                pid = new_id(f, used)",
    "                used.add(pid)",
    '                xq(f"project -s -p {f} {pid}")',
    '            elif strays(xq(f"project -c -p {f} {pid}")):',
    '                xq(f"project -s -p {f} {pid}")',
    '                print(f"{f}: files that had left project {pid} moved back")',
    "            kib = math.ceil(size / 1024)",
    "            if hard.get(pid) != kib:",
    '                xq(f"limit -p bhard={kib}k {pid}")',
    '                print(f"{f}: project {pid}, {kib} KiB")',
    "        except (subprocess.SubprocessError, OSError, ValueError) as e:",
    "            if os.path.isdir(f):",
    '                problems.append(f"{f}: not limited: {e}")',
    "    return problems",
    "",
    "def main():",
    "    folders = sorted(p for p in (os.path.join(ROOT, n) for n in os.listdir(ROOT)) if os.path.isdir(p) and not os.path.islink(p)) if os.path.isdir(ROOT) else []",
    "    try:",
    "        problems = limit(folders) if folders else []",
    "    except BaseException:",
    "        unlimited(len(folders))",
    "        raise",
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
    { path: VOLUME_LIMITS.library, permissions: "0644", content: volumeLimitsLibrary() },
    {
      path: `/etc/systemd/system/${VOLUME_LIMITS.service}`,
      permissions: "0644",
      content: unit("Hold each local volume to its size (XFS project quotas)", ["After=k3s.service", `RequiresMountsFor=${mount}`, `Wants=${VOLUME_LIMITS.path}`, "", "[Service]", "Type=oneshot", `TimeoutStartSec=${VOLUME_LIMITS.timeout}`, `ExecStart=${VOLUME_LIMITS.script}`]),
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
