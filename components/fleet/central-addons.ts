/**
 * What the central cluster runs for every tenant: cert-manager, External Secrets, the
 * Slinky and MariaDB operators and their CRDs; and the pruning of tenants whose stack is
 * gone. Pure functions, plus one that removes files (the writer's side).
 */
import * as fs from "fs";
import * as path from "path";
import { CENTRAL_ADD_ONS, centralFleetPath, tenantEntriesApplicationSetPath, tenantsFleetPath, type CentralAddOn } from "../../facts/fleet";
import { ARGOCD_IN_CLUSTER, PLATFORM_PROJECT } from "../../facts/versions";
import { scanStackFiles } from "../../config";
import { application, type FleetRepo } from "./argo";
import type { FleetFileSet } from "./writer";
import { yamlFile } from "./yaml-file";
import { isOfflineFacts, tenantFactsPath } from "./facts";

/** Values of each central add-on (keys the pinned charts define). */
export function centralAddOnValues(addOn: CentralAddOn): Record<string, unknown> {
  switch (addOn.chart) {
    case "certManager":
      return { crds: { enabled: true, keep: true } };
    case "externalSecrets":
      // The controller assumes each tenant's reader role from the host's credentials
      // (IMDS hop limit 1: only host-network pods reach them). The webhook stays off it.
      return { installCRDs: true, hostNetwork: true, dnsPolicy: "ClusterFirstWithHostNet" };
    case "slurmOperator":
      // cert-manager issues the webhook's certificate: no new CA on every render.
      return { crds: { enabled: false }, certManager: { enabled: true } };
    case "mariadbOperator":
      return { crds: { enabled: false } };
    default:
      return {};
  }
}

/** The add-ons' Applications and values, by path. */
export function centralAddOnFiles(scope: string, source: string, repo: FleetRepo): FleetFileSet {
  const dir = centralFleetPath(scope);
  return Object.fromEntries(
    CENTRAL_ADD_ONS.flatMap((addOn) => {
      const valuesPath = `${dir}/values/${addOn.name}.yaml`;
      const app = application({
        name: addOn.name,
        project: PLATFORM_PROJECT,
        repo,
        source: { kind: "chart", chart: addOn.chart, valuesPath },
        destination: { server: ARGOCD_IN_CLUSTER, namespace: addOn.namespace },
        wave: addOn.wave,
      });
      return [
        [`${dir}/${addOn.name}.yaml`, yamlFile(source, app)],
        [valuesPath, yamlFile(source, centralAddOnValues(addOn))],
      ];
    }),
  );
}

/**
 * What a destroyed tenant stack leaves behind: tenant folders of this central (its scope's)
 * that no tenant stack file names any more (a deployed one's only when `removeTenants` names it), and central's per-tenant entry files of an earlier
 * layout (the entries render at sync time now). The central stack prunes them on its next
 * `pulumi up` (its folder gone, the tenant gets no new Applications; see `tenant remove`).
 */
export function orphanedTenantPaths(root: string, scope: string, tenantIds: readonly string[] | undefined, removeTenants: readonly string[] = []): string[] {
  const keep = new Set(tenantIds ?? []);
  // A deployed tenant (a facts file `pulumi up` wrote) goes only when central names it for removal:
  // a checkout that lacks its stack file must not delete its folder (components/central/live-tenants.ts).
  const deployed = (id: string) => {
    const facts = path.join(root, tenantFactsPath(scope, id));
    return fs.existsSync(facts) && !isOfflineFacts(fs.readFileSync(facts, "utf8"));
  };
  const tenantsDir = path.join(root, tenantsFleetPath(scope));
  const folders = fs.existsSync(tenantsDir) ? fs.readdirSync(tenantsDir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name) : [];
  const centralDir = path.join(root, centralFleetPath(scope));
  const appset = path.basename(tenantEntriesApplicationSetPath(scope));
  const legacyEntries = fs.existsSync(centralDir) ? fs.readdirSync(centralDir).filter((n) => /^tenant-.+\.yaml$/.test(n) && n !== appset) : [];
  return [
    // Unknown which tenants are live (a stack file that cannot be read): no tenant's folder goes.
    ...(tenantIds === undefined ? [] : folders.filter((id) => !keep.has(id) && (removeTenants.includes(id) || !deployed(id))).map((id) => `${tenantsFleetPath(scope)}/${id}`)),
    ...legacyEntries.map((n) => `${centralFleetPath(scope)}/${n}`),
  ].sort();
}

/** Removes the given fleet paths (files or folders) under root; returns them. */
export function pruneFleetPaths(root: string, rels: readonly string[]): string[] {
  for (const rel of rels) fs.rmSync(path.join(root, rel), { recursive: true, force: true });
  return [...rels];
}

/**
 * The tenant ids whose folders a central keeps: every tenant stack file of its environment
 * names one, whichever central it joins (a mistyped central or a move between centrals never
 * deletes a tenant's files; the whole fleet check names a folder left behind). Undefined when
 * a stack file cannot be read: it may be a tenant's, so no tenant's folder goes.
 */
export function keptTenantIds(environment: string, root?: string): string[] | undefined {
  const { files, broken } = scanStackFiles(root);
  if (broken.size > 0) return undefined;
  return files
    .filter((f) => f.values["clusterra:kind"] === "tenant" && f.values["clusterra:environment"] === environment)
    .map((f) => (f.values["clusterra:tenant"] as { id?: unknown } | undefined)?.id)
    .filter((id): id is string => typeof id === "string")
    .sort();
}
