/**
 * Day 2: the data volume follows the tenants, and alarms page the operator (status checks
 * with recovery, dead letters), each stack's topic encrypted and only its own alarms publishing.
 */
import * as assert from "node:assert/strict";
import { parse } from "yaml";
import { CENTRAL_DATA_VOLUME, dataVolumeGiB, tenantDiskGiB } from "../facts/central-host";
import { json, named, plan } from "./helpers";
import { simulate } from "./sim-request";

describe("the central data volume follows its tenants", function () {
  this.timeout(60000);

  it("holds the host's share and 14 GiB per tenant (slurmctld state and MariaDB), in 10 GiB steps, never below 100 GiB", () => {
    assert.equal(tenantDiskGiB(), 14);
    assert.equal(dataVolumeGiB(0), CENTRAL_DATA_VOLUME.minimumGiB);
    assert.equal(dataVolumeGiB(2), 100);
    assert.equal(dataVolumeGiB(5), 100);
    assert.equal(dataVolumeGiB(18), 290, "the 18 tenants a t4g.2xlarge holds need 30 + 252 GiB");
  });

  it("is planned at that size, and the host grows its file system online when EBS grows the volume", async () => {
    const central = await plan("central-dev");
    const volume = central.deployment.deployment.resources.find((r) => r.type === "aws:ebs/volume:Volume");
    assert.equal(volume?.inputs?.size, dataVolumeGiB(2));
    const host = central.deployment.deployment.resources.find((r) => r.type === "aws:ec2/instance:Instance");
    const userData = parse(String(host?.inputs?.userData).replace(/^#cloud-config\n/, "")) as { write_files: { path: string; content: string }[]; runcmd: unknown[] };
    const timer = userData.write_files.find((f) => f.path === "/etc/systemd/system/clusterra-grow-data.timer");
    const service = userData.write_files.find((f) => f.path === "/etc/systemd/system/clusterra-grow-data.service");
    assert.match(service?.content ?? "", /ExecStart=\/usr\/sbin\/xfs_growfs \/var\/lib\/rancher/);
    assert.match(timer?.content ?? "", /OnUnitActiveSec=15min/);
    assert.ok(userData.runcmd.some((c) => JSON.stringify(c) === JSON.stringify(["systemctl", "enable", "--now", "clusterra-grow-data.timer"])));
  });
});

describe("alarms", function () {
  this.timeout(60000);
  const alarmsOf = (p: Awaited<ReturnType<typeof plan>>) => p.deployment.deployment.resources.filter((r) => r.type === "aws:cloudwatch/metricAlarm:MetricAlarm").map((r) => r.inputs as Record<string, any>);

  it("recover the central host on a failed system check, and page on either check", async () => {
    for (const [stack, instance] of [["central-dev", "central-dev-host"]] as const) {
      const p = await plan(stack);
      const topic = p.deployment.deployment.resources.find((r) => r.type === "aws:sns/topic:Topic");
      const alarms = alarmsOf(p);
      assert.deepEqual(alarms.map((a) => a.metricName).sort(), ["StatusCheckFailed_Instance", "StatusCheckFailed_System"], stack);
      const system = alarms.find((a) => a.metricName === "StatusCheckFailed_System");
      assert.deepEqual(system?.alarmActions, ["arn:aws:automate:us-east-1:ec2:recover", topic?.outputs?.arn], stack);
      assert.equal(system?.dimensions?.InstanceId, p.deployment.deployment.resources.find((r) => r.type === "aws:ec2/instance:Instance")?.outputs?.id, `${stack}: ${instance}`);
      const key = p.deployment.deployment.resources.find((r) => r.type === "aws:kms/key:Key");
      assert.equal(topic?.inputs?.kmsMasterKeyId, key?.outputs?.arn, `${stack}: the topic is encrypted with the stack key`);
    }
  });

  it("cost a tenant's customer nothing: its server is not watched from its own account (the operator would pay through cross-account observability)", async () => {
    assert.deepEqual(alarmsOf(await plan("tenant-acme-dev")), []);
  });

  it("page on any message in the connector's dead-letter queue", async () => {
    const p = await plan("connector-demo");
    const [dlq] = alarmsOf(p);
    assert.equal(dlq.metricName, "ApproximateNumberOfMessagesVisible");
    assert.equal(dlq.dimensions.QueueName, "clusterra-demo-pcluster-events-dlq");
    assert.equal(dlq.threshold, 1);
  });

  it("let only the account's own CloudWatch alarms publish to the topic and use the key (simulated)", async () => {
    const p = await plan("central-dev");
    const topic = p.deployment.deployment.resources.find((r) => r.type === "aws:sns/topic:Topic");
    const policy = named(p, "aws:sns/topicPolicy:TopicPolicy", "central-dev-alarms").inputs?.policy;
    const key = p.deployment.deployment.resources.find((r) => r.type === "aws:kms/key:Key");
    const keyPolicy = json(key?.inputs?.policy);
    const ask = (resource: string, action: string, resourcePolicy: unknown, account: string, sourceArn: string) =>
      simulate({ principal: "cloudwatch.amazonaws.com", action, resource, resourceAccount: "111122223333", resourcePolicy, context: { "aws:SourceAccount": account, "aws:SourceArn": sourceArn } });
    const own = "arn:aws:cloudwatch:us-east-1:111122223333:alarm:clusterra-dev-alarms-host-system-check";
    const theirs = "arn:aws:cloudwatch:us-east-1:444455556666:alarm:x";
    assert.equal(await ask(String(topic?.outputs?.arn), "sns:Publish", policy, "111122223333", own), "Allowed");
    assert.equal(await ask(String(topic?.outputs?.arn), "sns:Publish", policy, "444455556666", theirs), "ImplicitlyDenied");
    assert.equal(await ask(String(key?.outputs?.arn), "kms:GenerateDataKey", keyPolicy, "111122223333", own), "Allowed");
    assert.equal(await ask(String(key?.outputs?.arn), "kms:GenerateDataKey", keyPolicy, "444455556666", theirs), "ImplicitlyDenied");
  });
});
