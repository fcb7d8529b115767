/**
 * How a VPC CIDR is cut into subnets: one private subnet per zone, equal in size, and one
 * small public subnet that holds only the NAT gateway. Pure, so tests check it directly.
 */
import { carveSubnets } from "../../config/cidr";

export interface SubnetLayout {
  /** One per zone, in zone order. */
  readonly private: readonly string[];
  /** The NAT gateway's subnet. */
  readonly public: string;
}

/** AWS's smallest subnet. */
const PUBLIC_PREFIX = 28;

export function subnetLayout(vpcCidr: string, zoneCount: number): SubnetLayout {
  const vpcPrefix = Number(vpcCidr.split("/")[1]);
  // Blocks for every zone plus one for the public subnet.
  const bits = Math.ceil(Math.log2(zoneCount + 1));
  const privateSubnets = carveSubnets(vpcCidr, bits, 0, zoneCount);
  const lastBlock = carveSubnets(vpcCidr, bits, 2 ** bits - 1, 1)[0];
  const publicSubnet = carveSubnets(lastBlock, PUBLIC_PREFIX - (vpcPrefix + bits), 0, 1)[0];
  return { private: privateSubnets, public: publicSubnet };
}
