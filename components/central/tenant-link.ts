import * as pulumi from "@pulumi/pulumi";
import * as ec2 from "@pulumi/aws/ec2";
import { getVpcPeeringConnectionsOutput } from "@pulumi/aws/ec2/getVpcPeeringConnections";
import * as vpc from "@pulumi/aws/vpc";
import type { CentralTenant } from "../../config/types";
import { PEERING_FLOWS } from "../../facts/contract";
import { TAG_KEYS } from "../../facts/project";
import type { AccountScope } from "../security/scope";
import { SlurmctldEndpoint, type CentralHostSide } from "./slurmctld-endpoint";
import { TenantAccessRole } from "./tenant-attachment";
import { ControlPlaneSecrets } from "./control-plane-secrets";

export interface TenantLinkArgs extends AccountScope, CentralHostSide {
  /** Environment name: role and load-balancer names. */
  readonly environment: string;
  /** The tenant, as its stack file declares it. */
  readonly tenant: CentralTenant;
  /** Central's private route table, which gets the route to the tenant. */
  readonly routeTableId: pulumi.Input<string>;
  /** Central's stack key. */
  readonly kmsKeyArn: pulumi.Input<string>;
  /** The central host's role (central's External Secrets reads the tenant's secrets through it). */
  readonly hostRoleArn: pulumi.Input<string>;
  readonly hostRoleName: pulumi.Input<string>;
}

/** Flows central opens towards the tenant VPC: central's egress rules. */
const TO_TENANT_VPC_FLOWS = PEERING_FLOWS.filter((f) => f.from === "central-host" && f.to === "tenant-vpc");

/** The filters that find a tenant's accepted peering into central: its account, its CIDR, this VPC. */
export function tenantPeeringFilters(vpcId: string, tenant: CentralTenant): { name: string; values: string[] }[] {
  return [
    { name: "accepter-vpc-info.vpc-id", values: [vpcId] },
    { name: "requester-vpc-info.owner-id", values: [tenant.accountId] },
    { name: "requester-vpc-info.cidr-block", values: [tenant.vpcCidr] },
    { name: "status-code", values: ["active"] },
  ];
}

/**
 * Central's side of one tenant, all owned by the central stack and derived from the tenant's
 * stack file: the role the tenant's stack assumes here, the role central's External Secrets
 * reads the tenant's secrets with, its slurmctld endpoint, the host's
 * 6818 egress to its VPC, and the route to it over its peering. The route needs the peering,
 * which the tenant's run creates: the next central run finds it (accepted, from the tenant's
 * account, with the tenant's CIDR) and routes it; until then nothing routes to the tenant.
 */
export class TenantLink extends pulumi.ComponentResource {
  public readonly roleArn: pulumi.Output<string>;
  public readonly endpoint: pulumi.Output<{ host: string; port: number; nodePort: number }>;

  constructor(name: string, args: TenantLinkArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:central:TenantLink", name, {}, opts);
    const child = { parent: this };
    const { tenant } = args;
    const tenantTag = { [TAG_KEYS.tenant]: tenant.id };

    const access = new TenantAccessRole(`${name}-access`, { ...args, tenantId: tenant.id, tenantAccountId: tenant.accountId }, child);
    new ControlPlaneSecrets(`${name}-control-plane`, { ...args, tenantId: tenant.id }, child);
    const endpoint = new SlurmctldEndpoint(`${name}-slurmctld`, { ...args, tenantId: tenant.id, tenantCidr: tenant.vpcCidr }, child);
    for (const flow of TO_TENANT_VPC_FLOWS) {
      new vpc.SecurityGroupEgressRule(
        `${name}-${flow.id}-out`,
        {
          securityGroupId: args.hostSecurityGroupId,
          ipProtocol: flow.protocol,
          fromPort: flow.fromPort,
          toPort: flow.toPort,
          cidrIpv4: tenant.vpcCidr,
          description: `${flow.purpose} (tenant ${tenant.id})`,
          tags: { [TAG_KEYS.flow]: flow.id, ...tenantTag },
        },
        child,
      );
    }
    const peerings = getVpcPeeringConnectionsOutput({ filters: pulumi.output(args.vpcId).apply((vpcId) => tenantPeeringFilters(vpcId, tenant)) }, child);
    // At most one active peering matches (one VPC, one CIDR, one account); none before the tenant's first run.
    peerings.ids.apply((ids) =>
      ids.slice(0, 1).map((peeringId) => new ec2.Route(`${name}-route`, { routeTableId: args.routeTableId, destinationCidrBlock: tenant.vpcCidr, vpcPeeringConnectionId: peeringId }, child)),
    );

    this.roleArn = access.roleArn;
    this.endpoint = endpoint.dnsName.apply((host) => ({ host, port: endpoint.port, nodePort: endpoint.nodePort }));
    this.registerOutputs({ roleArn: this.roleArn, endpoint: this.endpoint });
  }
}
