import * as pulumi from "@pulumi/pulumi";
import * as cloudwatch from "@pulumi/aws/cloudwatch";
import * as sns from "@pulumi/aws/sns";
import { ALARMS, HOST_BOOT, HOST_COUNTS, HOST_DISK, type HostCount } from "../../facts/alarms";
import { arn, policyDocument, toJson } from "../security/iam";

export interface AlarmsArgs {
  readonly partition: string;
  readonly region: string;
  readonly accountId: pulumi.Input<string>;
  /** A new topic (its name; encrypted with the stack key, whose policy lets CloudWatch use it), or an existing one's ARN. */
  readonly topic: { readonly name: string; readonly kmsKeyArn: pulumi.Input<string> } | { readonly arn: pulumi.Input<string> };
  /** Prefix of the alarms' names. */
  readonly alarmPrefix: string;
  /**
   * Instances watched by name: EC2's status checks; `recover` moves one to healthy hardware on
   * a system failure (its own account only); `accountId` reads another account's metrics
   * through central's monitoring sink.
   */
  readonly instances?: Readonly<Record<string, { readonly instanceId: pulumi.Input<string>; readonly recover: boolean; readonly accountId?: pulumi.Input<string> }>>;
  /** Hosts' disk use and boot watched by name: their namespace in this account and the mounts they publish (host-metrics.ts). */
  readonly disks?: Readonly<Record<string, { readonly namespace: string; readonly mounts: readonly string[]; readonly counts?: readonly HostCount[] }>>;
  /** Dead-letter queues watched by name: any message in one is a failure nobody retries. */
  readonly deadLetterQueues?: Readonly<Record<string, pulumi.Input<string>>>;
}

/**
 * What pages the operator: an SNS topic (encrypted with the stack key; only this account's
 * CloudWatch alarms may publish) and, per watched instance, EC2's system and instance
 * status checks (a system failure also recovers the instance in place: same id, volumes,
 * address), per host its disks' use and a first boot that never completes, per dead-letter
 * queue any visible message. Thresholds in facts/alarms.ts.
 */
export class Alarms extends pulumi.ComponentResource {
  public readonly topicArn: pulumi.Output<string>;

  constructor(name: string, args: AlarmsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:observability:Alarms", name, {}, opts);
    const child = { parent: this };
    const topicArn = "arn" in args.topic ? pulumi.output(args.topic.arn) : this.newTopic(name, args.topic, args);
    const notify = [topicArn];
    const recover = `arn:${args.partition}:automate:${args.region}:ec2:recover`;
    for (const [watched, instance] of Object.entries(args.instances ?? {})) {
      for (const check of ["system", "instance"] as const) {
        const c = ALARMS.statusCheck[check];
        const metric = { namespace: "AWS/EC2", metricName: c.metric, dimensions: { InstanceId: instance.instanceId }, period: c.periodSeconds };
        const recovers = check === "system" && instance.recover && instance.accountId === undefined;
        new cloudwatch.MetricAlarm(
          `${name}-${watched}-${check}-check`,
          {
            name: `${args.alarmPrefix}${watched}-${check}-check`,
            alarmDescription: `${watched}: EC2 ${check} status check failed${recovers ? " (recovering the instance)" : ""}`,
            // Another account's metric is read through the monitoring sink, by account.
            ...(instance.accountId === undefined
              ? { ...metric, statistic: "Maximum" }
              : { metricQueries: [{ id: "status", accountId: instance.accountId, returnData: true, metric: { ...metric, stat: "Maximum" } }] }),
            evaluationPeriods: c.periods,
            threshold: 1,
            comparisonOperator: "GreaterThanOrEqualToThreshold",
            treatMissingData: "missing",
            alarmActions: recovers ? [recover, ...notify] : notify,
            okActions: notify,
          },
          child,
        );
      }
    }
    // An alarm that pages the topic when it fires and when it clears, named after what it watches.
    const paging = (id: string, props: Omit<cloudwatch.MetricAlarmArgs, "name" | "alarmActions" | "okActions">) =>
      new cloudwatch.MetricAlarm(`${name}-${id}`, { name: `${args.alarmPrefix}${id}`, ...props, alarmActions: notify, okActions: notify }, child);
    const atLeastOne = { threshold: 1, comparisonOperator: "GreaterThanOrEqualToThreshold" } as const;
    for (const [watched, disk] of Object.entries(args.disks ?? {})) {
      paging(`${watched}-boot`, {
        alarmDescription: `${watched}: its first boot has not completed in ${(HOST_BOOT.periods * HOST_DISK.periodSeconds) / 60} minutes (clusterra-boot.service retries it: journalctl -u clusterra-boot)`,
        namespace: disk.namespace,
        metricName: HOST_BOOT.metric,
        statistic: "Minimum",
        period: HOST_DISK.periodSeconds,
        evaluationPeriods: HOST_BOOT.periods,
        datapointsToAlarm: HOST_BOOT.datapoints,
        ...atLeastOne,
        treatMissingData: "notBreaching",
      });
      for (const mount of disk.mounts) {
        const slug = mount === "/" ? "root" : mount.replace(/^\//, "").replace(/\//g, "-");
        paging(`${watched}-disk-${slug}`, {
          alarmDescription: `${watched}: ${mount} over ${HOST_DISK.thresholdPercent} % full, or no longer reported`,
          namespace: disk.namespace,
          metricName: HOST_DISK.metric,
          dimensions: { Mount: mount },
          statistic: "Maximum",
          period: HOST_DISK.periodSeconds,
          evaluationPeriods: HOST_DISK.periods,
          threshold: HOST_DISK.thresholdPercent,
          comparisonOperator: "GreaterThanThreshold",
          treatMissingData: "breaching",
        });
      }
    }
    for (const [watched, disk] of Object.entries(args.disks ?? {})) {
      for (const count of disk.counts ?? []) {
        const c = HOST_COUNTS[count];
        paging(`${watched}-${count.replace(/([a-z])([A-Z])/g, "$1-$2").toLowerCase()}`, {
          alarmDescription: `${watched}: ${c.what} (${c.look})`,
          namespace: disk.namespace,
          metricName: count,
          statistic: "Maximum",
          period: HOST_DISK.periodSeconds,
          evaluationPeriods: c.periods,
          ...atLeastOne,
          treatMissingData: "notBreaching",
        });
      }
    }
    for (const [watched, queueName] of Object.entries(args.deadLetterQueues ?? {})) {
      paging(`${watched}-dead-letters`, {
        alarmDescription: `${watched}: messages in the dead-letter queue (failed deliveries nobody retries)`,
        namespace: "AWS/SQS",
        metricName: "ApproximateNumberOfMessagesVisible",
        dimensions: { QueueName: queueName },
        statistic: "Maximum",
        period: ALARMS.deadLetters.periodSeconds,
        evaluationPeriods: 1,
        ...atLeastOne,
        treatMissingData: "notBreaching",
      });
    }
    this.topicArn = topicArn;
    this.registerOutputs({ topicArn: this.topicArn });
  }

  /** The topic: encrypted with the stack key; only this account's CloudWatch alarms may publish. */
  private newTopic(name: string, t: { readonly name: string; readonly kmsKeyArn: pulumi.Input<string> }, args: AlarmsArgs): pulumi.Output<string> {
    const topic = new sns.Topic(`${name}-alarms`, { name: t.name, kmsMasterKeyId: t.kmsKeyArn }, { parent: this });
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
      { parent: this },
    );
    return topic.arn;
  }
}
