import * as pulumi from "@pulumi/pulumi";
import * as cloudwatch from "@pulumi/aws/cloudwatch";
import * as iam from "@pulumi/aws/iam";
import * as lambda from "@pulumi/aws/lambda";
import * as sqs from "@pulumi/aws/sqs";
import { EVENT_QUEUE, EVENT_RULES } from "../../facts/connector-events";
import { arn, policyDocument, serviceTrust, toJson } from "../security/iam";
import { bundleHandler, LAMBDA_NODE_RUNTIME } from "./bundle";
import type { AccountScope } from "../security/scope";

export interface EventPipelineArgs extends AccountScope {
  /** The ParallelCluster's name: every resource name derives from it. */
  readonly clusterName: string;
  /** Where the shipper posts events. */
  readonly apiUrl: string;
  /** Key that encrypts the queues and the log group. */
  readonly kmsKeyArn: pulumi.Input<string>;
}

/** Days the shipper's logs are kept. */
const LOG_RETENTION_DAYS = 30;
/** At most this many shipper instances run at once: the API sees a bounded request rate. */
const SHIPPER_CONCURRENCY = 2;

/** Queue policy: only these EventBridge rules may send, and only over TLS. */
export function queuePolicy(p: { queueArn: string; ruleArns: readonly string[] }): string {
  return toJson(
    policyDocument(
      {
        Sid: "EventBridgeRulesSend",
        Effect: "Allow",
        Principal: { Service: "events.amazonaws.com" },
        Action: "sqs:SendMessage",
        Resource: p.queueArn,
        Condition: { ArnEquals: { "aws:SourceArn": p.ruleArns } },
      },
      { Sid: "TlsOnly", Effect: "Deny", Principal: "*", Action: "sqs:*", Resource: p.queueArn, Condition: { Bool: { "aws:SecureTransport": false } } },
    ),
  );
}

/** The shipper's permissions: its queue, its log group, the key for reading the queue. */
export function shipperPolicy(p: { queueArn: string; logGroupArn: string; kmsKeyArn: string; region: string }): string {
  return toJson(
    policyDocument(
      { Sid: "ConsumeQueue", Effect: "Allow", Action: ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"], Resource: p.queueArn },
      { Sid: "WriteLogs", Effect: "Allow", Action: ["logs:CreateLogStream", "logs:PutLogEvents"], Resource: `${p.logGroupArn}:log-stream:*` },
      {
        Sid: "DecryptQueueMessages",
        Effect: "Allow",
        Action: "kms:Decrypt",
        Resource: p.kmsKeyArn,
        Condition: { StringEquals: { "kms:ViaService": `sqs.${p.region}.amazonaws.com` } },
      },
    ),
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

    const rules = EVENT_RULES.map((rule) => {
      const r = new cloudwatch.EventRule(`${name}-${rule.id}`, { name: `${base}-${rule.id}`, description: `${args.clusterName}: ${rule.description}`, eventPattern: JSON.stringify(rule.pattern) }, child);
      new cloudwatch.EventTarget(`${name}-${rule.id}`, { rule: r.name, arn: queue.arn }, child);
      return r;
    });
    new sqs.QueuePolicy(
      `${name}-queue-policy`,
      { queueUrl: queue.url, policy: pulumi.all([queue.arn, pulumi.all(rules.map((r) => r.arn))]).apply(([queueArn, ruleArns]) => queuePolicy({ queueArn, ruleArns })) },
      child,
    );

    const functionName = `${base}-shipper`;
    const logGroup = new cloudwatch.LogGroup(`${name}-shipper-logs`, { name: `/aws/lambda/${functionName}`, retentionInDays: LOG_RETENTION_DAYS, kmsKeyId: args.kmsKeyArn }, child);
    const role = new iam.Role(
      `${name}-shipper`,
      {
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
          .all([queue.arn, logGroup.arn, args.kmsKeyArn])
          .apply(([queueArn, logGroupArn, kmsKeyArn]) => shipperPolicy({ queueArn, logGroupArn, kmsKeyArn, region: args.region })),
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
        code: new pulumi.asset.AssetArchive({ "index.js": new pulumi.asset.StringAsset(bundleHandler("components/connector/event-shipper/handler.ts")) }),
        role: role.arn,
        timeout: 30,
        memorySize: 128,
        reservedConcurrentExecutions: SHIPPER_CONCURRENCY,
        kmsKeyArn: args.kmsKeyArn,
        environment: { variables: { API_URL: args.apiUrl, CLUSTER_NAME: args.clusterName } },
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
        batchSize: 10,
        maximumBatchingWindowInSeconds: 5,
        functionResponseTypes: ["ReportBatchItemFailures"],
        scalingConfig: { maximumConcurrency: SHIPPER_CONCURRENCY },
      },
      child,
    );

    this.queueArn = queue.arn;
    this.queueUrl = queue.url;
    this.deadLetterQueueArn = dlq.arn;
    this.registerOutputs({ queueArn: this.queueArn, deadLetterQueueArn: this.deadLetterQueueArn });
  }
}
