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
import { DIY_ORGANIZATION } from "../../facts/project";
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
  const one = stranded.length === 1;
  return (
    `${config.stack} serves tenant${one ? "" : "s"} ${list} (its last deployment's ${SERVED_TENANTS_OUTPUT}), and no stack file in this checkout joins ${one ? "it" : "them"} to ${config.stack}: ` +
    `deploying would remove ${one ? "its" : "their"} roles, host rules, route and endpoint while ${one ? "it is" : "they are"} live. ` +
    `Deploy from a checkout that has ${one ? "its stack file" : "their stack files"} (main, or the unmerged branch that added ${one ? "it" : "them"}); to remove a tenant, its stack destroyed first, name it in ${removeTenantsHint(config.file, stranded)}`
  );
}

/** Where and how a tenant is named for removal: `<central's stack file>: clusterra:removeTenants: [<ids>]` and the runbook. Pure. */
export function removeTenantsHint(centralFile: string, ids: readonly string[]): string {
  return `${centralFile}: ${REMOVE_TENANTS_KEY}: [${ids.join(", ")}] (README, "Removing a tenant")`;
}

/**
 * How a program names its own stack in a StackReference: qualified by its organization on
 * Pulumi Cloud (a short name there means the user's default organization, perhaps another),
 * short on a DIY backend (whose organization is always "organization"; a legacy DIY layout
 * refuses qualified names). Pure.
 */
export function ownStackReferenceName(organization: string, project: string, stack: string): string {
  return organization && organization !== DIY_ORGANIZATION ? `${organization}/${project}/${stack}` : stack;
}

/**
 * Reads central's own last outputs through a StackReference to itself and throws (a run
 * error, before any resource changes: Pulumi deletes nothing when the program fails) when a
 * tenant it serves would be dropped. A secret output is read as its value.
 */
export async function refuseStrandedTenants(config: CentralConfig, opts?: pulumi.CustomResourceOptions): Promise<void> {
  const name = ownStackReferenceName(pulumi.getOrganization(), pulumi.getProject(), config.stack);
  const self = new pulumi.StackReference(`${config.stack}-last-deployment`, { name }, opts);
  const served = await self.getOutputDetails(SERVED_TENANTS_OUTPUT);
  const previous = served.value ?? served.secretValue;
  const stranded = strandedTenants(previous, config);
  if (stranded.length) throw new pulumi.RunError(strandedMessage(config, stranded));
  const unknown = unservedRemovals(previous, config);
  // A name central never served removes nothing: most likely a typo, which would let the real one be dropped unnamed later.
  if (unknown.length) pulumi.log.warn(`${config.file}: ${REMOVE_TENANTS_KEY} names ${unknown.join(", ")}, which ${config.stack}'s last deployment does not serve: already removed, or a typo; nothing of ${unknown.length === 1 ? "it" : "them"} to remove, and the entry may go`);
}

/** The ids `removeTenants` names that central's last deployment did not serve (none before its first). Pure. */
export function unservedRemovals(previous: unknown, config: Pick<CentralConfig, "removeTenants">): string[] {
  if (typeof previous !== "object" || previous === null) return [];
  return config.removeTenants.filter((id) => !Object.prototype.hasOwnProperty.call(previous, id));
}
