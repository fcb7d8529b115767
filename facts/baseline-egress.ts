/** The egress every node needs and no more: HTTPS out through the NAT, DNS to the VPC resolver. */
export function baselineEgressRules(vpcCidr: string): { id: string; protocol: "tcp" | "udp"; port: number; cidr: string; description: string }[] {
  return [
    { id: "https", protocol: "tcp", port: 443, cidr: "0.0.0.0/0", description: "image pulls, downloads, git and AWS APIs through the NAT gateway" },
    { id: "dns-udp", protocol: "udp", port: 53, cidr: vpcCidr, description: "VPC resolver" },
    { id: "dns-tcp", protocol: "tcp", port: 53, cidr: vpcCidr, description: "VPC resolver" },
  ];
}

/** AWS services every VPC reaches through a gateway endpoint (free; a prefix-list route in each private route table). */
export const GATEWAY_ENDPOINT_SERVICES = ["s3", "dynamodb"] as const;

/**
 * Routes central's private route table holds before any tenant joins: the default route to
 * the NAT gateway and one per gateway endpoint. Each tenant then adds one, to its VPC.
 */
export const CENTRAL_OWN_ROUTES = 1 + GATEWAY_ENDPOINT_SERVICES.length;
