import * as pulumi from "@pulumi/pulumi";
import * as cloudwatch from "@pulumi/aws/cloudwatch";
import * as iam from "@pulumi/aws/iam";
import * as lambda from "@pulumi/aws/lambda";
import * as secretsmanager from "@pulumi/aws/secretsmanager";
import * as sqs from "@pulumi/aws/sqs";
import { EVENT_QUEUE, EVENT_RULES, SHIPPER, SHIPPER_ENV } from "../../facts/connector-events";
import { regionalServiceHost } from "../../facts/connector-network";
import type { Partition } from "../../facts/regions";
import { arn, policyDocument, serviceTrust, toJson, type PolicyDocument } from "../security/iam";
import { bundleHandler, EVENT_SHIPPER, LAMBDA_NODE_RUNTIME } from "./bundle";
import type { AccountScope } from "../security/scope";

export interface EventPipelineArgs extends AccountScope {
  /** The ParallelCluster's name: every resource name derives from it. */
  readonly clusterName: string;
  /** The head node: its state is the cluster's, and only its state changes are forwarded. */
  readonly headNodeInstanceId: string;
  /** The head node's instance role: the job hooks send with it. */
  readonly headNodeRoleName: string;
  /** Where the shipper posts events. */
  readonly apiUrl: string;
  /** Key that encrypts the queues, the token secret and the log group. */
  readonly kmsKeyArn: pulumi.Input<string>;
}

/** Days the shipper's logs are kept. */
const LOG_RETENTION_DAYS = 30;

/** ARN patterns of an IAM role by name, with or without a path (ParallelCluster puts its roles under one). */
export function roleArnPatterns(partition: string, accountId: string, roleName: string): string[] {
  return [`arn:${partition}:iam::${accountId}:role/${roleName}`, `arn:${partition}:iam::${accountId}:role/*/${roleName}`];
}

/**
 * Queue policy: only this stack's EventBridge rules and the head node's role may send
 * (everyone else is denied, even with an IAM grant), and only over TLS.
 */
export function queuePolicy(p: { queueArn: string; ruleArns: readonly string[]; accountId: string; partition: string; headNodeRoleName: string }): PolicyDocument {
  const headNodeRole = roleArnPatterns(p.partition, p.accountId, p.headNodeRoleName);
  return policyDocument(
    {
      Sid: "EventBridgeRulesSend",
      Effect: "Allow",
      Principal: { Service: "events.amazonaws.com" },
      Action: "sqs:SendMessage",
      Resource: p.queueArn,
      Condition: { ArnEquals: { "aws:SourceArn": p.ruleArns } },
    },
    {
      Sid: "HeadNodeSends",
      Effect: "Allow",
      Principal: { AWS: `arn:${p.partition}:iam::${p.accountId}:root` },
      Action: "sqs:SendMessage",
      Resource: p.queueArn,
      Condition: { ArnLike: { "aws:PrincipalArn": headNodeRole } },
    },
    {
      Sid: "NoOtherSenders",
      Effect: "Deny",
      Principal: "*",
      Action: "sqs:SendMessage",
      Resource: p.queueArn,
      // Both must hold to deny: neither the head node's role nor one of these rules.
      Condition: { ArnNotLike: { "aws:PrincipalArn": headNodeRole }, ArnNotEquals: { "aws:SourceArn": p.ruleArns } },
    },
    { Sid: "TlsOnly", Effect: "Deny", Principal: "*", Action: "sqs:*", Resource: p.queueArn, Condition: { Bool: { "aws:SecureTransport": false } } },
  );
}

/** The shipper's permissions: its queue, its log group, its API token, the key for both. */
export function shipperPolicy(p: { queueArn: string; logGroupArn: string; kmsKeyArn: string; tokenSecretArn: string; region: string; partition: Partition }): PolicyDocument {
  return policyDocument(
    { Sid: "ConsumeQueue", Effect: "Allow", Action: ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"], Resource: p.queueArn },
    { Sid: "WriteLogs", Effect: "Allow", Action: ["logs:CreateLogStream", "logs:PutLogEvents"], Resource: `${p.logGroupArn}:log-stream:*` },
    { Sid: "ReadApiToken", Effect: "Allow", Action: "secretsmanager:GetSecretValue", Resource: p.tokenSecretArn },
    {
      Sid: "DecryptQueueMessagesAndToken",
      Effect: "Allow",
      Action: "kms:Decrypt",
      Resource: p.kmsKeyArn,
      Condition: { StringEquals: { "kms:ViaService": ["sqs", "secretsmanager"].map((service) => regionalServiceHost(p.partition, p.region, service)) } },
    },
  );
}

/**
 * Cluster events to the API: EventBridge rules feed an encrypted SQS queue (with a
 * dead-letter queue), drained by a small Lambda that ships metadata-only events.
 */
export class EventPipeline extends pulumi.ComponentResource {
  public readonly queueArn: pulumi.Output<string>;
  public readonly queueUrl: pulumi.Output<string>;
  public readonly deadLetterQueueArn: pulumi.Output<string>;
  public readonly tokenSecretArn: pulumi.Output<string>;

  constructor(name: string, args: EventPipelineArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:connector:EventPipeline", name, {}, opts);
    const child = { parent: this };
    const base = `clusterra-${args.clusterName}-events`;
    const encryption = { kmsMasterKeyId: args.kmsKeyArn, kmsDataKeyReusePeriodSeconds: 300 };

    const dlq = new sqs.Queue(`${name}-dlq`, { name: `${base}-dlq`, messageRetentionSeconds: EVENT_QUEUE.deadLetterRetentionSeconds, ...encryption }, child);
    const queue = new sqs.Queue(
      `${name}-queue`,
      {
        name: base,
        visibilityTimeoutSeconds: EVENT_QUEUE.visibilityTimeoutSeconds,
        messageRetentionSeconds: EVENT_QUEUE.messageRetentionSeconds,
        receiveWaitTimeSeconds: EVENT_QUEUE.receiveWaitTimeSeconds,
        redrivePolicy: dlq.arn.apply((deadLetterTargetArn) => JSON.stringify({ deadLetterTargetArn, maxReceiveCount: EVENT_QUEUE.maxReceiveCount })),
        ...encryption,
      },
      child,
    );
    new sqs.RedriveAllowPolicy(
      `${name}-dlq-source`,
      { queueUrl: dlq.url, redriveAllowPolicy: queue.arn.apply((a) => JSON.stringify({ redrivePermission: "byQueue", sourceQueueArns: [a] })) },
      child,
    );

    const identity = { clusterName: args.clusterName, headNodeInstanceId: args.headNodeInstanceId };
    const rules = EVENT_RULES.map((rule) => {
      const r = new cloudwatch.EventRule(`${name}-${rule.id}`, { name: `${base}-${rule.id}`, description: `${args.clusterName}: ${rule.description}`, eventPattern: JSON.stringify(rule.pattern(identity)) }, child);
      new cloudwatch.EventTarget(`${name}-${rule.id}`, { rule: r.name, arn: queue.arn }, child);
      return r;
    });
    new sqs.QueuePolicy(
      `${name}-queue-policy`,
      {
        queueUrl: queue.url,
        policy: pulumi
          .all([queue.arn, pulumi.all(rules.map((r) => r.arn)), args.accountId])
          .apply(([queueArn, ruleArns, accountId]) => toJson(queuePolicy({ queueArn, ruleArns, accountId, partition: args.partition, headNodeRoleName: args.headNodeRoleName }))),
      },
      child,
    );

    // The API issues the token when the connector is registered; the operator puts it here once.
    const token = new secretsmanager.Secret(
      `${name}-api-token`,
      { name: `clusterra/${args.clusterName}/api-token`, description: `${args.clusterName}: the event shipper's API token`, kmsKeyId: args.kmsKeyArn, recoveryWindowInDays: 30 },
      { parent: this, protect: true },
    );
    const functionName = `${base}-shipper`;
    const logGroup = new cloudwatch.LogGroup(`${name}-shipper-logs`, { name: `/aws/lambda/${functionName}`, retentionInDays: LOG_RETENTION_DAYS, kmsKeyId: args.kmsKeyArn }, child);
    const role = new iam.Role(
      `${name}-shipper`,
      {
        name: `${base}-shipper`,
        description: `${args.clusterName} event shipper`,
        assumeRolePolicy: pulumi
          .output(args.accountId)
          .apply((account) => toJson(serviceTrust("lambda.amazonaws.com", account, arn(args.partition, "lambda", args.region, account, `function:${functionName}`)))),
      },
      child,
    );
    const policy = new iam.RolePolicy(
      `${name}-shipper`,
      {
        role: role.name,
        policy: pulumi
          .all([queue.arn, logGroup.arn, args.kmsKeyArn, token.arn])
          .apply(([queueArn, logGroupArn, kmsKeyArn, tokenSecretArn]) => toJson(shipperPolicy({ queueArn, logGroupArn, kmsKeyArn, tokenSecretArn, region: args.region, partition: args.partition }))),
      },
      child,
    );
    const shipper = new lambda.Function(
      `${name}-shipper`,
      {
        name: functionName,
        description: "Ships cluster events (metadata only) to the Clusterra API",
        runtime: LAMBDA_NODE_RUNTIME,
        architectures: ["arm64"],
        handler: "index.handler",
        code: new pulumi.asset.AssetArchive({ "index.js": new pulumi.asset.StringAsset(bundleHandler(EVENT_SHIPPER.source)) }),
        role: role.arn,
        timeout: SHIPPER.timeoutSeconds,
        memorySize: SHIPPER.memoryMb,
        reservedConcurrentExecutions: SHIPPER.reservedConcurrency,
        kmsKeyArn: args.kmsKeyArn,
        environment: {
          variables: {
            [SHIPPER_ENV.apiUrl]: args.apiUrl,
            [SHIPPER_ENV.cluster]: args.clusterName,
            [SHIPPER_ENV.headNodeInstanceId]: args.headNodeInstanceId,
            [SHIPPER_ENV.tokenSecretArn]: token.arn,
          },
        },
        loggingConfig: { logFormat: "JSON", logGroup: logGroup.name },
        tracingConfig: { mode: "PassThrough" },
      },
      { parent: this, dependsOn: [policy] },
    );
    new lambda.EventSourceMapping(
      `${name}-shipper`,
      {
        eventSourceArn: queue.arn,
        functionName: shipper.arn,
        batchSize: SHIPPER.batchSize,
        maximumBatchingWindowInSeconds: SHIPPER.batchingWindowSeconds,
        functionResponseTypes: ["ReportBatchItemFailures"],
        scalingConfig: { maximumConcurrency: SHIPPER.reservedConcurrency },
      },
      child,
    );

    this.queueArn = queue.arn;
    this.queueUrl = queue.url;
    this.deadLetterQueueArn = dlq.arn;
    this.tokenSecretArn = token.arn;
    this.registerOutputs({ queueArn: this.queueArn, deadLetterQueueArn: this.deadLetterQueueArn, tokenSecretArn: this.tokenSecretArn });
  }
}
