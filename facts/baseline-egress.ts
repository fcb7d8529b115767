/** The egress every node needs and no more: HTTPS out through the NAT, DNS to the VPC resolver. */
export function baselineEgressRules(vpcCidr: string): { id: string; protocol: "tcp" | "udp"; port: number; cidr: string; description: string }[] {
  return [
    { id: "https", protocol: "tcp", port: 443, cidr: "0.0.0.0/0", description: "image pulls, downloads, git and AWS APIs through the NAT gateway" },
    { id: "dns-udp", protocol: "udp", port: 53, cidr: vpcCidr, description: "VPC resolver" },
    { id: "dns-tcp", protocol: "tcp", port: 53, cidr: vpcCidr, description: "VPC resolver" },
  ];
}
