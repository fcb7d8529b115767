import * as pulumi from "@pulumi/pulumi";
import * as iam from "@pulumi/aws/iam";
import { controlPlaneSecretsRoleName, tenantSecretPrefix } from "../../facts/project";
import { arn, policyDocument, principalTrust, toJson } from "../security/iam";
import type { AccountScope } from "../security/scope";

export interface ControlPlaneSecretsArgs extends AccountScope {
  readonly environment: string;
  readonly tenantId: string;
  /** The central host's role: central's External Secrets runs on its network and assumes this role. */
  readonly hostRoleArn: pulumi.Input<string>;
  /** Its name: it gets the right to assume this role, and no other tenant's. */
  readonly hostRoleName: pulumi.Input<string>;
  /** Central's stack key (the tenant's secrets are encrypted with it). */
  readonly kmsKeyArn: pulumi.Input<string>;
}

/**
 * The role central's External Secrets assumes in one tenant's namespace: it reads that
 * tenant's secrets (its prefix, nothing else) and decrypts them through Secrets Manager
 * only. Central owns it, so its trust names the host role exactly; each of the tenant's
 * secret policies names it in turn.
 */
export class ControlPlaneSecrets extends pulumi.ComponentResource {
  public readonly roleArn: pulumi.Output<string>;

  constructor(name: string, args: ControlPlaneSecretsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:central:ControlPlaneSecrets", name, {}, opts);
    const role = new iam.Role(
      `${name}`,
      {
        name: controlPlaneSecretsRoleName(args.environment, args.tenantId),
        description: `central External Secrets for tenant ${args.tenantId}: reads this tenant's secrets only`,
        assumeRolePolicy: pulumi.all([args.accountId, args.hostRoleArn]).apply(([account, host]) => toJson(principalTrust(args.partition, account, [host]))),
      },
      { parent: this },
    );
    new iam.RolePolicy(
      `${name}`,
      {
        role: role.name,
        policy: pulumi.all([args.accountId, args.kmsKeyArn]).apply(([account, key]) =>
          toJson(
            policyDocument(
              {
                Sid: "ReadTenantSecrets",
                Effect: "Allow",
                Action: ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"],
                Resource: arn(args.partition, "secretsmanager", args.region, account, `secret:${tenantSecretPrefix(args.environment, args.tenantId)}*`),
              },
              {
                Sid: "DecryptThroughSecretsManager",
                Effect: "Allow",
                Action: "kms:Decrypt",
                Resource: key,
                Condition: { StringEquals: { "kms:ViaService": `secretsmanager.${args.region}.amazonaws.com` } },
              },
            ),
          ),
        ),
      },
      { parent: this },
    );
    new iam.RolePolicy(
      `${name}-assume`,
      { role: args.hostRoleName, policy: role.arn.apply((target) => toJson(policyDocument({ Sid: "AssumeTenantSecretsReader", Effect: "Allow", Action: "sts:AssumeRole", Resource: target }))) },
      { parent: this },
    );
    this.roleArn = role.arn;
    this.registerOutputs({ roleArn: this.roleArn });
  }
}

