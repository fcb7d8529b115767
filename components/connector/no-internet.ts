/**
 * A ParallelCluster without internet access: the VPC endpoints its nodes and the job hooks
 * need (facts/connector-network.ts), behind one security group that admits only the
 * cluster's own groups on 443. Gateway endpoints (S3, DynamoDB) go on the subnets' route
 * tables and cost nothing; interface endpoints are billed per zone-hour.
 */
import { ownerTag, PROJECT } from "../../facts/project";
import * as pulumi from "@pulumi/pulumi";
import * as ec2 from "@pulumi/aws/ec2";
import * as vpc from "@pulumi/aws/vpc";
import { endpointServiceName, NO_INTERNET_ENDPOINTS, type EndpointSpec } from "../../facts/connector-network";
import type { Partition } from "../../facts/regions";

/** HTTPS: every AWS API the endpoints serve. */
const HTTPS = 443;

/** The endpoints a cluster needs, with their service names in its partition. */
export function endpointsFor(partition: Partition, region: string, directoryService: boolean): (EndpointSpec & { serviceName: string })[] {
  return NO_INTERNET_ENDPOINTS.filter((e) => directoryService || !e.directoryServiceOnly).map((e) => ({ ...e, serviceName: endpointServiceName(partition, region, e) }));
}

export interface NoInternetEndpointsArgs {
  readonly clusterName: string;
  readonly region: string;
  readonly partition: Partition;
  readonly vpcId: string;
  /** Interface endpoints get one network interface in each (one subnet per zone). */
  readonly subnetIds: readonly string[];
  readonly routeTableIds: readonly string[];
  /** The cluster's security groups: the only sources admitted. */
  readonly clusterSecurityGroupIds: readonly string[];
  readonly directoryService: boolean;
}

export class NoInternetEndpoints extends pulumi.ComponentResource {
  public readonly securityGroupId: pulumi.Output<string>;
  /** Service name -> endpoint id. */
  public readonly endpointIds: pulumi.Output<Record<string, string>>;

  constructor(name: string, args: NoInternetEndpointsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:connector:NoInternetEndpoints", name, {}, opts);
    const child = { parent: this };
    const group = new ec2.SecurityGroup(`${name}-endpoints`, { name: `clusterra-${args.clusterName}-endpoints`, description: `${args.clusterName}: AWS API endpoints, HTTPS from the cluster only`, vpcId: args.vpcId, tags: ownerTag(`${PROJECT}-${args.clusterName}`) }, child);
    args.clusterSecurityGroupIds.forEach((source, i) => {
      new vpc.SecurityGroupIngressRule(
        `${name}-https-from-cluster-${i}`,
        { securityGroupId: group.id, referencedSecurityGroupId: source, ipProtocol: "tcp", fromPort: HTTPS, toPort: HTTPS, description: `HTTPS to AWS APIs from cluster group ${source}` },
        child,
      );
    });
    const endpoints = endpointsFor(args.partition, args.region, args.directoryService).map((e) => {
      const endpoint = new ec2.VpcEndpoint(
        `${name}-${e.service}`,
        e.type === "Interface"
          ? { vpcId: args.vpcId, serviceName: e.serviceName, vpcEndpointType: "Interface", subnetIds: [...args.subnetIds], securityGroupIds: [group.id], privateDnsEnabled: true, tags: { Name: `clusterra-${args.clusterName}-${e.service}` } }
          : { vpcId: args.vpcId, serviceName: e.serviceName, vpcEndpointType: "Gateway", routeTableIds: [...args.routeTableIds], tags: { Name: `clusterra-${args.clusterName}-${e.service}` } },
        child,
      );
      return endpoint.id.apply((id) => [e.serviceName, id] as const);
    });
    this.securityGroupId = group.id;
    this.endpointIds = pulumi.all(endpoints).apply((pairs) => Object.fromEntries(pairs));
    this.registerOutputs({ securityGroupId: this.securityGroupId, endpointIds: this.endpointIds });
  }
}
