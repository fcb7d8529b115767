import type * as pulumi from "@pulumi/pulumi";
import { flowPorts, type PeeringFlow, type TenantPorts } from "../../facts/contract";
import { TAG_KEYS } from "../../facts/project";

/**
 * A security-group rule's arguments for one contract flow of one tenant (either side of the
 * peering): the flow's protocol and ports, the peer's CIDR, its purpose, the flow tag the
 * policy pack checks, and any further tags (central adds the tenant's).
 */
export function contractRule(flow: PeeringFlow, ports: TenantPorts, peerCidr: pulumi.Input<string>, options: { readonly description?: string; readonly tags?: Readonly<Record<string, string>> } = {}) {
  return {
    ipProtocol: flow.protocol,
    ...flowPorts(flow, ports),
    cidrIpv4: peerCidr,
    description: options.description ?? flow.purpose,
    tags: { [TAG_KEYS.flow]: flow.id, ...options.tags },
  };
}
