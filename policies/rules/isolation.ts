/**
 * Tenant isolation: in a tenant stack, nothing names another tenant. The known tenants
 * and their accounts are policy configuration (`tenants`, `tenantAccounts`);
 * `clusterra policy check` fills both from the stack files. The stack's own tenant and
 * kind come from the default tags of any AWS provider of the deployment, so a resource
 * created through the default provider, or a third provider without default tags, is
 * checked all the same.
 */
import type { PolicyResource } from "@pulumi/policy";
import { TAG_KEYS } from "../../facts/project";
import { ipv4Contains, parseIpv4Cidr, type Ipv4Cidr } from "./cidr";
import { documentsOf, isAnyResource, statementsOf } from "./iam-docs";
import { stackIdentity, tagMap } from "./provider";
import { asRecord, known, stackPolicy, type PackStackPolicy } from "./util";

export interface TenantIsolationConfig {
  /** Every tenant id of the platform. */
  tenants?: string[];
  /** Tenant id -> the tenant's AWS account id. */
  tenantAccounts?: Record<string, string>;
  /** Tenant id -> the tenant's VPC CIDR. */
  tenantCidrs?: Record<string, string>;
}

const patterns = new Map<string, RegExp>();
/**
 * Matches any of the tenant ids as a whole word of a name or ARN (`acme` in
 * `clusterra-acme-files`, not in `acmecorp`); group 2 is the tenant found.
 */
function tenantsPattern(tenants: readonly string[]): RegExp {
  const key = tenants.join("\n");
  let re = patterns.get(key);
  if (!re) {
    const alternatives = [...tenants].sort((a, b) => b.length - a.length).map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    re = new RegExp(`(^|[^a-z0-9])(${alternatives.join("|")})(?=[^a-z0-9]|$)`, "gi");
    if (patterns.size > 100) patterns.clear();
    patterns.set(key, re);
  }
  return re;
}

/** Tenant ids found in a text as whole words, with where each starts. */
function tenantTokens(text: string, re: RegExp): { id: string; at: number }[] {
  const out: { id: string; at: number }[] = [];
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    out.push({ id: m[2].toLowerCase(), at: m.index + m[1].length });
    if (m[0].length === 0) re.lastIndex++;
  }
  return out;
}

/** Every string in a value, with its path (nested objects and lists: env vars, tags, blocks). */
function collectStrings(value: unknown, path: string, out: [string, string][], depth = 0): void {
  if (depth > 12) return;
  if (typeof value === "string") {
    out.push([path, value]);
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((v, i) => collectStrings(known(() => v as unknown, undefined), `${path}[${i}]`, out, depth + 1));
    return;
  }
  const r = asRecord(value);
  if (!r) return;
  for (const k of Object.keys(r)) {
    // Tag keys are names too (a tag named after another tenant is a reference).
    out.push([`${path}.${k} (key)`, k]);
    collectStrings(known(() => r[k], undefined), `${path}.${k}`, out, depth + 1);
  }
}

/** Strings of a policy document that may hold wildcards: resources, principals, condition values. */
function documentPatterns(raw: unknown): string[] {
  const out: string[] = [];
  for (const st of statementsOf(raw) ?? []) {
    out.push(...st.resources, ...(st.notResources ?? []), ...st.principals.map((p) => p.value));
    for (const body of Object.values(st.condition)) {
      for (const v of Object.values(body)) for (const x of Array.isArray(v) ? v : [v]) if (typeof x === "string") out.push(x);
    }
  }
  return out;
}

/**
 * The other tenant an IAM wildcard can reach: a `*` that could stand for (or complete)
 * another tenant's id where no tenant id comes first, e.g.
 * `arn:aws:s3:::clusterra-dev-*-files/*` in any tenant stack, or `clusterra-dev-acme-*`
 * when tenant `acme-eu` exists. A wildcard that is a whole segment (`bucket/*`) is not
 * about names; an ARN pinned to one of the stack's own accounts cannot reach another
 * tenant's account and is left alone.
 */
export function wildcardReachesTenant(pattern: string, own: string, others: readonly string[], ownAccounts: ReadonlySet<string>): string | undefined {
  // "*" and its ARN spellings are about any resource, not names: the IAM policies judge those.
  if (!pattern.includes("*") || isAnyResource(pattern)) return undefined;
  const account = /^arn:[^:]*:[^:]*:[^:]*:([^:]*):/.exec(pattern)?.[1];
  if (account !== undefined && /^\d{12}$/.test(account) && ownAccounts.has(account)) return undefined;
  const re = tenantsPattern([own, ...others]);
  const literal = (s: string): string => s.replace(/\*/g, "").replace(/\?/g, "x");
  for (let i = pattern.indexOf("*"); i >= 0; i = pattern.indexOf("*", i + 1)) {
    // A wildcard that is a whole segment ("bucket/*", an account "*") means any child of a
    // parent named elsewhere, or any account: the names and the IAM policies judge those.
    const segStart = Math.max(pattern.lastIndexOf("/", i - 1), pattern.lastIndexOf(":", i - 1)) + 1;
    const segEnd = /[/:]/.exec(pattern.slice(i + 1))?.index;
    const segment = pattern.slice(segStart, segEnd === undefined ? pattern.length : i + 1 + segEnd);
    if (/^[*?]+$/.test(segment)) continue;
    const before = literal(pattern.slice(0, i));
    const after = literal(pattern.slice(i + 1));
    for (const t of others) {
      for (let k = 0; k < t.length; k++) {
        // The wildcard may complete an id already begun before it ("acme-" + "eu").
        if (!before.toLowerCase().endsWith(t.slice(0, k).toLowerCase())) continue;
        const start = before.length - k;
        const tokens = tenantTokens(before + t.slice(k) + after, re);
        // A tenant id written before the wildcard already scopes it (and is judged as a name).
        if (tokens.some((x) => x.at < start)) continue;
        if (tokens.some((x) => x.at === start && x.id === t.toLowerCase())) return t;
      }
    }
  }
  return undefined;
}

function isTenantIsolationConfig(v: unknown): TenantIsolationConfig {
  return (asRecord(v) ?? {}) as TenantIsolationConfig;
}

export const tenantIsolation = stackPolicy("tenant-isolation", {
  description:
    "In a tenant stack (kind and tenant from any AWS provider's default tags), no resource name, input or output (nested values such as " +
    "environment variables and tags included; AWS providers too), or IAM document refers to another tenant: by id (tenants from the policy " +
    "config), by account id (tenantAccounts), by an address or block inside its VPC (tenantCidrs), or through a wildcard that would match another tenant's names; no resource is tagged as another tenant's. " +
    "With no tenant list configured a tenant stack fails, rather than passing unchecked.",
  remediation: "derive names and ARNs from this stack's own tenant id and account only; cross-tenant access goes through central, never tenant to tenant",
  configSchema: {
    properties: {
      tenants: { type: "array", items: { type: "string" }, default: [], description: "Every tenant id of the platform" },
      tenantAccounts: { type: "object", additionalProperties: { type: "string" }, default: {}, description: "Tenant id -> its AWS account id" },
      tenantCidrs: { type: "object", additionalProperties: { type: "string" }, default: {}, description: "Tenant id -> its VPC CIDR" },
    },
  },
  validate: (args, report) => {
    const identity = stackIdentity(args.resources);
    if (identity.kind !== "tenant") return;
    const own = identity.tenant;
    const config = isTenantIsolationConfig(args.getConfig<TenantIsolationConfig>());
    const tenants = (config.tenants ?? []).filter((t) => typeof t === "string" && t.length > 0);
    if (own === undefined) {
      report(`this is a tenant stack but no AWS provider's default tags name its tenant (${TAG_KEYS.tenant}), so isolation cannot be checked`);
      return;
    }
    if (tenants.length === 0) {
      report(`no tenants are configured (tenant-isolation's "tenants"), so references to other tenants cannot be checked in tenant "${own}"`);
      return;
    }
    const others = tenants.filter((t) => t.toLowerCase() !== own.toLowerCase());
    const accountsConfig = asRecord(config.tenantAccounts) ?? {};
    const ownAccounts = new Set(identity.accounts);
    const ownConfigured = accountsConfig[own];
    if (typeof ownConfigured === "string") ownAccounts.add(ownConfigured);
    const foreignAccounts = new Map<string, string>();
    for (const t of others) {
      const a = accountsConfig[t];
      if (typeof a === "string" && /^\d{12}$/.test(a) && !ownAccounts.has(a)) foreignAccounts.set(a, t);
    }
    if (others.length === 0 && foreignAccounts.size === 0) return;
    const re = tenantsPattern([own, ...others]);
    const cidrsConfig = asRecord(config.tenantCidrs) ?? {};
    const foreignCidrs: ForeignCidr[] = [];
    for (const t of others) {
      const text = cidrsConfig[t];
      const cidr = typeof text === "string" ? parseIpv4Cidr(text) : undefined;
      if (cidr) foreignCidrs.push({ tenant: t, text: text as string, cidr });
    }
    const foreign = { others, ownAccounts, accounts: foreignAccounts, cidrs: foreignCidrs };

    for (const r of args.resources) {
      // Providers too: a provider assuming another tenant's role reaches that tenant.
      if (!r.type.startsWith("aws:") && !r.type.startsWith("pulumi:providers:aws")) continue;
      checkResource(r, own, foreign, re, report);
    }
  },
});

interface ForeignCidr {
  readonly tenant: string;
  readonly text: string;
  readonly cidr: Ipv4Cidr;
}

/** What marks another tenant: ids, accounts (account -> tenant) and VPC blocks. */
interface Foreign {
  readonly others: readonly string[];
  readonly ownAccounts: ReadonlySet<string>;
  readonly accounts: ReadonlyMap<string, string>;
  readonly cidrs: readonly ForeignCidr[];
}

const IPV4 = /(?<![\d.])(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}(?:\/\d{1,2})?)(?![\d.])/g;

function checkResource(r: PolicyResource, own: string, foreign: Foreign, re: RegExp, report: (problem: string, urn?: string) => void): void {
  const { others, ownAccounts, accounts: foreignAccounts } = foreign;
  const texts: [string, string][] = [["resource name", r.name]];
  // Values still unknown during preview are skipped, not allowed to abort the whole check.
  for (const key of Object.keys(r.props)) collectStrings(known<unknown>(() => r.props[key], undefined), key, texts);

  const hits = new Map<string, string[]>(); // what -> fields
  const hit = (what: string, field: string): void => {
    const fields = hits.get(what) ?? [];
    if (!fields.includes(field) && fields.length < 5) fields.push(field);
    hits.set(what, fields);
  };
  for (const [field, text] of texts) {
    // One pass over every tenant id, the stack's own included and longest first, so that
    // "acme" inside the own id "acme-eu" (or "acme-eu" when acme is the stack) reads right.
    for (const { id } of tenantTokens(text, re)) {
      const tenant = others.find((t) => t.toLowerCase() === id);
      if (tenant !== undefined) hit(`tenant "${tenant}"`, field);
    }
    if (foreignAccounts.size > 0) {
      for (const m of text.matchAll(/(?<!\d)(\d{12})(?!\d)/g)) {
        const tenant = foreignAccounts.get(m[1]);
        if (tenant !== undefined) hit(`tenant "${tenant}"'s account ${m[1]}`, field);
      }
    }
    // An address or block inside another tenant's VPC (a host, a route, a rule's peer); a wider block that merely covers it is not a reference.
    if (foreign.cidrs.length > 0 && /\d\.\d/.test(text)) {
      for (const m of text.matchAll(IPV4)) {
        const c = parseIpv4Cidr(m[1]);
        const into = c && foreign.cidrs.find((f) => ipv4Contains(f.cidr, c));
        if (into) hit(`tenant "${into.tenant}"'s VPC ${into.text} (${m[1]})`, field);
      }
    }
  }
  for (const doc of known(() => documentsOf(r.type, r.props), [])) {
    for (const p of documentPatterns(doc.raw)) {
      const tenant = wildcardReachesTenant(p, own, others, ownAccounts);
      if (tenant !== undefined) hit(`tenant "${tenant}" through the wildcard ${p}`, doc.field);
    }
  }
  for (const [what, fields] of hits) report(`refers to ${what} (this stack is tenant "${own}") in ${fields.join(", ")}`, r.urn);
  const tagged = known(() => tagMap(r.props.tags)[TAG_KEYS.tenant], undefined);
  if (tagged !== undefined && tagged !== own) report(`tags.${TAG_KEYS.tenant} is "${tagged}" but this stack is tenant "${own}"`, r.urn);
}

export const ISOLATION_POLICIES: readonly PackStackPolicy[] = [tenantIsolation];
