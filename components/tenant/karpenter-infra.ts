import * as pulumi from "@pulumi/pulumi";
import * as cloudwatch from "@pulumi/aws/cloudwatch";
import * as iam from "@pulumi/aws/iam";
import * as sqs from "@pulumi/aws/sqs";
import { INTERRUPTION_QUEUE_RETENTION_SECONDS, INTERRUPTION_RULES, karpenterQueueName, karpenterRuleName } from "../../facts/karpenter";
import { workerRoleName } from "../../facts/tenant-cluster";
import { ec2Trust, policyDocument, toJson, type Statement } from "../security/iam";
import type { AccountScope } from "../security/scope";
import { ecrPullStatements, sessionManagerStatements } from "./node-iam";

export interface KarpenterInfraArgs extends AccountScope {
  /** The cluster's name: the queue's and the node role's names. */
  readonly clusterName: string;
  /** Stack key: the queue's encryption. */
  readonly kmsKeyArn: pulumi.Input<string>;
  /** What worker nodes need besides ECR and Session Manager (the join token, EFS). */
  readonly nodeStatements: pulumi.Input<Statement[]>;
}

/**
 * What Karpenter needs in AWS besides its controller policy (on the server's role): the
 * worker node role and its instance profile (named in the EC2NodeClass, so Karpenter
 * never creates profiles), and the interruption queue fed by EventBridge.
 */
export class KarpenterInfra extends pulumi.ComponentResource {
  public readonly nodeRoleArn: pulumi.Output<string>;
  public readonly instanceProfileArn: pulumi.Output<string>;
  public readonly instanceProfileName: pulumi.Output<string>;
  public readonly queueArn: pulumi.Output<string>;
  public readonly queueName: pulumi.Output<string>;

  constructor(name: string, args: KarpenterInfraArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:tenant:KarpenterInfra", name, {}, opts);
    const child = { parent: this };
    const nodeRole = new iam.Role(
      `${name}-node`,
      { name: workerRoleName(args.clusterName), description: `Karpenter-made worker nodes of ${args.clusterName}`, assumeRolePolicy: toJson(ec2Trust(args.partition)) },
      child,
    );
    new iam.RolePolicy(
      `${name}-node`,
      {
        role: nodeRole.name,
        policy: pulumi.all([args.accountId, args.nodeStatements]).apply(([accountId, extra]) => {
          const scope = { partition: args.partition, region: args.region, accountId };
          return toJson(policyDocument(...sessionManagerStatements(scope), ...ecrPullStatements(scope), ...extra));
        }),
      },
      child,
    );
    const profile = new iam.InstanceProfile(`${name}-node`, { name: workerRoleName(args.clusterName), role: nodeRole.name }, child);

    const queue = new sqs.Queue(
      `${name}-interruption`,
      { name: karpenterQueueName(args.clusterName), messageRetentionSeconds: INTERRUPTION_QUEUE_RETENTION_SECONDS, kmsMasterKeyId: args.kmsKeyArn, kmsDataKeyReusePeriodSeconds: 300 },
      child,
    );
    new sqs.QueuePolicy(
      `${name}-interruption`,
      {
        queueUrl: queue.url,
        policy: pulumi.all([queue.arn, args.accountId]).apply(([queueArn, accountId]) =>
          toJson(
            policyDocument(
              {
                Sid: "EventBridgeDelivers",
                Effect: "Allow",
                Principal: { Service: ["events.amazonaws.com", "sqs.amazonaws.com"] },
                Action: "sqs:SendMessage",
                Resource: queueArn,
                Condition: { StringEquals: { "aws:SourceAccount": accountId } },
              },
              { Sid: "DenyHTTP", Effect: "Deny", Principal: "*", Action: "sqs:*", Resource: queueArn, Condition: { Bool: { "aws:SecureTransport": "false" } } },
            ),
          ),
        ),
      },
      child,
    );
    for (const rule of INTERRUPTION_RULES) {
      const r = new cloudwatch.EventRule(
        `${name}-${rule.id}`,
        { name: karpenterRuleName(args.clusterName, rule), description: `${rule.detailType} to Karpenter`, eventPattern: JSON.stringify({ source: [rule.source], "detail-type": [rule.detailType] }) },
        child,
      );
      new cloudwatch.EventTarget(`${name}-${rule.id}`, { rule: r.name, targetId: "KarpenterInterruptionQueue", arn: queue.arn }, child);
    }

    this.nodeRoleArn = nodeRole.arn;
    this.instanceProfileArn = profile.arn;
    this.instanceProfileName = profile.name;
    this.queueArn = queue.arn;
    this.queueName = queue.name;
    this.registerOutputs({ nodeRoleArn: this.nodeRoleArn, instanceProfileName: this.instanceProfileName, queueName: this.queueName });
  }
}
