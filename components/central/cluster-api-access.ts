import * as pulumi from "@pulumi/pulumi";
import * as iam from "@pulumi/aws/iam";
import { arn, policyDocument, principalTrust, toJson } from "../security/iam";
import type { AccountScope } from "../security/scope";
import { clusterApiRoleName, slurmKeySecretNames, tenantFilesRoleName } from "../../facts/project";

export interface ClusterApiAccessArgs extends AccountScope {
  /** Environment name: the tenants' secret and role names. */
  readonly environment: string;
  /** The central's scope (facts/project.ts centralScope): the role's name and description. */
  readonly scope: string;
  /** The central host's role: the only principal that may assume cluster-api's role. */
  readonly hostRoleArn: pulumi.Input<string>;
  readonly hostRoleName: pulumi.Input<string>;
  /** State table ARNs by logical name. */
  readonly tableArns: Readonly<Record<string, pulumi.Input<string>>>;
  /** The session signing key secret. */
  readonly signingKeyArn: pulumi.Input<string>;
  /** Its listener's certificate and key (ClusterApiTls). */
  readonly tlsSecretArn: pulumi.Input<string>;
  /** Stack key the tables and the secrets are encrypted with. */
  readonly kmsKeyArn: pulumi.Input<string>;
  /** Tenants of this environment: cluster-api mints Slurm tokens with each one's JWT key and opens users' files sessions in each one's account. */
  readonly tenants: readonly { readonly id: string; readonly accountId: string }[];
}

/** Item-level DynamoDB actions cluster-api needs; no table administration. */
const TABLE_ACTIONS = [
  "dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:Scan", "dynamodb:PutItem", "dynamodb:UpdateItem",
  "dynamodb:DeleteItem", "dynamodb:BatchWriteItem", "dynamodb:ConditionCheckItem", "dynamodb:DescribeTable",
];

/** cluster-api's permissions: the state tables and their indexes, the signing secret, the key through those services. */
export function clusterApiPolicy(p: { partition: string; region: string; accountId: string; environment: string; tenants: readonly { id: string; accountId: string }[]; tableArns: readonly string[]; signingKeyArn: string; tlsSecretArn?: string; kmsKeyArn: string }): string {
  // Secrets Manager appends six random characters to a secret's name in its ARN.
  const jwtKeys = p.tenants.map((t) => arn(p.partition, "secretsmanager", p.region, p.accountId, `secret:${slurmKeySecretNames(p.environment, t.id).jwt}-??????`));
  const filesRoles = p.tenants.map((t) => arn(p.partition, "iam", "", t.accountId, `role/${tenantFilesRoleName(p.environment, t.id)}`));
  return toJson(
    policyDocument(
      { Sid: "StateTables", Effect: "Allow", Action: TABLE_ACTIONS, Resource: p.tableArns.flatMap((a) => [a, `${a}/index/*`]) },
      { Sid: "SigningKey", Effect: "Allow", Action: ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"], Resource: p.signingKeyArn },
      ...(p.tlsSecretArn ? [{ Sid: "ListenerCertificate", Effect: "Allow" as const, Action: "secretsmanager:GetSecretValue", Resource: p.tlsSecretArn }] : []),
      // Each tenant's JWT key, to mint Slurm tokens (`X-SLURM-USER-TOKEN`) for its slurmrestd;
      // never its slurm.key, its database password or ArgoCD's credential.
      ...(jwtKeys.length ? [{ Sid: "TenantJwtKeys", Effect: "Allow" as const, Action: "secretsmanager:GetSecretValue", Resource: jwtKeys }] : []),
      // A user's files session in their tenant's bucket: the tenant's files role, tagged with the uid.
      ...(filesRoles.length ? [{ Sid: "TenantFilesSessions", Effect: "Allow" as const, Action: ["sts:AssumeRole", "sts:TagSession"], Resource: filesRoles }] : []),
      {
        Sid: "DecryptThroughTheseServicesOnly",
        Effect: "Allow",
        Action: ["kms:Decrypt", "kms:GenerateDataKey", "kms:DescribeKey"],
        Resource: p.kmsKeyArn,
        Condition: { StringEquals: { "kms:ViaService": [`dynamodb.${p.region}.amazonaws.com`, `secretsmanager.${p.region}.amazonaws.com`] } },
      },
    ),
  );
}

/**
 * The role cluster-api runs as. Pods reach no instance credentials (IMDS hop limit 1), so
 * cluster-api runs on the host network and assumes this role from the host's; the host
 * role may assume this one role and nothing else of the kind.
 */
export class ClusterApiAccess extends pulumi.ComponentResource {
  public readonly roleArn: pulumi.Output<string>;

  constructor(name: string, args: ClusterApiAccessArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:central:ClusterApiAccess", name, {}, opts);
    const role = new iam.Role(
      `${name}-role`,
      {
        name: clusterApiRoleName(args.scope),
        description: `cluster-api (${args.scope})`,
        maxSessionDuration: 3600,
        assumeRolePolicy: pulumi.all([args.accountId, args.hostRoleArn]).apply(([account, host]) => toJson(principalTrust(args.partition, account, [host]))),
      },
      { parent: this },
    );
    new iam.RolePolicy(
      `${name}-access`,
      {
        role: role.name,
        policy: pulumi
          .all([pulumi.all(Object.values(args.tableArns)), args.signingKeyArn, args.tlsSecretArn, args.kmsKeyArn, args.accountId])
          .apply(([tableArns, signingKeyArn, tlsSecretArn, kmsKeyArn, accountId]) =>
            clusterApiPolicy({ partition: args.partition, region: args.region, accountId, environment: args.environment, tenants: args.tenants, tableArns, signingKeyArn, tlsSecretArn, kmsKeyArn })),
      },
      { parent: this },
    );
    new iam.RolePolicy(
      `${name}-host-assumes`,
      { role: args.hostRoleName, policy: role.arn.apply((arn) => toJson(policyDocument({ Effect: "Allow", Action: "sts:AssumeRole", Resource: arn }))) },
      { parent: this },
    );
    this.roleArn = role.arn;
    this.registerOutputs({ roleArn: this.roleArn });
  }
}
