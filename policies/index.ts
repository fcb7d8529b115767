/**
 * The CrossGuard pack: `pulumi preview --policy-pack policies` (run `npm ci` here and at the
 * repository root first). Only the Pulumi CLI loads this file; everything else imports
 * ./rules. tenant-isolation's tenant list defaults to the repository's stack files, so a
 * preview needs no --policy-pack-config; one given still wins.
 */
import { PolicyPack } from "@pulumi/policy";
import { tenantAccountsFromStackFiles, tenantsFromStackFiles, tenantVpcCidrsFromStackFiles } from "../config";
import { PACK_DESCRIPTION, PACK_NAME, POLICIES } from "./rules";
import type { PackPolicy } from "./rules/util";

function withIsolationDefaults(policy: PackPolicy): PackPolicy {
  if (policy.name !== "tenant-isolation" || !policy.configSchema) return policy;
  const defaults: Record<string, unknown> = { tenants: tenantsFromStackFiles(), tenantAccounts: tenantAccountsFromStackFiles(), tenantCidrs: tenantVpcCidrsFromStackFiles() };
  const properties = Object.fromEntries(
    Object.entries(policy.configSchema.properties).map(([key, schema]) => [key, key in defaults ? { ...schema, default: defaults[key] } : schema]),
  );
  return { ...policy, configSchema: { ...policy.configSchema, properties } } as PackPolicy;
}

new PolicyPack(PACK_NAME, {
  description: PACK_DESCRIPTION,
  enforcementLevel: "mandatory",
  provider: "aws",
  policies: POLICIES.map(withIsolationDefaults),
});
