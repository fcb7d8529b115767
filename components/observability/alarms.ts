import * as pulumi from "@pulumi/pulumi";
import * as cloudwatch from "@pulumi/aws/cloudwatch";
import * as sns from "@pulumi/aws/sns";
import { ALARMS } from "../../facts/alarms";
import { arn, policyDocument, toJson } from "../security/iam";

export interface AlarmsArgs {
  readonly partition: string;
  readonly region: string;
  readonly accountId: pulumi.Input<string>;
  /** The topic's name (the operator subscribes to it). */
  readonly topicName: string;
  /** Stack key: the topic is encrypted with it (its policy lets CloudWatch use it). */
  readonly kmsKeyArn: pulumi.Input<string>;
  /** Instances watched by name: EC2's status checks; `recover` moves one to healthy hardware on a system failure. */
  readonly instances?: Readonly<Record<string, { readonly instanceId: pulumi.Input<string>; readonly recover: boolean }>>;
  /** Dead-letter queues watched by name: any message in one is a failure nobody retries. */
  readonly deadLetterQueues?: Readonly<Record<string, pulumi.Input<string>>>;
}

/**
 * What pages the operator: an SNS topic (encrypted with the stack key; only this account's
 * CloudWatch alarms may publish) and, per watched instance, EC2's system and instance
 * status checks (a system failure also recovers the instance in place: same id, volumes,
 * address), per dead-letter queue any visible message. Thresholds in facts/alarms.ts.
 */
export class Alarms extends pulumi.ComponentResource {
  public readonly topicArn: pulumi.Output<string>;

  constructor(name: string, args: AlarmsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:observability:Alarms", name, {}, opts);
    const child = { parent: this };
    const topic = new sns.Topic(`${name}-alarms`, { name: args.topicName, kmsMasterKeyId: args.kmsKeyArn }, child);
    new sns.TopicPolicy(
      `${name}-alarms`,
      {
        arn: topic.arn,
        policy: pulumi.all([topic.arn, args.accountId]).apply(([topicArn, account]) =>
          toJson(
            policyDocument({
              Sid: "ThisAccountsAlarmsPublish",
              Effect: "Allow",
              Principal: { Service: "cloudwatch.amazonaws.com" },
              Action: "sns:Publish",
              Resource: topicArn,
              Condition: { StringEquals: { "aws:SourceAccount": account }, ArnLike: { "aws:SourceArn": arn(args.partition, "cloudwatch", args.region, account, "alarm:*") } },
            }),
          ),
        ),
      },
      child,
    );
    const notify = [topic.arn];
    const recover = `arn:${args.partition}:automate:${args.region}:ec2:recover`;
    for (const [watched, instance] of Object.entries(args.instances ?? {})) {
      for (const check of ["system", "instance"] as const) {
        const c = ALARMS.statusCheck[check];
        new cloudwatch.MetricAlarm(
          `${name}-${watched}-${check}-check`,
          {
            name: `${args.topicName}-${watched}-${check}-check`,
            alarmDescription: `${watched}: EC2 ${check} status check failed${check === "system" && instance.recover ? " (recovering the instance)" : ""}`,
            namespace: "AWS/EC2",
            metricName: c.metric,
            dimensions: { InstanceId: instance.instanceId },
            statistic: "Maximum",
            period: c.periodSeconds,
            evaluationPeriods: c.periods,
            threshold: 1,
            comparisonOperator: "GreaterThanOrEqualToThreshold",
            treatMissingData: "missing",
            alarmActions: check === "system" && instance.recover ? [recover, ...notify] : notify,
            okActions: notify,
          },
          child,
        );
      }
    }
    for (const [watched, queueName] of Object.entries(args.deadLetterQueues ?? {})) {
      const c = ALARMS.deadLetters;
      new cloudwatch.MetricAlarm(
        `${name}-${watched}-dead-letters`,
        {
          name: `${args.topicName}-${watched}-dead-letters`,
          alarmDescription: `${watched}: messages in the dead-letter queue (failed deliveries nobody retries)`,
          namespace: "AWS/SQS",
          metricName: "ApproximateNumberOfMessagesVisible",
          dimensions: { QueueName: queueName },
          statistic: "Maximum",
          period: c.periodSeconds,
          evaluationPeriods: 1,
          threshold: 1,
          comparisonOperator: "GreaterThanOrEqualToThreshold",
          treatMissingData: "notBreaching",
          alarmActions: notify,
          okActions: notify,
        },
        child,
      );
    }
    this.topicArn = topic.arn;
    this.registerOutputs({ topicArn: this.topicArn });
  }
}
