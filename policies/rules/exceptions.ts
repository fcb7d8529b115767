/**
 * Named policy exceptions: a resource tagged `clusterra:policy-exception = <policy>` and
 * `clusterra:policy-exception-reason = <why>` is not judged by that one policy (util.ts
 * drops its findings on that resource). This policy judges the exceptions themselves: only
 * the exemptible table's policies, always with a reason, never through a provider's
 * default tags, and, for an instance exempt from ec2-no-public-ip, no security group of
 * its admitting anything but private sources.
 */
import type { PolicyResource } from "@pulumi/policy";
import { TAG_KEYS } from "../../facts/project";
import { EXEMPTIBLE_POLICIES, POLICY_FACTS } from "./catalog";
import { isPublicSource } from "./cidr";
import { DEFAULT_SG, rulePeers, SG, SG_INGRESS_RULE, SG_RULE, vpcCidrStrings } from "./network";
import { providerDefaultTags } from "./provider";
import { asArray, asRecord, exceptionOf, indexTargets, isNonEmptyString, known, ofTypes, stackPolicy, strings, type PackStackPolicy, type TargetIndex } from "./util";

/** Where a host names its security groups, per type: top-level fields and fields of each network interface. */
const SECURITY_GROUP_FIELDS: Readonly<Record<string, { readonly own: readonly string[]; readonly perInterface: readonly string[] }>> = {
  "aws:ec2/instance:Instance": { own: ["vpcSecurityGroupIds", "securityGroups"], perInterface: [] },
  "aws:ec2/spotInstanceRequest:SpotInstanceRequest": { own: ["vpcSecurityGroupIds", "securityGroups"], perInterface: [] },
  "aws:ec2/launchConfiguration:LaunchConfiguration": { own: ["securityGroups"], perInterface: [] },
  "aws:ec2/launchTemplate:LaunchTemplate": { own: ["vpcSecurityGroupIds", "securityGroupNames"], perInterface: ["securityGroups"] },
  "aws:ec2/networkInterface:NetworkInterface": { own: ["securityGroups"], perInterface: [] },
};

/** The security groups of a host (as written, and the deployment's groups they resolve to). */
function securityGroupsOf(host: PolicyResource, groups: TargetIndex): { named: string[]; found: PolicyResource[] } {
  const spec = SECURITY_GROUP_FIELDS[host.type];
  const named: string[] = [];
  const found: PolicyResource[] = [];
  const add = (r: PolicyResource): void => {
    if (!found.includes(r)) found.push(r);
  };
  for (const field of spec.own) {
    for (const id of strings(known(() => host.props[field] as unknown, undefined))) {
      named.push(id);
      for (const g of groups.byId.get(id) ?? []) add(g);
    }
    for (const d of host.propertyDependencies?.[field] ?? []) {
      const g = groups.byUrn.get(d.urn);
      if (g) add(g);
    }
  }
  for (const ni of asArray(known(() => host.props.networkInterfaces as unknown, undefined))) {
    for (const field of spec.perInterface) {
      for (const id of strings(asRecord(ni)?.[field])) {
        named.push(id);
        for (const g of groups.byId.get(id) ?? []) add(g);
      }
    }
  }
  return { named, found };
}

/** Ingress sources of a group that are not private (CIDRs outside private space and the stack's VPCs, prefix lists). */
function publicSources(group: PolicyResource, rules: readonly PolicyResource[], groups: TargetIndex, vpcCidrs: readonly string[]): string[] {
  const out: string[] = [];
  const judge = (r: PolicyResource): void => {
    for (const p of known(() => rulePeers(r.type, r.props), [])) {
      if (p.direction !== "ingress") continue;
      if (p.cidr !== undefined && isPublicSource(p.cidr, vpcCidrs) !== false) out.push(`${p.cidr} (${r.name})`);
      if (p.prefixList !== undefined) out.push(`prefix list ${p.prefixList} (${r.name}), whose entries are not in the deployment`);
    }
  };
  judge(group);
  for (const rule of rules) {
    const target = known(() => rule.props.securityGroupId as unknown, undefined);
    const byValue = isNonEmptyString(target) && (groups.byId.get(target) ?? []).includes(group);
    const byDependency = (rule.propertyDependencies?.securityGroupId ?? []).some((d) => d.urn === group.urn);
    if (byValue || byDependency) judge(rule);
  }
  return out;
}

export const policyExceptionValid = stackPolicy("policy-exception-valid", {
  description:
    `A policy exception (tags ${TAG_KEYS.policyException} = <policy> and ${TAG_KEYS.policyExceptionReason} = <why>, on the resource itself) names ` +
    `one policy of the exemptible table (${Object.keys(EXEMPTIBLE_POLICIES).join(", ")}) and gives a reason; no provider's default tags carry ` +
    "either tag (that would exempt every resource); and a host exempt from ec2-no-public-ip names its security groups, all in this deployment, " +
    "none admitting a non-private source (public CIDR or prefix list).",
  remediation:
    `tag only the one resource that needs it, with ${TAG_KEYS.policyException} set to an exemptible policy and ${TAG_KEYS.policyExceptionReason} saying why; ` +
    "give an exposed host security groups that admit only private sources",
  validate: (args, report) => {
    for (const r of args.resources) {
      if (!r.type.startsWith("pulumi:providers:aws")) continue;
      const defaults = known(() => providerDefaultTags(r as unknown as Parameters<typeof providerDefaultTags>[0]), {});
      for (const key of [TAG_KEYS.policyException, TAG_KEYS.policyExceptionReason]) {
        if (key in defaults) report(`the provider's default tags carry ${key}, which would exempt every resource it creates`, r.urn);
      }
    }
    const groups = indexTargets(ofTypes(args.resources, SG, DEFAULT_SG), ["id", "name", "arn"]);
    const rules = ofTypes(args.resources, SG_RULE, SG_INGRESS_RULE);
    const vpcCidrs = vpcCidrStrings(args.resources);
    for (const r of args.resources) {
      const exception = known(() => exceptionOf(r.props.tags), {});
      if (exception.policy === undefined && exception.reason === undefined) continue;
      if (exception.policy === undefined) {
        report(`${TAG_KEYS.policyExceptionReason} is set but ${TAG_KEYS.policyException} names no policy`, r.urn);
        continue;
      }
      if (!Object.hasOwn(POLICY_FACTS, exception.policy)) report(`${TAG_KEYS.policyException} names "${exception.policy}", which is not a policy of this pack`, r.urn);
      else if (!Object.hasOwn(EXEMPTIBLE_POLICIES, exception.policy)) {
        report(`${TAG_KEYS.policyException} names "${exception.policy}", which may not be excepted (exemptible: ${Object.keys(EXEMPTIBLE_POLICIES).join(", ")})`, r.urn);
      }
      if (exception.reason === undefined || exception.reason.trim().length === 0) report(`the exception to "${exception.policy}" gives no ${TAG_KEYS.policyExceptionReason}`, r.urn);
      if (exception.exempts === "ec2-no-public-ip" && SECURITY_GROUP_FIELDS[r.type]) {
        const { named, found } = securityGroupsOf(r, groups);
        if (named.length === 0 && found.length === 0) {
          report("is exempt from ec2-no-public-ip but names no security group, so its exposure cannot be judged", r.urn);
          continue;
        }
        const missing = named.filter((id) => (groups.byId.get(id) ?? []).length === 0);
        if (missing.length > 0 && found.length < named.length) {
          report(`is exempt from ec2-no-public-ip but its security group(s) ${missing.join(", ")} are not in this deployment, so its exposure cannot be judged`, r.urn);
        }
        for (const g of found) {
          const open = publicSources(g, rules, groups, vpcCidrs);
          if (open.length > 0) report(`is exempt from ec2-no-public-ip, yet its security group ${g.name} admits ${open.join(", ")}`, r.urn);
        }
      }
    }
  },
});

export const EXCEPTION_POLICIES: readonly PackStackPolicy[] = [policyExceptionValid];
