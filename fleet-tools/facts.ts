/**
 * A tenant's facts file against its own stack: each value names the tenant's own role, keys,
 * server and port, never another tenant's or central's. `fleet check` and `fleet write` both
 * run it (a facts file comes from `pulumi up` or by hand, and the fleet reads it at sync).
 */
import * as fs from "fs";
import * as path from "path";
import { parse } from "yaml";
import { hostAddressProblem } from "../config/cidr";
import { centralScopesFromStackFiles, environmentOfScope, isExampleStack, PROJECT_ROOT, readAllStackFiles, REMOVE_TENANTS_KEY, scanStackFiles } from "../config";
import { removeTenantsHint } from "../components/central/live-tenants";
import { tenantFleetPath } from "../facts/fleet";
import { FACTS_FILE, isOfflineFacts } from "../components/fleet/facts";
import { fleetFiles, tenantStacks, type FleetProblem } from "./files";
import { controlPlaneSecretsRoleName, EXAMPLE_STACKS_DIR, slurmKeySecretNames } from "../facts/project";

/** Sub-folders of a folder (none when it is missing). */
function listDirs(dir: string): string[] {
  return fs.existsSync(dir) ? fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort() : [];
}

/** Every problem of every tenant's facts file under `root`'s fleet/tenants/. */
export function tenantFactsProblems(root: string, only: (scope: string, id: string) => boolean = () => true): FleetProblem[] {
  const problems: FleetProblem[] = [];
  // Central's External Secrets may assume every tenant's role: each store must name its own
  // tenant's. A tenant's stores on central take the role from its facts file (the
  // control-plane chart renders them at sync time); its entry names it itself.
  const stacks = tenantStacks(root);
  const centrals = centralScopesFromStackFiles(root);
  const removals = removalsByScope(root, centrals);
  // A stack file that cannot be read may be any tenant's: no folder is called stack-less then (its error is named on its own).
  const allRead = scanStackFiles(root).broken.size === 0;
  for (const scope of listDirs(path.join(root, "fleet", "tenants"))) {
    // Tenant names are per environment: a cell's folder holds tenants of its central's.
    const env = environmentOfScope(scope, centrals);
    for (const id of listDirs(path.join(root, "fleet", "tenants", scope)).filter((t) => only(scope, t))) {
      const file = `fleet/tenants/${scope}/${id}/${FACTS_FILE}`;
      if (!fs.existsSync(path.join(root, file))) continue;
      let facts: { secretsRoleArn?: unknown; slurmctld?: { port?: unknown }; srun?: { from?: unknown; to?: unknown }; serverAddress?: unknown; keySecretArns?: Record<string, unknown> } | null;
      try {
        facts = parse(fs.readFileSync(path.join(root, file), "utf8")) as typeof facts;
      } catch {
        continue; // not YAML: named with every file above
      }
      const stack = stacks.get(`${scope}/${id}`);
      // A facts file `pulumi up` wrote says the tenant was deployed: with its stack file gone,
      // its folder stays (central's next `pulumi up` refuses to drop it) unless central names it for removal.
      const text = fs.readFileSync(path.join(root, file), "utf8");
      if (!stack && allRead && !isOfflineFacts(text) && !removals.get(scope)?.ids.includes(id)) {
        const central = removals.get(scope);
        const wayOut = central
          ? `to remove the tenant, name it in ${removeTenantsHint(central.file, [id])}, and \`fleet write\` prunes its folder`
          : `no central stack file has scope ${scope} either: once that central is destroyed, delete ${tenantFleetPath(scope, id)}/ by hand`;
        problems.push({ file, at: "(file)", reason: `tenant ${id} was deployed (this facts file), and no stack file joins it: its stack file may be on another branch (write the fleet from a checkout that has it); ${wayOut}` });
        continue;
      }
      // Central's account, where the tenant's secrets and their role live (its stack file says which).
      const central = stack?.centralAccountId ?? "[0-9]{12}";
      const role = String(facts?.secretsRoleArn ?? "");
      const expected = `:role/${controlPlaneSecretsRoleName(env, id)}`;
      if (!new RegExp(`^arn:aws[a-z-]*:iam::${central}:role/${controlPlaneSecretsRoleName(env, id)}$`).test(role)) problems.push({ file, at: "secretsRoleArn", reason: `${role || "no role"} is not tenant ${id}'s secrets role (…${expected} in central's account ${stack?.centralAccountId ?? ""}): the tenant's stores on central would read another tenant's secrets` });
      // Its keys: its own secrets in central's Secrets Manager (the name, then Secrets Manager's random suffix).
      for (const [key, name] of Object.entries(slurmKeySecretNames(env, id))) {
        const arn = String(facts?.keySecretArns?.[key] ?? "");
        if (!new RegExp(`^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:${central}:secret:${name.replace(/[.+]/g, "\\$&")}-[A-Za-z0-9]{6}$`).test(arn)) problems.push({ file, at: `keySecretArns.${key}`, reason: `${arn || "no ARN"} is not tenant ${id}'s ${name} in central's account ${stack?.centralAccountId ?? ""}: its cluster would read another tenant's key` });
      }
      // Its server: an address in its own VPC (so not central's host, nor another tenant's server).
      const problem = stack?.vpcCidr ? hostAddressProblem(String(facts?.serverAddress ?? ""), stack.vpcCidr) : undefined;
      if (problem) problems.push({ file, at: "serverAddress", reason: `${String(facts?.serverAddress)} is not an address of tenant ${id}'s VPC: ${problem}; its cluster project would reach another server` });
      // Its slurmctld NodePort on central (the control-plane chart opens it) is the one its stack file records: never another tenant's, never changed for a live tenant.
      const port = facts?.slurmctld?.port;
      const recorded = stack?.ports?.slurmctld;
      if (recorded !== undefined && port !== recorded) problems.push({ file, at: "slurmctld.port", reason: `${String(port)} is not tenant ${id}'s slurmctld NodePort ${recorded} (its stack file's clusterra:ports): central would open another port for it, perhaps another tenant's; a live tenant's ports never change (its nodes and the rules in both accounts hold them)` });
      // Its srun block as deployed (facts written before it was recorded have none: nothing to compare).
      const block = stack?.ports?.srunBlock;
      if (facts?.srun !== undefined && block && (facts.srun.from !== block.from || facts.srun.to !== block.to)) {
        problems.push({ file, at: "srun", reason: `${String(facts.srun.from)}-${String(facts.srun.to)} is tenant ${id}'s srun block as deployed, and ${stack?.file ?? "its stack file"}'s clusterra:ports says ${block.from}-${block.to}: a live tenant's ports never change (its login's Service, its slurm.conf and the rules in both accounts hold them); put srun back to ${String(facts.srun.from)} there` });
      }
    }
  }
  return problems;
}

/** Each central's stack file and the tenants it names for removal (`clusterra:removeTenants`), by its scope. */
function removalsByScope(root: string, centrals: ReadonlyMap<string, { scope: string }>): Map<string, { file: string; ids: string[] }> {
  const out = new Map<string, { file: string; ids: string[] }>();
  for (const f of readAllStackFiles(root)) {
    const central = centrals.get(f.stack);
    if (!central) continue;
    const ids = f.values[REMOVE_TENANTS_KEY];
    // Two centrals of one scope are a validation error of their own: their names are merged here.
    const before = out.get(central.scope)?.ids ?? [];
    out.set(central.scope, { file: f.file, ids: [...before, ...(Array.isArray(ids) ? ids.map(String) : [])] });
  }
  return out;
}

/**
 * Facts files an offline plan wrote (`offline: true`: invented ids no cloud holds) for any
 * stack but the project's examples as shipped. A pull request carrying one would merge a
 * tenant whose workers point at a file system that does not exist; `fleet check` and `fleet
 * write` refuse it unless told the repository is not deployed yet (`--allow-offline-facts`).
 */
export function offlineFactsProblems(root: string): FleetProblem[] {
  const stacks = new Map(readAllStackFiles(root).map((f) => [f.stack, f]));
  return fleetFiles(root)
    .filter((rel) => path.basename(rel) === FACTS_FILE)
    .flatMap((rel) => {
      const text = fs.readFileSync(path.join(root, rel), "utf8");
      if (!isOfflineFacts(text)) return [];
      const stack = /^# (\S+)'s cloud facts/.exec(text)?.[1] ?? "";
      const file = stacks.get(stack);
      // A facts file no stack file claims is a removed stack's: fleet write removes it, fleet check names it.
      if (!file || isExampleStack(file)) return [];
      // An example's stack file changed is an operator's stack now: its offline facts no longer pass as the example's.
      const changedExample = fs.existsSync(path.join(PROJECT_ROOT, EXAMPLE_STACKS_DIR, path.basename(file.file))) ? ` (${file.file} differs from the example as shipped, ${EXAMPLE_STACKS_DIR}/${path.basename(file.file)}, so it is an operator's stack now)` : "";
      return [{ file: rel, at: "offline", reason: `was written offline (clusterra plan --write-fleet): invented ids no cloud holds${changedExample}; \`pulumi up -s ${stack || "<stack>"}\` writes the real facts (or pass --allow-offline-facts for a repository not deployed yet)` }];
    });
}
