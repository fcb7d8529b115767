import { ownerTag } from "../../facts/project";
import * as pulumi from "@pulumi/pulumi";
import * as ec2 from "@pulumi/aws/ec2";
import * as vpc from "@pulumi/aws/vpc";
import { contractRule } from "../network/contract-rule";
import { CLUSTER_INTERNAL_FLOWS, type ClusterFlow } from "../../facts/cluster-flows";
import { PEERING_FLOWS } from "../../facts/contract";
import { addBaselineEgress } from "../network/baseline-egress";
import type { TenantPorts } from "../../facts/contract";

export interface ClusterSecurityGroupsArgs {
  /** The stack's name prefix: the clusterra:owner tag its security groups carry (set at creation only; the deploy role changes only such groups). */
  readonly owner: string;
  /** Tenant id: names and descriptions. */
  readonly tenantId: string;
  /** Its ports on central's host (its stack file's `clusterra:ports`): the per-tenant flows open exactly these. */
  readonly ports: TenantPorts;
  /** The tenant VPC. */
  readonly vpcId: pulumi.Input<string>;
  /** Its CIDR (DNS to the VPC resolver). */
  readonly vpcCidr: string;
  /** The workers' group (created with the peering, which admits central's 6818 to it). */
  readonly workersSecurityGroupId: pulumi.Input<string>;
  /** The central K3s host's address: the only peer of the server's contract flows. */
  readonly centralHostIp: pulumi.Input<string>;
  /** Tags on the server's group (Karpenter's discovery tag is on the workers' group only). */
  readonly tags?: Readonly<Record<string, string>>;
}

/**
 * Contract flows whose tenant end is the K3s server: its own, and the tenant VPC's way to
 * slurmctld (the cluster's slurmrestd runs on the server, and its pod ENIs take this group).
 */
export const SERVER_FLOWS = PEERING_FLOWS.filter((f) => f.from === "tenant-host" || f.to === "tenant-host" || (f.from === "tenant-vpc" && f.to === "central-host" && !f.workersOnly));

/**
 * The K3s server's security group and every rule between the cluster's own nodes, from
 * one table (facts/cluster-flows.ts): agents to the API, kubelet and Cilium health,
 * CoreDNS on the server, the server as the workers' NAT (HTTPS only), slurmd and job
 * traffic among workers. The server's contract flows with central come from the contract.
 * Cilium's ENIs inherit these groups, so the same rules govern pod traffic.
 */
export class ClusterSecurityGroups extends pulumi.ComponentResource {
  public readonly serverSecurityGroupId: pulumi.Output<string>;

  constructor(name: string, args: ClusterSecurityGroupsArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:tenant:ClusterSecurityGroups", name, {}, opts);
    const child = { parent: this };
    const server = new ec2.SecurityGroup(
      `${name}-server`,
      { vpcId: args.vpcId, description: `K3s server of ${args.tenantId}: cluster nodes and the contract flows with central only`, tags: { Name: `clusterra-${args.tenantId}-k3s-server`, ...args.tags, ...ownerTag(args.owner) } },
      child,
    );
    const groups = { server: server.id, workers: pulumi.output(args.workersSecurityGroupId) };
    const rule = (flow: ClusterFlow) => ({ ipProtocol: flow.protocol, fromPort: flow.fromPort, toPort: flow.toPort, description: flow.purpose });
    for (const flow of CLUSTER_INTERNAL_FLOWS) {
      new vpc.SecurityGroupIngressRule(`${name}-${flow.id}-in`, { ...rule(flow), securityGroupId: groups[flow.to], referencedSecurityGroupId: groups[flow.from] }, child);
      new vpc.SecurityGroupEgressRule(`${name}-${flow.id}-out`, { ...rule(flow), securityGroupId: groups[flow.from], referencedSecurityGroupId: groups[flow.to] }, child);
    }
    const hostCidr = pulumi.interpolate`${args.centralHostIp}/32`;
    for (const flow of SERVER_FLOWS) {
      const r = { ...contractRule(flow, args.ports, hostCidr), securityGroupId: server.id };
      if (flow.to === "tenant-host") new vpc.SecurityGroupIngressRule(`${name}-${flow.id}`, r, child);
      else new vpc.SecurityGroupEgressRule(`${name}-${flow.id}-out`, r, child);
    }
    addBaselineEgress(`${name}-server`, server.id, args.vpcCidr, this);

    this.serverSecurityGroupId = server.id;
    this.registerOutputs({ serverSecurityGroupId: this.serverSecurityGroupId });
  }
}
