import * as pulumi from "@pulumi/pulumi";
import type { ProviderResource } from "@pulumi/pulumi";
import * as iam from "@pulumi/aws/iam";
import * as secretsmanager from "@pulumi/aws/secretsmanager";
import { getRandomPasswordOutput } from "@pulumi/aws/secretsmanager/getRandomPassword";
import { policyDocument, principalTrust, toJson } from "../security/iam";
import { externalSecretsPolicy } from "./node-iam";
import { centralOnlySecretNames, controlPlaneSecretsRoleName, slurmKeySecretNames, tenantExternalSecretsRoleName } from "../../facts/project";

export interface TenantSlurmKeysArgs {
  readonly environment: string;
  readonly tenantId: string;
  readonly clusterName: string;
  readonly partition: string;
  /** Central's region (where the secrets live). */
  readonly centralRegion: string;
  /** The tenant account. */
  readonly tenantAccountId: pulumi.Input<string>;
  /** The K3s server's role: External Secrets runs on its host network and assumes its own role. */
  readonly serverRoleArn: pulumi.Input<string>;
  /** Central's stack key: the secrets are encrypted with it. */
  readonly centralKmsKeyArn: pulumi.Input<string>;
  /** Provider acting in the central account for this tenant. */
  readonly centralProvider: ProviderResource;
  /** The central account. */
  readonly centralAccountId: string;
}

/** What may write a secret besides the readers (the server publishing ArgoCD's token). */
interface SecretWriter {
  readonly principal: pulumi.Input<string>;
}

/**
 * The tenant's Slurm keys (slurm.key for auth/slurm, the HS256 JWT key), created in the
 * central account's Secrets Manager with central's key: central's slurmctld and the
 * tenant's slurmd share them, and they are per tenant (the customer cluster holds
 * admin-grade keys). Each secret's resource policy lets exactly this tenant's External
 * Secrets role read it; that role, in the tenant account, can read nothing else.
 */
export class TenantSlurmKeys extends pulumi.ComponentResource {
  public readonly secretArns: pulumi.Output<{ slurm: string; jwt: string }>;
  public readonly externalSecretsRoleArn: pulumi.Output<string>;
  /** The role central's External Secrets reads this tenant's four secrets with. */
  public readonly controlPlaneRoleArn: pulumi.Output<string>;
  /** Central's secret for ArgoCD's credential to this cluster, written by the tenant's server. */
  public readonly argocdClusterSecretArn: pulumi.Output<string>;

  constructor(name: string, args: TenantSlurmKeysArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:tenant:TenantSlurmKeys", name, {}, opts);
    const inCentral = { parent: this, provider: args.centralProvider };
    const names = slurmKeySecretNames(args.environment, args.tenantId);
    const roleName = tenantExternalSecretsRoleName(args.environment, args.tenantId);

    const role = new iam.Role(
      `${name}-external-secrets`,
      {
        name: roleName,
        description: `External Secrets of ${args.clusterName}: reads this tenant's Slurm keys in central`,
        assumeRolePolicy: pulumi.all([args.tenantAccountId, args.serverRoleArn]).apply(([account, server]) => toJson(principalTrust(args.partition, account, [server]))),
      },
      { parent: this },
    );
    // Central's External Secrets role for this tenant: central's TenantLink owns it.
    const controlPlaneRoleArn = pulumi.output(`arn:${args.partition}:iam::${args.centralAccountId}:role/${controlPlaneSecretsRoleName(args.environment, args.tenantId)}`);
    const readers = (principals: pulumi.Output<string>[]) => pulumi.all(principals);
    const descriptions = {
      slurm: "slurm.key (auth/slurm)",
      jwt: "jwt_hs256.key (auth/jwt)",
      mariadb: "slurmdbd's MariaDB password",
      argocdCluster: "central ArgoCD's credential for the tenant cluster ({bearerToken, caData}), published by its server",
    } as const;
    const secret = (id: keyof typeof descriptions, secretName: string, principals: pulumi.Output<string>[], generate: boolean, writer?: SecretWriter) => {
      const created = new secretsmanager.Secret(
        `${name}-${id}`,
        { name: secretName, description: `${descriptions[id]} of tenant ${args.tenantId}`, kmsKeyId: args.centralKmsKeyArn, recoveryWindowInDays: 30 },
        { ...inCentral, protect: true },
      );
      if (generate) {
        // 64 characters from a 62-letter alphabet: ~380 bits, above both keys' 256-bit floor.
        const generated = getRandomPasswordOutput({ passwordLength: 64, excludePunctuation: true, includeSpace: false }, inCentral);
        new secretsmanager.SecretVersion(`${name}-${id}`, { secretId: created.id, secretString: pulumi.secret(generated.randomPassword.apply((p) => p ?? "")) }, { ...inCentral, ignoreChanges: ["secretString"] });
      }
      new secretsmanager.SecretPolicy(
        `${name}-${id}`,
        {
          secretArn: created.arn,
          blockPublicPolicy: true,
          policy: pulumi.all([created.arn, readers(principals), writer?.principal]).apply(([secretArn, reader, writes]) =>
            toJson(
              policyDocument(
                { Sid: "TenantExternalSecretsReads", Effect: "Allow", Principal: { AWS: reader.length === 1 ? reader[0] : reader }, Action: ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"], Resource: secretArn },
                ...(writes ? [{ Sid: "TenantServerPublishes", Effect: "Allow" as const, Principal: { AWS: writes }, Action: "secretsmanager:PutSecretValue", Resource: secretArn }] : []),
              ),
            ),
          ),
        },
        // Secrets Manager checks that a principal exists: the tenant's role comes first, and
        // central's (created by the central stack from this tenant's stack file) already is.
        { ...inCentral, dependsOn: [role] },
      );
      return created;
    };
    const both = [role.arn, controlPlaneRoleArn];
    const secrets = [secret("slurm", names.slurm, both, true), secret("jwt", names.jwt, both, true)];
    const centralOnly = centralOnlySecretNames(args.environment, args.tenantId);
    secret("mariadb", centralOnly.mariadb, [controlPlaneRoleArn], true);
    const argocdCluster = secret("argocdCluster", centralOnly.argocdCluster, [controlPlaneRoleArn], false, { principal: args.serverRoleArn });

    new iam.RolePolicy(
      `${name}-external-secrets`,
      {
        role: role.name,
        policy: pulumi.all([secrets[0].arn, secrets[1].arn, args.centralKmsKeyArn]).apply(([slurm, jwt, key]) =>
          toJson(externalSecretsPolicy({ region: args.centralRegion, secretArns: [slurm, jwt], centralKmsKeyArn: key })),
        ),
      },
      { parent: this },
    );

    this.secretArns = pulumi.all([secrets[0].arn, secrets[1].arn]).apply(([slurm, jwt]) => ({ slurm, jwt }));
    this.externalSecretsRoleArn = role.arn;
    this.controlPlaneRoleArn = controlPlaneRoleArn;
    this.argocdClusterSecretArn = argocdCluster.arn;
    this.registerOutputs({ secretArns: this.secretArns, externalSecretsRoleArn: this.externalSecretsRoleArn, controlPlaneRoleArn: this.controlPlaneRoleArn });
  }
}
