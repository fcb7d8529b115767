/**
 * The bundled event shipper (dist/event-shipper/index.js, what the Lambda runs) against a
 * real HTTP server on 127.0.0.1 with faults: nothing is reported done that the server did
 * not accept, nothing is lost, and no field outside an event's schema reaches the server.
 */
import * as assert from "node:assert/strict";
import type { SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { bundleHandler, EVENT_SHIPPER, writeShipperBundle } from "../components/connector/bundle";
import { PROJECT_ROOT } from "../config";
import { cacheDir } from "../facts/project";
import { COMMON_EVENT_FIELDS, EVENT_FIELDS, EVENT_QUEUE, HOOK_DETAIL_TYPE, HOOK_EVENT_SOURCE, SHIPPER, SHIPPER_ENV, type PlatformEventType } from "../facts/connector-events";
import { startFakeApi, shipperEnvironment, type FakeApi, type Fault } from "./connector-api-server";

const CLUSTER = "demo-pcluster";
const HEAD = "i-0a1b2c3d4e5f67890";
/** Short limits so faults resolve in milliseconds: the handler reads them from its environment. */
const FAST = { [SHIPPER_ENV.requestTimeoutMs]: "500", [SHIPPER_ENV.budgetMs]: "2000", [SHIPPER_ENV.retryBaseMs]: "5", [SHIPPER_ENV.maxAttempts]: "3" };

type Handler = (event: SQSEvent) => Promise<SQSBatchResponse>;

/** A fresh copy of the bundle: a new cold start, with no token cached. */
function coldStart(bundle: string): Handler {
  delete require.cache[require.resolve(bundle)];
  return (require(bundle) as { handler: Handler }).handler;
}

let seq = 0;
function record(body: unknown, messageId = `m-${++seq}`): SQSRecord {
  return { messageId, body: typeof body === "string" ? body : JSON.stringify(body) } as SQSRecord;
}
const spot = (instance: string) => ({ id: `ev-${++seq}`, source: "aws.ec2", "detail-type": "EC2 Spot Instance Interruption Warning", time: "2026-11-23T10:00:00Z", region: "us-east-1", account: "444455556666", resources: [`arn:aws:ec2:us-east-1:444455556666:instance/${instance}`], detail: { "instance-id": instance, "instance-action": "terminate" } });
const job = (event: string, extra: Record<string, unknown> = {}) => ({
  id: `${CLUSTER}/${++seq}/0/${event}`, source: HOOK_EVENT_SOURCE, "detail-type": HOOK_DETAIL_TYPE, time: "2026-11-23T10:00:00Z",
  detail: { event, jobId: String(seq), user: "alice", partition: "queue1", nodes: "queue1-dy-c5-[1-2]", exitCode: 0, state: "COMPLETED", ...extra },
});
const failed = (r: SQSBatchResponse) => r.batchItemFailures.map((f) => f.itemIdentifier).sort();

describe("event shipper (bundled, against a local API)", function () {
  this.timeout(20000);
  let bundle: string;
  let api: FakeApi;
  let restore: () => void;
  let handler: Handler;
  const errors = console.error;

  before(async () => {
    bundle = writeShipperBundle();
    api = await startFakeApi(CLUSTER);
    restore = shipperEnvironment(api, CLUSTER, HEAD, FAST);
    handler = coldStart(bundle);
    console.error = () => undefined;
  });
  after(async () => {
    console.error = errors;
    restore();
    await api.close();
  });
  beforeEach(() => {
    api.script = [];
    api.fallback = "ok";
    api.accepted.clear();
    api.deliveries.clear();
  });

  it("ships a batch in one signed request and reports nothing failed when the API accepts it all", async () => {
    const before = api.requests.count;
    const records = [record(spot("i-1")), record(job("job.started")), record(job("job.completed"))];
    assert.deepEqual(await handler({ Records: records }), { batchItemFailures: [] });
    assert.equal(api.requests.count - before, 1);
    assert.equal(api.accepted.size, 3);
    assert.equal(api.requests.badSignatures, 0);
  });

  it("reads the API token once per cold start", async () => {
    const reads = api.requests.secretReads;
    const fresh = coldStart(bundle);
    await fresh({ Records: [record(spot("i-2"))] });
    await fresh({ Records: [record(spot("i-3"))] });
    assert.equal(api.requests.secretReads - reads, 1);
  });

  it("retries 5xx answers and connection resets within the invocation", async () => {
    api.script = ["5xx", "reset"];
    const records = [record(spot("i-4")), record(job("job.failed", { exitCode: 1, state: "FAILED" }))];
    assert.deepEqual(await handler({ Records: records }), { batchItemFailures: [] });
    assert.equal(api.accepted.size, 2);
  });

  it("waits a short Retry-After, and fails the batch instead of waiting past its deadline", async () => {
    api.script = [{ status: 429, retryAfter: 0 }];
    assert.deepEqual(await handler({ Records: [record(spot("i-5"))] }), { batchItemFailures: [] });
    api.script = [{ status: 429, retryAfter: 120 }];
    const records = [record(spot("i-6")), record(spot("i-7"))];
    const started = Date.now();
    assert.deepEqual(failed(await handler({ Records: records })), records.map((r) => r.messageId).sort());
    assert.ok(Date.now() - started < 2000, "it returned without sleeping through Retry-After");
  });

  it("gives up on a hanging API within its budget and reports every event failed", async () => {
    api.fallback = "hang";
    process.env[SHIPPER_ENV.requestTimeoutMs] = "150";
    try {
      const records = [record(spot("i-8")), record(job("job.started"))];
      assert.deepEqual(failed(await handler({ Records: records })), records.map((r) => r.messageId).sort());
      assert.equal(api.accepted.size, 0);
      assert.ok(api.requests.count >= 3, "each attempt timed out and was retried");
    } finally {
      process.env[SHIPPER_ENV.requestTimeoutMs] = FAST[SHIPPER_ENV.requestTimeoutMs];
    }
  });

  it("stops before the Lambda's own deadline when the context says little time is left", async () => {
    api.fallback = "hang";
    const records = [record(spot("i-d1"))];
    const started = Date.now();
    const result = await (handler as unknown as (e: SQSEvent, c: { getRemainingTimeInMillis(): number }) => Promise<SQSBatchResponse>)({ Records: records }, { getRemainingTimeInMillis: () => SHIPPER.deadlineReserveMs + 100 });
    assert.deepEqual(failed(result), [records[0].messageId]);
    assert.ok(Date.now() - started < 400, "it kept the reserve for answering SQS");
  });

  it("fails exactly the events a partial acceptance left out", async () => {
    api.script = ["partial"];
    api.fallback = "5xx";
    const records = [0, 1, 2, 3].map((i) => record(spot(`i-p${i}`)));
    assert.deepEqual(failed(await handler({ Records: records })), [records[1].messageId, records[3].messageId].sort());
  });

  it("counts a 2xx without a list of accepted ids as nothing accepted", async () => {
    for (const fault of ["bare-2xx", "garbage-2xx"] as Fault[]) {
      api.fallback = fault;
      const records = [record(spot("i-9"))];
      assert.deepEqual(failed(await handler({ Records: records })), [records[0].messageId]);
    }
  });

  it("fails malformed and unmappable records alone, and ships the rest", async () => {
    const bad = [
      record("not json"),
      record("[1,2]"),
      record({ id: "x", source: "aws.ec2", "detail-type": "EC2 Instance State-change Notification", time: "t", detail: { "instance-id": "i-other", state: "running" } }),
      record({ id: "y", source: "aws.ec2", "detail-type": "EC2 Instance State-change Notification", time: "t", detail: { "instance-id": HEAD, state: "pending" } }),
      record(job("job.exploded")),
      record({ ...job("job.started"), detail: { event: "job.started" } }),
    ];
    const good = [record(spot("i-10")), record({ id: "z", source: "aws.ec2", "detail-type": "EC2 Instance State-change Notification", time: "t", region: "us-east-1", detail: { "instance-id": HEAD, state: "stopped" } })];
    assert.deepEqual(failed(await handler({ Records: [...bad, ...good] })), bad.map((r) => r.messageId).sort());
    assert.deepEqual([...api.accepted.values()].map((e) => e.type).sort(), ["cluster.state.stopped", "node.spot_interrupted"]);
  });

  it("sends only the fields of each event's schema: metadata, never a job's content", async () => {
    const leaky = { script: "#!/bin/bash\nrm -rf /", command: "secret-sauce", environment: { TOKEN: "x" }, workDir: "/home/alice", stdout: "out" };
    const records = [
      record(job("job.started", leaky)),
      record(job("job.completed", leaky)),
      record({ ...spot("i-11"), detail: { "instance-id": "i-11", "instance-action": "terminate", ...leaky } }),
      record({ id: "asg-1", source: "aws.autoscaling", "detail-type": "EC2 Instance Launch Successful", time: "t", region: "us-east-1", detail: { EC2InstanceId: "i-12", AutoScalingGroupName: `${CLUSTER}-compute`, Details: { "Subnet ID": "subnet-1" }, ...leaky } }),
    ];
    assert.deepEqual(await handler({ Records: records }), { batchItemFailures: [] });
    for (const event of api.accepted.values()) {
      const allowed = new Set<string>([...COMMON_EVENT_FIELDS, ...EVENT_FIELDS[event.type as PlatformEventType]]);
      assert.deepEqual(Object.keys(event).filter((k) => !allowed.has(k)), [], `${event.type} carried extra fields`);
      assert.doesNotMatch(JSON.stringify(event), /rm -rf|secret-sauce|TOKEN|home\/alice/);
    }
    assert.deepEqual([...api.accepted.values()].find((e) => e.type === "node.launched"), { id: "asg-1", type: "node.launched", cluster: CLUSTER, time: "t", region: "us-east-1", instanceId: "i-12", autoScalingGroup: `${CLUSTER}-compute` });
  });

  it("loses nothing under random faults: every event is accepted or dead-lettered, redeliveries are harmless", async () => {
    // SQS, simulated: failed records come back until their fourth receive sends them to the DLQ.
    let random = 42;
    const next = () => ((random = (random * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const faults: Fault[] = ["ok", "ok", "5xx", "reset", "partial", "bare-2xx", { status: 429, retryAfter: 0 }, "hang"];
    const events = Array.from({ length: 60 }, (_, i) => (i % 7 === 0 ? "not json" : i % 2 ? spot(`i-r${i}`) : job("job.completed")));
    let queue = events.map((body, i) => ({ ...record(body, `r-${i}`), receives: 0 }));
    const done = new Set<string>();
    const dead = new Set<string>();
    api.fallback = "ok";
    for (let round = 0; round < 20 && queue.length > 0; round++) {
      api.script = Array.from({ length: 8 }, () => faults[Math.floor(next() * faults.length)]);
      const batch = queue.slice(0, 10);
      for (const r of batch) r.receives++;
      const result = failed(await handler({ Records: batch }));
      for (const r of batch) if (!result.includes(r.messageId)) done.add(r.messageId);
      queue = [...queue.slice(10), ...batch.filter((r) => result.includes(r.messageId) && r.receives < EVENT_QUEUE.maxReceiveCount)];
      for (const r of batch) if (result.includes(r.messageId) && r.receives >= EVENT_QUEUE.maxReceiveCount) dead.add(r.messageId);
    }
    assert.equal(queue.length, 0, "the simulation drained the queue");
    const acceptedIds = new Set(api.accepted.keys());
    events.forEach((body, i) => {
      const id = typeof body === "string" ? undefined : body.id;
      const messageId = `r-${i}`;
      if (done.has(messageId)) assert.ok(id && acceptedIds.has(id), `${messageId} was reported done but the API never accepted it`);
      else assert.ok(dead.has(messageId), `${messageId} was neither shipped nor dead-lettered`);
    });
    for (let i = 0; i < events.length; i += 7) assert.ok(dead.has(`r-${i}`), "malformed records reach the dead-letter queue");
    assert.ok([...api.deliveries.values()].some((n) => n > 1), "some events were delivered twice and stored once");
  });
});

describe("the shipper's bundle", function () {
  this.timeout(60_000);

  it("is bundled again when a file esbuild read changes, and kept otherwise", () => {
    // A repository of its own: the handler's sources, the packages they import.
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "bundle-"));
    for (const dir of ["components/connector/event-shipper", "facts", "tsconfig.json"]) fs.cpSync(path.join(PROJECT_ROOT, dir), path.join(root, dir), { recursive: true });
    fs.symlinkSync(path.join(PROJECT_ROOT, "node_modules"), path.join(root, "node_modules"));
    // The same bundle a plan without the cache makes; the second time without esbuild (a kept input list).
    const first = bundleHandler(EVENT_SHIPPER.source, root);
    assert.equal(first, bundleHandler(EVENT_SHIPPER.source, PROJECT_ROOT));
    const saved = fs.readdirSync(cacheDir(root, "lambda"));
    assert.equal(saved.length, 1);
    const entry = JSON.parse(fs.readFileSync(path.join(cacheDir(root, "lambda"), saved[0]), "utf8")) as { inputs: Record<string, string> };
    for (const f of [EVENT_SHIPPER.source, "facts/connector-events.ts"]) assert.ok(Object.keys(entry.inputs).includes(f), `${f} not among ${Object.keys(entry.inputs).join(", ")}`);
    assert.equal(bundleHandler(EVENT_SHIPPER.source, root), first);
    // New TypeScript settings bundle again: without strict, no "use strict".
    assert.match(first, /^"use strict";/);
    fs.writeFileSync(path.join(root, "tsconfig.json"), "{}\n");
    assert.doesNotMatch(bundleHandler(EVENT_SHIPPER.source, root), /^"use strict";/);
    // A changed source is bundled again: its text is in the new bundle.
    fs.appendFileSync(path.join(root, EVENT_SHIPPER.source), "\nexport const bundleMarker = \"changed-source-7f3a\";\n");
    assert.match(bundleHandler(EVENT_SHIPPER.source, root), /changed-source-7f3a/);
  });
});
