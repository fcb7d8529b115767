/**
 * Connector benchmark: `npx tsc -b && node dist/bench/connector-bench.js [events]`.
 *
 * - Shipper throughput: the bundled event shipper (dist/event-shipper/index.js, batches of
 *   the event source's size) against the stand-in API on 127.0.0.1, beside a naive handler
 *   that POSTs one request per event to the same server, measured in the same run; events
 *   per second, median of 5, each run checked for zero loss (every event accepted, none
 *   reported failed).
 * - Hook return time with AWS unreachable: the Slurm job hook with a fake `aws` that hangs,
 *   beside a bare `bash -c 'exit 0'` (the cost of running any hook at all); median of 15.
 */
import { spawnSync } from "child_process";
import * as fs from "fs";
import type { SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { writeShipperBundle } from "../components/connector/bundle";
import { signature } from "../components/connector/event-shipper/handler";
import { EVENTS_API, SHIPPER, SHIPPER_ENV } from "../facts/connector-events";
import { shipperEnvironment, startFakeApi, TEST_TOKEN, type FakeApi } from "../test/connector-api-server";
import { hookSandbox } from "../test/connector-hook-sandbox";
import { keepToLoopback } from "../test/loopback-only";

// Benchmarks keep every packet on this machine (test/loopback-only.ts).
keepToLoopback();

const RUNS = 5;
const HOOK_RUNS = 15;
const CLUSTER = "bench-pcluster";
const HEAD = "i-0bench0000000000";

type Handler = (event: SQSEvent) => Promise<SQSBatchResponse>;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function records(count: number, run: string): SQSRecord[] {
  return Array.from({ length: count }, (_, i) => ({
    messageId: `${run}-${i}`,
    body: JSON.stringify({ id: `${run}-ev-${i}`, source: "aws.ec2", "detail-type": "EC2 Spot Instance Interruption Warning", time: "2026-11-23T10:00:00Z", region: "us-east-1", detail: { "instance-id": `i-${i}`, "instance-action": "terminate" } }),
  }) as SQSRecord);
}

/** The baseline: one signed POST per event, in order, as a handler without batching would. */
async function naiveHandler(event: SQSEvent, url: string): Promise<SQSBatchResponse> {
  const failures: { itemIdentifier: string }[] = [];
  for (const r of event.Records) {
    const e = JSON.parse(r.body);
    const body = JSON.stringify({ events: [{ id: e.id, type: "node.spot_interrupted", cluster: CLUSTER, time: e.time, instanceId: e.detail["instance-id"], region: e.region, action: e.detail["instance-action"] }] });
    const timestamp = Math.floor(Date.now() / 1000);
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", [EVENTS_API.timestampHeader]: String(timestamp), [EVENTS_API.signatureHeader]: signature(TEST_TOKEN, timestamp, body) },
      body,
    });
    const reply = (await res.json().catch(() => ({}))) as { accepted?: string[] };
    if (!reply.accepted?.includes(e.id)) failures.push({ itemIdentifier: r.messageId });
  }
  return { batchItemFailures: failures };
}

async function throughput(api: FakeApi, total: number, run: string, handle: (e: SQSEvent) => Promise<SQSBatchResponse>): Promise<number> {
  api.accepted.clear();
  const all = records(total, run);
  const started = process.hrtime.bigint();
  let failed = 0;
  for (let i = 0; i < all.length; i += SHIPPER.batchSize) failed += (await handle({ Records: all.slice(i, i + SHIPPER.batchSize) })).batchItemFailures.length;
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (failed > 0 || api.accepted.size !== total) throw new Error(`${run}: lost events (${failed} failed, ${api.accepted.size} of ${total} accepted)`);
  return total / seconds;
}

function hookReturnMs(): { hookMs: number; bareMs: number } {
  const sandbox = hookSandbox();
  const job = { SLURM_JOB_ID: "1", SLURM_JOB_USER: "alice", SLURM_JOB_PARTITION: "queue1", SLURM_JOB_NODELIST: "queue1-dy-c5-1" };
  const time = (f: () => void) => {
    const t = process.hrtime.bigint();
    f();
    return Number(process.hrtime.bigint() - t) / 1e6;
  };
  const hook: number[] = [];
  const bare: number[] = [];
  for (let i = 0; i < HOOK_RUNS; i++) {
    hook.push(time(() => sandbox.run("prolog_slurmctld", { ...job, SLURM_JOB_ID: String(i) }, "hang")));
    bare.push(time(() => spawnSync("bash", ["-c", "exit 0"], { stdio: "ignore" })));
  }
  if (sandbox.spooled().length !== HOOK_RUNS) throw new Error(`hook: ${sandbox.spooled().length} of ${HOOK_RUNS} events kept while AWS hangs`);
  fs.rmSync(sandbox.dir, { recursive: true, force: true });
  return { hookMs: median(hook), bareMs: median(bare) };
}

async function main(): Promise<void> {
  const total = Number(process.argv[2] ?? 2000);
  const bundle = writeShipperBundle();
  const api = await startFakeApi(CLUSTER);
  const restore = shipperEnvironment(api, CLUSTER, HEAD, { [SHIPPER_ENV.requestTimeoutMs]: "5000" });
  const errors = console.error;
  try {
    const { handler } = require(bundle) as { handler: Handler };
    const url = `${api.url}${EVENTS_API.path(CLUSTER)}`;
    // Warm both paths (cold start, token read, connection) before measuring.
    await throughput(api, SHIPPER.batchSize, "warm-shipper", handler);
    await throughput(api, 20, "warm-naive", (e) => naiveHandler(e, url));
    console.error = () => undefined;
    const shipper: number[] = [];
    const naive: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      naive.push(await throughput(api, total, `naive-${run}`, (e) => naiveHandler(e, url)));
      shipper.push(await throughput(api, total, `shipper-${run}`, handler));
    }
    console.error = errors;
    const s = median(shipper);
    const n = median(naive);
    console.log(`connector shipper, ${total} events in batches of ${SHIPPER.batchSize} to a local API (median of ${RUNS}, zero loss each run):`);
    console.log(`  naive, one request per event (baseline): ${n.toFixed(0)} events/s`);
    console.log(`  event shipper (bundled handler):         ${s.toFixed(0)} events/s  (${(s / n).toFixed(1)}x the baseline)`);
  } finally {
    console.error = errors;
    restore();
    await api.close();
  }
  const { hookMs, bareMs } = hookReturnMs();
  console.log(`Slurm job hook with AWS unreachable (fake aws hangs; median of ${HOOK_RUNS}):`);
  console.log(`  bash -c 'exit 0' (baseline):   ${bareMs.toFixed(1)} ms`);
  console.log(`  clusterra-job-event returns in ${hookMs.toFixed(1)} ms  (${(hookMs / bareMs).toFixed(1)}x the baseline; the send goes on in the background)`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
