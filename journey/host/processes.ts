/**
 * Running things inside the journey's namespaces, bounded in time, and stopping them all.
 *
 * A "pod" is a network namespace plus, per process, a private mount and UTS namespace and
 * a chroot into the image: the Slurm root file system install-tools makes (Slurm 26.05,
 * as Slinky's images run it). In it the pod has its own hostname (Slurm names nodes and
 * controllers by it), its own /run, /var/spool (Slurm's state) and /etc/slurm (its
 * configuration and slurm.key), /proc, /sys and /dev as a container sees them, a private
 * /tmp, the journey's work folder at its own path, and for slurmd the tenant's shared file
 * system at /mnt/efs. Daemons run in the foreground, each in its own process group, their
 * output in one log file each.
 */
import { spawn, type ChildProcess } from "child_process";
import * as fs from "fs";
import * as path from "path";

export interface RunResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
  readonly ms: number;
}

/** Runs a command to its end or `timeoutMs` (then kills its process group), collecting output. */
export function run(argv: readonly string[], opts: { timeoutMs: number; input?: string; env?: NodeJS.ProcessEnv }): Promise<RunResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(argv[0], argv.slice(1), { detached: true, stdio: [opts.input === undefined ? "ignore" : "pipe", "pipe", "pipe"], env: opts.env ?? process.env });
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid, "SIGKILL");
    }, opts.timeoutMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      resolve({ code: -1, stdout, stderr: stderr + String(e), timedOut, ms: Date.now() - started });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, timedOut, ms: Date.now() - started });
    });
    if (child.stdin) {
      // A command may exit before reading its input: that is its answer, not the journey's error.
      child.stdin.on("error", () => undefined);
      child.stdin.end(opts.input);
    }
  });
}

/** Runs a command and throws with its output when it fails. */
export async function must(argv: readonly string[], opts: { timeoutMs: number; input?: string } = { timeoutMs: 10_000 }): Promise<string> {
  const r = await run(argv, opts);
  if (r.code !== 0) throw new Error(`${argv.join(" ")}: ${r.timedOut ? `timed out after ${opts.timeoutMs} ms` : `exit ${r.code}`}: ${(r.stderr || r.stdout).trim().slice(0, 400)}`);
  return r.stdout;
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/** Where `ip netns` keeps namespaces and their per-namespace /etc files. */
export const NETNS_RUN = "/run/netns";
export const NETNS_ETC = "/etc/netns";
/** Every journey namespace's resolv.conf: its own loopback, answered by nothing, so no name lookup leaves it. */
export const LOOPBACK_RESOLVER = "nameserver 127.0.0.1\noptions timeout:1 attempts:1\n";

export interface Pod {
  /** Network namespace. */
  readonly netns: string;
  readonly hostname: string;
  /** The image: the root file system the pod's processes run in (chroot). */
  readonly image: string;
  /** Host folders the pod sees at their own paths (the journey's work folder: files it writes for the pod's commands). */
  readonly shared: readonly string[];
  /** The pod's own directory: run/, spool/, etc-slurm/ are mounted over /run, /var/spool, /etc/slurm. */
  readonly root: string;
  /** false: a pod of an image without Slurm's folders (ArgoCD's), whose volumes are all in `binds`. */
  readonly slurmDirs?: false;
  /** The tenant's shared file system, mounted at /mnt/efs when set. */
  readonly efs?: string;
  /** A directory holding the tenant's passwd and group, mounted over /etc's when set (its identity source's stand-in). */
  readonly identity?: string;
  /** Further host folders mounted at paths of the image (a pod's other volumes: its logs). */
  readonly binds?: readonly { readonly from: string; readonly to: string; readonly readOnly?: boolean }[];
  /** The image read-only beneath the pod's mounts (a container's readOnlyRootFilesystem). */
  readonly readOnlyRoot?: boolean;
}

/** Mount points a pod's processes see its own directories at. */
export const POD_MOUNTS = { run: "/run", spool: "/var/spool", etc: "/etc/slurm", efs: "/mnt/efs" } as const;

/** The NSS files a pod's identity directory holds. */
export const IDENTITY_FILES = ["passwd", "group"] as const;

/** Makes the pod's directories. */
export function preparePod(pod: Pod, spoolDirs: readonly string[] = []): void {
  for (const d of ["run", "etc-slurm", "spool", ...spoolDirs.map((s) => `spool/${s}`)]) fs.mkdirSync(path.join(pod.root, d), { recursive: true, mode: 0o755 });
}

/** A word for sh, whatever it holds. */
export function quote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * Where `p` lies inside `image` on the machine, its symbolic links followed as they resolve
 * inside the image (a chroot's view: an absolute link starts again at the image's root), so a
 * mount point is never looked up through a link that names a folder of the machine (the
 * ArgoCD image's /var/run is a link to /run). Reads the image's links; the rest need not exist.
 */
export function inImagePath(image: string, p: string): string {
  const rest = p.split("/").filter(Boolean);
  const done: string[] = [];
  for (let hops = 0; rest.length > 0; ) {
    const part = rest.shift() as string;
    if (part === ".") continue;
    if (part === "..") {
      done.pop();
      continue;
    }
    const here = path.join(image, ...done, part);
    let link: string | undefined;
    try {
      link = fs.lstatSync(here).isSymbolicLink() ? fs.readlinkSync(here) : undefined;
    } catch {
      link = undefined;
    }
    if (link === undefined) {
      done.push(part);
      continue;
    }
    if (++hops > 40) throw new Error(`${p} in ${image}: too many symbolic links`);
    rest.unshift(...link.split("/").filter(Boolean));
    if (link.startsWith("/")) done.length = 0;
  }
  return path.join(image, ...done);
}

/** The shell commands that mount the image's kernel file systems, a private /tmp (unless `tmp` is false: a read-only image's /tmp is its own, or a volume) and the shared folders (a private mount namespace). */
function imageMounts(image: string, shared: readonly string[], tmp = true): string[] {
  const at = (p: string) => quote(path.join(image, p));
  return [
    `mount -t proc proc ${at("/proc")}`,
    `mount --rbind /sys ${at("/sys")}`,
    `mount --rbind /dev ${at("/dev")}`,
    ...(tmp ? [`mount -t tmpfs -o mode=1777 journey-tmp ${at("/tmp")}`] : []),
    ...shared.flatMap((d) => [`mkdir -p ${at(d)}`, `mount --bind ${quote(d)} ${at(d)}`]),
  ];
}

/** The argv that runs `argv` in `image` with `shared` at their own paths, with no network (an init container's command). */
export function inImage(image: string, shared: readonly string[], argv: readonly string[]): string[] {
  const script = [...imageMounts(image, shared), `exec chroot ${quote(image)} "$@"`].join(" && ");
  // A network namespace of its own (loopback down): an init container's command needs none.
  return ["unshare", "--mount", "--net", "--propagation", "private", "sh", "-c", script, "sh", ...argv];
}

/** The argv that runs `argv` inside the pod. */
export function inPod(pod: Pod, argv: readonly string[]): string[] {
  // Names as `ip netns exec` would give them, without its fresh /sys (slurmd reads /sys/fs/cgroup).
  const etc = path.join(NETNS_ETC, pod.netns);
  const at = (p: string) => quote(path.join(pod.image, p));
  const mounts = [
    // Read-only: the image bound over itself, every mount below on top, then made read-only.
    ...(pod.readOnlyRoot ? [`mount --bind ${quote(pod.image)} ${quote(pod.image)}`] : []),
    ...imageMounts(pod.image, pod.shared, !pod.readOnlyRoot),
    `mount --bind ${quote(path.join(etc, "hosts"))} ${at("/etc/hosts")}`,
    `mount --bind ${quote(path.join(etc, "resolv.conf"))} ${at("/etc/resolv.conf")}`,
    ...(pod.slurmDirs === false ? [] : [
      `mount --bind ${quote(path.join(pod.root, "run"))} ${at(POD_MOUNTS.run)}`,
      `mount --bind ${quote(path.join(pod.root, "spool"))} ${at(POD_MOUNTS.spool)}`,
      `mount --bind ${quote(path.join(pod.root, "etc-slurm"))} ${at(POD_MOUNTS.etc)}`,
    ]),
    ...(pod.identity ? IDENTITY_FILES.map((f) => `mount --bind ${quote(path.join(pod.identity as string, f))} ${at(`/etc/${f}`)}`) : []),
    // A file (a subPath) over the image's file; a folder over the image's, made when the image has none.
    ...(pod.binds ?? []).flatMap((b) => {
      const to = quote(inImagePath(pod.image, b.to));
      return [`{ [ -e ${to} ] || mkdir -p ${to}; }`, `mount --bind ${quote(b.from)} ${to}`, ...(b.readOnly ? [`mount -o remount,bind,ro ${to}`] : [])];
    }),
    // The image's /mnt stays as made: a private tmpfs over it holds the mount point.
    ...(pod.efs ? [`mount -t tmpfs journey-mnt ${at("/mnt")}`, `mkdir -p ${at(POD_MOUNTS.efs)}`, `mount --bind ${quote(pod.efs)} ${at(POD_MOUNTS.efs)}`] : []),
    ...(pod.readOnlyRoot ? [`mount -o remount,bind,ro ${quote(pod.image)}`] : []),
    `hostname ${quote(pod.hostname)}`,
    `exec chroot ${quote(pod.image)} "$@"`,
  ].join(" && ");
  return ["nsenter", `--net=${path.join(NETNS_RUN, pod.netns)}`, "unshare", "--mount", "--uts", "--propagation", "private", "sh", "-c", mounts, "sh", ...argv];
}

export interface Daemon {
  readonly name: string;
  readonly pid: number;
  readonly log: string;
  /** Set once it has exited. */
  exit?: { code: number | null; signal: NodeJS.Signals | null };
}

/** Starts daemons and stops every one of them, whatever happened in between. */
export class Supervisor {
  private readonly children: { daemon: Daemon; child: ChildProcess }[] = [];

  constructor(private readonly logDir: string) {
    fs.mkdirSync(logDir, { recursive: true });
  }

  /** Starts a foreground daemon in a pod; its stdout and stderr go to `<logDir>/<name>.log`. */
  start(name: string, pod: Pod, argv: readonly string[]): Daemon {
    return this.startCommand(name, inPod(pod, argv));
  }

  /** Starts a foreground command as given (already placed in its namespaces); output as `start`'s. */
  startCommand(name: string, full: readonly string[]): Daemon {
    const log = path.join(this.logDir, `${name}.log`);
    const fd = fs.openSync(log, "a");
    const child = spawn(full[0], full.slice(1), { detached: true, stdio: ["ignore", fd, fd] });
    fs.closeSync(fd);
    if (child.pid === undefined) throw new Error(`could not start ${name}`);
    const daemon: Daemon = { name, pid: child.pid, log };
    child.on("exit", (code, signal) => (daemon.exit = { code, signal }));
    child.on("error", () => (daemon.exit = { code: -1, signal: null }));
    this.children.push({ daemon, child });
    return daemon;
  }

  get daemons(): readonly Daemon[] {
    return this.children.map((c) => c.daemon);
  }

  /** SIGTERM to one daemon's process group, SIGKILL after `graceMs`; resolves once it has exited. */
  async stop(daemon: Daemon, graceMs = 5000): Promise<void> {
    if (daemon.exit) return;
    killGroup(daemon.pid, "SIGTERM");
    if (await waitFor(async () => (daemon.exit ? true : undefined), graceMs, 50)) return;
    killGroup(daemon.pid, "SIGKILL");
    await waitFor(async () => (daemon.exit ? true : undefined), 2000, 50);
  }

  /** SIGTERM to every daemon's process group, then SIGKILL to what is left after `graceMs`. */
  async stopAll(graceMs = 3000): Promise<void> {
    const live = () => this.children.filter((c) => !c.daemon.exit);
    for (const c of live()) killGroup(c.daemon.pid, "SIGTERM");
    const deadline = Date.now() + graceMs;
    while (live().length > 0 && Date.now() < deadline) await sleep(100);
    for (const c of live()) killGroup(c.daemon.pid, "SIGKILL");
    const hard = Date.now() + 2000;
    while (live().length > 0 && Date.now() < hard) await sleep(50);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls `probe` until it returns a value or `timeoutMs` passes (then undefined). */
export async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs: number, everyMs = 250): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() >= deadline) return undefined;
    await sleep(everyMs);
  }
}

/** The last lines of a log, for a failed step's detail. */
export function tail(file: string, lines = 3): string {
  try {
    return fs.readFileSync(file, "utf8").trim().split("\n").slice(-lines).join(" | ");
  } catch {
    return "(no log)";
  }
}
