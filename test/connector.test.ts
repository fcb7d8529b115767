import * as assert from "node:assert/strict";
import { toPlatformEvent, handler } from "../components/connector/event-shipper/handler";
import { EVENT_RULES } from "../facts/connector-events";
import { byType, json, named, plan } from "./helpers";
import type { SQSEvent } from "aws-lambda";

describe("connector stack (connector-demo)", function () {
  this.timeout(60000);

  it("queues events with the inventory's settings and a dead-letter queue after three receives", async () => {
    const p = await plan("connector-demo");
    const queue = named(p, "aws:sqs/queue:Queue", "connector-demo-pcluster-queue");
    const dlq = named(p, "aws:sqs/queue:Queue", "connector-demo-pcluster-dlq");
    assert.deepEqual([queue.inputs?.visibilityTimeoutSeconds, queue.inputs?.messageRetentionSeconds, queue.inputs?.receiveWaitTimeSeconds], [60, 86400, 20]);
    assert.equal(dlq.inputs?.messageRetentionSeconds, 604800);
    assert.deepEqual(json(queue.inputs?.redrivePolicy), { deadLetterTargetArn: dlq.outputs?.arn, maxReceiveCount: 3 });
    for (const q of [queue, dlq]) assert.match(String(q.inputs?.kmsMasterKeyId), /^arn:aws:kms:/);
  });

  it("feeds the queue from one EventBridge rule per table row, and only those rules may send", async () => {
    const p = await plan("connector-demo");
    const rules = byType(p, "aws:cloudwatch/eventRule:EventRule");
    assert.deepEqual(rules.map((r) => json(r.inputs?.eventPattern)), EVENT_RULES.map((r) => r.pattern));
    const policy = json<{ Statement: { Sid: string; Condition: Record<string, Record<string, unknown>> }[] }>(byType(p, "aws:sqs/queuePolicy:QueuePolicy")[0].inputs?.policy);
    const send = policy.Statement.find((s) => s.Sid === "EventBridgeRulesSend")!;
    assert.deepEqual(send.Condition.ArnEquals["aws:SourceArn"], rules.map((r) => r.outputs?.arn));
    assert.ok(policy.Statement.some((s) => s.Sid === "TlsOnly"));
  });

  it("drains it with a bounded Lambda whose role reads only its queue and writes only its logs", async () => {
    const p = await plan("connector-demo");
    const [fn] = byType(p, "aws:lambda/function:Function");
    assert.deepEqual([fn.inputs?.runtime, fn.inputs?.reservedConcurrentExecutions, fn.inputs?.handler], ["nodejs22.x", 2, "index.handler"]);
    const [mapping] = byType(p, "aws:lambda/eventSourceMapping:EventSourceMapping");
    assert.deepEqual(mapping.inputs?.functionResponseTypes, ["ReportBatchItemFailures"]);
    const policy = json<{ Statement: { Sid: string; Action: string[]; Resource: string }[] }>(named(p, "aws:iam/rolePolicy:RolePolicy", "connector-demo-pcluster-shipper").inputs?.policy);
    const queue = named(p, "aws:sqs/queue:Queue", "connector-demo-pcluster-queue");
    assert.deepEqual(policy.Statement.find((s) => s.Sid === "ConsumeQueue"), { Sid: "ConsumeQueue", Effect: "Allow", Action: ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"], Resource: queue.outputs?.arn });
  });
});

describe("event shipper", () => {
  const bridge = (detailType: string, detail: Record<string, unknown>) => ({ id: "e1", "detail-type": detailType, time: "2026-11-21T00:00:00Z", region: "us-east-1", detail });

  it("maps EC2, Auto Scaling and Spot events to metadata-only platform events", () => {
    assert.deepEqual(toPlatformEvent(bridge("EC2 Instance State-change Notification", { "instance-id": "i-1", state: "running" }), "c"), {
      type: "node.launched", cluster: "c", time: "2026-11-21T00:00:00Z", region: "us-east-1", instanceId: "i-1", sourceEventId: "e1",
    });
    assert.equal(toPlatformEvent(bridge("EC2 Instance Terminate Successful", { EC2InstanceId: "i-2" }), "c")?.type, "node.terminated");
    assert.equal(toPlatformEvent(bridge("EC2 Spot Instance Interruption Warning", { "instance-id": "i-3" }), "c")?.type, "node.spot_interrupted");
    assert.equal(toPlatformEvent(bridge("EC2 Instance State-change Notification", { state: "pending" }), "c"), undefined);
  });

  it("reports the whole batch as failed when the API refuses it, and nothing when it accepts", async () => {
    const records = [{ messageId: "m1", body: JSON.stringify(bridge("EC2 Spot Instance Interruption Warning", { "instance-id": "i-3" })) }, { messageId: "m2", body: "not json" }];
    const event = { Records: records } as unknown as SQSEvent;
    process.env.API_URL = "https://api.example";
    process.env.CLUSTER_NAME = "demo";
    const realFetch = globalThis.fetch;
    const calls: string[] = [];
    try {
      globalThis.fetch = (async (url: string) => (calls.push(url), new Response("", { status: 503 }))) as typeof fetch;
      const errors = console.error;
      console.error = () => undefined;
      assert.deepEqual(await handler(event), { batchItemFailures: [{ itemIdentifier: "m1" }] });
      console.error = errors;
      globalThis.fetch = (async () => new Response("", { status: 202 })) as unknown as typeof fetch;
      assert.deepEqual(await handler(event), { batchItemFailures: [] });
    } finally {
      globalThis.fetch = realFetch;
    }
    assert.deepEqual(calls, ["https://api.example/v1/connectors/demo/events"]);
  });
});
