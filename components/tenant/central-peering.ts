import { ownerTag } from "../../facts/project";
import * as pulumi from "@pulumi/pulumi";
import type { ProviderResource } from "@pulumi/pulumi";
import * as ec2 from "@pulumi/aws/ec2";
import * as vpc from "@pulumi/aws/vpc";
import { contractRule } from "../network/contract-rule";
import { PEERING_FLOWS, type PeeringFlow } from "../../facts/contract";
import { addBaselineEgress } from "../network/baseline-egress";
import type { TenantPorts } from "../../facts/contract";

export interface CentralPeeringArgs {
  /** The stack's name prefix: the clusterra:owner tag its security groups carry (set at creation only; the deploy role changes only such groups). */
  readonly owner: string;
  /** The tenant: names and tags. */
  readonly tenantId: string;
  /** Its ports on central's host (its stack file's `clusterra:ports`): the per-tenant flows open exactly these. */
  readonly ports: TenantPorts;
  /** The tenant VPC (requester). */
  readonly tenantVpcId: pulumi.Input<string>;
  /** The tenant VPC's CIDR: central routes it and admits 6818 to it. */
  readonly tenantCidr: string;
  /** Tenant route tables that get the route to central. */
  readonly tenantRouteTableIds: pulumi.Input<string>[];
  /** The central VPC (accepter). */
  readonly centralVpcId: pulumi.Input<string>;
  /** The central VPC's CIDR: the tenant routes it. */
  readonly centralCidr: string;
  /** Account that owns the central VPC. */
  readonly centralAccountId: string;
  /** Region of the central VPC. */
  readonly centralRegion: string;
  /** Whether central lives in another region than this stack (cross-region peering). */
  readonly crossRegion: boolean;
  /** The central host's private address: the only source of 6818 and the only place slurmd may dial. */
  readonly centralHostIp: pulumi.Input<string>;
  /** Provider acting in the central account through the role central made for this tenant. */
  readonly centralProvider: ProviderResource;
  /** Extra tags on the workers' group (Karpenter's discovery tag). */
  readonly workersSecurityGroupTags?: Readonly<Record<string, string>>;
}

/** Flows from the central host into the tenant VPC (slurmd pods): the tenant side's rules. */
export const TENANT_VPC_FLOWS: readonly PeeringFlow[] = PEERING_FLOWS.filter((f) => f.from === "central-host" && f.to === "tenant-vpc");

/** Flows the tenant VPC's pods open towards the central host (slurmd to its slurmctld). */
export const FROM_TENANT_VPC_FLOWS: readonly PeeringFlow[] = PEERING_FLOWS.filter((f) => f.from === "tenant-vpc" && f.to === "central-host");

/**
 * VPC peering between a tenant and central: requested from the tenant account, accepted in
 * central through the tenant's own role there (which accepts only peerings from this
 * tenant's account), and routed on the tenant side. Central's route and its rules towards
 * the tenant are the central stack's (TenantLink). The security-group rules of the flows
 * whose ends exist here come from the contract table; the tenant host's flows arrive with
 * the tenant host.
 */
export class CentralPeering extends pulumi.ComponentResource {
  public readonly connectionId: pulumi.Output<string>;
  /** Group the slurmd nodes join: admits exactly the contract's flows into the tenant VPC. */
  public readonly workersSecurityGroupId: pulumi.Output<string>;

  constructor(name: string, args: CentralPeeringArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:tenant:CentralPeering", name, {}, opts);
    const child = { parent: this };
    const inCentral = { parent: this, provider: args.centralProvider };

    const request = new ec2.VpcPeeringConnection(
      `${name}-request`,
      {
        vpcId: args.tenantVpcId,
        peerVpcId: args.centralVpcId,
        peerOwnerId: args.centralAccountId,
        ...(args.crossRegion ? { peerRegion: args.centralRegion } : {}),
        tags: { Name: `clusterra-${args.tenantId}-to-central` },
      },
      child,
    );
    const accept = new ec2.VpcPeeringConnectionAccepter(
      `${name}-accept`,
      { vpcPeeringConnectionId: request.id, autoAccept: true, tags: { Name: `clusterra-${args.tenantId}-to-central` } },
      inCentral,
    );

    args.tenantRouteTableIds.forEach((routeTableId, i) => {
      new ec2.Route(`${name}-to-central-${i}`, { routeTableId, destinationCidrBlock: args.centralCidr, vpcPeeringConnectionId: request.id }, { parent: this, dependsOn: [accept] });
    });

    const workers = new ec2.SecurityGroup(
      `${name}-workers`,
      { vpcId: args.tenantVpcId, description: `slurmd nodes of ${args.tenantId}: central reaches them only as the contract says`, tags: { Name: `clusterra-${args.tenantId}-workers`, ...args.workersSecurityGroupTags, ...ownerTag(args.owner) } },
      child,
    );
    const hostCidr = pulumi.interpolate`${args.centralHostIp}/32`;
    for (const flow of TENANT_VPC_FLOWS) {
      new vpc.SecurityGroupIngressRule(`${name}-${flow.id}`, { ...contractRule(flow, args.ports, hostCidr), securityGroupId: workers.id }, child);
    }
    // The group starts with no egress (the provider drops AWS's allow-all): add what slurmd needs.
    for (const flow of FROM_TENANT_VPC_FLOWS) {
      new vpc.SecurityGroupEgressRule(`${name}-${flow.id}-out`, { ...contractRule(flow, args.ports, hostCidr), securityGroupId: workers.id }, child);
    }
    addBaselineEgress(`${name}-workers`, workers.id, args.tenantCidr, this);

    this.connectionId = request.id;
    this.workersSecurityGroupId = workers.id;
    this.registerOutputs({ connectionId: this.connectionId, workersSecurityGroupId: this.workersSecurityGroupId });
  }
}
