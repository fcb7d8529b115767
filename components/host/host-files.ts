/**
 * A host's scripts and units that change without replacing it. EC2 runs user data once per
 * instance and the program replaces a host whose user data changes (userDataReplaceOnChange),
 * so user data keeps what the instance alone needs to start (its identity, its state volume,
 * K3s's version); every other file comes from SSM Parameter Store: one String parameter per
 * file under the host's prefix, named by the file's path below it, its value the file's mode
 * and content as JSON. A small sync (its script, unit and timer stay in user data) writes them
 * at boot before anything uses them, and again every HOST_FILES.interval, so a changed script
 * reaches a running host within minutes. Pure.
 */
import { BOOT } from "../../facts/host-boot";
import { AWS_LIMITS } from "../../facts/aws-limits";

/** A file a host writes: its path, mode (octal, as cloud-init takes it) and content. */
export interface HostFile {
  readonly path: string;
  readonly permissions: string;
  readonly content: string;
}

/** The sync's files and schedule, and what it keeps of its last run. */
export const HOST_FILES = {
  script: "/usr/local/sbin/clusterra-host-files",
  service: "clusterra-host-files.service",
  timer: "clusterra-host-files.timer",
  /** The paths its last run wrote: the ones a later run removes when they are no longer delivered. */
  state: "/var/lib/clusterra/host-files.json",
  interval: "10min",
} as const;

/** Where systemd reads the host's own units: a file delivered there is a unit. */
const UNIT_DIR = "/etc/systemd/system/";

/** The parameter that delivers `file` under `prefix` (no trailing slash). */
export function hostFileParameterName(prefix: string, file: Pick<HostFile, "path">): string {
  return `${prefix}${file.path}`;
}

/** The parameter's value: what the sync writes. */
export function hostFileParameterValue(file: HostFile): string {
  return JSON.stringify({ mode: file.permissions, content: file.content });
}

/**
 * Why a file cannot be delivered, or undefined: an absolute, normalised path (SSM's name
 * characters, at most 15 levels with the prefix), outside the sync's own files, an octal mode,
 * a value within the Standard tier.
 */
export function hostFileProblem(prefix: string, file: HostFile): string | undefined {
  const name = hostFileParameterName(prefix, file);
  if (!/^(\/[A-Za-z0-9_.-]+)+$/.test(file.path) || file.path.split("/").some((p) => p === "." || p === "..")) return `${file.path}: not an absolute path of SSM name characters (A-Z a-z 0-9 _ . -)`;
  if (name.split("/").length - 1 > SSM_NAME_LEVELS) return `${file.path}: ${name} has more than ${SSM_NAME_LEVELS} levels`;
  if ([HOST_FILES.script, `${UNIT_DIR}${HOST_FILES.service}`, `${UNIT_DIR}${HOST_FILES.timer}`, BOOT.script].includes(file.path as never)) return `${file.path}: user data writes it`;
  if (!/^0[0-7]{3}$/.test(file.permissions)) return `${file.path}: mode ${file.permissions} is not four octal digits`;
  const size = [...hostFileParameterValue(file)].length;
  if (size > AWS_LIMITS.ssmStandardParameter.max) return `${file.path}: its parameter's value is ${size} characters, over ${AWS_LIMITS.ssmStandardParameter.max} (${AWS_LIMITS.ssmStandardParameter.source}): split the file`;
  return undefined;
}

/** SSM's hierarchy depth: "a parameter hierarchy can have a maximum of 15 levels". */
const SSM_NAME_LEVELS = 15;

/** The files a planned host would write: its parameters among a plan's resources (the journey and the tests read plans so). */
export function plannedHostFiles(resources: readonly { readonly type: string; readonly inputs?: Record<string, unknown> }[], prefix: string): HostFile[] {
  return resources
    .filter((r) => r.type === HOST_FILE_PARAMETER_TYPE && String(r.inputs?.name).startsWith(`${prefix}/`))
    .map((r) => {
      const v = JSON.parse(String(r.inputs?.insecureValue)) as { mode: string; content: string };
      return { path: String(r.inputs?.name).slice(prefix.length), permissions: v.mode, content: v.content };
    });
}

/** The resource type that carries a host file. */
const HOST_FILE_PARAMETER_TYPE = "aws:ssm/parameter:Parameter";

/**
 * The sync, in Python (every host running cloud-init has python3; AWS CLI's JSON needs a
 * parser). It writes only what changed (atomically, with its mode), removes what its last run
 * wrote and no parameter delivers any more (a unit stopped and disabled first), reloads
 * systemd when a unit changed, and keeps every delivered timer enabled and running (restarted
 * when it changed). An answer with no parameter is refused, never read as "remove everything".
 * Fails when SSM does not answer, for its unit to retry.
 */
export function hostFilesScript(region: string, prefix: string): string {
  return [
    "#!/usr/bin/python3",
    '"""Writes this host\'s files from SSM Parameter Store (components/host/host-files.ts)."""',
    "import json, os, subprocess, sys, tempfile",
    "",
    `REGION = ${JSON.stringify(region)}`,
    `PREFIX = ${JSON.stringify(prefix)}`,
    `STATE = ${JSON.stringify(HOST_FILES.state)}`,
    `UNITS = ${JSON.stringify(UNIT_DIR)}`,
    "",
    "def delivered():",
    '    answer = subprocess.run(["aws", "ssm", "get-parameters-by-path", "--region", REGION, "--path", PREFIX, "--recursive", "--output", "json"], stdout=subprocess.PIPE)',
    "    if answer.returncode != 0:",
    '        sys.exit(f"aws ssm get-parameters-by-path --path {PREFIX} failed (exit {answer.returncode}): nothing written, nothing removed")',
    "    out = answer.stdout",
    "    files = {}",
    '    for p in json.loads(out)["Parameters"]:',
    '        value = json.loads(p["Value"])',
    '        path = p["Name"][len(PREFIX):]',
    '        if not path.startswith("/") or os.path.normpath(path) != path:',
    '            sys.exit(f"{p[\'Name\']}: not a file path below {PREFIX}")',
    '        files[path] = (int(value["mode"], 8), value["content"])',
    "    if not files:",
    '        sys.exit(f"no parameter under {PREFIX}: nothing written, nothing removed")',
    "    return files",
    "",
    "def same(path, mode, content):",
    "    try:",
    '        with open(path, encoding="utf-8") as f:',
    "            return f.read() == content and os.stat(path).st_mode & 0o7777 == mode",
    "    except FileNotFoundError:",
    "        return False",
    "",
    "def write(path, mode, content):",
    "    os.makedirs(os.path.dirname(path), exist_ok=True)",
    "    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path))",
    '    with os.fdopen(fd, "w", encoding="utf-8") as f:',
    "        f.write(content)",
    "    os.chmod(tmp, mode)",
    "    os.replace(tmp, path)",
    "",
    "def systemctl(*args):",
    '    subprocess.run(["systemctl", *args], check=True)',
    "",
    "def main():",
    "    files = delivered()",
    "    try:",
    "        with open(STATE) as f:",
    "            before = set(json.load(f))",
    "    except FileNotFoundError:",
    "        before = set()",
    "    changed = [p for p, (mode, content) in sorted(files.items()) if not same(p, mode, content)]",
    "    gone = sorted(before - set(files))",
    "    done = []",
    "    try:",
    "        for path in gone:",
    "            if path.startswith(UNITS) and os.path.exists(path):",
    '                subprocess.run(["systemctl", "disable", "--now", os.path.basename(path)], check=False)',
    "            if os.path.exists(path):",
    "                os.remove(path)",
    "            done.append(path)",
    "        for path in changed:",
    "            write(path, *files[path])",
    "            done.append(path)",
    "    finally:",
    "        # A unit written before a later failure is reloaded now: the next run would find it unchanged.",
    "        if any(p.startswith(UNITS) for p in done):",
    '            systemctl("daemon-reload")',
    "    write(STATE, 0o644, json.dumps(sorted(files)))",
    '    for path in sorted(p for p in files if p.startswith(UNITS) and p.endswith(".timer")):',
    "        name = os.path.basename(path)",
    '        systemctl("enable", name)',
    '        systemctl("restart" if path in changed else "start", name)',
    "    for path in changed + gone:",
    '        print(("removed " if path in gone else "wrote ") + path)',
    "",
    'if __name__ == "__main__":',
    "    main()",
    "",
  ].join("\n");
}

/**
 * What user data carries of the sync: its script, a oneshot unit (systemd runs one at a time,
 * so the boot's run and the timer's never overlap) and its timer.
 */
export function hostFilesBootFiles(region: string, prefix: string): HostFile[] {
  return [
    { path: HOST_FILES.script, permissions: "0700", content: hostFilesScript(region, prefix) },
    {
      path: `${UNIT_DIR}${HOST_FILES.service}`,
      permissions: "0644",
      content: ["[Unit]", `Description=Write this host's scripts and units from SSM (${prefix})`, "Wants=network-online.target", "After=network-online.target", "", "[Service]", "Type=oneshot", `ExecStart=${HOST_FILES.script}`, ""].join("\n"),
    },
    {
      path: `${UNIT_DIR}${HOST_FILES.timer}`,
      permissions: "0644",
      content: ["[Unit]", "Description=Take this host's changed scripts and units from SSM", "", "[Timer]", "OnBootSec=1min", `OnUnitActiveSec=${HOST_FILES.interval}`, "", "[Install]", "WantedBy=timers.target", ""].join("\n"),
    },
  ];
}

/**
 * The boot script's lines that write the host's files before anything uses them (the boot
 * unit runs the script again while SSM refuses: the role's policy may lag the boot), then
 * keep them current.
 */
export function hostFilesBootLines(): string[] {
  return [`systemctl start ${HOST_FILES.service}`, `systemctl enable --now ${HOST_FILES.timer}`];
}
