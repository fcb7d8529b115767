/**
 * What a resource's AWS provider says about the stack: its default tags and the accounts
 * it may act in. The engine hands provider inputs over serialized, so nested values such
 * as `defaultTags` may arrive as JSON text; both forms are read.
 */
import type { PolicyProviderResource } from "@pulumi/policy";
import { TAG_KEYS } from "../../facts/project";
import { asArray, asRecord, EMPTY_TAGS as EMPTY, known, parseMaybeJson, tagMap, type Tags } from "./util";

export { tagMap, type Tags } from "./util";

const defaultTagCache = new Map<string, Tags>();

/** The provider's `defaultTags.tags` (object or JSON text), {} when absent or unknown. */
export function providerDefaultTags(provider: PolicyProviderResource | undefined): Tags {
  if (!provider || !provider.type.startsWith("pulumi:providers:aws")) return EMPTY;
  const raw = known(() => provider.props.defaultTags as unknown, undefined);
  if (raw === undefined || raw === null) return EMPTY;
  if (typeof raw === "string") {
    let t = defaultTagCache.get(raw);
    if (!t) {
      t = readDefaultTags(parseMaybeJson(raw));
      defaultTagCache.set(raw, t);
    }
    return t;
  }
  return known(() => readDefaultTags(raw), EMPTY);
}

function readDefaultTags(v: unknown): Tags {
  // The provider schema makes defaultTags a single block; some serializations wrap it in a list.
  const block = asRecord(Array.isArray(v) ? v[0] : v);
  return block ? tagMap(block.tags) : EMPTY;
}

/**
 * Accounts the provider acts in: `allowedAccountIds`, and the accounts of the roles it
 * assumes (`assumeRoles[].roleArn`, or a single `assumeRole`); empty when neither is set.
 */
export function providerAccounts(provider: PolicyProviderResource | undefined): string[] {
  if (!provider || !provider.type.startsWith("pulumi:providers:aws")) return [];
  const out: string[] = [];
  const add = (a: unknown): void => {
    if (typeof a === "string" && /^\d{12}$/.test(a) && !out.includes(a)) out.push(a);
  };
  for (const a of asArray(parseMaybeJson(known(() => provider.props.allowedAccountIds as unknown, undefined)))) add(a);
  for (const field of ["assumeRoles", "assumeRole"]) {
    for (const r of asArray(parseMaybeJson(known(() => provider.props[field] as unknown, undefined)))) {
      const arn = asRecord(r)?.roleArn;
      if (typeof arn === "string") add(/^arn:[a-z-]+:iam::(\d{12}):/.exec(arn)?.[1]);
    }
  }
  return out;
}

/**
 * Effective tags of a resource: the provider's default tags overlaid by its own `tags`.
 * Not for Auto Scaling groups: defaultTags do not reach them (required-tags reads their
 * own tags list alone).
 */
export function effectiveTags(provider: PolicyProviderResource | undefined, ownTags: unknown): Tags {
  const defaults = providerDefaultTags(provider);
  const own = ownTags === undefined || ownTags === null ? EMPTY : tagMap(ownTags);
  if (own === EMPTY || Object.keys(own).length === 0) return defaults;
  return { ...defaults, ...own };
}

/** The tenant a stack belongs to, from its provider's default tags. */
export function ownTenant(provider: PolicyProviderResource | undefined): string | undefined {
  return providerDefaultTags(provider)[TAG_KEYS.tenant];
}

/** The stack kind, from the provider's default tags. */
export function stackKind(provider: PolicyProviderResource | undefined): string | undefined {
  return providerDefaultTags(provider)[TAG_KEYS.stackKind];
}

/** What the stack is, read from every AWS provider of the deployment rather than one resource's. */
export interface StackIdentity {
  /** `clusterra:stack-kind` of the providers' default tags (the first found). */
  readonly kind?: string;
  /** `clusterra:tenant` of the providers' default tags (the first found). */
  readonly tenant?: string;
  /** `clusterra:environment` of the providers' default tags (the first found). */
  readonly environment?: string;
  /** Every tenant the providers' default tags name (more than one is itself a finding). */
  readonly tenants: readonly string[];
  /** Every account an AWS provider of the stack acts in. */
  readonly accounts: readonly string[];
}

/**
 * The stack's kind, tenant and accounts from every AWS provider in a deployment: the
 * provider resources themselves (the engine lists them among the stack's resources) and
 * each resource's provider. A resource through the default provider, or through a third
 * provider without default tags, still belongs to the stack these say it is.
 */
export function stackIdentity(resources: readonly { type: string; props: Record<string, unknown>; provider?: PolicyProviderResource }[]): StackIdentity {
  const providers: PolicyProviderResource[] = [];
  const seen = new Set<unknown>();
  const add = (p: PolicyProviderResource | undefined): void => {
    if (!p || seen.has(p.urn ?? p)) return;
    seen.add(p.urn ?? p);
    providers.push(p);
  };
  for (const r of resources) {
    if (r.type.startsWith("pulumi:providers:aws")) add(r as unknown as PolicyProviderResource);
    add(r.provider);
  }
  let kind: string | undefined;
  let tenant: string | undefined;
  let environment: string | undefined;
  const accounts: string[] = [];
  const tenants: string[] = [];
  for (const p of providers) {
    const tags = providerDefaultTags(p);
    // Any provider tagged as a tenant's makes this a tenant stack: another provider cannot
    // declare the stack central and switch the tenant checks off.
    if (tags[TAG_KEYS.stackKind] === "tenant") kind = "tenant";
    kind ??= tags[TAG_KEYS.stackKind];
    const t = tags[TAG_KEYS.tenant];
    if (t !== undefined && !tenants.includes(t)) tenants.push(t);
    environment ??= tags[TAG_KEYS.environment];
    for (const a of providerAccounts(p)) if (!accounts.includes(a)) accounts.push(a);
  }
  tenant = tenants[0];
  return { ...(kind !== undefined ? { kind } : {}), ...(tenant !== undefined ? { tenant } : {}), ...(environment !== undefined ? { environment } : {}), tenants, accounts };
}
