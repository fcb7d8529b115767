/** kubectl against one of the journey's clusters, as its admin or as a given identity. */
import { execFile, spawn } from "child_process";

export interface KubectlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface KubectlOptions {
  /** Text on standard input (`-f -`). */
  readonly input?: string;
  /** Impersonate this user (e.g. system:serviceaccount:ns:name). */
  readonly as?: string;
  /** Use this kubeconfig instead of the cluster's admin one. */
  readonly kubeconfig?: string;
  readonly timeoutMs?: number;
}

export class Kubectl {
  constructor(readonly binary: string, readonly kubeconfig: string) {}

  run(args: readonly string[], o: KubectlOptions = {}): Promise<KubectlResult> {
    const full = ["--kubeconfig", o.kubeconfig ?? this.kubeconfig, ...(o.as ? ["--as", o.as] : []), ...args];
    return new Promise((resolve) => {
      const child = execFile(this.binary, full, { timeout: o.timeoutMs ?? 60_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
        const code = error ? (typeof (error as { code?: unknown }).code === "number" ? ((error as { code: number }).code) : 1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      });
      if (o.input !== undefined) child.stdin?.end(o.input);
    });
  }

  /** `kubectl get -o json`, parsed; undefined when the object does not exist. */
  async get<T = Record<string, unknown>>(args: readonly string[], o: KubectlOptions = {}): Promise<T | undefined> {
    const r = await this.run(["get", ...args, "-o", "json"], o);
    if (r.code !== 0) return undefined;
    return JSON.parse(r.stdout) as T;
  }

  /**
   * `kubectl get <resource> -A --watch -o <output>`: calls `changed` with each line it prints
   * (the objects listed first, then one per event: added, changed or deleted) until stopped;
   * `ended` tells whether the watch has ended (the resource not served yet, the server gone),
   * so that its owner can start it again.
   */
  watch(resource: string, changed: (line: string) => void, output = "name"): { stop: () => void; ended: () => boolean } {
    const child = spawn(this.binary, ["--kubeconfig", this.kubeconfig, "get", resource, "-A", "--watch", "-o", output], { stdio: ["ignore", "pipe", "ignore"] });
    let done = false;
    let rest = "";
    child.stdout.on("data", (chunk: Buffer) => {
      const lines = (rest + chunk.toString()).split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) if (line.trim()) changed(line);
    });
    child.on("exit", () => (done = true));
    child.on("error", () => (done = true));
    return { stop: () => void child.kill(), ended: () => done };
  }

  /** `kubectl auth can-i` as someone: whether the API allows it. */
  async can(as: string, verb: string, resource: string, namespace?: string, subresource?: string): Promise<boolean> {
    const r = await this.run(["auth", "can-i", verb, resource, ...(subresource ? ["--subresource", subresource] : []), ...(namespace ? ["-n", namespace] : ["--all-namespaces"])], { as });
    return r.stdout.trim() === "yes";
  }
}
