import * as pulumi from "@pulumi/pulumi";
import * as secretsmanager from "@pulumi/aws/secretsmanager";
import { getRandomPasswordOutput } from "@pulumi/aws/secretsmanager/getRandomPassword";
import { signingKeySecretName } from "../../facts/project";

export interface PlatformSecretsArgs {
  /** The central's scope (facts/project.ts centralScope): secret names. */
  readonly scope: string;
  /** Customer-managed key the secrets are encrypted with. */
  readonly kmsKeyArn: pulumi.Input<string>;
}


/**
 * The environment's own secrets: cluster-api's session signing key. Secrets Manager
 * generates the value once; later runs leave it alone (rotation is a Secrets Manager
 * rotation, not a deploy). Per-tenant Slurm keys belong to the tenant stacks.
 */
export class PlatformSecrets extends pulumi.ComponentResource {
  public readonly signingKeyArn: pulumi.Output<string>;

  constructor(name: string, args: PlatformSecretsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:central:PlatformSecrets", name, {}, opts);
    const secret = new secretsmanager.Secret(
      `${name}-signing-key`,
      { name: signingKeySecretName(args.scope), description: "cluster-api session signing key (HS512)", kmsKeyId: args.kmsKeyArn, recoveryWindowInDays: 30 },
      { parent: this, protect: true },
    );
    const generated = getRandomPasswordOutput({ passwordLength: 64, excludePunctuation: true, includeSpace: false }, { parent: this });
    new secretsmanager.SecretVersion(
      `${name}-signing-key`,
      { secretId: secret.id, secretString: pulumi.secret(generated.randomPassword.apply((p) => p ?? "")) },
      { parent: this, ignoreChanges: ["secretString"] },
    );
    this.signingKeyArn = secret.arn;
    this.registerOutputs({ signingKeyArn: this.signingKeyArn });
  }
}
