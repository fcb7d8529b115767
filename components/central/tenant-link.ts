import * as pulumi from "@pulumi/pulumi";
import { TenantMetricsRole } from "../observability/host-metrics";
import { hostMetricsNamespace } from "../../facts/alarms";
import * as ec2 from "@pulumi/aws/ec2";
import { getVpcPeeringConnectionsOutput } from "@pulumi/aws/ec2/getVpcPeeringConnections";
import * as vpc from "@pulumi/aws/vpc";
import { contractRule } from "../network/contract-rule";
import type { CentralTenant } from "../../config/types";
import { centralHostFlows, type PeeringFlow } from "../../facts/contract";
import { TAG_KEYS } from "../../facts/project";
import type { AccountScope } from "../security/scope";
import type { SlurmctldEndpointOutput } from "./outputs";
import { TenantAccessRole } from "./tenant-attachment";
import { ControlPlaneSecrets } from "./control-plane-secrets";

export interface TenantLinkArgs extends AccountScope {
  /** Environment name: role names. */
  readonly environment: string;
  /** The central VPC (where the tenant's peering is found). */
  readonly vpcId: pulumi.Input<string>;
  /** The central K3s host's address: where the tenant's slurmd dial its slurmctld. */
  readonly hostPrivateIp: pulumi.Input<string>;
  /** The host's group: gets this tenant's contract flows (its VPC and its server's /32 as peers). */
  readonly hostSecurityGroupId: pulumi.Input<string>;
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

/**
 * The host group's rules for one tenant, from the contract: ingress for every flow into the
 * central host, egress for every flow out of it, each naming the tenant's end by CIDR (its
 * VPC, or its server's fixed address as a /32), tagged with the flow and the tenant.
 */
export function hostRulesFor(tenant: CentralTenant): { readonly flow: PeeringFlow; readonly direction: "ingress" | "egress"; readonly rule: Omit<vpc.SecurityGroupIngressRuleArgs, "securityGroupId"> }[] {
  const peer = { "tenant-vpc": tenant.vpcCidr, "tenant-host": `${tenant.serverPrivateIp}/32` } as const;
  return centralHostFlows().map(({ flow, direction, tenantEnd }) => ({
    flow,
    direction,
    rule: contractRule(flow, tenant.ports, peer[tenantEnd], { description: `${flow.purpose} (tenant ${tenant.id})`, tags: { [TAG_KEYS.tenant]: tenant.id } }),
  }));
}

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
 * reads the tenant's secrets with, the host group's rules for this tenant (its VPC in on
 * its own slurmctld NodePort and nowhere else, 6818 out to it; its server's fixed address
 * in on cluster-api's port, 6443 out to it), and the route to it over its peering. The
 * route needs the peering, which the tenant's run creates: the next central run finds it
 * (accepted, from the tenant's account, with the tenant's CIDR) and routes it; until then
 * nothing routes to the tenant.
 *
 * No load balancer: slurmd dials the host's address on the tenant's NodePort, so
 * slurmctld sees the slurmd pod's own address (dynamic nodes register with the address
 * they connect from), and one more tenant costs four rules, not an NLB.
 */
export class TenantLink extends pulumi.ComponentResource {
  public readonly roleArn: pulumi.Output<string>;
  public readonly endpoint: pulumi.Output<SlurmctldEndpointOutput>;

  constructor(name: string, args: TenantLinkArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:central:TenantLink", name, {}, opts);
    const child = { parent: this };
    const { tenant } = args;

    const access = new TenantAccessRole(`${name}-access`, { ...args, tenantId: tenant.id, tenantAccountId: tenant.accountId }, child);
    new ControlPlaneSecrets(`${name}-control-plane`, { ...args, tenantId: tenant.id }, child);
    new TenantMetricsRole(`${name}-metrics`, { partition: args.partition, environment: args.environment, tenantId: tenant.id, tenantAccountId: tenant.accountId, namespace: hostMetricsNamespace(args.environment, { tenantId: tenant.id }) }, child);
    for (const { flow, direction, rule } of hostRulesFor(tenant)) {
      const ruleArgs = { ...rule, securityGroupId: args.hostSecurityGroupId };
      if (direction === "ingress") new vpc.SecurityGroupIngressRule(`${name}-${flow.id}`, ruleArgs, child);
      else new vpc.SecurityGroupEgressRule(`${name}-${flow.id}-out`, ruleArgs, child);
    }
    const peerings = getVpcPeeringConnectionsOutput({ filters: pulumi.output(args.vpcId).apply((vpcId) => tenantPeeringFilters(vpcId, tenant)) }, child);
    // At most one active peering matches (one VPC, one CIDR, one account); none before the tenant's first run.
    peerings.ids.apply((ids) =>
      ids.slice(0, 1).map((peeringId) => new ec2.Route(`${name}-route`, { routeTableId: args.routeTableId, destinationCidrBlock: tenant.vpcCidr, vpcPeeringConnectionId: peeringId }, child)),
    );

    this.roleArn = access.roleArn;
    this.endpoint = pulumi.output(args.hostPrivateIp).apply((host) => ({ host, port: tenant.ports.slurmctld }));
    this.registerOutputs({ roleArn: this.roleArn, endpoint: this.endpoint });
  }
}
