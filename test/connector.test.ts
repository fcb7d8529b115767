/**
 * The connector stack's plan: the seed's inventory, each part as scoped as it promises.
 * IAM documents are proved by evaluating requests against them (iam-simulate).
 */
import * as assert from "node:assert/strict";
import { RESOURCE_LIMITS } from "../facts/aws-limits";
import { idleCost } from "../planning/cost";
import { endpointsFor } from "../components/connector/no-internet";
import { headNodeSendPolicy } from "../components/connector/access";
import { EVENT_QUEUE, EVENT_RULES, SHIPPER } from "../facts/connector-events";
import { connectorBridgeRoleName, connectorExternalId, controlPlaneRoleName, latticeServiceName, NO_INTERNET_SLURM_DNS, SLURMRESTD } from "../facts/connector-network";
import { byType, json, named, plan } from "./helpers";
import type { DeploymentResource } from "../planning/deployment";
import { decide } from "../access/iam-sim";

const ACCOUNT = "444455556666";
const CENTRAL = "111122223333";
const HEAD = "i-0a1b2c3d4e5f67890";
const BRIDGE = `arn:aws:iam::${CENTRAL}:role/${connectorBridgeRoleName("dev")}`;
const PC_ROLE = "demo-pcluster-RoleHeadNode-1A2B3C4D5E6F";

/** One request against identity and resource policies, as AWS would evaluate it (over TLS unless said). */
function simulate(p: { principal: string; action: string; resource: string; resourceAccount?: string; identity?: unknown[]; resourcePolicy?: unknown; context?: Record<string, string | string[]> }): Promise<string> {
  return decide({ ...p, identity: p.identity ?? [], resourceAccount: p.resourceAccount ?? ACCOUNT, context: { "aws:SecureTransport": "true", ...p.context } });
}

const policyOf = (r: DeploymentResource, field = "policy") => json(r.inputs?.[field]);

describe("connector stack (connector-demo)", function () {
  this.timeout(60000);

  it("queues events with the inventory's settings, encrypted, and a dead-letter queue after three receives", async () => {
    const p = await plan("connector-demo");
    const queue = named(p, "aws:sqs/queue:Queue", "connector-demo-pcluster-queue");
    const dlq = named(p, "aws:sqs/queue:Queue", "connector-demo-pcluster-dlq");
    assert.deepEqual([queue.inputs?.visibilityTimeoutSeconds, queue.inputs?.messageRetentionSeconds, queue.inputs?.receiveWaitTimeSeconds], [60, 86400, 20]);
    assert.equal(dlq.inputs?.messageRetentionSeconds, 604800);
    assert.deepEqual(json(queue.inputs?.redrivePolicy), { deadLetterTargetArn: dlq.outputs?.arn, maxReceiveCount: 3 });
    const key = byType(p, "aws:kms/key:Key")[0];
    for (const q of [queue, dlq]) assert.equal(q.inputs?.kmsMasterKeyId, key.outputs?.arn);
  });

  it("feeds the queue from the three rules, narrowed to this cluster where a pattern can be", async () => {
    const p = await plan("connector-demo");
    const rules = byType(p, "aws:cloudwatch/eventRule:EventRule");
    const identity = { clusterName: "demo-pcluster", headNodeInstanceId: HEAD };
    assert.deepEqual(rules.map((r) => json(r.inputs?.eventPattern)), EVENT_RULES.map((r) => r.pattern(identity)));
    assert.deepEqual(json<{ detail: Record<string, unknown> }>(rules[0].inputs?.eventPattern).detail["instance-id"], [HEAD]);
    assert.deepEqual(json<{ detail: Record<string, unknown> }>(rules[1].inputs?.eventPattern).detail.AutoScalingGroupName, [{ prefix: "demo-pcluster-" }]);
    const queue = named(p, "aws:sqs/queue:Queue", "connector-demo-pcluster-queue");
    for (const target of byType(p, "aws:cloudwatch/eventTarget:EventTarget")) assert.equal(target.inputs?.arn, queue.outputs?.arn);
  });

  it("lets only its rules and the head node's role send to the queue, and only over TLS", async () => {
    const p = await plan("connector-demo");
    const queue = String(named(p, "aws:sqs/queue:Queue", "connector-demo-pcluster-queue").outputs?.arn);
    const queuePolicy = policyOf(byType(p, "aws:sqs/queuePolicy:QueuePolicy")[0]);
    const headNodeGrant = policyOf(named(p, "aws:iam/rolePolicy:RolePolicy", "connector-demo-pcluster-head-node-send"));
    const rule = String(byType(p, "aws:cloudwatch/eventRule:EventRule")[2].outputs?.arn);
    const send = (principal: string, extra: Partial<Parameters<typeof simulate>[0]> = {}) => simulate({ principal, action: "sqs:SendMessage", resource: queue, resourcePolicy: queuePolicy, ...extra });

    assert.equal(await send("events.amazonaws.com", { context: { "aws:SourceArn": rule, "aws:SourceAccount": ACCOUNT } }), "Allowed");
    assert.notEqual(await send("events.amazonaws.com", { context: { "aws:SourceArn": `arn:aws:events:us-east-1:${ACCOUNT}:rule/someone-elses` } }), "Allowed");
    // ParallelCluster keeps its roles under a path: both spellings of the role are the head node's.
    for (const role of [`arn:aws:iam::${ACCOUNT}:role/${PC_ROLE}`, `arn:aws:iam::${ACCOUNT}:role/parallelcluster/demo-pcluster/${PC_ROLE}`]) {
      assert.equal(await send(role, { identity: [headNodeGrant] }), "Allowed", role);
      assert.equal(await send(role, { identity: [headNodeGrant], context: { "aws:SecureTransport": "false" } }), "ExplicitlyDenied");
    }
    const admin = { Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: "sqs:*", Resource: "*" }] };
    assert.equal(await send(`arn:aws:iam::${ACCOUNT}:role/admin`, { identity: [admin] }), "ExplicitlyDenied", "an IAM grant alone does not let others send");
  });

  it("gives the head node's role only SendMessage on the events queue (and the key through SQS)", async () => {
    const p = await plan("connector-demo");
    const grant = named(p, "aws:iam/rolePolicy:RolePolicy", "connector-demo-pcluster-head-node-send");
    assert.equal(grant.inputs?.role, PC_ROLE);
    const policy = policyOf(grant);
    const queue = String(named(p, "aws:sqs/queue:Queue", "connector-demo-pcluster-queue").outputs?.arn);
    const dlq = String(named(p, "aws:sqs/queue:Queue", "connector-demo-pcluster-dlq").outputs?.arn);
    const keyResource = byType(p, "aws:kms/key:Key")[0];
    const key = String(keyResource.outputs?.arn);
    const role = `arn:aws:iam::${ACCOUNT}:role/${PC_ROLE}`;
    const can = (action: string, resource: string, context: Record<string, string> = {}) =>
      simulate({ principal: role, action, resource, identity: [policy], context, ...(resource === key ? { resourcePolicy: policyOf(keyResource) } : {}) });
    assert.equal(await can("sqs:SendMessage", queue), "Allowed");
    for (const [action, resource] of [["sqs:SendMessage", dlq], ["sqs:ReceiveMessage", queue], ["sqs:PurgeQueue", queue], ["sqs:DeleteMessage", queue]]) assert.equal(await can(action, resource), "ImplicitlyDenied", `${action} ${resource}`);
    assert.equal(await can("kms:GenerateDataKey", key, { "kms:ViaService": "sqs.us-east-1.amazonaws.com" }), "Allowed");
    assert.equal(await can("kms:Decrypt", key, { "kms:ViaService": "s3.us-east-1.amazonaws.com" }), "ImplicitlyDenied");
  });

  it("drains it with a bounded Lambda whose role reads only its queue, its token and writes only its logs", async () => {
    const p = await plan("connector-demo");
    const [fn] = byType(p, "aws:lambda/function:Function");
    assert.deepEqual([fn.inputs?.runtime, fn.inputs?.memorySize, fn.inputs?.timeout, fn.inputs?.reservedConcurrentExecutions, fn.inputs?.handler], ["nodejs22.x", 128, 30, SHIPPER.reservedConcurrency, "index.handler"]);
    const token = byType(p, "aws:secretsmanager/secret:Secret")[0];
    assert.equal((fn.inputs?.environment as { variables: Record<string, string> }).variables.CLUSTERRA_TOKEN_SECRET, token.outputs?.arn);
    assert.equal(token.protect, true);
    const [mapping] = byType(p, "aws:lambda/eventSourceMapping:EventSourceMapping");
    assert.deepEqual(mapping.inputs?.functionResponseTypes, ["ReportBatchItemFailures"]);
    assert.ok(Number(mapping.inputs?.batchSize) > 1);
    const policy = policyOf(named(p, "aws:iam/rolePolicy:RolePolicy", "connector-demo-pcluster-shipper"));
    const role = String(named(p, "aws:iam/role:Role", "connector-demo-pcluster-shipper").outputs?.arn);
    const queue = String(named(p, "aws:sqs/queue:Queue", "connector-demo-pcluster-queue").outputs?.arn);
    const dlq = String(named(p, "aws:sqs/queue:Queue", "connector-demo-pcluster-dlq").outputs?.arn);
    const can = (action: string, resource: string) => simulate({ principal: role, action, resource, identity: [policy] });
    for (const a of ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"]) assert.equal(await can(a, queue), "Allowed");
    assert.equal(await can("sqs:ReceiveMessage", dlq), "ImplicitlyDenied");
    assert.equal(await can("sqs:SendMessage", queue), "ImplicitlyDenied");
    assert.equal(await can("secretsmanager:GetSecretValue", String(token.outputs?.arn)), "Allowed");
    assert.equal(await can("secretsmanager:GetSecretValue", `arn:aws:secretsmanager:us-east-1:${ACCOUNT}:secret:clusterra/demo-pcluster/slurm-jwt-AbCdEf`), "ImplicitlyDenied");
  });

  it("lets only the control plane's bridge role, with the ExternalId, assume the cross-account role, which reads only the JWT secret", async () => {
    const p = await plan("connector-demo");
    const role = named(p, "aws:iam/role:Role", "connector-demo-pcluster-control-plane");
    const trust = policyOf(role, "assumeRolePolicy");
    const roleArn = String(role.outputs?.arn);
    const callerGrant = { Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: "sts:AssumeRole", Resource: "*" }] };
    const assume = (principal: string, externalId?: string) =>
      simulate({ principal, action: "sts:AssumeRole", resource: roleArn, identity: [callerGrant], resourcePolicy: trust, context: externalId ? { "sts:ExternalId": externalId } : {} });
    assert.equal(await assume(BRIDGE, connectorExternalId("dev", "demo-pcluster")), "Allowed");
    assert.notEqual(await assume(BRIDGE), "Allowed");
    assert.notEqual(await assume(BRIDGE, connectorExternalId("dev", "other-cluster")), "Allowed");
    assert.notEqual(await assume(`arn:aws:iam::${CENTRAL}:role/clusterra-dev-cluster-api`, connectorExternalId("dev", "demo-pcluster")), "Allowed");
    assert.notEqual(await assume(`arn:aws:iam::999988887777:role/${connectorBridgeRoleName("dev")}`, connectorExternalId("dev", "demo-pcluster")), "Allowed");

    const policy = policyOf(named(p, "aws:iam/rolePolicy:RolePolicy", "connector-demo-pcluster-control-plane"));
    const can = (action: string, resource: string) => simulate({ principal: roleArn, action, resource, identity: [policy] });
    assert.equal(await can("secretsmanager:GetSecretValue", `arn:aws:secretsmanager:us-east-1:${ACCOUNT}:secret:clusterra/demo-pcluster/slurm-jwt-AbCdEf`), "Allowed");
    assert.equal(await can("secretsmanager:GetSecretValue", `arn:aws:secretsmanager:us-east-1:${ACCOUNT}:secret:clusterra/demo-pcluster/slurm-jwt-extra-AbCdEf`), "ImplicitlyDenied");
    assert.equal(await can("secretsmanager:GetSecretValue", String(byType(p, "aws:secretsmanager/secret:Secret")[0].outputs?.arn)), "ImplicitlyDenied");
    assert.equal(await can("secretsmanager:PutSecretValue", `arn:aws:secretsmanager:us-east-1:${ACCOUNT}:secret:clusterra/demo-pcluster/slurm-jwt-AbCdEf`), "ImplicitlyDenied");
  });

  it("puts slurmrestd behind a Lattice service with IAM auth, shared with the control plane's account only", async () => {
    const p = await plan("connector-demo");
    const [service] = byType(p, "aws:vpclattice/service:Service");
    assert.equal(service.inputs?.authType, "AWS_IAM");
    const [group] = byType(p, "aws:vpclattice/targetGroup:TargetGroup");
    const config = group.inputs?.config as Record<string, unknown>;
    assert.deepEqual([group.inputs?.type, config.port, config.protocol, config.vpcIdentifier], ["INSTANCE", SLURMRESTD.port, "HTTP", "vpc-0a1b2c3d4e5f67890"]);
    assert.deepEqual(byType(p, "aws:vpclattice/targetGroupAttachment:TargetGroupAttachment")[0].inputs?.target, { id: HEAD, port: SLURMRESTD.port });
    const [listener] = byType(p, "aws:vpclattice/listener:Listener");
    assert.deepEqual([listener.inputs?.protocol, listener.inputs?.port, listener.inputs?.serviceIdentifier], ["HTTPS", 443, service.outputs?.id]);
    assert.deepEqual(listener.inputs?.defaultAction, { forwards: [{ targetGroups: [{ targetGroupIdentifier: group.outputs?.id, weight: 100 }] }] });

    const auth = byType(p, "aws:vpclattice/authPolicy:AuthPolicy")[0];
    assert.equal(auth.inputs?.resourceIdentifier, service.outputs?.arn);
    const invoke = (principal: string, ownerAccount: string) =>
      simulate({ principal, action: "vpc-lattice-svcs:Invoke", resource: `${service.outputs?.arn}/api/slurm/v0.0.40/jobs`, resourcePolicy: policyOf(auth), identity: [{ Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: "vpc-lattice-svcs:Invoke", Resource: "*" }] }], context: { "vpc-lattice-svcs:SourceVpcOwnerAccount": ownerAccount } });
    assert.equal(await invoke(BRIDGE, CENTRAL), "Allowed");
    assert.notEqual(await invoke(BRIDGE, "999988887777"), "Allowed");
    assert.notEqual(await invoke(`arn:aws:iam::${CENTRAL}:role/anyone-else`, CENTRAL), "Allowed");
    assert.notEqual(await invoke(`arn:aws:iam::${ACCOUNT}:role/admin`, ACCOUNT), "Allowed");

    const [share] = byType(p, "aws:ram/resourceShare:ResourceShare");
    assert.equal(share.inputs?.allowExternalPrincipals, true);
    assert.deepEqual(byType(p, "aws:ram/resourceAssociation:ResourceAssociation").map((a) => [a.inputs?.resourceShareArn, a.inputs?.resourceArn]), [[share.outputs?.arn, service.outputs?.arn]]);
    assert.deepEqual(byType(p, "aws:ram/principalAssociation:PrincipalAssociation").map((a) => [a.inputs?.resourceShareArn, a.inputs?.principal]), [[share.outputs?.arn, CENTRAL]]);
  });

  it("deploys into the customer's account with the managed-by tags on every resource, and costs about what the seed says", async () => {
    const p = await plan("connector-demo");
    const [provider] = byType(p, "pulumi:providers:aws");
    assert.deepEqual(json<string[]>(provider.inputs?.allowedAccountIds), [ACCOUNT]);
    assert.equal(json<{ tags: Record<string, string> }>(provider.inputs?.defaultTags).tags["managed-by"], "clusterra");
    assert.equal(byType(p, "aws:ec2/vpcEndpoint:VpcEndpoint").length, 0, "subnets with internet need no endpoints");
    const cost = idleCost(p.deployment).totalUsd;
    assert.ok(cost >= 18 && cost <= 22, `idle cost $${cost} is outside the seed's $18-22`);
    const patch = p.fleetFiles.find((f) => f.endsWith("parallelcluster-patch.yaml"));
    assert.ok(patch);
  });
});

describe("connector settings", () => {
  it("fits every attempt, its backoff and the answer to SQS inside the shipper's Lambda timeout", () => {
    let worst = SHIPPER.deadlineReserveMs;
    for (let attempt = 1; attempt <= SHIPPER.maxAttempts; attempt++) worst += SHIPPER.requestTimeoutMs + (attempt < SHIPPER.maxAttempts ? SHIPPER.retryBaseMs * 2 ** (attempt - 1) : 0);
    assert.ok(worst <= SHIPPER.timeoutSeconds * 1000, `${worst} ms of attempts in a ${SHIPPER.timeoutSeconds} s function`);
    assert.ok(SHIPPER.timeoutSeconds <= EVENT_QUEUE.visibilityTimeoutSeconds, "SQS hides a batch for longer than the function may run");
  });

  it("keeps every generated name within AWS limits for the longest valid cluster name", () => {
    const longest = "c".repeat(29);
    assert.ok(latticeServiceName(longest).length <= (RESOURCE_LIMITS.find((l) => l.types.includes("aws:vpclattice/service:Service"))?.max ?? 0));
    assert.ok(controlPlaneRoleName(longest).length <= 64, "IAM role names stop at 64");
    for (const rule of EVENT_RULES) assert.ok(`clusterra-${longest}-events-${rule.id}`.length <= 64, "EventBridge rule names stop at 64");
  });

  it("scopes KMS use through SQS with the partition's endpoint names", () => {
    const doc = headNodeSendPolicy({ queueArn: "arn:aws-cn:sqs:cn-north-1:1:q", kmsKeyArn: "arn:aws-cn:kms:cn-north-1:1:key/k", region: "cn-north-1", partition: "aws-cn" });
    assert.deepEqual(doc.Statement[1].Condition, { StringEquals: { "kms:ViaService": "sqs.cn-north-1.amazonaws.com.cn" } });
  });
});

describe("connector stack without internet (connector-offline)", function () {
  this.timeout(60000);

  it("adds the seed's endpoints and the hooks' SQS endpoint, interface ones behind a group open only to the cluster on 443", async () => {
    const p = await plan("connector-offline");
    const endpoints = byType(p, "aws:ec2/vpcEndpoint:VpcEndpoint").map((e) => [e.inputs?.serviceName, e.inputs?.vpcEndpointType]);
    assert.deepEqual(endpoints.sort(), [
      ["com.amazonaws.us-east-1.cloudformation", "Interface"], ["com.amazonaws.us-east-1.dynamodb", "Gateway"], ["com.amazonaws.us-east-1.ec2", "Interface"],
      ["com.amazonaws.us-east-1.logs", "Interface"], ["com.amazonaws.us-east-1.s3", "Gateway"], ["com.amazonaws.us-east-1.secretsmanager", "Interface"], ["com.amazonaws.us-east-1.sqs", "Interface"],
    ]);
    const [group] = byType(p, "aws:ec2/securityGroup:SecurityGroup");
    for (const e of byType(p, "aws:ec2/vpcEndpoint:VpcEndpoint")) {
      if (e.inputs?.vpcEndpointType === "Interface") assert.deepEqual([e.inputs?.securityGroupIds, e.inputs?.privateDnsEnabled, e.inputs?.subnetIds], [[group.outputs?.id], true, ["subnet-0b2c3d4e5f6a78901"]]);
      else assert.deepEqual(e.inputs?.routeTableIds, ["rtb-0b2c3d4e5f6a78901"]);
    }
    const rules = byType(p, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule").map((r) => [r.inputs?.securityGroupId, r.inputs?.referencedSecurityGroupId, r.inputs?.fromPort, r.inputs?.toPort, r.inputs?.cidrIpv4]);
    assert.deepEqual(rules, [[group.outputs?.id, "sg-0b2c3d4e5f6a78901", 443, 443, undefined], [group.outputs?.id, "sg-0e1d2c3b4a5f67890", 443, 443, undefined]]);
    assert.equal(byType(p, "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule").length, 0);
  });

  it("names endpoint services per partition: China prefixes cloudformation and ec2 with cn.", () => {
    const names = (partition: "aws" | "aws-cn" | "aws-us-gov", region: string, directory = false) => endpointsFor(partition, region, directory).map((e) => e.serviceName);
    assert.deepEqual(names("aws-cn", "cn-north-1"), ["com.amazonaws.cn-north-1.logs", "cn.com.amazonaws.cn-north-1.cloudformation", "cn.com.amazonaws.cn-north-1.ec2", "com.amazonaws.cn-north-1.sqs", "com.amazonaws.cn-north-1.s3", "com.amazonaws.cn-north-1.dynamodb"]);
    assert.ok(names("aws-us-gov", "us-gov-west-1").every((n) => n.startsWith("com.amazonaws.us-gov-west-1.")));
    assert.ok(names("aws", "eu-west-1", true).includes("com.amazonaws.eu-west-1.secretsmanager"));
    assert.ok(!names("aws", "eu-west-1").includes("com.amazonaws.eu-west-1.secretsmanager"));
  });

  it("writes the ParallelCluster settings the mode needs as a patch, and the hooks' settings", async () => {
    const p = await plan("connector-offline");
    const fs = await import("fs");
    const path = await import("path");
    const { parse } = await import("yaml");
    const patch = parse(fs.readFileSync(path.join(String(p.fleetRoot), "fleet/connector/offline-pcluster/parallelcluster-patch.yaml"), "utf8"));
    assert.deepEqual(patch.Scheduling.SlurmSettings.Dns, NO_INTERNET_SLURM_DNS);
    const env = fs.readFileSync(path.join(String(p.fleetRoot), "fleet/connector/offline-pcluster/connector.env"), "utf8");
    assert.match(env, /^CLUSTERRA_QUEUE_URL=https:\/\/sqs\.us-east-1\.amazonaws\.com\/555566667777\/clusterra-offline-pcluster-events$/m);
    const demo = await plan("connector-demo");
    const demoPatch = parse(fs.readFileSync(path.join(String(demo.fleetRoot), "fleet/connector/demo-pcluster/parallelcluster-patch.yaml"), "utf8"));
    assert.equal(demoPatch.Scheduling.SlurmSettings.Dns, undefined);
  });
});
