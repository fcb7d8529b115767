import { tenantAlarmPrefix } from "../../facts/alarms";
import * as pulumi from "@pulumi/pulumi";
import * as iam from "@pulumi/aws/iam";
import { TAG_KEYS, tenantAccessRoleName, tenantDeployerRoleName, tenantSecretPrefix } from "../../facts/project";
import { arn, policyDocument, principalTrust, toJson, type PolicyDocument } from "../security/iam";
import type { AccountScope } from "../security/scope";

/** Where one tenant's access lives: central's account, and the tenant it belongs to. */
export interface TenantAccessScope {
  readonly partition: string;
  readonly region: string;
  /** The central account. */
  readonly accountId: string;
  readonly environment: string;
  readonly tenantId: string;
  /** The tenant's own account: the only one whose peering requests it may accept. */
  readonly tenantAccountId: string;
  /** The central VPC: the only one it may accept peerings into. */
  readonly vpcId: string;
  /** Central's stack key: usable only through Secrets Manager, for the tenant's own secrets. */
  readonly kmsKeyArn: string;
}

/** Secrets Manager's endpoint name in a region, as kms:ViaService sees it. */
function secretsManagerService(partition: string, region: string): string {
  return `secretsmanager.${region}.${partition === "aws-cn" ? "amazonaws.com.cn" : "amazonaws.com"}`;
}

/** ARN pattern of every secret the tenant owns in central (`clusterra/<env>/<tenant>/*`). */
export function tenantSecretsArn(s: Pick<TenantAccessScope, "partition" | "region" | "accountId" | "environment" | "tenantId">): string {
  return arn(s.partition, "secretsmanager", s.region, s.accountId, `secret:${tenantSecretPrefix(s.environment, s.tenantId)}*`);
}

/**
 * Trust: only this tenant's deployer role (`clusterra-deployer-<env>-<tenant>`), by exact ARN.
 * Another tenant's run has another identity, so it cannot assume this role whatever its code.
 */
export function tenantAccessTrust(partition: string, centralAccountId: string, environment: string, tenantId: string): PolicyDocument {
  return principalTrust(partition, centralAccountId, [`arn:${partition}:iam::${centralAccountId}:role/${tenantDeployerRoleName(environment, tenantId)}`]);
}

/**
 * What one tenant's stack does in the central account, and only that: accept its own peering
 * (requested from its own account) into the central VPC and tag it, and manage its own
 * secrets under `clusterra/<env>/<tenant>/`, encrypted with central's key through Secrets
 * Manager, and keep the alarms on its own server (named by tenantAlarmPrefix). Routes, security-group rules and the slurmctld endpoint are central's own
 * resources (IAM cannot scope them per tenant), built from the tenant stack files.
 */
export function tenantAccessPolicy(s: TenantAccessScope): string {
  const ec2 = (resource: string) => arn(s.partition, "ec2", s.region, s.accountId, resource);
  const vpcArn = ec2(`vpc/${s.vpcId}`);
  const ownPeering = {
    ArnEquals: { "ec2:AccepterVpc": vpcArn },
    ArnLike: { "ec2:RequesterVpc": `arn:${s.partition}:ec2:*:${s.tenantAccountId}:vpc/*` },
  };
  const secrets = tenantSecretsArn(s);
  return toJson(
    policyDocument(
      { Sid: "AcceptOwnPeering", Effect: "Allow", Action: ["ec2:AcceptVpcPeeringConnection", "ec2:CreateTags"], Resource: ec2("vpc-peering-connection/*"), Condition: ownPeering },
      { Sid: "IntoTheCentralVpc", Effect: "Allow", Action: "ec2:AcceptVpcPeeringConnection", Resource: vpcArn },
      {
        // DeleteTags carries no peering keys: the tenant tag the accepter set is the scope.
        Sid: "UntagOwnPeering",
        Effect: "Allow",
        Action: "ec2:DeleteTags",
        Resource: ec2("vpc-peering-connection/*"),
        Condition: { StringEquals: { [`aws:ResourceTag/${TAG_KEYS.tenant}`]: s.tenantId } },
      },
      {
        Sid: "OwnSecrets",
        Effect: "Allow",
        Action: [
          "secretsmanager:CreateSecret", "secretsmanager:DescribeSecret", "secretsmanager:GetSecretValue", "secretsmanager:PutSecretValue",
          "secretsmanager:UpdateSecret", "secretsmanager:DeleteSecret", "secretsmanager:TagResource", "secretsmanager:UntagResource",
          "secretsmanager:GetResourcePolicy",
          // The provider reads and retires secret versions with these.
          "secretsmanager:ListSecretVersionIds", "secretsmanager:UpdateSecretVersionStage",
        ],
        Resource: secrets,
      },
      {
        // Who may read a secret is a permission change: only on secrets tagged with this
        // tenant (the central provider's default tags), and never a public policy.
        Sid: "OwnSecretPolicies",
        Effect: "Allow",
        Action: ["secretsmanager:PutResourcePolicy", "secretsmanager:DeleteResourcePolicy"],
        Resource: secrets,
        Condition: { StringEquals: { [`aws:ResourceTag/${TAG_KEYS.tenant}`]: s.tenantId }, BoolIfExists: { "secretsmanager:BlockPublicPolicy": "true" } },
      },
      {
        // The alarms central keeps on this tenant's server (the tenant stack knows its instance): these names only.
        Sid: "OwnServerAlarms",
        Effect: "Allow",
        Action: ["cloudwatch:PutMetricAlarm", "cloudwatch:DescribeAlarms", "cloudwatch:DeleteAlarms", "cloudwatch:TagResource", "cloudwatch:UntagResource", "cloudwatch:ListTagsForResource"],
        Resource: arn(s.partition, "cloudwatch", s.region, s.accountId, `alarm:${tenantAlarmPrefix(s.environment, s.tenantId)}*`),
      },
      // Key generation through the central provider (getRandomPassword): no resource, no data.
      { Sid: "GenerateKeyMaterial", Effect: "Allow", Action: "secretsmanager:GetRandomPassword", Resource: "*" },
      {
        Sid: "StackKeyForOwnSecretsOnly",
        Effect: "Allow",
        Action: ["kms:Encrypt", "kms:Decrypt", "kms:GenerateDataKey"],
        Resource: s.kmsKeyArn,
        Condition: {
          StringEquals: { "kms:ViaService": secretsManagerService(s.partition, s.region) },
          StringLike: { "kms:EncryptionContext:SecretARN": secrets },
        },
      },
      // Describe calls take no resource ARNs.
      { Sid: "ReadOnlyDescribe", Effect: "Allow", Action: ["ec2:DescribeVpcPeeringConnections", "ec2:DescribeVpcs"], Resource: "*" },
    ),
  );
}

export interface TenantAccessRoleArgs extends AccountScope {
  /** Environment name: role names. */
  readonly environment: string;
  /** The tenant this role belongs to. */
  readonly tenantId: string;
  /** The tenant's own account. */
  readonly tenantAccountId: string;
  /** The central VPC. */
  readonly vpcId: pulumi.Input<string>;
  /** Central's stack key (the tenant's secrets are encrypted with it). */
  readonly kmsKeyArn: pulumi.Input<string>;
}

/** The role one tenant's stack assumes in the central account. */
export class TenantAccessRole extends pulumi.ComponentResource {
  public readonly roleArn: pulumi.Output<string>;

  constructor(name: string, args: TenantAccessRoleArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:central:TenantAccessRole", name, {}, opts);
    const role = new iam.Role(
      `${name}-role`,
      {
        name: tenantAccessRoleName(args.environment, args.tenantId),
        description: `Tenant ${args.tenantId}'s stack: its own peering and secrets in central, nothing else`,
        maxSessionDuration: 3600,
        assumeRolePolicy: pulumi.output(args.accountId).apply((account) => toJson(tenantAccessTrust(args.partition, account, args.environment, args.tenantId))),
        tags: { [TAG_KEYS.tenant]: args.tenantId },
      },
      { parent: this },
    );
    new iam.RolePolicy(
      `${name}-policy`,
      {
        role: role.name,
        policy: pulumi
          .all([args.accountId, args.vpcId, args.kmsKeyArn])
          .apply(([accountId, vpcId, kmsKeyArn]) =>
            tenantAccessPolicy({ partition: args.partition, region: args.region, accountId, environment: args.environment, tenantId: args.tenantId, tenantAccountId: args.tenantAccountId, vpcId, kmsKeyArn }),
          ),
      },
      { parent: this },
    );
    this.roleArn = role.arn;
    this.registerOutputs({ roleArn: this.roleArn });
  }
}
