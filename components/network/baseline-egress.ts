import * as pulumi from "@pulumi/pulumi";
import * as vpc from "@pulumi/aws/vpc";

/** The egress every node needs and no more: HTTPS out through the NAT gateway, DNS to the VPC resolver. */
export function baselineEgressRules(vpcCidr: string): { id: string; protocol: "tcp" | "udp"; port: number; cidr: string; description: string }[] {
  return [
    { id: "https", protocol: "tcp", port: 443, cidr: "0.0.0.0/0", description: "image pulls, downloads, git and AWS APIs through the NAT gateway" },
    { id: "dns-udp", protocol: "udp", port: 53, cidr: vpcCidr, description: "VPC resolver" },
    { id: "dns-tcp", protocol: "tcp", port: 53, cidr: vpcCidr, description: "VPC resolver" },
  ];
}

/** Creates the baseline egress rules on a security group (which otherwise has none). */
export function addBaselineEgress(name: string, securityGroupId: pulumi.Input<string>, vpcCidr: string, parent: pulumi.Resource): void {
  for (const rule of baselineEgressRules(vpcCidr)) {
    new vpc.SecurityGroupEgressRule(
      `${name}-egress-${rule.id}`,
      { securityGroupId, ipProtocol: rule.protocol, fromPort: rule.port, toPort: rule.port, cidrIpv4: rule.cidr, description: rule.description },
      { parent },
    );
  }
}
