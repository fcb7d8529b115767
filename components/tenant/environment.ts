import * as pulumi from "@pulumi/pulumi";
import type { TenantConfig } from "../../config/types";
import { PrivateNetwork } from "../network/private-network";
import { StackKey } from "../security/stack-key";
import type { SlurmctldEndpointOutput } from "../central/outputs";
import { CentralPeering } from "./central-peering";
import { platformName } from "../../facts/project";

export interface TenantEnvironmentArgs {
  /** The validated tenant stack configuration. */
  readonly config: TenantConfig;
  /** The tenant account the stack's provider deploys into. */
  readonly accountId: pulumi.Output<string>;
  /** Provider acting in the central account through its tenant-attachment role. */
  readonly centralProvider: pulumi.ProviderResource;
  /** What the central stack publishes. */
  readonly central: {
    /** Central VPC. */
    readonly vpcId: pulumi.Output<string>;
    /** Central private subnets (the tenant's load balancer lives there). */
    readonly privateSubnetIds: pulumi.Output<string[]>;
    /** Central route tables. */
    readonly routeTableIds: pulumi.Output<string[]>;
    /** The central K3s host. */
    readonly hostInstanceId: pulumi.Output<string>;
    /** Its private address. */
    readonly hostPrivateIp: pulumi.Output<string>;
    /** Its security group. */
    readonly hostSecurityGroupId: pulumi.Output<string>;
    /** This tenant's slurmctld endpoint, which central owns. */
    readonly slurmctldEndpoint: pulumi.Output<SlurmctldEndpointOutput>;
  };
}


/** Karpenter finds subnets and groups by this tag (value: the tenant cluster's name). */
export const KARPENTER_DISCOVERY_TAG = "karpenter.sh/discovery";

export function tenantClusterName(environment: string, tenantId: string): string {
  return platformName(environment, tenantId);
}

/**
 * A tenant's side: its key and VPC in its own account, joined to central by peering, and
 * its private slurmctld endpoint on central.
 */
export class TenantEnvironment extends pulumi.ComponentResource {
  public readonly outputs: Record<string, pulumi.Input<unknown>>;

  constructor(name: string, args: TenantEnvironmentArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:tenant:TenantEnvironment", name, {}, opts);
    const { config, central } = args;
    const child = { parent: this };
    const common = { region: config.region, partition: config.partition, accountId: args.accountId };
    const clusterName = tenantClusterName(config.environment, config.tenant.id);

    const key = new StackKey(`${name}`, { ...common, aliasName: `${config.environment}/tenant-${config.tenant.id}`, purpose: `tenant ${config.tenant.id}: volumes, files, logs`, logsService: true }, child);
    const network = new PrivateNetwork(
      `${name}`,
      {
        ...common,
        cidr: config.network.vpcCidr,
        zones: config.network.availabilityZones,
        logKeyArn: key.keyArn,
        privateSubnetTags: { [KARPENTER_DISCOVERY_TAG]: clusterName },
      },
      child,
    );
    const peering = new CentralPeering(
      `${name}-peering`,
      {
        tenantId: config.tenant.id,
        tenantVpcId: network.vpcId,
        tenantCidr: network.cidr,
        tenantRouteTableIds: [network.privateRouteTableId],
        centralVpcId: central.vpcId,
        centralCidr: config.central.vpcCidr,
        centralAccountId: config.central.accountId,
        centralRegion: config.central.region,
        crossRegion: config.central.region !== config.region,
        centralHostIp: central.hostPrivateIp,
        centralProvider: args.centralProvider,
      },
      child,
    );

    this.outputs = {
      tenantId: config.tenant.id,
      clusterName,
      vpcId: network.vpcId,
      vpcCidr: network.cidr,
      privateSubnetIds: pulumi.all(network.privateSubnetIds),
      peeringConnectionId: peering.connectionId,
      workersSecurityGroupId: peering.workersSecurityGroupId,
      slurmctldEndpoint: central.slurmctldEndpoint.host,
      slurmctldPort: central.slurmctldEndpoint.port,
      slurmctldNodePort: central.slurmctldEndpoint.nodePort,
      kmsKeyArn: key.keyArn,
    };
    this.registerOutputs(this.outputs);
  }
}
