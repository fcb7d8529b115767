/**
 * How a VPC CIDR is cut into subnets: one private subnet per zone, equal in size, and one
 * small public subnet that holds only the NAT (a NAT gateway, or a tenant's K3s server);
 * and where in it a tenant's server sits. Pure, so tests check it directly.
 */
import { carveSubnets, hostAddress } from "./cidr";
import { CENTRAL_HOST_NUMBER } from "../facts/central-host";
import type { ExistingNetworkConfig, NetworkConfig, ZoneSelection } from "./types";

export interface SubnetLayout {
  /** One per zone, in zone order. */
  readonly private: readonly string[];
  /** The NAT's subnet. */
  readonly public: string;
}

/** AWS's smallest subnet. */
const PUBLIC_PREFIX = 28;

/** How many zones a selection spans. */
export function zoneCount(zones: ZoneSelection): number {
  return "count" in zones ? zones.count : zones.names.length;
}

export function subnetLayout(vpcCidr: string, zoneCount: number): SubnetLayout {
  const vpcPrefix = Number(vpcCidr.split("/")[1]);
  // Blocks for every zone plus one for the public subnet.
  const bits = Math.ceil(Math.log2(zoneCount + 1));
  const privateSubnets = carveSubnets(vpcCidr, bits, 0, zoneCount);
  const lastBlock = carveSubnets(vpcCidr, bits, 2 ** bits - 1, 1)[0];
  const publicSubnet = carveSubnets(lastBlock, PUBLIC_PREFIX - (vpcPrefix + bits), 0, 1)[0];
  return { private: privateSubnets, public: publicSubnet };
}

/**
 * The tenant server's host number in its /28 NAT subnet: past the four addresses AWS keeps
 * at a subnet's start, short of the last one.
 */
const TENANT_SERVER_HOST = 10;

/**
 * The tenant K3s server's fixed private address, from the tenant's stack file alone, so the
 * tenant stack (the instance's privateIp) and central (its host rules for the tenant) agree:
 * in a new VPC a fixed host of the NAT subnet, in an existing one the configured address.
 */
export function tenantServerAddress(network: NetworkConfig | ExistingNetworkConfig): string {
  if ("serverPrivateIp" in network) return network.serverPrivateIp;
  return hostAddress(subnetLayout(network.vpcCidr, zoneCount(network.availabilityZones)).public, TENANT_SERVER_HOST);
}

/**
 * The central host's fixed private address (facts/central-host.ts CENTRAL_HOST_NUMBER in its
 * first private subnet), from central's stack file alone: the host's instance and what the
 * fleet admits to its API server agree.
 */
export function centralHostAddress(network: NetworkConfig): string {
  return hostAddress(subnetLayout(network.vpcCidr, zoneCount(network.availabilityZones)).private[0], CENTRAL_HOST_NUMBER);
}
