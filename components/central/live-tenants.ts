/**
 * A central stack builds each tenant's part (its roles, host rules, route, secrets' access)
 * from the tenant stack files beside it. Run from a checkout that lacks one (a branch cut
 * before a colleague's tenant merged, a stale clone), `pulumi up` would remove that live
 * tenant's part and strand it. So central first reads what its own last deployment served (its
 * `tenantRoleArns` output) and refuses to drop a tenant unless `clusterra:removeTenants` names
 * it (README, Day 2, "Removing a tenant").
 */
import * as pulumi from "@pulumi/pulumi";
import { REMOVE_TENANTS_KEY, type CentralConfig } from "../../config";
import type { CentralOutputs } from "./outputs";

/** The central output whose keys are the tenants its last deployment served. */
const SERVED_TENANTS_OUTPUT: keyof CentralOutputs = "tenantRoleArns";

/**
 * The tenants central's last deployment served (`previous`: its `tenantRoleArns` output, absent
 * before the first) that no stack file joins to it now and `removeTenants` does not name. Pure.
 */
export function strandedTenants(previous: unknown, config: Pick<CentralConfig, "tenants" | "removeTenants">): string[] {
  if (typeof previous !== "object" || previous === null) return [];
  const joined = new Set(config.tenants.map((t) => t.id));
  return Object.keys(previous).filter((id) => !joined.has(id) && !config.removeTenants.includes(id)).sort();
}

/** Why central refuses to deploy without these tenants: who, what would go, and the two ways on. Pure. */
export function strandedMessage(config: Pick<CentralConfig, "stack" | "file">, stranded: readonly string[]): string {
  const list = stranded.join(", ");
  return (
    `${config.stack} serves tenant${stranded.length === 1 ? "" : "s"} ${list} (its last deployment's ${SERVED_TENANTS_OUTPUT}), and no stack file of this checkout joins ${stranded.length === 1 ? "it" : "them"} to it: ` +
    `deploying would remove ${stranded.length === 1 ? "its" : "their"} roles, host rules, route and endpoint while ${stranded.length === 1 ? "it is" : "they are"} live. ` +
    `Deploy from a checkout that has ${stranded.length === 1 ? "its stack file" : "their stack files"} (pull main); to remove a tenant, its stack destroyed first, name it in ${config.file}: ${REMOVE_TENANTS_KEY}: [${list}] (README, "Removing a tenant")`
  );
}

/**
 * Reads central's own last outputs through a StackReference to itself and throws (a run
 * error, before any resource changes: Pulumi deletes nothing when the program fails) when a
 * tenant it serves would be dropped.
 */
export async function refuseStrandedTenants(config: CentralConfig, opts?: pulumi.CustomResourceOptions): Promise<void> {
  const self = new pulumi.StackReference(`${config.stack}-last-deployment`, { name: config.stack }, opts);
  const stranded = strandedTenants(await self.getOutputValue(SERVED_TENANTS_OUTPUT), config);
  if (stranded.length) throw new pulumi.RunError(strandedMessage(config, stranded));
}
