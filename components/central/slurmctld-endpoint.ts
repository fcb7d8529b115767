import * as pulumi from "@pulumi/pulumi";
import * as ec2 from "@pulumi/aws/ec2";
import * as lb from "@pulumi/aws/lb";
import * as vpc from "@pulumi/aws/vpc";
import { PEERING_FLOWS, SLURM_PORTS, slurmctldNodePort } from "../../facts/contract";
import { platformName, TAG_KEYS } from "../../facts/project";

/** Where a tenant's endpoint attaches on central: the VPC, its subnets, the K3s host and its group. */
export interface CentralHostSide {
  /** The central VPC. */
  readonly vpcId: pulumi.Input<string>;
  /** Central private subnets (load balancers live there). */
  readonly subnetIds: pulumi.Input<string[]>;
  /** The central K3s host: the target. */
  readonly hostInstanceId: pulumi.Input<string>;
  /** The host's group, which admits each tenant's load balancer on that tenant's NodePort. */
  readonly hostSecurityGroupId: pulumi.Input<string>;
}

export interface SlurmctldEndpointArgs extends CentralHostSide {
  /** The tenant: names, tags and its NodePort. */
  readonly tenantId: string;
  /** Environment name: the load balancer's name. */
  readonly environment: string;
  /** The tenant VPC's CIDR: the only source admitted. */
  readonly tenantCidr: string;
}

const FLOW = PEERING_FLOWS.find((f) => f.id === "slurmd-to-slurmctld")!;

/**
 * The tenant's own way in to its slurmctld on central, owned by the central stack (built
 * from the tenant's stack file, so no tenant run touches the host's group or any load
 * balancer): an internal NLB in the central VPC
 * whose security group admits only this tenant's CIDR on 6817, forwarding to the
 * tenant's NodePort on the central host. Another tenant's slurmd cannot reach it: its
 * CIDR is on no rule here, and the host admits each NodePort only from its tenant's NLB.
 */
export class SlurmctldEndpoint extends pulumi.ComponentResource {
  public readonly dnsName: pulumi.Output<string>;
  public readonly nodePort: number;
  /** The port slurmd dials on the load balancer. */
  public readonly port: number;

  constructor(name: string, args: SlurmctldEndpointArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:central:SlurmctldEndpoint", name, {}, opts);
    const child = { parent: this };
    this.nodePort = slurmctldNodePort(args.tenantId);
    // Validation keeps this within ELB's 32 characters.
    const lbName = platformName(args.environment, args.tenantId);

    const sg = new ec2.SecurityGroup(
      `${name}-sg`,
      { vpcId: args.vpcId, description: `slurmctld endpoint of tenant ${args.tenantId}: 6817 from its VPC only`, tags: { Name: lbName, [TAG_KEYS.tenant]: args.tenantId } },
      child,
    );
    new vpc.SecurityGroupIngressRule(
      `${name}-${FLOW.id}`,
      {
        securityGroupId: sg.id,
        ipProtocol: FLOW.protocol,
        fromPort: FLOW.fromPort,
        toPort: FLOW.toPort,
        cidrIpv4: args.tenantCidr,
        description: FLOW.purpose,
        tags: { [TAG_KEYS.flow]: FLOW.id, [TAG_KEYS.tenant]: args.tenantId },
      },
      child,
    );
    new vpc.SecurityGroupEgressRule(
      `${name}-to-host`,
      { securityGroupId: sg.id, ipProtocol: "tcp", fromPort: this.nodePort, toPort: this.nodePort, referencedSecurityGroupId: args.hostSecurityGroupId, description: `forward to the slurmctld NodePort of tenant ${args.tenantId}` },
      child,
    );
    new vpc.SecurityGroupIngressRule(
      `${name}-host-nodeport`,
      { securityGroupId: args.hostSecurityGroupId, ipProtocol: "tcp", fromPort: this.nodePort, toPort: this.nodePort, referencedSecurityGroupId: sg.id, description: `slurmctld endpoint of tenant ${args.tenantId} to its NodePort` },
      child,
    );

    const nlb = new lb.LoadBalancer(
      `${name}-nlb`,
      {
        name: lbName,
        loadBalancerType: "network",
        internal: true,
        subnets: args.subnetIds,
        securityGroups: [sg.id],
        enableCrossZoneLoadBalancing: true,
        // Stateless and per tenant: offboarding a tenant is a plain `pulumi destroy`.
        enableDeletionProtection: false,
        tags: { Name: lbName, [TAG_KEYS.tenant]: args.tenantId },
      },
      child,
    );
    const targets = new lb.TargetGroup(
      `${name}-tg`,
      {
        name: lbName,
        port: this.nodePort,
        protocol: "TCP",
        targetType: "instance",
        vpcId: args.vpcId,
        // Source NAT at the NLB: the host admits the NLB's group, not tenant addresses.
        preserveClientIp: "false",
        connectionTermination: true,
        deregistrationDelay: 30,
        healthCheck: { protocol: "TCP", port: "traffic-port", interval: 10, healthyThreshold: 3, unhealthyThreshold: 3 },
        tags: { Name: lbName, [TAG_KEYS.tenant]: args.tenantId },
      },
      child,
    );
    new lb.TargetGroupAttachment(`${name}-host`, { targetGroupArn: targets.arn, targetId: args.hostInstanceId, port: this.nodePort }, child);
    new lb.Listener(
      `${name}-listener`,
      { loadBalancerArn: nlb.arn, port: SLURM_PORTS.slurmctld, protocol: "TCP", defaultActions: [{ type: "forward", targetGroupArn: targets.arn }], tags: { Name: lbName, [TAG_KEYS.tenant]: args.tenantId } },
      child,
    );
    this.dnsName = nlb.dnsName;
    this.port = FLOW.toPort;
    this.registerOutputs({ dnsName: this.dnsName, nodePort: this.nodePort });
  }
}
