import * as pulumi from "@pulumi/pulumi";
import * as kms from "@pulumi/aws/kms";
import { arn, policyDocument, toJson } from "./iam";
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
  /** What the key protects, for its description. */
  readonly purpose: string;
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
    const policy = pulumi.output(args.accountId).apply((account) =>
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
          ...(args.eventsService
            ? [
                {
                  Sid: "EventBridgeDeliversToEncryptedQueues",
                  Effect: "Allow" as const,
                  Principal: { Service: "events.amazonaws.com" },
                  Action: ["kms:GenerateDataKey", "kms:Decrypt"],
                  Resource: "*",
                  Condition: { StringEquals: { "aws:SourceAccount": account } },
                },
              ]
            : []),
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
