/**
 * Network: nothing reachable from the internet, default security groups closed, and
 * exactly the peering contract's flows across the VPC peering.
 */
import type { PolicyResource } from "@pulumi/policy";
import { TAG_KEYS } from "../../facts/project";
import { PEERING_FLOWS, type PeeringFlow } from "../../facts/contract";
import { ipv4Contains, isAnyAddress, parseIpv4Cidr, type Ipv4Cidr } from "./cidr";
import { stackKind, tagMap } from "./provider";
import {
  asArray,
  asRecord,
  indexTargets,
  isNonEmptyString,
  isTrue,
  known,
  ofTypes,
  referencedResources,
  resourcePolicy,
  stackPolicy,
  strings,
  type PackPolicy,
} from "./util";

/** Tag naming the contract flow an ingress rule implements. */
export const FLOW_TAG = TAG_KEYS.flow;

export const SG = "aws:ec2/securityGroup:SecurityGroup";
export const SG_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule";
export const SG_INGRESS_RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule";
export const DEFAULT_SG = "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup";
const VPC = "aws:ec2/vpc:Vpc";
const VPC_CIDR_ASSOCIATION = "aws:ec2/vpcIpv4CidrBlockAssociation:VpcIpv4CidrBlockAssociation";

/** Ingress sources (CIDRs) of a security-group-ish resource, with where they were found. */
function ingressCidrs(type: string, props: Record<string, unknown>): { field: string; cidr: string }[] {
  const out: { field: string; cidr: string }[] = [];
  const block = (b: unknown, field: string): void => {
    const r = asRecord(b);
    if (!r) return;
    for (const c of strings(r.cidrBlocks)) out.push({ field: `${field}.cidrBlocks`, cidr: c });
    for (const c of strings(r.ipv6CidrBlocks)) out.push({ field: `${field}.ipv6CidrBlocks`, cidr: c });
  };
  if (type === SG || type === DEFAULT_SG) {
    asArray(props.ingress).forEach((b, i) => block(b, `ingress[${i}]`));
  } else if (type === SG_RULE) {
    if (props.type === "ingress") block(props, "rule");
  } else if (type === SG_INGRESS_RULE) {
    if (isNonEmptyString(props.cidrIpv4)) out.push({ field: "cidrIpv4", cidr: props.cidrIpv4 });
    if (isNonEmptyString(props.cidrIpv6)) out.push({ field: "cidrIpv6", cidr: props.cidrIpv6 });
  }
  return out;
}

export const sgNoPublicIngress = resourcePolicy("sg-no-public-ingress", {
  description: "No security group admits traffic from 0.0.0.0/0 or ::/0 (inline ingress, ingress rules of either kind).",
  remediation: "admit only the peer's CIDR or security group, as the peering contract (facts/contract.ts) lists it",
  types: [SG, SG_RULE, SG_INGRESS_RULE, DEFAULT_SG],
  validate: (args, report) => {
    for (const { field, cidr } of ingressCidrs(args.type, args.props)) {
      if (isAnyAddress(cidr)) report(`${field} admits ${cidr} (the whole internet)`);
    }
  },
});

export const ec2NoPublicIp = resourcePolicy("ec2-no-public-ip", {
  description: "Instances and launch templates do not get public IP addresses.",
  remediation: "set associatePublicIpAddress: false and reach the host through the peering or SSM",
  types: ["aws:ec2/instance:Instance", "aws:ec2/launchTemplate:LaunchTemplate"],
  validate: (args, report) => {
    if (args.type === "aws:ec2/instance:Instance") {
      if (isTrue(args.props.associatePublicIpAddress)) report("associatePublicIpAddress is true");
      return;
    }
    asArray(args.props.networkInterfaces).forEach((ni, i) => {
      if (isTrue(asRecord(ni)?.associatePublicIpAddress)) report(`networkInterfaces[${i}].associatePublicIpAddress is true`);
    });
  },
});

export const subnetNoAutoPublicIp = resourcePolicy("subnet-no-auto-public-ip", {
  description: "Subnets do not hand out public IPs at launch (mapPublicIpOnLaunch).",
  remediation: "set mapPublicIpOnLaunch: false (the project has no public subnets)",
  types: ["aws:ec2/subnet:Subnet"],
  validate: (args, report) => {
    if (isTrue(args.props.mapPublicIpOnLaunch)) report("mapPublicIpOnLaunch is true");
  },
});

export const defaultSgClosed = resourcePolicy("default-sg-closed", {
  description: "Each VPC's default security group is adopted with no ingress and no egress rules.",
  remediation: "declare aws.ec2.DefaultSecurityGroup for the VPC with ingress: [] and egress: []",
  types: [DEFAULT_SG],
  validate: (args, report) => {
    const ingress = asArray(args.props.ingress).length;
    const egress = asArray(args.props.egress).length;
    if (ingress > 0 || egress > 0) report(`the default security group keeps ${ingress} ingress and ${egress} egress rule(s)`);
  },
});

// ---------------------------------------------------------------------------------------
// Peering contract

const FLOWS_BY_ID = new Map(PEERING_FLOWS.map((f) => [f.id, f] as const));
const HOST_ENDPOINTS = new Set<PeeringFlow["from"]>(["tenant-host", "central-host", "tenant-endpoint"]);

function protocolMatches(actual: unknown, flow: PeeringFlow): boolean {
  const p = String(actual ?? "").toLowerCase();
  return p === flow.protocol || (flow.protocol === "tcp" && p === "6");
}

/** The local VPC CIDRs of the deployment (VPCs and their secondary CIDR associations). */
function localCidrs(resources: readonly PolicyResource[]): Ipv4Cidr[] {
  const out: Ipv4Cidr[] = [];
  for (const r of ofTypes(resources, VPC, VPC_CIDR_ASSOCIATION)) {
    const c = known(() => r.props.cidrBlock as unknown, undefined);
    const parsed = isNonEmptyString(c) ? parseIpv4Cidr(c) : undefined;
    if (parsed) out.push(parsed);
  }
  return out;
}

type Side = "local" | "remote";

export const peeringFlowsMatchContract = stackPolicy("peering-flows-match-contract", {
  description:
    `Security-group ingress across the VPC peering is exactly the contract's flows ` +
    `(${PEERING_FLOWS.map((f) => `${f.id} ${f.protocol}/${f.fromPort === f.toPort ? f.fromPort : `${f.fromPort}-${f.toPort}`}`).join(", ")}): ` +
    `each such rule is an aws.vpc.SecurityGroupIngressRule tagged "${FLOW_TAG}" with a known flow id and that flow's ports and protocol, ` +
    `on the side the contract says admits it. A rule crosses the peering when its security group is in one of the stack's VPCs and ` +
    `its source lies outside all of them, or its security group is in a VPC outside the stack (the peer's, through a second provider) ` +
    `and its source lies inside the stack's VPCs.`,
  remediation: `derive the rule from PEERING_FLOWS in facts/contract.ts: one SecurityGroupIngressRule per flow with tags["${FLOW_TAG}"] = flow.id and the flow's fromPort/toPort/ipProtocol`,
  validate: (args, report) => {
    const cidrs = localCidrs(args.resources);
    const vpcs = indexTargets(ofTypes(args.resources, VPC), ["id"]);
    const groups = indexTargets(ofTypes(args.resources, SG, DEFAULT_SG), ["id"]);

    /** Which side of the peering a security group is on: in a VPC of this stack, or in another one. */
    const sideOfGroup = (sg: PolicyResource): Side | undefined => {
      if (referencedResources(sg, "vpcId", vpcs, false).length > 0) return "local";
      return isNonEmptyString(known(() => sg.props.vpcId as unknown, undefined)) ? "remote" : undefined;
    };
    const sideOfRule = (rule: PolicyResource): Side | undefined => {
      const sg = referencedResources(rule, "securityGroupId", groups)[0];
      return sg ? sideOfGroup(sg) : undefined;
    };
    const inside = (cidr: string): boolean | undefined => {
      const c = parseIpv4Cidr(cidr);
      return c === undefined ? undefined : cidrs.some((v) => ipv4Contains(v, c));
    };
    /** Whether ingress from `cidr` into a group on `side` crosses the peering. */
    const crosses = (cidr: string, side: Side | undefined): boolean => {
      if (cidrs.length === 0) return false; // no VPC in this stack: local and peer cannot be told apart
      const i = inside(cidr);
      if (i === undefined) return false;
      return side === "remote" ? i : !i;
    };

    for (const r of args.resources) {
      if (r.type === SG_INGRESS_RULE) {
        const props = known(() => ({
          tags: tagMap(r.props.tags),
          cidr: r.props.cidrIpv4 as unknown,
          fromPort: r.props.fromPort as unknown,
          toPort: r.props.toPort as unknown,
          ipProtocol: r.props.ipProtocol as unknown,
        }), undefined);
        if (!props) continue;
        const side = sideOfRule(r);
        const flowId = props.tags[FLOW_TAG];
        const across = isNonEmptyString(props.cidr) && crosses(props.cidr, side);
        if (flowId === undefined) {
          if (across) report(`ingress from ${String(props.cidr)} crosses the peering but carries no "${FLOW_TAG}" tag naming a contract flow`, r.urn);
          continue;
        }
        const flow = FLOWS_BY_ID.get(flowId);
        if (!flow) {
          report(`"${FLOW_TAG}" tag "${flowId}" is not a flow of the peering contract (known: ${[...FLOWS_BY_ID.keys()].join(", ")})`, r.urn);
          continue;
        }
        if (props.fromPort !== flow.fromPort || props.toPort !== flow.toPort || !protocolMatches(props.ipProtocol, flow)) {
          report(
            `flow ${flow.id} allows ${flow.protocol} ${flow.fromPort}-${flow.toPort} but the rule opens ${String(props.ipProtocol)} ` +
              `${String(props.fromPort)}-${String(props.toPort)}`,
            r.urn,
          );
        }
        const kind = stackKind(r.provider);
        if ((kind === "central" || kind === "tenant") && side !== undefined) {
          const admittedBy = side === "local" ? kind : kind === "central" ? "tenant" : "central";
          if (admittedBy !== flow.side) report(`flow ${flow.id} is admitted on the ${flow.side} side, but this rule's security group is on the ${admittedBy} side`, r.urn);
        }
        if (HOST_ENDPOINTS.has(flow.from) && isNonEmptyString(props.cidr) && parseIpv4Cidr(props.cidr)?.prefix !== 32) {
          report(`flow ${flow.id} comes from one host (${flow.from}), but the rule admits ${props.cidr} rather than a /32`, r.urn);
        }
      } else if (r.type === SG || r.type === SG_RULE) {
        const found = known(() => ingressCidrs(r.type, r.props), []);
        if (found.length === 0) continue;
        const side = r.type === SG ? sideOfGroup(r) : sideOfRule(r);
        for (const { field, cidr } of found) {
          if (!cidr.includes(":") && crosses(cidr, side)) {
            report(`${field} admits ${cidr} across the peering; cross-peering ingress must be a SecurityGroupIngressRule tagged "${FLOW_TAG}"`, r.urn);
          }
        }
      }
    }
  },
});

export const NETWORK_POLICIES: readonly PackPolicy[] = [sgNoPublicIngress, ec2NoPublicIp, subnetNoAutoPublicIp, defaultSgClosed, peeringFlowsMatchContract];
