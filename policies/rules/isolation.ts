/**
 * Tenant isolation: in a tenant stack, nothing names another tenant. The known tenants
 * and their accounts are policy configuration (`tenants`, `tenantAccounts`);
 * `clusterra policy check` fills both from the stack files. The stack's own tenant and
 * kind come from the default tags of any AWS provider of the deployment, so a resource
 * created through the default provider, or a third provider without default tags, is
 * checked all the same.
 */
import type { PolicyResource } from "@pulumi/policy";
import { tenantNameStems } from "../../facts/fleet";
import { TAG_KEYS } from "../../facts/project";
import { ipv4Contains, parseIpv4Cidr, type Ipv4Cidr } from "./cidr";
import { userDataTexts } from "./compute";
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

/**
 * How names say whose they are: the stems the platform writes before a tenant's id
 * (facts/fleet.ts tenantNameStems, longest first), and every tenant's id (the stack's own
 * included, longest first, so that "acme" inside "acme-eu" reads right).
 */
interface Naming {
  readonly stems: readonly string[];
  readonly tenants: readonly string[];
}

const NAME_CHAR = /[a-z0-9]/i;
/** Where a name may end: the end of the text, or a character no id holds but "-" (which ids hold, so the longest id wins). */
const endsName = (text: string, at: number): boolean => at >= text.length || !NAME_CHAR.test(text[at]);

/**
 * The tenants a text names, structurally: at every place a stem starts a name (the text's
 * start, or after a separator that no name holds), the stem followed by a
 * tenant's id that ends there. The longest stem that is followed by an id decides, so the
 * own tenant's `clusterra-dev-tenant-acme` is acme's, whatever other ids exist.
 */
export function tenantsNamed(text: string, naming: Naming): { id: string; at: number }[] {
  const out: { id: string; at: number }[] = [];
  const lower = text.toLowerCase();
  for (let i = 0; i < lower.length; i++) {
    // A name starts at the text's start or after a separator (/ : = space quote...), never inside a word or after "-", "_" or ".".
    if (i > 0 && /[a-z0-9._-]/i.test(lower[i - 1])) continue;
    for (const stem of naming.stems) {
      if (!lower.startsWith(stem, i)) continue;
      const from = i + stem.length;
      const id = naming.tenants.find((t) => lower.startsWith(t.toLowerCase(), from) && endsName(lower, from + t.length));
      if (id === undefined) continue;
      out.push({ id: id.toLowerCase(), at: i });
      i = from + id.length - 1;
      break;
    }
  }
  return out;
}

/**
 * Whether two IAM-style patterns (`*` any run, `?` one character) can match one string.
 * Memoized over the two positions: a `*` on either side may take the other's next character
 * (or `*`), or nothing.
 */
export function globsMeet(a: string, b: string): boolean {
  const memo = new Map<number, boolean>();
  const go = (i: number, j: number): boolean => {
    const key = i * (b.length + 1) + j;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let r: boolean;
    if (i === a.length && j === b.length) r = true;
    else if (i < a.length && a[i] === "*") r = go(i + 1, j) || (j < b.length && go(i, j + 1));
    else if (j < b.length && b[j] === "*") r = go(i, j + 1) || (i < a.length && go(i + 1, j));
    else r = i < a.length && j < b.length && (a[i] === "?" || b[j] === "?" || a[i].toLowerCase() === b[j].toLowerCase()) && go(i + 1, j + 1);
    memo.set(key, r);
    return r;
  };
  return go(0, 0);
}

/** Where an ARN's resource name starts (after `role/`, `secret:`, `parameter/`...; an S3 ARN's is its bucket), or the whole text. */
function resourceName(pattern: string): { name: string; aws: boolean } {
  const m = /^arn:[^:]*:([^:]*):[^:]*:([^:]*):(.*)$/.exec(pattern);
  if (!m) return { name: pattern, aws: /^\/aws\//.test(pattern) };
  const [, service, account, resource] = m;
  // AWS's own resources (public parameters, AWS-managed policies) are no tenant's.
  const aws = account === "aws" || (service === "ssm" && /^parameter\/aws\//.test(resource));
  if (service === "s3") return { name: resource, aws };
  const typed = /^[A-Za-z-]+[/:]/.exec(resource);
  return { name: typed ? resource.slice(typed[0].length) : resource, aws };
}

/**
 * The other tenant an IAM wildcard can reach: one whose names (a stem, its id, then the end
 * of a name) the pattern's resource name can match, e.g. `arn:aws:s3:::clusterra-dev-*-files/*`
 * in any tenant stack, or `clusterra-dev-acme-*` when tenant `acme-eu` exists. An ARN pinned
 * to one of the stack's own accounts, or naming AWS's own resources, reaches no other tenant.
 */
export function wildcardReachesTenant(raw: string, own: string, others: readonly string[], ownAccounts: ReadonlySet<string>, stems: readonly string[], foreignAccounts: ReadonlyMap<string, string> = new Map()): string | undefined {
  // IAM policy variables (${aws:PrincipalTag/x}) stand for any text, as a wildcard does.
  const pattern = raw.replace(/\$\{[^}]*\}/g, "*");
  // "*" and its ARN spellings are about any resource, not names: the IAM policies judge those.
  if (!/[*?]/.test(pattern) || isAnyResource(pattern)) return undefined;
  const account = /^arn:[^:]*:[^:]*:[^:]*:([^:]*):/.exec(pattern)?.[1];
  if (account !== undefined && /^\d{12}$/.test(account) && ownAccounts.has(account)) return undefined;
  // A wildcard in the account that can spell another tenant's account reaches it.
  if (account !== undefined && /[*?]/.test(account) && account !== "*") {
    for (const [a, t] of foreignAccounts) if (globsMeet(account, a)) return t;
  }
  const { name, aws } = resourceName(pattern);
  if (!/[*?]/.test(name)) return undefined;
  // A name that is only wildcards (`image/*`, a role `*`) is about any resource: the IAM policies judge it.
  if (aws || /^[*?/]+$/.test(name)) return undefined;
  const body = name.replace(/^\/+/, "");
  for (const t of others) {
    if (t.toLowerCase() === own.toLowerCase()) continue;
    for (const stem of stems) {
      const theirs = `${stem}${t}`;
      if ([theirs, `${theirs}-*`, `${theirs}/*`, `${theirs}:*`, `${theirs}.*`].some((n) => globsMeet(body, n))) return t;
    }
  }
  return undefined;
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

function isTenantIsolationConfig(v: unknown): TenantIsolationConfig {
  return (asRecord(v) ?? {}) as TenantIsolationConfig;
}

export const tenantIsolation = stackPolicy("tenant-isolation", {
  description:
    "In a tenant stack (kind, tenant and environment from any AWS provider's default tags), no resource name, input or output (nested values such as " +
    "environment variables and tags included; AWS providers too), or IAM document refers to another tenant: by a name the platform derives for it " +
    "(clusterra-<env>-<id>..., clusterra/<env>/<id>/..., tenant-<id>; tenants from the policy config), by account id (tenantAccounts), by an address or block inside its VPC (tenantCidrs), " +
    "or through a wildcard that could match such a name (AWS's own resources aside); no resource is tagged as another tenant's. " +
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
    if (identity.tenants.length > 1) report(`the AWS providers' default tags name several tenants (${identity.tenants.join(", ")}): a tenant stack is one tenant's`);
    if (identity.environment === undefined) {
      report(`this is a tenant stack but no AWS provider's default tags name its environment (${TAG_KEYS.environment}), so the names it derives for other tenants cannot be read`);
      return;
    }
    const others = tenants.filter((t) => t.toLowerCase() !== own.toLowerCase());
    const accountsConfig = asRecord(config.tenantAccounts) ?? {};
    // Another tenant's account is never this stack's, even when one of its providers acts there
    // (a provider pointed at another tenant's account is exactly what this catches).
    const ownConfigured = accountsConfig[own];
    const foreignAccounts = new Map<string, string>();
    for (const t of others) {
      const a = accountsConfig[t];
      if (typeof a === "string" && /^\d{12}$/.test(a) && a !== ownConfigured) foreignAccounts.set(a, t);
    }
    // The tenant's own account when the config names it: a second provider acting elsewhere
    // (central's account, where every tenant's secrets are) does not make that account "own".
    const ownAccounts = new Set(typeof ownConfigured === "string" ? [ownConfigured] : identity.accounts.filter((a) => !foreignAccounts.has(a)));
    if (others.length === 0 && foreignAccounts.size === 0) return;
    const naming: Naming = { stems: tenantNameStems(identity.environment), tenants: [own, ...others].sort((a, b) => b.length - a.length) };
    const cidrsConfig = asRecord(config.tenantCidrs) ?? {};
    const foreignCidrs: ForeignCidr[] = [];
    for (const t of others) {
      const text = cidrsConfig[t];
      const cidr = typeof text === "string" ? parseIpv4Cidr(text) : undefined;
      if (cidr) foreignCidrs.push({ tenant: t, text: text as string, cidr });
    }
    const foreign = { others, ownAccounts, accounts: foreignAccounts, cidrs: foreignCidrs };

    for (const r of args.resources) {
      // Every resource with inputs (any provider's: aws-native, command, kubernetes too) and every
      // provider; not the stack, nor the reference to central's outputs (which list every tenant; the stack reads its own).
      if (r.type === "pulumi:pulumi:Stack" || r.type === "pulumi:pulumi:StackReference") continue;
      checkResource(r, own, foreign, naming, report);
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

function checkResource(r: PolicyResource, own: string, foreign: Foreign, naming: Naming, report: (problem: string, urn?: string) => void): void {
  const { others, ownAccounts, accounts: foreignAccounts } = foreign;
  const texts: [string, string][] = [["resource name", r.name]];
  // Values still unknown during preview are skipped, not allowed to abort the whole check.
  for (const key of Object.keys(r.props)) collectStrings(known<unknown>(() => r.props[key], undefined), key, texts);
  for (const [field, text] of [...texts]) {
    // User data as the instance reads it: base64, gzip and multipart decoded.
    if (/(^|\.)userData(Base64)?$/i.test(field)) for (const decoded of userDataTexts(text)) if (decoded !== text) texts.push([`${field} (decoded)`, decoded]);
    // JSON text (policies, container definitions) as its reader reads it: \u escapes decoded.
    if (/^\s*[[{]/.test(text)) {
      try {
        collectStrings(JSON.parse(text), `${field} (parsed)`, texts);
      } catch {
        // not JSON
      }
    }
  }

  const hits = new Map<string, string[]>(); // what -> fields
  const hit = (what: string, field: string): void => {
    const fields = hits.get(what) ?? [];
    if (!fields.includes(field) && fields.length < 5) fields.push(field);
    hits.set(what, fields);
  };
  for (const [field, text] of texts) {
    // Names the platform derives for another tenant; the stack's own read as its own.
    for (const { id } of tenantsNamed(text, naming)) {
      const tenant = others.find((t) => t.toLowerCase() === id);
      if (tenant !== undefined) hit(`tenant "${tenant}"`, field);
    }
    // The platform's tenant tag, wherever it sits (tags, tagsAll, tagSpecifications, a condition on it).
    if (/(^|[./])clusterra:tenant$/i.test(field) || /\/clusterra:tenant(\)|$)/i.test(field)) {
      const tenant = others.find((t) => globsMeet(text, t));
      if (tenant !== undefined) hit(`tenant "${tenant}" by its ${TAG_KEYS.tenant} tag`, field);
    }
    // An ARN anywhere (a permission's sourceArn, an output) with wildcards: judged like a policy's.
    if (/^arn:/.test(text) && /[*?]|\$\{/.test(text)) {
      const tenant = wildcardReachesTenant(text, own, others, foreign.ownAccounts, naming.stems, foreign.accounts);
      if (tenant !== undefined) hit(`tenant "${tenant}" through the wildcard ${text}`, field);
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
      const tenant = wildcardReachesTenant(p, own, others, ownAccounts, naming.stems, foreignAccounts);
      if (tenant !== undefined) hit(`tenant "${tenant}" through the wildcard ${p}`, doc.field);
    }
  }
  for (const [what, fields] of hits) report(`refers to ${what} (this stack is tenant "${own}") in ${fields.join(", ")}`, r.urn);
  const tagged = known(() => tagMap(r.props.tags)[TAG_KEYS.tenant], undefined);
  if (tagged !== undefined && tagged.toLowerCase() !== own.toLowerCase()) report(`tags.${TAG_KEYS.tenant} is "${tagged}" but this stack is tenant "${own}"`, r.urn);
}

export const ISOLATION_POLICIES: readonly PackStackPolicy[] = [tenantIsolation];
