/**
 * A sandbox for the Slurm job hook: a fake AWS CLI first on PATH that succeeds, fails or
 * hangs, and settings, log and spool paths in a temporary folder. Used by the hook's tests
 * and by the benchmark.
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { PROJECT_ROOT } from "../config";

export const HOOK = path.join(PROJECT_ROOT, "components/connector/hooks/clusterra-job-event");

/** A fake AWS CLI: FAKE_AWS_MODE ok | fail | hang; records each body it delivered. */
const FAKE_AWS = `#!/bin/bash
echo "$$" >> "$FAKE_AWS_DIR/started"
case "$FAKE_AWS_MODE" in
  ok)
    for arg in "$@"; do case "$arg" in file://*) cat "\${arg#file://}" > "$FAKE_AWS_DIR/.body-$$" && mv "$FAKE_AWS_DIR/.body-$$" "$FAKE_AWS_DIR/body-$$.json" ;; esac; done
    echo "mid-$$"; exit 0 ;;
  fail) echo "Could not connect to the endpoint URL" >&2; exit 255 ;;
  hang) sleep 30; echo "$$" >> "$FAKE_AWS_DIR/finished"; exit 0 ;;
esac
`;

export interface HookSandbox {
  readonly dir: string;
  readonly env: NodeJS.ProcessEnv;
  run(context: string, slurm: Record<string, string>, mode: "ok" | "fail" | "hang"): { status: number | null };
  spooled(): string[];
  bodies(): Record<string, unknown>[];
  log(): string;
}

export function hookSandbox(): HookSandbox {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "clusterra-hook-"));
  fs.mkdirSync(path.join(dir, "bin"));
  fs.writeFileSync(path.join(dir, "bin", "aws"), FAKE_AWS, { mode: 0o755 });
  fs.writeFileSync(path.join(dir, "connector.env"), "CLUSTERRA_CLUSTER=demo-pcluster\nCLUSTERRA_REGION=us-east-1\nCLUSTERRA_QUEUE_URL=https://sqs.us-east-1.amazonaws.com/444455556666/clusterra-demo-pcluster-events\n");
  const env: NodeJS.ProcessEnv = {
    PATH: `${path.join(dir, "bin")}:${process.env.PATH}`,
    FAKE_AWS_DIR: dir,
    CLUSTERRA_HOOK_SETTINGS: path.join(dir, "connector.env"),
    CLUSTERRA_HOOK_LOG: path.join(dir, "log", "job-events.log"),
    CLUSTERRA_HOOK_SPOOL: path.join(dir, "spool"),
    CLUSTERRA_HOOK_TIMEOUT: "0.5",
  };
  const spoolDir = path.join(dir, "spool");
  return {
    dir,
    env,
    run: (context, slurm, mode) => spawnSync(HOOK, [], { env: { ...env, FAKE_AWS_MODE: mode, SLURM_SCRIPT_CONTEXT: context, ...slurm }, stdio: "ignore", timeout: 10_000 }),
    spooled: () => (fs.existsSync(spoolDir) ? fs.readdirSync(spoolDir).filter((f) => f.endsWith(".json")) : []),
    bodies: () => fs.readdirSync(dir).filter((f) => f.startsWith("body-")).map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), "utf8"))),
    log: () => (fs.existsSync(env.CLUSTERRA_HOOK_LOG as string) ? fs.readFileSync(env.CLUSTERRA_HOOK_LOG as string, "utf8") : ""),
  };
}

