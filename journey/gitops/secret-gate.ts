/**
 * RollingSync's gate on External Secrets, observed: one commit makes every tenant's control
 * plane name a key no plan creates (its JWT key's secret); External Secrets leaves the canary's
 * ExternalSecret not Ready (SecretSyncedError), ArgoCD counts its Application Degraded, and
 * RollingSync holds every later wave while it is, the Secret made before left as it was.
 * A revert commit brings every wave back to the planned key.
 */
import * as fs from "fs";
import * as path from "path";
import { parseDocument } from "yaml";
import { CONTROL_PLANE_SECRETS, tenantFleetPath, tenantNamespace } from "../../facts/fleet";
import { CONTROL_PLANE_MANIFESTS_ADDON } from "../../components/fleet/application-set";
import { CONTROL_PLANE_MANIFESTS_VALUES } from "../../components/fleet/control-plane";
import type { Kubectl } from "../kube/kubectl";
import { sleep, waitFor } from "../kube/processes";
import { step, type JourneyStep } from "../host/step";
import { REFRESH_ANNOTATION, ROLLOUT_QUIET_MS, ROLLOUT_TIMEOUT_MS, type ApplicationObject } from "./applications";
import { commitToFleet, type GitopsServers } from "./servers";
import { EXTERNAL_SECRET_RESOURCE, SECRET_SYNCED_ERROR, type ExternalSecret } from "./external-secrets";

/** The control plane's secret the gate breaks: its JWT key (slurmrestd keeps the Secret it has). */
const BROKEN = "jwt" as const satisfies keyof typeof CONTROL_PLANE_SECRETS;
/** What the broken commit appends to the planned name: a key no plan creates. */
export const UNPLANNED_SUFFIX = "-unplanned";

/** A tenant's control-plane values file with one secret's name changed (`secretNames.<id>`). Pure. */
export function withSecretName(text: string, id: string, name: (was: string) => string): string {
  const doc = parseDocument(text);
  const was = doc.getIn(["secretNames", id]);
  if (typeof was !== "string") throw new Error(`no secretNames.${id} in the control plane's values`);
  doc.setIn(["secretNames", id], name(was));
  return doc.toString();
}

export interface SecretGateInput {
  readonly c: Kubectl;
  readonly argocdNamespace: string;
  readonly gitops: GitopsServers;
  readonly branch: string;
  /** The served repository's folder (its values files as last committed). */
  readonly repository: string;
  readonly scope: string;
  /** Tenants in wave order: the canaries first. */
  readonly canaries: readonly string[];
  readonly later: readonly string[];
  readonly who: string;
  readonly report: (s: JourneyStep) => void;
}

interface Seen {
  readonly key: string;
  readonly ready: string;
  readonly reason: string;
  /** The Application as its controller reports it; `synced`: the revisions its last sync applied. */
  readonly app: { sync: string; health: string; synced: readonly string[] };
  readonly secret: string;
}

/** An Application's last sync result: the revision of each source it applied. */
type Synced = ApplicationObject & { status?: { operationState?: { syncResult?: { revision?: string; revisions?: string[] } } } };

export async function secretGateSteps(i: SecretGateInput): Promise<void> {
  const { c, report } = i;
  const tenants = [...i.canaries, ...i.later];
  const file = (id: string) => `${tenantFleetPath(i.scope, id)}/control-plane/values/${CONTROL_PLANE_MANIFESTS_VALUES}`;
  const original = new Map(tenants.map((id) => [id, fs.readFileSync(path.join(i.repository, file(id)), "utf8")]));
  const app = (id: string) => `${id}-${CONTROL_PLANE_MANIFESTS_ADDON}`;
  const esName = CONTROL_PLANE_SECRETS[BROKEN].name;
  const seen = async (id: string): Promise<Seen> => {
    const es = await c.get<ExternalSecret>([EXTERNAL_SECRET_RESOURCE, esName, "-n", tenantNamespace(id)]);
    const a = await c.get<Synced>(["applications.argoproj.io", app(id), "-n", i.argocdNamespace]);
    const result = a?.status?.operationState?.syncResult;
    const s = await c.get<{ data?: Record<string, string> }>(["secret", esName, "-n", tenantNamespace(id)]);
    const ready = es?.status?.conditions?.find((k) => k.type === "Ready");
    return {
      key: es?.spec.data?.[0]?.remoteRef.key ?? "", ready: ready?.status ?? "", reason: ready?.reason ?? "",
      app: { sync: a?.status?.sync?.status ?? "", health: a?.status?.health?.status ?? "", synced: result?.revisions ?? (result?.revision ? [result.revision] : []) },
      secret: JSON.stringify(s?.data ?? {}),
    };
  };
  const refresh = async () => {
    for (const id of tenants) await c.run(["annotate", "--overwrite", "applications.argoproj.io", app(id), "-n", i.argocdNamespace, `${REFRESH_ANNOTATION}=normal`]);
  };
  const before = new Map<string, Seen>();
  for (const id of tenants) before.set(id, await seen(id));

  // The broken commit: every tenant's values at once, as a fleet-wide change would be.
  const problems: string[] = [];
  const broken = Object.fromEntries(tenants.map((id) => [file(id), withSecretName(original.get(id) as string, BROKEN, (was) => `${was}${UNPLANNED_SUFFIX}`)]));
  const brokenSha = await commitToFleet(i.gitops, i.branch, broken, "fleet: control planes read their JWT key from a secret no plan creates").catch((e: Error) => (problems.push(e.message), ""));
  await refresh();
  // The canary fails: its ExternalSecret names the unplanned key and is not Ready.
  const canary = i.canaries[0];
  const failed = await waitFor(async () => {
    const s = await seen(canary);
    return s.key.endsWith(UNPLANNED_SUFFIX) && s.ready === "False" ? s : undefined;
  }, ROLLOUT_TIMEOUT_MS, 2000);
  // Then RollingSync holds: for the quiet period, no later tenant's ExternalSecret changes.
  const moved: string[] = [];
  const held = Date.now();
  while (failed && Date.now() - held < ROLLOUT_QUIET_MS) {
    for (const id of i.later) {
      const s = await seen(id);
      const when = `${Math.round((Date.now() - held) / 1000)} s after the canary failed`;
      if (s.key.endsWith(UNPLANNED_SUFFIX)) moved.push(`${id}: its ExternalSecret names ${s.key} (${when})`);
      else if (brokenSha && s.app.synced.includes(brokenSha)) moved.push(`${id}: ${app(id)} synced the broken commit ${brokenSha.slice(0, 8)} (${when})`);
    }
    if (moved.length) break;
    await sleep(5000);
  }
  const canaryNow = await seen(canary);
  const laterNow = new Map<string, Seen>();
  for (const id of i.later) laterNow.set(id, await seen(id));
  const kept = canaryNow.secret === before.get(canary)?.secret && canaryNow.secret !== "{}";
  const gated = !!failed && !!brokenSha && canaryNow.app.synced.includes(brokenSha) && canaryNow.reason === SECRET_SYNCED_ERROR.reason && canaryNow.app.health === "Degraded" && moved.length === 0 && i.later.length > 0 && kept
    && i.later.every((id) => laterNow.get(id)?.app.sync === "OutOfSync" && !laterNow.get(id)?.app.synced.includes(brokenSha));
  report(step(`an ExternalSecret naming a key no plan creates stays not Ready (${SECRET_SYNCED_ERROR.reason}) on the canary, its Secret kept, and RollingSync holds ${i.later.join(", ") || "the later waves"} while it does (${i.who})`, gated,
    [
      failed ? `${canary}: ${app(canary)} synced the broken commit ${brokenSha.slice(0, 8)}${canaryNow.app.synced.includes(brokenSha) ? "" : " NOT (its last sync applied " + canaryNow.app.synced.join(", ") + ")"}: ${esName} names ${canaryNow.key}: Ready ${canaryNow.ready} (${canaryNow.reason}); ${app(canary)} ${canaryNow.app.sync}/${canaryNow.app.health}; its Secret ${kept ? "as it was" : "CHANGED or missing"}` : `${canary}: its ExternalSecret did not fail within ${ROLLOUT_TIMEOUT_MS / 60_000} min (${JSON.stringify(canaryNow)})`,
      moved.length ? `NOT HELD: ${moved.join("; ")}` : `${[...laterNow].map(([id, s]) => `${id}: ${app(id)} ${s.app.sync} for ${ROLLOUT_QUIET_MS / 1000} s, its ExternalSecret still names ${s.key}`).join("; ")}`,
      ...problems,
    ].join("; ")));

  // The revert: every tenant back on the planned key, Ready, its Application Synced and Healthy.
  const revertSha = await commitToFleet(i.gitops, i.branch, Object.fromEntries(tenants.map((id) => [file(id), original.get(id) as string])), "fleet: revert the unplanned JWT key").catch((e: Error) => (problems.push(e.message), ""));
  await refresh();
  let last = new Map<string, Seen>();
  const healed = await waitFor(async () => {
    last = new Map();
    for (const id of tenants) last.set(id, await seen(id));
    // The canary healed by a sync of the revert itself; the later waves never took the broken commit.
    return [...last].every(([id, s]) => s.key === before.get(id)?.key && s.ready === "True" && s.app.sync === "Synced" && s.app.health === "Healthy")
      && !!revertSha && i.canaries.every((id) => last.get(id)?.app.synced.includes(revertSha)) && i.later.every((id) => !last.get(id)?.app.synced.includes(brokenSha)) ? true : undefined;
  }, ROLLOUT_TIMEOUT_MS, 5000);
  report(step(`the revert commit heals the canary by its own sync and leaves every wave's ExternalSecret on the planned key, Ready, its Application Synced and Healthy (${i.who})`, !!healed,
    [...last].map(([id, s]) => `${id}: ${s.key} Ready ${s.ready}, ${app(id)} ${s.app.sync}/${s.app.health}, last sync applied ${s.app.synced.map((r) => (r === revertSha ? "the revert" : r === brokenSha ? "THE BROKEN COMMIT" : r.slice(0, 8))).join(", ") || "nothing"}`).join("; ") + (problems.length ? `; ${problems.join("; ")}` : "")));
}
