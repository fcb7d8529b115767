/**
 * slurmrestd on the head node as a VPC Lattice service, shared with the control plane's
 * account through AWS RAM. Lattice has no public endpoint: only VPCs associated with a
 * service network the service joins can reach it, and the auth policy then admits only the
 * control plane's connector-bridge role, signed with SigV4.
 */
import * as pulumi from "@pulumi/pulumi";
import * as ram from "@pulumi/aws/ram";
import * as vpclattice from "@pulumi/aws/vpclattice";
import { LATTICE_INVOKE_ACTION, LATTICE_LISTENER, latticeServiceName, SLURMRESTD } from "../../facts/connector-network";
import { policyDocument, toJson, type PolicyDocument } from "../security/iam";

/**
 * The service's auth policy: the control plane's bridge role may invoke it, and only from
 * a VPC the control plane's account owns. Everyone else is denied, even principals of the
 * customer's own account whose IAM policies would allow it.
 */
export function slurmrestdAuthPolicy(p: { serviceArn: string; bridgeRoleArn: string; centralAccountId: string }): PolicyDocument {
  const resource = `${p.serviceArn}/*`;
  return policyDocument(
    {
      Sid: "ControlPlaneBridge",
      Effect: "Allow",
      Principal: { AWS: p.bridgeRoleArn },
      Action: LATTICE_INVOKE_ACTION,
      Resource: resource,
      Condition: { StringEquals: { "vpc-lattice-svcs:SourceVpcOwnerAccount": p.centralAccountId } },
    },
    { Sid: "NobodyElse", Effect: "Deny", Principal: "*", Action: LATTICE_INVOKE_ACTION, Resource: resource, Condition: { ArnNotEquals: { "aws:PrincipalArn": p.bridgeRoleArn } } },
  );
}

export interface SlurmrestdServiceArgs {
  readonly clusterName: string;
  readonly region: string;
  readonly vpcId: string;
  readonly headNodeInstanceId: string;
  /** The control plane's account: the service is shared with it. */
  readonly centralAccountId: string;
  /** The control plane's role the auth policy admits. */
  readonly bridgeRoleArn: string;
}

export class SlurmrestdService extends pulumi.ComponentResource {
  public readonly serviceArn: pulumi.Output<string>;
  public readonly serviceDns: pulumi.Output<string>;
  public readonly resourceShareArn: pulumi.Output<string>;

  constructor(name: string, args: SlurmrestdServiceArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:connector:SlurmrestdService", name, {}, opts);
    const child = { parent: this };
    const base = `clusterra-${args.clusterName}-slurmrestd`;

    const targets = new vpclattice.TargetGroup(
      `${name}-targets`,
      {
        name: base,
        type: "INSTANCE",
        config: {
          vpcIdentifier: args.vpcId,
          port: SLURMRESTD.port,
          protocol: SLURMRESTD.protocol,
          healthCheck: {
            enabled: true,
            protocol: SLURMRESTD.protocol,
            port: SLURMRESTD.port,
            path: SLURMRESTD.healthPath,
            // Any HTTP answer proves slurmrestd listens; without a token it may answer 401.
            matcher: { value: "200-499" },
          },
        },
      },
      child,
    );
    new vpclattice.TargetGroupAttachment(`${name}-head-node`, { targetGroupIdentifier: targets.id, target: { id: args.headNodeInstanceId, port: SLURMRESTD.port } }, child);
    // Lattice service names stop at 40 characters: clusterra-<cluster> fits any valid cluster name.
    const service = new vpclattice.Service(`${name}-service`, { name: latticeServiceName(args.clusterName), authType: "AWS_IAM" }, child);
    new vpclattice.Listener(
      `${name}-listener`,
      {
        name: "https",
        serviceIdentifier: service.id,
        protocol: LATTICE_LISTENER.protocol,
        port: LATTICE_LISTENER.port,
        defaultAction: { forwards: [{ targetGroups: [{ targetGroupIdentifier: targets.id, weight: 100 }] }] },
      },
      child,
    );
    new vpclattice.AuthPolicy(
      `${name}-auth`,
      { resourceIdentifier: service.arn, policy: service.arn.apply((serviceArn) => toJson(slurmrestdAuthPolicy({ serviceArn, bridgeRoleArn: args.bridgeRoleArn, centralAccountId: args.centralAccountId }))) },
      child,
    );

    // The control plane's account accepts the invitation and associates the service with its network.
    const share = new ram.ResourceShare(`${name}-share`, { name: base, allowExternalPrincipals: true }, child);
    new ram.ResourceAssociation(`${name}-share-service`, { resourceShareArn: share.arn, resourceArn: service.arn }, child);
    new ram.PrincipalAssociation(`${name}-share-central`, { resourceShareArn: share.arn, principal: args.centralAccountId }, child);

    this.serviceArn = service.arn;
    this.serviceDns = service.dnsEntries.apply((entries) => entries?.[0]?.domainName ?? "");
    this.resourceShareArn = share.arn;
    this.registerOutputs({ serviceArn: this.serviceArn, resourceShareArn: this.resourceShareArn });
  }
}
