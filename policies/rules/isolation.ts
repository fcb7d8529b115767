/**
 * Tenant isolation: in a tenant stack, nothing names another tenant. The known tenants
 * are policy configuration (`tenants`); `clusterra policy check` fills it from the stack
 * files. The stack's own tenant is its provider's default tag `clusterra:tenant`.
 */
import { TAG_KEYS } from "../../facts/project";
import { documentsOf } from "./iam-docs";
import { ownTenant, stackKind, tagMap } from "./provider";
import { known, resourcePolicy, type PackResourcePolicy } from "./util";

export interface TenantIsolationConfig {
  /** Every tenant id of the platform. */
  tenants?: string[];
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

export const tenantIsolation = resourcePolicy("tenant-isolation", {
  description:
    "In a tenant stack, no resource name, input or IAM document refers to another tenant (tenants from the policy config), " +
    "and no resource is tagged as another tenant's.",
  remediation: "derive names and ARNs from this stack's own tenant id only; cross-tenant access goes through central, never tenant to tenant",
  configSchema: {
    properties: {
      tenants: { type: "array", items: { type: "string" }, default: [], description: "Every tenant id of the platform" },
    },
  },
  validate: (args, report) => {
    if (!args.type.startsWith("aws:")) return;
    const own = ownTenant(args.provider);
    if (own === undefined || stackKind(args.provider) !== "tenant") return;
    const others = (args.getConfig<TenantIsolationConfig>().tenants ?? []).filter((t) => t !== own && t.length > 0);
    if (others.length === 0) return;

    const texts: [string, string][] = [["resource name", args.name]];
    // Values still unknown during preview are skipped, not allowed to abort the whole check.
    for (const key of Object.keys(args.props)) {
      const value = known<unknown>(() => args.props[key], undefined);
      if (typeof value === "string") texts.push([key, value]);
      else if (Array.isArray(value)) value.forEach((v, i) => typeof v === "string" && texts.push([`${key}[${i}]`, v]));
    }
    for (const doc of known(() => documentsOf(args.type, args.props), [])) {
      if (typeof doc.raw !== "string") texts.push([doc.field, JSON.stringify(doc.raw)]);
      else if (!texts.some(([k]) => k === doc.field)) texts.push([doc.field, doc.raw]);
    }
    // One pass over every tenant id, the stack's own included and longest first, so that
    // "acme" inside the own id "acme-eu" (or "acme-eu" when acme is the stack) reads right.
    const re = tenantsPattern([own, ...others]);
    const hits = new Map<string, string[]>(); // tenant -> fields
    for (const [field, text] of texts) {
      re.lastIndex = 0;
      for (let m = re.exec(text); m !== null; m = re.exec(text)) {
        const found = m[2].toLowerCase();
        const tenant = others.find((t) => t.toLowerCase() === found);
        if (tenant === undefined) continue;
        const fields = hits.get(tenant) ?? [];
        if (!fields.includes(field)) fields.push(field);
        hits.set(tenant, fields);
      }
    }
    for (const [tenant, fields] of hits) report(`refers to tenant "${tenant}" (this stack is tenant "${own}") in ${fields.join(", ")}`);
    const tagged = known(() => tagMap(args.props.tags)[TAG_KEYS.tenant], undefined);
    if (tagged !== undefined && tagged !== own) report(`tags.${TAG_KEYS.tenant} is "${tagged}" but this stack is tenant "${own}"`);
  },
});

export const ISOLATION_POLICIES: readonly PackResourcePolicy[] = [tenantIsolation];
