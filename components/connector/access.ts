/**
 * The connector's two grants outside its own Lambda: the role the control plane assumes
 * across accounts (read the cluster's Slurm JWT key, nothing else), and the addition to
 * the head node's instance role (send job events to the connector's queue, nothing else).
 */
import * as pulumi from "@pulumi/pulumi";
import * as iam from "@pulumi/aws/iam";
import { regionalServiceHost } from "../../facts/connector-network";
import type { Partition } from "../../facts/regions";
import { arn, policyDocument, toJson, type PolicyDocument } from "../security/iam";
import type { AccountScope } from "../security/scope";

/** A secret's ARN from its name: Secrets Manager appends `-` and six random characters. */
export function secretArnByName(partition: string, region: string, accountId: string, name: string): string {
  return arn(partition, "secretsmanager", region, accountId, `secret:${name}-??????`);
}

/**
 * Trust for the control plane: only its connector-bridge role, from its account, with the
 * ExternalId of this environment and cluster.
 */
export function controlPlaneTrust(p: { partition: string; centralAccountId: string; bridgeRoleArn: string; externalId: string }): PolicyDocument {
  return policyDocument({
    Effect: "Allow",
    Principal: { AWS: `arn:${p.partition}:iam::${p.centralAccountId}:root` },
    Action: "sts:AssumeRole",
    Condition: { StringEquals: { "sts:ExternalId": p.externalId }, ArnEquals: { "aws:PrincipalArn": p.bridgeRoleArn } },
  });
}

/** What the control plane may do in the customer's account: read the one JWT secret. */
export function controlPlanePolicy(p: { jwtSecretArn: string }): PolicyDocument {
  return policyDocument({ Sid: "ReadSlurmJwtKey", Effect: "Allow", Action: "secretsmanager:GetSecretValue", Resource: p.jwtSecretArn });
}

/**
 * The head node's addition: send to the events queue. The queue is encrypted with the
 * stack key, and SQS asks KMS for a data key on the sender's behalf, so sending needs
 * GenerateDataKey/Decrypt on that key, through SQS only.
 */
export function headNodeSendPolicy(p: { queueArn: string; kmsKeyArn: string; region: string; partition: Partition }): PolicyDocument {
  return policyDocument(
    { Sid: "SendJobEvents", Effect: "Allow", Action: "sqs:SendMessage", Resource: p.queueArn },
    {
      Sid: "EncryptJobEvents",
      Effect: "Allow",
      Action: ["kms:GenerateDataKey", "kms:Decrypt"],
      Resource: p.kmsKeyArn,
      Condition: { StringEquals: { "kms:ViaService": regionalServiceHost(p.partition, p.region, "sqs") } },
    },
  );
}

export interface ConnectorAccessArgs extends AccountScope {
  /** Names the role. */
  readonly roleName: string;
  /** The control plane's account. */
  readonly centralAccountId: string;
  /** The control plane's role that may assume this one. */
  readonly bridgeRoleArn: string;
  readonly externalId: string;
  /** Name of the Secrets Manager secret holding the cluster's Slurm JWT key. */
  readonly jwtSecretName: string;
  /** The head node's instance role, which gets the send permission. */
  readonly headNodeRoleName: string;
  readonly queueArn: pulumi.Input<string>;
  readonly kmsKeyArn: pulumi.Input<string>;
}

/** The cross-account role and the head node's send permission. */
export class ConnectorAccess extends pulumi.ComponentResource {
  public readonly controlPlaneRoleArn: pulumi.Output<string>;

  constructor(name: string, args: ConnectorAccessArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:connector:ConnectorAccess", name, {}, opts);
    const child = { parent: this };
    const role = new iam.Role(
      `${name}-control-plane`,
      {
        name: args.roleName,
        description: "Clusterra control plane: reads this cluster's Slurm JWT key, nothing else",
        maxSessionDuration: 3600,
        assumeRolePolicy: toJson(controlPlaneTrust({ partition: args.partition, centralAccountId: args.centralAccountId, bridgeRoleArn: args.bridgeRoleArn, externalId: args.externalId })),
      },
      child,
    );
    new iam.RolePolicy(
      `${name}-control-plane`,
      {
        role: role.name,
        policy: pulumi.output(args.accountId).apply((account) => toJson(controlPlanePolicy({ jwtSecretArn: secretArnByName(args.partition, args.region, account, args.jwtSecretName) }))),
      },
      child,
    );
    new iam.RolePolicy(
      `${name}-head-node-send`,
      {
        role: args.headNodeRoleName,
        name: "clusterra-connector-send-job-events",
        policy: pulumi.all([args.queueArn, args.kmsKeyArn]).apply(([queueArn, kmsKeyArn]) => toJson(headNodeSendPolicy({ queueArn, kmsKeyArn, region: args.region, partition: args.partition }))),
      },
      child,
    );
    this.controlPlaneRoleArn = role.arn;
    this.registerOutputs({ controlPlaneRoleArn: this.controlPlaneRoleArn });
  }
}
