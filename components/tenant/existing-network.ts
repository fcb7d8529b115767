/**
 * What the program must know about a customer's existing VPC before it builds resources:
 * that its CIDR is the configured one, that the server's configured address is usable in
 * the first subnet (where the server goes), and the distinct route tables of its subnets
 * (the peering's routes go there). Read through the tenant's provider at deploy time.
 */
import * as pulumi from "@pulumi/pulumi";
import { getRouteTable } from "@pulumi/aws/ec2/getRouteTable";
import { getSubnet } from "@pulumi/aws/ec2/getSubnet";
import { getVpc } from "@pulumi/aws/ec2/getVpc";
import { hostAddressProblem } from "../../config/cidr";
import type { ExistingNetworkConfig } from "../../config/types";

export async function resolveExistingNetwork(file: string, network: ExistingNetworkConfig, provider: pulumi.ProviderResource): Promise<{ routeTableIds: string[]; serverZone: string }> {
  const vpc = await getVpc({ id: network.vpcId }, { provider });
  if (vpc.cidrBlock !== network.vpcCidr) {
    throw new pulumi.RunError(`${file}: clusterra:network.vpcCidr = "${network.vpcCidr}": ${network.vpcId}'s CIDR is ${vpc.cidrBlock}; valid: the VPC's own primary CIDR`);
  }
  const [serverSubnetId] = network.subnetIds;
  const serverSubnet = await getSubnet({ id: serverSubnetId }, { provider });
  if (serverSubnet.vpcId !== network.vpcId) {
    throw new pulumi.RunError(`${file}: clusterra:network.subnetIds[0] = "${serverSubnetId}": in ${serverSubnet.vpcId}, not ${network.vpcId}; valid: a subnet of network.vpcId`);
  }
  const addressProblem = hostAddressProblem(network.serverPrivateIp, serverSubnet.cidrBlock);
  if (addressProblem) {
    throw new pulumi.RunError(
      `${file}: clusterra:network.serverPrivateIp = "${network.serverPrivateIp}": ${addressProblem} (${serverSubnetId}, the first of subnetIds, where the server goes); ` +
        `valid: a free address of ${serverSubnet.cidrBlock} other than its first four and its last`,
    );
  }
  const tables = await Promise.all(network.subnetIds.map((subnetId) => getRouteTable({ subnetId, vpcId: network.vpcId }, { provider })));
  return { routeTableIds: [...new Set(tables.map((t) => t.routeTableId))].sort(), serverZone: serverSubnet.availabilityZone };
}

/** Whether a tenant adopts an existing VPC. */
export function isExisting(network: { vpcCidr: string }): network is ExistingNetworkConfig {
  return "vpcId" in network;
}
