import * as pulumi from "@pulumi/pulumi";
import * as kms from "@pulumi/aws/kms";
import { arn, policyDocument, toJson, type Statement } from "./iam";
import type { AccountScope } from "./scope";

/**
 * What the account's IAM policies may grant on the key: administration and use, but not
 * the key-policy escape hatches (kms:PutKeyPolicy is kept so IAM admins can repair it).
 */
const KEY_ADMIN_AND_USE_ACTIONS = [
  "kms:Describe*", "kms:Get*", "kms:List*", "kms:Enable*", "kms:Disable*", "kms:Update*",
  "kms:Put*", "kms:Create*", "kms:Revoke*", "kms:TagResource", "kms:UntagResource",
  "kms:ScheduleKeyDeletion", "kms:CancelKeyDeletion", "kms:RotateKeyOnDemand",
  // Deleting an alias needs the key's own policy (IAM alone cannot grant it).
  "kms:DeleteAlias",
  "kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:RetireGrant",
];

export interface StackKeyArgs extends AccountScope {
  /** Alias suffix: alias/clusterra/<aliasName>. */
  readonly aliasName: string;
  /** CloudWatch Logs encrypts this account's log groups with the key. */
  readonly logsService?: boolean;
  /** EventBridge delivers to queues encrypted with the key (it needs GenerateDataKey/Decrypt). */
  readonly eventsService?: boolean;
  /** CloudWatch alarms publish to a topic encrypted with the key. */
  readonly alarmsService?: boolean;
  /** What the key protects, for its description. */
  readonly purpose: string;
  /**
   * EC2 launches Spot instances with EBS volumes encrypted by the key: the EC2 Spot
   * service-linked role (AWSServiceRoleForEC2Spot) must use it, and a service-linked role
   * takes no IAM policy of ours, so the key policy names it. It must exist when the key
   * policy is written (README: "Before the first tenant deploy").
   */
  readonly spotVolumes?: boolean;
  /**
   * Roles of other accounts that may decrypt, through Secrets Manager only, the secrets under
   * one ARN pattern (each tenant cluster's External Secrets role, its own keys in central).
   */
  readonly secretReaders?: pulumi.Input<readonly SecretReader[]>;
}

/** A role of another account that reads secrets encrypted with the key. */
export interface SecretReader {
  readonly accountId: string;
  readonly roleArn: string;
  /** The secrets it may decrypt (kms:EncryptionContext:SecretARN pattern). */
  readonly secretArnPattern: string;
  /** What it may do with the key for them (default: decrypt, to read them). */
  readonly actions?: readonly ("kms:Decrypt" | "kms:GenerateDataKey" | "kms:Encrypt")[];
}

/** Key-policy statements letting each reader decrypt its own secrets through Secrets Manager, nothing else. */
export function secretReaderStatements(partition: string, region: string, readers: readonly SecretReader[]): Statement[] {
  const via = `secretsmanager.${region}.${partition === "aws-cn" ? "amazonaws.com.cn" : "amazonaws.com"}`;
  return readers.map((r) => ({
    Effect: "Allow" as const,
    // The account as principal and the role by condition: the key policy stays valid before the role exists.
    Principal: { AWS: `arn:${partition}:iam::${r.accountId}:root` },
    Action: r.actions ? [...r.actions] : "kms:Decrypt",
    Resource: "*",
    Condition: {
      ArnEquals: { "aws:PrincipalArn": r.roleArn },
      StringEquals: { "kms:ViaService": via },
      StringLike: { "kms:EncryptionContext:SecretARN": r.secretArnPattern },
    },
  }));
}

/** The EC2 Spot service-linked role of an account. */
/** A service that writes into this account's encrypted queues or topics, for this account only. */
function deliveringServiceStatement(sid: string, service: string, actions: readonly string[], account: string): Statement {
  return { Sid: sid, Effect: "Allow", Principal: { Service: service }, Action: [...actions], Resource: "*", Condition: { StringEquals: { "aws:SourceAccount": account } } };
}

export function spotServiceLinkedRoleArn(partition: string, account: string): string {
  return `arn:${partition}:iam::${account}:role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot`;
}

/** Key-policy statements letting EC2 Spot encrypt and attach the volumes of Spot launches. */
export function spotVolumeStatements(partition: string, account: string): Statement[] {
  const principal = { AWS: spotServiceLinkedRoleArn(partition, account) };
  return [
    { Sid: "SpotLaunchesUseTheKeyForVolumes", Effect: "Allow", Principal: principal, Action: ["kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:DescribeKey"], Resource: "*" },
    { Sid: "SpotLaunchesGrantTheKeyToVolumes", Effect: "Allow", Principal: principal, Action: "kms:CreateGrant", Resource: "*", Condition: { Bool: { "kms:GrantIsForAWSResource": "true" } } },
  ];
}

/**
 * The stack's customer-managed KMS key: rotation on, deletion window at its maximum,
 * protected. IAM policies in the account decide who uses it (the root statement), and
 * CloudWatch Logs may use it only for this account's log groups.
 */
export class StackKey extends pulumi.ComponentResource {
  public readonly keyArn: pulumi.Output<string>;
  public readonly keyId: pulumi.Output<string>;

  constructor(name: string, args: StackKeyArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:security:StackKey", name, {}, opts);
    const logsPrincipal = args.partition === "aws-cn" ? `logs.${args.region}.amazonaws.com.cn` : `logs.${args.region}.amazonaws.com`;
    const readersIn: pulumi.Input<readonly SecretReader[]> = args.secretReaders ?? [];
    const policy = pulumi.all([args.accountId, readersIn]).apply(([account, readers]) =>
      toJson(
        policyDocument(
          {
            Sid: "AccountAdministersThroughIam",
            Effect: "Allow",
            Principal: { AWS: `arn:${args.partition}:iam::${account}:root` },
            Action: KEY_ADMIN_AND_USE_ACTIONS,
            // In a key policy "*" means this key; it is the only value KMS accepts.
            Resource: "*",
          },
          ...(args.logsService
            ? [
                {
                  Sid: "CloudWatchLogsForThisAccount",
                  Effect: "Allow" as const,
                  Principal: { Service: logsPrincipal },
                  Action: ["kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*"],
                  Resource: "*",
                  Condition: { ArnLike: { "kms:EncryptionContext:aws:logs:arn": arn(args.partition, "logs", args.region, account, "log-group:*") } },
                },
              ]
            : []),
          ...(args.eventsService ? [deliveringServiceStatement("EventBridgeDeliversToEncryptedQueues", "events.amazonaws.com", ["kms:GenerateDataKey", "kms:Decrypt"], account)] : []),
          ...(args.alarmsService ? [deliveringServiceStatement("CloudWatchAlarmsPublishToEncryptedTopics", "cloudwatch.amazonaws.com", ["kms:GenerateDataKey*", "kms:Decrypt"], account)] : []),
          ...(args.spotVolumes ? spotVolumeStatements(args.partition, account) : []),
          ...secretReaderStatements(args.partition, args.region, readers as readonly SecretReader[]),
        ),
      ),
    );
    const key = new kms.Key(
      `${name}-key`,
      {
        description: `clusterra ${args.purpose}`,
        enableKeyRotation: true,
        rotationPeriodInDays: 365,
        deletionWindowInDays: 30,
        policy,
      },
      { parent: this, protect: true },
    );
    new kms.Alias(`${name}-alias`, { name: `alias/clusterra/${args.aliasName}`, targetKeyId: key.keyId }, { parent: this });
    this.keyArn = key.arn;
    this.keyId = key.keyId;
    this.registerOutputs({ keyArn: this.keyArn });
  }
}
