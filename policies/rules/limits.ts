/**
 * AWS's limits on the values a stack sets (facts/aws-limits.ts), applied to every planned
 * resource: names, policy documents, descriptions, tags (the provider's default tags
 * counted with the resource's own), and rules per security group. The mock engine takes
 * any value; AWS refuses these at deploy time, so a plan refuses them first. Pure: the
 * stack policy `within-aws-limits` and `clusterra plan`'s summary line both run it.
 */
import type { PolicyProviderResource } from "@pulumi/policy";
import { AWS_LIMITS, RESOURCE_LIMITS, ROLE_INLINE_POLICIES, SECURITY_GROUP_RULES, TAG_LIMITS, type ResourceLimit } from "../../facts/aws-limits";
import { effectiveTags } from "./provider";
import { TAGGABLE_TYPES } from "./taggable-types";
import { stackPolicy, type PackStackPolicy } from "./util";

/** What the check reads of a resource (a policy resource, or a deployment file's). */
export interface LimitedResource {
  readonly type: string;
  readonly urn: string;
  readonly props: Record<string, unknown>;
  readonly provider?: PolicyProviderResource;
}

export interface LimitFindings {
  /** Values checked, by the limit that bound them (its source's words). */
  readonly checked: ReadonlyMap<string, number>;
  /** Each value over its limit: the resource, and what, how large, against what. */
  readonly over: readonly { readonly urn: string; readonly message: string }[];
}

/** A value's size as the limit measures it; undefined when it is not known yet (a preview). */
export function measured(limit: Pick<ResourceLimit, "measure">, value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  const text = typeof value === "string" ? value : JSON.stringify(value);
  switch (limit.measure) {
    case "characters":
      return [...text].length;
    case "bytes":
      return Buffer.byteLength(text, "utf8");
    case "characters, whitespace aside":
      return [...text.replace(/\s+/g, "")].length;
    case "entries":
      return typeof value === "object" ? Object.keys(value as object).length : undefined;
  }
}

const RULE_TYPES = { ingress: "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", egress: "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule" } as const;
const GROUP_TYPES = new Set(["aws:ec2/securityGroup:SecurityGroup", "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup"]);

/** Rules an inline entry makes: one per CIDR, group and self (AWS counts each). */
function inlineRuleCount(entry: Record<string, unknown>): number {
  const n = (v: unknown) => (Array.isArray(v) ? v.length : 0);
  return Math.max(1, n(entry.cidrBlocks) + n(entry.ipv6CidrBlocks) + n(entry.securityGroups) + n(entry.prefixListIds) + (entry.self === true ? 1 : 0));
}

/** Every limit applied to every value it binds. */
export function limitFindings(resources: readonly LimitedResource[]): LimitFindings {
  const checked = new Map<string, number>();
  const over: { urn: string; message: string }[] = [];
  const count = (source: string) => checked.set(source, (checked.get(source) ?? 0) + 1);
  for (const r of resources) {
    for (const limit of RESOURCE_LIMITS.filter((l) => l.types.includes(r.type))) {
      const size = measured(limit, r.props[limit.field]);
      if (size === undefined) continue;
      count(limit.source);
      if (size > limit.max) over.push({ urn: r.urn, message: `${limit.field} is ${size} ${limit.measure}, over ${limit.max} (${limit.source})` });
    }
    if (TAGGABLE_TYPES.has(r.type)) {
      const tags = Object.entries(effectiveTags(r.provider, r.props.tags)).filter(([k]) => !k.startsWith("aws:"));
      count(TAG_LIMITS.source);
      if (tags.length > TAG_LIMITS.entries) over.push({ urn: r.urn, message: `carries ${tags.length} tags with the provider's default tags, over ${TAG_LIMITS.entries} (${TAG_LIMITS.source})` });
      for (const [k, v] of tags) {
        if ([...k].length > TAG_LIMITS.keyCharacters) over.push({ urn: r.urn, message: `tag key ${JSON.stringify(k.slice(0, 40))}... is ${[...k].length} characters, over ${TAG_LIMITS.keyCharacters} (${TAG_LIMITS.source})` });
        if ([...v].length > TAG_LIMITS.valueCharacters) over.push({ urn: r.urn, message: `tag ${k}'s value is ${[...v].length} characters, over ${TAG_LIMITS.valueCharacters} (${TAG_LIMITS.source})` });
      }
    }
  }
  // A role's inline policies together: its RolePolicy resources (by the role they name) and its own inlinePolicies.
  const inline = new Map<string, { urn: string; size: number }>();
  const add = (role: string, urn: string, size: number | undefined) => {
    if (size === undefined) return;
    const r = inline.get(role) ?? { urn, size: 0 };
    r.size += size;
    inline.set(role, r);
  };
  for (const r of resources) {
    if (r.type === "aws:iam/role:Role") {
      const role = typeof r.props.name === "string" ? r.props.name : r.urn;
      inline.set(role, inline.get(role) ?? { urn: r.urn, size: 0 });
      for (const p of Array.isArray(r.props.inlinePolicies) ? (r.props.inlinePolicies as Record<string, unknown>[]) : []) add(role, r.urn, measured(ROLE_INLINE_POLICIES, p.policy));
    }
  }
  for (const r of resources.filter((x) => x.type === "aws:iam/rolePolicy:RolePolicy")) {
    if (typeof r.props.role === "string") add(r.props.role, inline.get(r.props.role)?.urn ?? r.urn, measured(ROLE_INLINE_POLICIES, r.props.policy));
  }
  for (const r of inline.values()) {
    count(ROLE_INLINE_POLICIES.source);
    if (r.size > ROLE_INLINE_POLICIES.max) over.push({ urn: r.urn, message: `its inline policies are ${r.size} ${ROLE_INLINE_POLICIES.measure} together, over ${ROLE_INLINE_POLICIES.max} (${ROLE_INLINE_POLICIES.source})` });
  }
  // A parameter's value against its tier's size (a secret value is checked where the check can read it).
  for (const r of resources.filter((x) => x.type === "aws:ssm/parameter:Parameter")) {
    const value = typeof r.props.insecureValue === "string" ? r.props.insecureValue : r.props.value;
    if (typeof value !== "string") continue;
    const limit = r.props.tier === "Advanced" || r.props.tier === "Intelligent-Tiering" ? AWS_LIMITS.ssmAdvancedParameter : AWS_LIMITS.ssmStandardParameter;
    const size = [...value].length;
    count(limit.source);
    if (size > limit.max) over.push({ urn: r.urn, message: `value is ${size} characters, over ${limit.max} in its tier ${String(r.props.tier ?? "Standard")} (${limit.source})` });
  }
  // Rules per group and direction: standalone rule resources and inline entries together.
  const rules = new Map<string, { urn: string; ingress: number; egress: number }>();
  const groupUrn = new Map<string, string>();
  for (const r of resources.filter((x) => GROUP_TYPES.has(x.type))) {
    const id = typeof r.props.id === "string" ? r.props.id : r.urn;
    groupUrn.set(id, r.urn);
    const g = { urn: r.urn, ingress: 0, egress: 0 };
    for (const d of ["ingress", "egress"] as const) for (const e of Array.isArray(r.props[d]) ? (r.props[d] as Record<string, unknown>[]) : []) g[d] += inlineRuleCount(e);
    rules.set(id, g);
  }
  for (const r of resources) {
    const direction = r.type === RULE_TYPES.ingress ? "ingress" : r.type === RULE_TYPES.egress ? "egress" : undefined;
    const group = r.props.securityGroupId;
    if (!direction || typeof group !== "string") continue;
    const g = rules.get(group) ?? { urn: groupUrn.get(group) ?? r.urn, ingress: 0, egress: 0 };
    g[direction]++;
    rules.set(group, g);
  }
  for (const g of rules.values()) {
    for (const d of ["ingress", "egress"] as const) {
      count(SECURITY_GROUP_RULES.source);
      if (g[d] > SECURITY_GROUP_RULES.perDirection) over.push({ urn: g.urn, message: `has ${g[d]} ${d} rules, over ${SECURITY_GROUP_RULES.perDirection} (${SECURITY_GROUP_RULES.source})` });
    }
  }
  return { checked, over };
}

export const withinAwsLimits: PackStackPolicy = stackPolicy("within-aws-limits", {
  description:
    "Every value the stack sets is within AWS's documented limits (facts/aws-limits.ts): IAM role, policy and instance profile names and document sizes, " +
    "bucket, function, rule, queue, topic, table, alarm, log group, secret, parameter, group, Lattice and RAM names, descriptions, key and bucket policies, " +
    `SSM parameter values within their tier, at most ${TAG_LIMITS.entries} tags per resource with the provider's default tags, and ${SECURITY_GROUP_RULES.perDirection} rules per security group each way. ` +
    "The mock engine accepts any value; AWS refuses these when the resource is created. Values unknown during a preview are skipped.",
  remediation: "shorten the name (a shorter tenant id or cluster name), split the document, or drop tags and rules; a quota AWS lets you raise (trust policy, rules per group) is raised in the account first, then here",
  validate: (args, report) => {
    for (const o of limitFindings(args.resources).over) report(o.message, o.urn);
  },
});

export const LIMIT_POLICIES: readonly PackStackPolicy[] = [withinAwsLimits];
