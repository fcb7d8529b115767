/**
 * The journey's child processes: each started with its log in the run's folder, all of
 * them stopped at the end (and on failure), so a run leaves nothing behind.
 */
import { spawn, type ChildProcess } from "child_process";
import * as fs from "fs";
import * as path from "path";

export class Processes {
  private readonly running: { name: string; child: ChildProcess }[] = [];

  constructor(private readonly logDir: string) {
    fs.mkdirSync(logDir, { recursive: true });
  }

  /** Starts `command args`, output to `<logDir>/<name>.log`; fails fast if it exits at once. */
  start(name: string, command: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): ChildProcess {
    const log = fs.openSync(path.join(this.logDir, `${name}.log`), "w");
    const child = spawn(command, args, { stdio: ["ignore", log, log], env, detached: true });
    fs.closeSync(log);
    this.running.push({ name, child });
    return child;
  }

  /** A process's whole log. */
  log(name: string): string {
    const file = path.join(this.logDir, `${name}.log`);
    return fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
  }

  /** The last lines of a process's log, for a failure's reason. */
  tail(name: string, lines = 5): string {
    return this.log(name).trimEnd().split("\n").slice(-lines).join(" | ");
  }

  /** Whether a started process is still alive. */
  alive(name: string): boolean {
    const p = this.running.find((r) => r.name === name);
    return !!p && p.child.exitCode === null && p.child.signalCode === null;
  }

  /** Stops every process, newest first (SIGTERM, then SIGKILL after 5 s). */
  async stopAll(): Promise<void> {
    for (const { child } of [...this.running].reverse()) {
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) continue;
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        /* already gone */
      }
    }
    const deadline = Date.now() + 5000;
    for (const { child } of this.running) {
      while (child.exitCode === null && child.signalCode === null && Date.now() < deadline) await sleep(100);
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          /* already gone */
        }
      }
    }
    this.running.length = 0;
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `check` until it returns a value (not undefined) or the time runs out. */
export async function waitFor<T>(check: () => Promise<T | undefined>, timeoutMs: number, everyMs = 500): Promise<T | undefined> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() >= deadline) return undefined;
    await sleep(everyMs);
  }
}

/**
 * A controller's log lines where the API server refused it by RBAC (`... is forbidden: User
 * "<who>" cannot <verb> resource|path ...`, namespaced or at the cluster scope). Not an
 * admission refusal that also says "forbidden" (a quota, Pod Security, a webhook): a
 * ResourceQuota counts a create before the store finds the object exists, so a controller
 * re-creating what its stale cache missed reads "exceeded quota" once and finds it on the next
 * try. What a controller made is judged by its objects' conditions instead. Pure.
 */
export function rbacRefusals(log: string): string[] {
  return log.split("\n").filter((l) => /is forbidden: User .{1,300}? cannot \S+ (resource|path) /.test(l));
}
