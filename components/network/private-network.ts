import * as pulumi from "@pulumi/pulumi";
import { getAvailabilityZonesOutput } from "@pulumi/aws/getAvailabilityZones";
import * as cloudwatch from "@pulumi/aws/cloudwatch";
import * as ec2 from "@pulumi/aws/ec2";
import * as iam from "@pulumi/aws/iam";
import type { ZoneSelection } from "../../config/types";
import { servicePrefix } from "../../facts/regions";
import { PROJECT } from "../../facts/project";
import { arn, policyDocument, serviceTrust, toJson } from "../security/iam";
import { subnetLayout, zoneCount } from "../../config/subnet-layout";
import type { AccountScope } from "../security/scope";
import { GATEWAY_ENDPOINT_SERVICES } from "../../facts/baseline-egress";

const DEFAULT_FLOW_LOG_RETENTION_DAYS = 90;

export interface PrivateNetworkArgs extends AccountScope {
  /** The VPC's private IPv4 CIDR. */
  readonly cidr: string;
  /** Zones for the private subnets: a count of available zones or explicit names. */
  readonly zones: ZoneSelection;
  /** KMS key that encrypts the flow-log group. */
  readonly logKeyArn: pulumi.Input<string>;
  /** Days flow logs are kept (default 90). */
  readonly flowLogRetentionDays?: number;
  /** Extra tags on the private subnets (e.g. Karpenter's discovery tag). */
  readonly privateSubnetTags?: Record<string, string>;
  /**
   * How the private subnets reach the internet: a NAT gateway (default), or an instance the
   * caller places in the public subnet and routes 0.0.0.0/0 to (`instance`).
   */
  readonly egress?: "nat-gateway" | "instance";
  /** Prefix of the physical names (flow-log role and group): the stack's name prefix, so a deploy role scoped to it can make them. */
  readonly namePrefix: string;
}

/**
 * What the flow-log service needs on its log group, as AWS documents for delivery to
 * CloudWatch Logs (CreateLogGroup and DescribeLogGroups included; the latter takes no ARN).
 */
export function flowLogDeliveryPolicy(groupArn: string): string {
  return toJson(
    policyDocument(
      { Effect: "Allow", Action: ["logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents", "logs:DescribeLogStreams"], Resource: [groupArn, `${groupArn}:log-stream:*`] },
      { Effect: "Allow", Action: "logs:DescribeLogGroups", Resource: "*" },
    ),
  );
}

/**
 * A VPC with no inbound path from the internet: private subnets across zones, one NAT
 * gateway for outbound image pulls, free gateway endpoints for S3 and DynamoDB, the
 * default security group emptied, and flow logs to an encrypted log group.
 */
export class PrivateNetwork extends pulumi.ComponentResource {
  public readonly vpcId: pulumi.Output<string>;
  public readonly vpcArn: pulumi.Output<string>;
  public readonly cidr: string;
  public readonly privateSubnetIds: pulumi.Output<string>[];
  public readonly privateSubnetCidrs: readonly string[];
  public readonly privateRouteTableId: pulumi.Output<string>;
  /** The private subnets' way out (the NAT gateway's default route; none when the caller routes through an instance): a host that downloads at boot starts after it. */
  public readonly privateEgress: readonly pulumi.Resource[];
  /** The small subnet that routes to the internet gateway (NAT gateway or NAT instance). */
  public readonly publicSubnetId: pulumi.Output<string>;
  public readonly publicRouteTableId: pulumi.Output<string>;
  public readonly zones: pulumi.Output<string[]>;

  constructor(name: string, args: PrivateNetworkArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:network:PrivateNetwork", name, {}, opts);
    const child = { parent: this };
    const count = zoneCount(args.zones);
    const layout = subnetLayout(args.cidr, count);
    this.zones =
      "names" in args.zones
        ? pulumi.output([...args.zones.names])
        : getAvailabilityZonesOutput({ state: "available", filters: [{ name: "opt-in-status", values: ["opt-in-not-required"] }] }, child)
            .names.apply((names) => {
              if (names.length < count) {
                throw new pulumi.RunError(`${args.region} has ${names.length} available zones, but clusterra:network.availabilityZones asks for ${count}`);
              }
              return names.slice(0, count);
            });

    const vpc = new ec2.Vpc(`${name}-vpc`, { cidrBlock: args.cidr, enableDnsHostnames: true, enableDnsSupport: true, tags: { Name: name } }, child);
    // The default group admits all traffic between its members: manage it and leave it empty.
    new ec2.DefaultSecurityGroup(`${name}-default-sg`, { vpcId: vpc.id, tags: { Name: `${name}-default-closed` } }, child);

    const privateRouteTable = new ec2.RouteTable(`${name}-private-rt`, { vpcId: vpc.id, tags: { Name: `${name}-private` } }, child);
    const privateSubnets = layout.private.map((cidrBlock, i) => {
      const subnet = new ec2.Subnet(
        `${name}-private-${i}`,
        {
          vpcId: vpc.id,
          cidrBlock,
          availabilityZone: this.zones.apply((z) => z[i]),
          mapPublicIpOnLaunch: false,
          tags: { Name: `${name}-private-${i}`, ...args.privateSubnetTags },
        },
        child,
      );
      new ec2.RouteTableAssociation(`${name}-private-${i}`, { subnetId: subnet.id, routeTableId: privateRouteTable.id }, child);
      return subnet;
    });

    // Outbound only: the NAT's subnet routes to the internet gateway; nothing else lives there.
    const igw = new ec2.InternetGateway(`${name}-igw`, { vpcId: vpc.id, tags: { Name: name } }, child);
    const publicSubnet = new ec2.Subnet(
      `${name}-nat`,
      { vpcId: vpc.id, cidrBlock: layout.public, availabilityZone: this.zones.apply((z) => z[0]), mapPublicIpOnLaunch: false, tags: { Name: `${name}-nat` } },
      child,
    );
    const publicRouteTable = new ec2.RouteTable(`${name}-nat-rt`, { vpcId: vpc.id, tags: { Name: `${name}-nat` } }, child);
    new ec2.Route(`${name}-nat-default`, { routeTableId: publicRouteTable.id, destinationCidrBlock: "0.0.0.0/0", gatewayId: igw.id }, child);
    new ec2.RouteTableAssociation(`${name}-nat`, { subnetId: publicSubnet.id, routeTableId: publicRouteTable.id }, child);
    const egress: pulumi.Resource[] = [];
    if ((args.egress ?? "nat-gateway") === "nat-gateway") {
      const eip = new ec2.Eip(`${name}-nat`, { domain: "vpc", tags: { Name: `${name}-nat` } }, child);
      const nat = new ec2.NatGateway(`${name}-nat`, { subnetId: publicSubnet.id, allocationId: eip.id, connectivityType: "public", tags: { Name: name } }, { parent: this, dependsOn: [igw] });
      egress.push(new ec2.Route(`${name}-private-default`, { routeTableId: privateRouteTable.id, destinationCidrBlock: "0.0.0.0/0", natGatewayId: nat.id }, child));
    }
    this.privateEgress = egress;

    for (const service of GATEWAY_ENDPOINT_SERVICES) {
      new ec2.VpcEndpoint(
        `${name}-${service}`,
        {
          vpcId: vpc.id,
          serviceName: `${servicePrefix(args.partition)}.${args.region}.${service}`,
          vpcEndpointType: "Gateway",
          // The NAT subnet too: a host there (the tenant's K3s server) reaches its package
          // repositories (S3) before its public address is attached, and free of NAT charges.
          routeTableIds: [privateRouteTable.id, publicRouteTable.id],
          tags: { Name: `${name}-${service}` },
        },
        child,
      );
    }

    const logGroup = new cloudwatch.LogGroup(
      `${name}-flow-logs`,
      { name: `/${PROJECT}/vpc/${args.namePrefix}/flow-logs`, retentionInDays: args.flowLogRetentionDays ?? DEFAULT_FLOW_LOG_RETENTION_DAYS, kmsKeyId: args.logKeyArn },
      child,
    );
    const flowLogRole = new iam.Role(
      `${name}-flow-logs`,
      {
        name: `${args.namePrefix}-flow-logs`,
        description: `VPC flow logs of ${name} write to their log group`,
        assumeRolePolicy: pulumi
          .output(args.accountId)
          .apply((account) => toJson(serviceTrust("vpc-flow-logs.amazonaws.com", account, arn(args.partition, "ec2", args.region, account, "vpc-flow-log/*")))),
      },
      child,
    );
    new iam.RolePolicy(
      `${name}-flow-logs`,
      {
        role: flowLogRole.name,
        policy: logGroup.arn.apply(flowLogDeliveryPolicy),
      },
      child,
    );
    new ec2.FlowLog(
      `${name}-flow-log`,
      {
        vpcId: vpc.id,
        trafficType: "ALL",
        logDestinationType: "cloud-watch-logs",
        logDestination: logGroup.arn,
        iamRoleArn: flowLogRole.arn,
        maxAggregationInterval: 60,
        tags: { Name: name },
      },
      child,
    );

    this.vpcId = vpc.id;
    this.vpcArn = vpc.arn;
    this.cidr = args.cidr;
    this.privateSubnetIds = privateSubnets.map((s) => s.id);
    this.privateSubnetCidrs = layout.private;
    this.privateRouteTableId = privateRouteTable.id;
    this.publicSubnetId = publicSubnet.id;
    this.publicRouteTableId = publicRouteTable.id;
    this.registerOutputs({ vpcId: this.vpcId, privateSubnetIds: this.privateSubnetIds, privateRouteTableId: this.privateRouteTableId });
  }
}
