/**
 * The Slurm job hook with a fake `aws` on PATH that succeeds, fails or hangs: the hook
 * always exits 0 before the send finishes, sends only the event's fields, and keeps what it
 * could not send for the next run.
 */
import * as assert from "node:assert/strict";
import { execFileSync, spawnSync } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { toPlatformEvent } from "../components/connector/event-shipper/handler";
import { COMMON_EVENT_FIELDS, EVENT_FIELDS, HOOK_DETAIL_TYPE, HOOK_EVENT_SOURCE, type PlatformEventType } from "../facts/connector-events";
import { HOOK_INSTALL } from "../facts/connector-network";
import { HOOK, hookSandbox, type HookSandbox } from "./connector-hook-sandbox";

/** Polls (bounded: 100 tries of 50 ms) until the condition holds. */
async function until(what: string, condition: () => boolean): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (condition()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`timed out waiting until ${what}`);
}

const JOB = { SLURM_JOB_ID: "4242", SLURM_JOB_USER: "alice", SLURM_JOB_PARTITION: "queue1", SLURM_JOB_NODELIST: "queue1-dy-c5-[1-2]", SLURM_RESTART_COUNT: "0" };

describe("Slurm job hook (fake aws on PATH)", function () {
  this.timeout(20000);
  const sandboxes: HookSandbox[] = [];
  const sandbox = () => {
    const s = hookSandbox();
    sandboxes.push(s);
    return s;
  };
  after(() => {
    for (const s of sandboxes) fs.rmSync(s.dir, { recursive: true, force: true });
  });

  it("is shellcheck-clean", function () {
    const found = spawnSync("shellcheck", ["--version"], { stdio: "ignore" });
    if (found.error) {
      console.log("      (skipped: shellcheck is not installed; run `bash scripts/install-tools`)");
      this.skip();
    }
    execFileSync("shellcheck", [HOOK], { stdio: "pipe" });
  });

  it("sends job.started with only the event's fields when AWS answers", async () => {
    const s = sandbox();
    assert.equal(s.run("prolog_slurmctld", { ...JOB, SLURM_JOB_COMMAND: "/home/alice/secret.sh", SLURM_JOB_WORK_DIR: "/home/alice" }, "ok").status, 0);
    await until("the spool is sent", () => s.spooled().length === 0 && s.bodies().length === 1 && /sent /.test(s.log()));
    const [body] = s.bodies() as { id: string; source: string; "detail-type": string; detail: Record<string, unknown> }[];
    assert.deepEqual([body.id, body.source, body["detail-type"]], ["demo-pcluster/4242/0/job.started", HOOK_EVENT_SOURCE, HOOK_DETAIL_TYPE]);
    assert.deepEqual(body.detail, { event: "job.started", jobId: "4242", user: "alice", partition: "queue1", nodes: "queue1-dy-c5-[1-2]", state: "RUNNING" });
    const allowed = new Set<string>(["event", ...COMMON_EVENT_FIELDS, ...EVENT_FIELDS["job.started" as PlatformEventType]]);
    assert.deepEqual(Object.keys(body.detail).filter((k) => !allowed.has(k)), []);
    assert.doesNotMatch(JSON.stringify(body), /secret\.sh|home\/alice/);
    assert.match(s.log(), /sent .*4242-0-job\.started\.json/);
    // What the hook sends is what the shipper maps.
    assert.deepEqual(toPlatformEvent(body, { cluster: "demo-pcluster", headNodeInstanceId: "i-0" }), {
      id: body.id, type: "job.started", cluster: "demo-pcluster", time: (body as unknown as { time: string }).time, jobId: "4242", user: "alice", partition: "queue1", nodes: "queue1-dy-c5-[1-2]", state: "RUNNING",
    });
  });

  it("reports the end as job.completed or job.failed with the exit code", async () => {
    const s = sandbox();
    s.run("epilog_slurmctld", { ...JOB, SLURM_JOB_EXIT_CODE2: "0:0" }, "ok");
    s.run("epilog_slurmctld", { ...JOB, SLURM_JOB_ID: "4243", SLURM_JOB_EXIT_CODE2: "3:0" }, "ok");
    s.run("epilog_slurmctld", { ...JOB, SLURM_JOB_ID: "4244", SLURM_JOB_EXIT_CODE: String(9) }, "ok");
    await until("three events are sent", () => s.bodies().length === 3 && s.spooled().length === 0);
    const byJob = Object.fromEntries(s.bodies().map((b) => [(b.detail as Record<string, unknown>).jobId, b.detail as Record<string, unknown>]));
    assert.deepEqual([byJob["4242"].event, byJob["4242"].exitCode, byJob["4242"].state], ["job.completed", 0, "COMPLETED"]);
    assert.deepEqual([byJob["4243"].event, byJob["4243"].exitCode, byJob["4243"].state], ["job.failed", 3, "FAILED"]);
    assert.deepEqual([byJob["4244"].event, byJob["4244"].exitCode], ["job.failed", 137], "killed by signal 9");
  });

  it("keeps hostile Slurm values out of the JSON structure", async () => {
    const s = sandbox();
    s.run("prolog_slurmctld", { ...JOB, SLURM_JOB_USER: 'al"ice\\", "x": "$(id)', SLURM_JOB_PARTITION: "q1\nq2" }, "ok");
    await until("the event is sent", () => s.bodies().length === 1);
    const detail = s.bodies()[0].detail as Record<string, unknown>;
    assert.deepEqual([detail.user, detail.partition, detail.x], ["alice,x:id", "q1q2", undefined]);
  });

  it("returns at once while AWS hangs, gives up after its timeout and keeps the event", async () => {
    const s = sandbox();
    assert.equal(s.run("prolog_slurmctld", JOB, "hang").status, 0);
    // The hook has exited; the send it started is still hanging.
    await until("the fake aws started", () => fs.existsSync(path.join(s.dir, "started")));
    assert.ok(!fs.existsSync(path.join(s.dir, "finished")));
    await until("the send times out", () => /send timed out after 0.5s/.test(s.log()));
    assert.equal(s.spooled().length, 1);
    assert.ok(!fs.existsSync(path.join(s.dir, "finished")), "the hanging send was killed, not waited for");
  });

  it("exits 0 when AWS refuses, and sends the kept events with the next job's hook", async () => {
    const s = sandbox();
    assert.equal(s.run("prolog_slurmctld", JOB, "fail").status, 0);
    await until("the failure is logged", () => /send failed \(exit 255\)/.test(s.log()));
    assert.equal(s.spooled().length, 1);
    assert.equal(s.run("epilog_slurmctld", { ...JOB, SLURM_JOB_EXIT_CODE2: "0:0" }, "ok").status, 0);
    await until("both are sent", () => s.spooled().length === 0 && s.bodies().length >= 2);
    assert.deepEqual(s.bodies().map((b) => (b.detail as Record<string, unknown>).event).sort(), ["job.completed", "job.started"]);
  });

  it("exits 0 and queues nothing without settings or outside slurmctld", () => {
    const s = sandbox();
    fs.rmSync(s.env.CLUSTERRA_HOOK_SETTINGS as string);
    assert.equal(s.run("prolog_slurmctld", JOB, "ok").status, 0);
    assert.match(s.log(), /settings missing/);
    assert.equal(s.run("prolog", {}, "ok").status, 0);
    assert.equal(s.spooled().length, 0);
    assert.equal(spawnSync(HOOK, [], { env: { ...s.env, SLURM_SCRIPT_CONTEXT: "" }, stdio: "ignore" }).status, 0);
  });

  it("uses the paths the install guide and the ParallelCluster patch name", () => {
    const script = fs.readFileSync(HOOK, "utf8");
    assert.ok(script.includes(`:-${HOOK_INSTALL.settings}}`) && script.includes(`:-${HOOK_INSTALL.log}}`) && script.includes(`:-${HOOK_INSTALL.spool}}`));
    const guide = fs.readFileSync(path.join(path.dirname(HOOK), "README.md"), "utf8");
    for (const p of Object.values(HOOK_INSTALL)) assert.ok(guide.includes(p), p);
  });
});
