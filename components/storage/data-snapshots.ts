import * as pulumi from "@pulumi/pulumi";
import * as dlm from "@pulumi/aws/dlm";
import * as iam from "@pulumi/aws/iam";
import { arn, documentedServiceTrust, policyDocument, toJson } from "../security/iam";
import type { AccountScope } from "../security/scope";

/** The service principal DLM assumes its execution role as. */
export const DLM_SERVICE = "dlm.amazonaws.com";

export interface DataSnapshotsArgs extends AccountScope {
  /** What the volume is (central's data volume, a tenant server's state): descriptions. */
  readonly purpose: string;
  /** Tag key and value that mark the volumes to snapshot. */
  readonly targetTag: { readonly key: string; readonly value: string };
  /** Daily snapshots kept. */
  readonly retainDays: number;
  /** Prefix of the DLM role's name: the stack's name prefix, so a deploy role scoped to it can make it. */
  readonly namePrefix: string;
}

/** DLM's permissions: snapshot only the tagged volumes, delete only its own snapshots. */
export function snapshotPolicy(p: { partition: string; region: string; accountId: string; targetTag: { key: string; value: string } }): string {
  const ec2 = (resource: string) => arn(p.partition, "ec2", p.region, p.accountId, resource);
  const snapshots = `arn:${p.partition}:ec2:${p.region}::snapshot/*`;
  return toJson(
    policyDocument(
      {
        Sid: "SnapshotTaggedVolumes",
        Effect: "Allow",
        Action: ["ec2:CreateSnapshot", "ec2:CreateSnapshots"],
        Resource: ec2("volume/*"),
        Condition: { StringEquals: { [`aws:ResourceTag/${p.targetTag.key}`]: p.targetTag.value } },
      },
      { Sid: "CreateSnapshots", Effect: "Allow", Action: ["ec2:CreateSnapshot", "ec2:CreateSnapshots"], Resource: snapshots },
      // Tags only as a snapshot is created: re-tagging any snapshot dlm:managed would let DeleteOwnSnapshots delete it.
      {
        Sid: "TagSnapshotsOnCreate",
        Effect: "Allow",
        Action: "ec2:CreateTags",
        Resource: snapshots,
        Condition: { StringEquals: { "ec2:CreateAction": ["CreateSnapshot", "CreateSnapshots"] } },
      },
      {
        Sid: "DeleteOwnSnapshots",
        Effect: "Allow",
        Action: "ec2:DeleteSnapshot",
        Resource: snapshots,
        Condition: { StringEquals: { "aws:ResourceTag/dlm:managed": "true" } },
      },
      { Sid: "ReadOnlyDescribe", Effect: "Allow", Action: ["ec2:DescribeVolumes", "ec2:DescribeSnapshots", "ec2:DescribeInstances"], Resource: "*" },
    ),
  );
}

/**
 * Daily snapshots of a stateful volume (central's data volume: K3s, every tenant's MariaDB
 * and slurmctld state; a tenant server's cluster state) by Data Lifecycle Manager, kept for
 * `retainDays`, in the region: a lost zone still has them.
 */
export class DataSnapshots extends pulumi.ComponentResource {
  constructor(name: string, args: DataSnapshotsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:storage:DataSnapshots", name, {}, opts);
    const child = { parent: this };
    const role = new iam.Role(
      `${name}-role`,
      {
        name: `${args.namePrefix}-snapshots`,
        description: `EBS snapshots of ${args.purpose}`,
        // AWS documents DLM's trust without a source condition (AWSDataLifecycleManagerDefaultRole).
        assumeRolePolicy: toJson(documentedServiceTrust(DLM_SERVICE)),
      },
      child,
    );
    const policy = new iam.RolePolicy(
      `${name}-policy`,
      { role: role.name, policy: pulumi.output(args.accountId).apply((accountId) => snapshotPolicy({ partition: args.partition, region: args.region, accountId, targetTag: args.targetTag })) },
      child,
    );
    new dlm.LifecyclePolicy(
      `${name}`,
      {
        description: `clusterra: ${args.purpose}, daily`,
        executionRoleArn: role.arn,
        state: "ENABLED",
        policyDetails: {
          policyType: "EBS_SNAPSHOT_MANAGEMENT",
          resourceTypes: ["VOLUME"],
          targetTags: { [args.targetTag.key]: args.targetTag.value },
          schedules: [
            {
              name: "daily",
              createRule: { interval: 24, intervalUnit: "HOURS", times: "03:00" },
              retainRule: { count: args.retainDays },
              copyTags: true,
            },
          ],
        },
      },
      { parent: this, dependsOn: [policy] },
    );
    this.registerOutputs({});
  }
}
