import * as pulumi from "@pulumi/pulumi";
import * as secretsmanager from "@pulumi/aws/secretsmanager";
import { CertRequest } from "@pulumi/tls/certRequest";
import { LocallySignedCert } from "@pulumi/tls/locallySignedCert";
import { PrivateKey } from "@pulumi/tls/privateKey";
import { SelfSignedCert } from "@pulumi/tls/selfSignedCert";
import { CLUSTER_API_TLS } from "../../facts/central-host";
import { clusterApiTlsSecretName } from "../../facts/project";

export interface ClusterApiTlsArgs {
  /** The central's scope (facts/project.ts centralScope): the secret's name and the certificates' subjects. */
  readonly scope: string;
  /** The central host's private address: what the edge-agents dial (the certificate's IP SAN). */
  readonly hostAddress: pulumi.Input<string>;
  /** Central's stack key: encrypts the key pair's secret. */
  readonly kmsKeyArn: pulumi.Input<string>;
}


/**
 * The certificate of cluster-api's private listener (:8443), which every tenant's edge-agent
 * verifies. A CA of the environment's own (the stack holds its key, encrypted in state, and
 * uses it for nothing else) signs a server certificate for the host's address; the key pair
 * goes to Secrets Manager, where cluster-api reads it with its role, as it reads its signing
 * key; the CA certificate, public, is a stack output the tenant stacks hand their
 * edge-agents through the fleet. A certificate near its end is replaced on the next
 * `pulumi up` (early renewal), and cluster-api picks it up on restart.
 */
export class ClusterApiTls extends pulumi.ComponentResource {
  public readonly caCertPem: pulumi.Output<string>;
  public readonly secretArn: pulumi.Output<string>;
  public readonly secretName: string;

  constructor(name: string, args: ClusterApiTlsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:central:ClusterApiTls", name, {}, opts);
    const child = { parent: this };
    const t = CLUSTER_API_TLS;
    const caKey = new PrivateKey(`${name}-ca`, { algorithm: "ECDSA", ecdsaCurve: t.curve }, child);
    const ca = new SelfSignedCert(
      `${name}-ca`,
      {
        privateKeyPem: caKey.privateKeyPem,
        isCaCertificate: true,
        allowedUses: ["cert_signing", "crl_signing"],
        validityPeriodHours: t.caValidityHours,
        subject: { commonName: `clusterra ${args.scope} cluster-api CA`, organization: "clusterra" },
      },
      child,
    );
    const serverKey = new PrivateKey(`${name}-server`, { algorithm: "ECDSA", ecdsaCurve: t.curve }, child);
    const request = new CertRequest(
      `${name}-server`,
      { privateKeyPem: serverKey.privateKeyPem, ipAddresses: [args.hostAddress], subject: { commonName: "cluster-api", organization: "clusterra" } },
      child,
    );
    const server = new LocallySignedCert(
      `${name}-server`,
      {
        certRequestPem: request.certRequestPem,
        caPrivateKeyPem: caKey.privateKeyPem,
        caCertPem: ca.certPem,
        allowedUses: ["digital_signature", "key_encipherment", "server_auth"],
        validityPeriodHours: t.serverValidityHours,
        earlyRenewalHours: t.serverEarlyRenewalHours,
      },
      child,
    );
    this.secretName = clusterApiTlsSecretName(args.scope);
    const secret = new secretsmanager.Secret(
      `${name}-secret`,
      { name: this.secretName, description: `cluster-api's listener certificate and key (${args.scope})`, kmsKeyId: args.kmsKeyArn, recoveryWindowInDays: 30 },
      { ...child, protect: true },
    );
    new secretsmanager.SecretVersion(
      `${name}-secret`,
      { secretId: secret.id, secretString: pulumi.secret(pulumi.all([server.certPem, ca.certPem, serverKey.privateKeyPem]).apply(([cert, caPem, key]) => JSON.stringify({ certificate: `${cert}${caPem}`, privateKey: key }))) },
      child,
    );
    this.caCertPem = ca.certPem;
    this.secretArn = secret.arn;
    this.registerOutputs({ caCertPem: this.caCertPem, secretArn: this.secretArn });
  }
}
