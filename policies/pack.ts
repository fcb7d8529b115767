/**
 * The pack's policies as `pulumi preview --policy-pack` gets them: tenant-isolation's tenant
 * list, accounts and CIDRs, and the contract policy's tenant ports, default to the stack
 * files of the repository (`root`), so a preview needs no --policy-pack-config; one given
 * still wins.
 */
import { PROJECT_ROOT, tenantAccountsFromStackFiles, tenantPortsFromStackFiles, tenantsFromStackFiles, tenantVpcCidrsFromStackFiles } from "../config";
import { POLICIES } from "./rules";
import type { PackPolicy } from "./rules/util";

function withIsolationDefaults(policy: PackPolicy, root: string): PackPolicy {
  if (!policy.configSchema) return policy;
  const defaults: Record<string, unknown> =
    policy.name === "tenant-isolation" ? { tenants: tenantsFromStackFiles(root), tenantAccounts: tenantAccountsFromStackFiles(root), tenantCidrs: tenantVpcCidrsFromStackFiles(root) }
    : policy.name === "peering-flows-match-contract" ? { tenantPorts: tenantPortsFromStackFiles(root) }
    : {};
  const properties = Object.fromEntries(
    Object.entries(policy.configSchema.properties).map(([key, schema]) => [key, key in defaults ? { ...schema, default: defaults[key] } : schema]),
  );
  return { ...policy, configSchema: { ...policy.configSchema, properties } } as PackPolicy;
}

/** Every policy, tenant-isolation with the defaults of `root`'s stack files. */
export function packPolicies(root = PROJECT_ROOT): PackPolicy[] {
  return POLICIES.map((p) => withIsolationDefaults(p, root));
}
