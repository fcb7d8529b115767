/**
 * The control plane's side of connector mode: one VPC Lattice service network in the
 * central account, associated with central's VPC, joined by every connector's slurmrestd
 * service once the RAM share from the customer's account is accepted. cluster-api reaches
 * a connector by assuming the connector-bridge role, which may invoke exactly those
 * services and assume exactly those connectors' control-plane roles.
 */
import * as pulumi from "@pulumi/pulumi";
import * as ec2 from "@pulumi/aws/ec2";
import * as iam from "@pulumi/aws/iam";
import * as ram from "@pulumi/aws/ram";
import * as vpc from "@pulumi/aws/vpc";
import * as vpclattice from "@pulumi/aws/vpclattice";
import type { ConnectorAttachment } from "../../config/types";
import { connectorBridgeRoleName, LATTICE_INVOKE_ACTION, LATTICE_LISTENER } from "../../facts/connector-network";
import { platformName } from "../../facts/project";
import { policyDocument, principalTrust, toJson, type PolicyDocument } from "../security/iam";
import type { AccountScope } from "../security/scope";

/** What central reads from each connector stack. */
export interface SharedConnector {
  readonly slurmrestdServiceArn: string;
  readonly controlPlaneRoleArn: string;
}

/** The bridge role's permissions: invoke each connector's service, assume each connector's role. */
export function bridgePolicy(connectors: readonly SharedConnector[]): PolicyDocument {
  return policyDocument(
    { Sid: "InvokeConnectorServices", Effect: "Allow", Action: LATTICE_INVOKE_ACTION, Resource: connectors.map((c) => `${c.slurmrestdServiceArn}/*`) },
    { Sid: "ReadConnectorJwtKeys", Effect: "Allow", Action: "sts:AssumeRole", Resource: connectors.map((c) => c.controlPlaneRoleArn) },
  );
}

/** The service network's auth policy: only the bridge role, only the shared services. */
export function serviceNetworkAuthPolicy(p: { bridgeRoleArn: string; connectors: readonly SharedConnector[] }): PolicyDocument {
  return policyDocument({
    Sid: "ConnectorBridgeOnly",
    Effect: "Allow",
    Principal: { AWS: p.bridgeRoleArn },
    Action: LATTICE_INVOKE_ACTION,
    Resource: p.connectors.map((c) => `${c.slurmrestdServiceArn}/*`),
  });
}

export interface ConnectorServiceNetworkArgs extends AccountScope {
  /** The central's scope (facts/project.ts centralScope): the service network's and the bridge role's names. */
  readonly scope: string;
  readonly vpcId: pulumi.Input<string>;
  /** The group of the host whose processes (cluster-api) call connectors. */
  readonly clientSecurityGroupId: pulumi.Input<string>;
  /** The role that may assume the bridge role (cluster-api's). */
  readonly callerRoleArn: pulumi.Input<string>;
  /** Connector stacks naming this central. */
  readonly connectors: readonly ConnectorAttachment[];
}

export class ConnectorServiceNetwork extends pulumi.ComponentResource {
  public readonly serviceNetworkArn: pulumi.Output<string>;
  public readonly bridgeRoleArn: pulumi.Output<string>;

  constructor(name: string, args: ConnectorServiceNetworkArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:central:ConnectorServiceNetwork", name, {}, opts);
    const child = { parent: this };
    const base = platformName(args.scope, "connectors");

    const network = new vpclattice.ServiceNetwork(`${name}-network`, { name: base, authType: "AWS_IAM" }, child);
    const group = new ec2.SecurityGroup(`${name}-association`, { name: `${base}-lattice`, description: "Central hosts to connector services over VPC Lattice", vpcId: args.vpcId }, child);
    new vpc.SecurityGroupIngressRule(
      `${name}-from-host`,
      { securityGroupId: group.id, referencedSecurityGroupId: args.clientSecurityGroupId, ipProtocol: "tcp", fromPort: LATTICE_LISTENER.port, toPort: LATTICE_LISTENER.port, description: "cluster-api to connector services" },
      child,
    );
    new vpclattice.ServiceNetworkVpcAssociation(`${name}-vpc`, { vpcIdentifier: args.vpcId, serviceNetworkIdentifier: network.id, securityGroupIds: [group.id] }, child);

    const role = new iam.Role(
      `${name}-bridge`,
      {
        name: connectorBridgeRoleName(args.scope),
        description: "Calls connector slurmrestd services and reads their JWT keys; cluster-api assumes it",
        maxSessionDuration: 3600,
        assumeRolePolicy: pulumi.all([args.accountId, args.callerRoleArn]).apply(([account, caller]) => toJson(principalTrust(args.partition, account, [caller]))),
      },
      child,
    );

    // The caller's side of the assumption: its role may assume the bridge, nothing more.
    new iam.RolePolicy(
      `${name}-caller-assumes-bridge`,
      {
        role: pulumi.output(args.callerRoleArn).apply((a) => a.split("/").pop() as string),
        name: "clusterra-assume-connector-bridge",
        policy: role.arn.apply((bridge) => toJson(policyDocument({ Sid: "AssumeConnectorBridge", Effect: "Allow", Action: "sts:AssumeRole", Resource: bridge }))),
      },
      child,
    );

    const shared = args.connectors.map((c) => {
      const ref = new pulumi.StackReference(`${name}-${c.clusterName}`, { name: c.stack }, child);
      const serviceArn = ref.requireOutput("slurmrestdServiceArn") as pulumi.Output<string>;
      // Customer accounts are outside the operator's organization: RAM sends an invitation.
      const accepted = new ram.ResourceShareAccepter(`${name}-${c.clusterName}`, { shareArn: ref.requireOutput("resourceShareArn") as pulumi.Output<string> }, child);
      new vpclattice.ServiceNetworkServiceAssociation(`${name}-${c.clusterName}`, { serviceIdentifier: serviceArn, serviceNetworkIdentifier: network.id }, { parent: this, dependsOn: [accepted] });
      return pulumi.all([serviceArn, ref.requireOutput("controlPlaneRoleArn") as pulumi.Output<string>]).apply(([slurmrestdServiceArn, controlPlaneRoleArn]) => ({ slurmrestdServiceArn, controlPlaneRoleArn }));
    });
    // With no connector the network admits nobody (AWS_IAM with no policy denies all).
    if (shared.length > 0) {
      const connectors = pulumi.all(shared);
      new iam.RolePolicy(`${name}-bridge`, { role: role.name, policy: connectors.apply((c) => toJson(bridgePolicy(c))) }, child);
      new vpclattice.AuthPolicy(`${name}-auth`, { resourceIdentifier: network.arn, policy: pulumi.all([role.arn, connectors]).apply(([bridgeRoleArn, c]) => toJson(serviceNetworkAuthPolicy({ bridgeRoleArn, connectors: c }))) }, child);
    }

    this.serviceNetworkArn = network.arn;
    this.bridgeRoleArn = role.arn;
    this.registerOutputs({ serviceNetworkArn: this.serviceNetworkArn, bridgeRoleArn: this.bridgeRoleArn });
  }
}
