/**
 * Security-group rules as a plan (Pulumi deployment export) holds them, in one shape
 * whatever resource type carried them: the standalone rule resources the project uses
 * (aws:vpc/securityGroupIngressRule, ...EgressRule), the older aws:ec2/securityGroupRule,
 * and rules written inline on aws:ec2/securityGroup (and the VPC's default group). Pure:
 * resources in, rules out: the inventory lists them, and the journey translates them to
 * nftables (tested without a kernel).
 */
import type { DeploymentResource } from "../planning/deployment";
import { urnName } from "../planning/deployment";

/** Who is on the other end of a rule: an IPv4 CIDR, another group's members, or what nftables here cannot model. */
export type RulePeer =
  | { readonly kind: "cidr"; readonly cidr: string }
  | { readonly kind: "group"; readonly groupId: string }
  | { readonly kind: "unsupported"; readonly what: string };

export interface SecurityGroupRule {
  /** The resource's name in the plan (or `<group>/inline-<n>`), so a rule is traceable in ruleset comments. */
  readonly name: string;
  readonly groupId: string;
  readonly direction: "ingress" | "egress";
  /** `all` for AWS's "-1"; otherwise tcp, udp, icmp or an IP protocol number. */
  readonly protocol: "all" | "tcp" | "udp" | "icmp" | number;
  /** Ports for tcp/udp; ICMP type (from) and code (to) for icmp; -1 or absent: any. */
  readonly fromPort?: number;
  readonly toPort?: number;
  readonly peer: RulePeer;
  readonly description?: string;
}

const TYPES = {
  ingress: "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
  egress: "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule",
  legacyRule: "aws:ec2/securityGroupRule:SecurityGroupRule",
  group: "aws:ec2/securityGroup:SecurityGroup",
  defaultGroup: "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup",
} as const;

/** A resource's state: outputs where the plan has them (ids are only there), else inputs. */
function stateOf(r: DeploymentResource): Record<string, unknown> {
  return { ...(r.inputs ?? {}), ...(r.outputs ?? {}) };
}

function num(v: unknown): number | undefined {
  if (v === undefined || v === null || v === "") return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

/** AWS's protocol field ("-1", "tcp", "6", ...) as the translation names it. */
export function normalizeProtocol(p: unknown): SecurityGroupRule["protocol"] {
  const s = String(p ?? "-1").toLowerCase();
  if (s === "-1" || s === "all") return "all";
  if (s === "tcp" || s === "6") return "tcp";
  if (s === "udp" || s === "17") return "udp";
  if (s === "icmp" || s === "1") return "icmp";
  const n = Number(s);
  return Number.isInteger(n) ? n : "all";
}

/** Peers of one rule in the legacy and inline shapes (several CIDRs, groups or self per rule). */
function legacyPeers(s: Record<string, unknown>, groupId: string, sourceKeys: readonly string[]): RulePeer[] {
  const peers: RulePeer[] = strings(s.cidrBlocks).map((cidr) => ({ kind: "cidr", cidr }));
  for (const key of sourceKeys) {
    const v = s[key];
    for (const g of typeof v === "string" ? [v] : strings(v)) peers.push({ kind: "group", groupId: g });
  }
  if (s.self === true) peers.push({ kind: "group", groupId });
  for (const c of strings(s.ipv6CidrBlocks)) peers.push({ kind: "unsupported", what: `IPv6 ${c}` });
  for (const p of strings(s.prefixListIds)) peers.push({ kind: "unsupported", what: `prefix list ${p}` });
  return peers;
}

/** Every security-group rule a plan holds, whichever resource type carries it. */
export function securityGroupRules(resources: readonly DeploymentResource[]): SecurityGroupRule[] {
  const rules: SecurityGroupRule[] = [];
  for (const r of resources) {
    const s = stateOf(r);
    const name = urnName(r.urn);
    const base = { protocol: normalizeProtocol(s.ipProtocol ?? s.protocol), fromPort: num(s.fromPort), toPort: num(s.toPort), ...(typeof s.description === "string" ? { description: s.description } : {}) };
    if (r.type === TYPES.ingress || r.type === TYPES.egress) {
      const peer: RulePeer =
        typeof s.cidrIpv4 === "string" ? { kind: "cidr", cidr: s.cidrIpv4 }
        : typeof s.referencedSecurityGroupId === "string" ? { kind: "group", groupId: s.referencedSecurityGroupId }
        : { kind: "unsupported", what: typeof s.cidrIpv6 === "string" ? `IPv6 ${s.cidrIpv6}` : `prefix list ${String(s.prefixListId)}` };
      rules.push({ name, groupId: String(s.securityGroupId), direction: r.type === TYPES.ingress ? "ingress" : "egress", ...base, peer });
    } else if (r.type === TYPES.legacyRule) {
      const groupId = String(s.securityGroupId);
      const direction = s.type === "egress" ? "egress" : "ingress";
      for (const peer of legacyPeers(s, groupId, ["sourceSecurityGroupId"])) rules.push({ name, groupId, direction, ...base, peer });
    } else if (r.type === TYPES.group || r.type === TYPES.defaultGroup) {
      const groupId = String(s.id);
      for (const direction of ["ingress", "egress"] as const) {
        const inline = Array.isArray(s[direction]) ? (s[direction] as Record<string, unknown>[]) : [];
        inline.forEach((entry, i) => {
          const b = { protocol: normalizeProtocol(entry.protocol), fromPort: num(entry.fromPort), toPort: num(entry.toPort) };
          for (const peer of legacyPeers(entry, groupId, ["securityGroups"])) rules.push({ name: `${name}/${direction}-${i}`, groupId, direction, ...b, peer });
        });
      }
    }
  }
  return rules;
}

/** A group's tags and name, to find the groups a selector (Karpenter's securityGroupSelectorTerms) picks. */
export interface PlannedGroup {
  readonly id: string;
  readonly name: string;
  readonly tags: Readonly<Record<string, string>>;
}

export function securityGroups(resources: readonly DeploymentResource[]): PlannedGroup[] {
  return resources
    .filter((r) => r.type === TYPES.group || r.type === TYPES.defaultGroup)
    .map((r) => {
      const s = stateOf(r);
      return { id: String(s.id), name: urnName(r.urn), tags: (s.tags ?? {}) as Record<string, string> };
    });
}

/** The groups a Karpenter-style selector picks: every term's tags all match (terms are ORed). */
export function groupsSelectedByTags(groups: readonly PlannedGroup[], terms: readonly Readonly<Record<string, string>>[]): PlannedGroup[] {
  return groups.filter((g) => terms.some((t) => Object.entries(t).every(([k, v]) => g.tags[k] === v || (v === "*" && k in g.tags))));
}

/** An EC2 instance of the plan: its private address, subnet and groups (what AWS filters its ENI by). */
export interface PlannedInstance {
  readonly name: string;
  readonly privateIp: string;
  readonly subnetId: string;
  readonly groupIds: readonly string[];
}

export function instances(resources: readonly DeploymentResource[]): PlannedInstance[] {
  return resources
    .filter((r) => r.type === "aws:ec2/instance:Instance")
    .map((r) => {
      const s = stateOf(r);
      return { name: urnName(r.urn), privateIp: String(s.privateIp), subnetId: String(s.subnetId), groupIds: [...strings(s.vpcSecurityGroupIds), ...strings(s.securityGroups)] };
    });
}

/** Subnets and VPCs by id, with their CIDRs and tags. */
export interface PlannedNet {
  readonly id: string;
  readonly name: string;
  readonly cidr: string;
  readonly tags: Readonly<Record<string, string>>;
}

export function subnets(resources: readonly DeploymentResource[]): PlannedNet[] {
  return netsOf(resources, "aws:ec2/subnet:Subnet");
}

export function vpcs(resources: readonly DeploymentResource[]): PlannedNet[] {
  return netsOf(resources, "aws:ec2/vpc:Vpc");
}

function netsOf(resources: readonly DeploymentResource[], type: string): PlannedNet[] {
  return resources
    .filter((r) => r.type === type)
    .map((r) => {
      const s = stateOf(r);
      return { id: String(s.id), name: urnName(r.urn), cidr: String(s.cidrBlock), tags: (s.tags ?? {}) as Record<string, string> };
    });
}
