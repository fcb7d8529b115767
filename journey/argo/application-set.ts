/**
 * The journey's ApplicationSet controller, as ArgoCD 3.4's runs on central: it reads an
 * ApplicationSet the fleet's sync put there, the fleet repository's files (git files
 * generator) and the cluster Secrets External Secrets wrote (cluster generator),
 * generates the Applications (components/fleet/application-set.ts, the expansion `fleet
 * check` reads too), creates or updates them, and rolls them out:
 *
 * - with progressive syncs on (argocd-cmd-params-cm) and a RollingSync strategy, step by
 *   step: an Application is synced only once every Application of every earlier step is
 *   Healthy; a step with none is complete; an Application whose spec did not change and is
 *   Healthy stays as it is; the first step that does not become healthy stops the rollout;
 * - otherwise all at once, in generation order.
 */
import { clusterParams, expandApplicationSet, type ClusterParams, type GeneratedApplication, type GitFiles } from "../../components/fleet/application-set";
import { ARGOCD_CLUSTER_SELECTOR } from "../../facts/versions";
import type { Kubectl } from "../kube/kubectl";
import type { KubeObject } from "./manifests";
import type { Application } from "./sync";

/**
 * Which Applications RollingSync lets sync now, as ArgoCD's getAppsToSync decides: all of
 * the first step, then each next step's once every Application of the steps before it is
 * Healthy. `steps` holds each step's Application names.
 */
export function appsToSync(steps: readonly (readonly string[])[], healthy: ReadonlySet<string>): Set<string> {
  const allowed = new Set<string>();
  for (const step of steps) {
    step.forEach((a) => allowed.add(a));
    if (!step.every((a) => healthy.has(a))) break;
  }
  return allowed;
}

/** One Application's part in a rollout. */
export interface RolloutEntry {
  readonly name: string;
  readonly step: number;
  /** Synced by this rollout (its spec changed or it is new), or left as it was. */
  readonly synced: boolean;
  readonly healthy: boolean;
}

export interface RolloutResult {
  /** In the order the controller handled them. */
  readonly entries: readonly RolloutEntry[];
  /** The step (0-based) the rollout stopped at, when one did not become healthy. */
  readonly stoppedAt?: number;
  readonly progressive: boolean;
  readonly problems: readonly string[];
}

export interface ApplicationSetControllerArgs {
  readonly kc: Kubectl;
  readonly appset: KubeObject;
  /** Whether argocd-cmd-params-cm turns progressive syncs on. */
  readonly progressive: boolean;
  /** The specs the last generation created, by name (empty on the first). */
  readonly previous: ReadonlyMap<string, string>;
  /** The fleet repository at the synced revision, for git files generators. */
  readonly git: GitFiles;
  /** One sync of one Application by the application controller, with its retries; true when Synced and Healthy. */
  readonly sync: (app: Application) => Promise<boolean>;
}

/** The cluster generator's parameters: every cluster Secret live in ArgoCD's namespace. */
export async function liveClusterParams(kc: Kubectl, namespace: string): Promise<ClusterParams[]> {
  const secrets = await kc.get<{ items: { metadata: { labels?: Record<string, string>; annotations?: Record<string, string> }; data?: Record<string, string> }[] }>(["secrets", "-n", namespace, "-l", ARGOCD_CLUSTER_SELECTOR]);
  return (secrets?.items ?? []).map(clusterParams);
}

/** Generates and rolls out one ApplicationSet; returns what happened to each Application and the specs it created. */
export async function runApplicationSet(a: ApplicationSetControllerArgs): Promise<RolloutResult & { specs: Map<string, string> }> {
  const problems: string[] = [];
  const ns = String(a.appset.metadata.namespace);
  const clusters = await liveClusterParams(a.kc, ns);
  let generated: GeneratedApplication[];
  try {
    generated = expandApplicationSet(a.appset as unknown as Record<string, unknown>, clusters, a.git);
  } catch (e) {
    return { entries: [], progressive: a.progressive, problems: [`ApplicationSet ${a.appset.metadata.name}: ${(e as Error).message}`], specs: new Map() };
  }
  const strategy = (a.appset.spec as { strategy?: { type?: string } } | undefined)?.strategy?.type;
  const progressive = a.progressive && strategy === "RollingSync";
  const specs = new Map(generated.map((g) => [g.application.metadata.name, JSON.stringify(g.application.spec)]));
  // The controller creates or updates every Application first (RollingSync has turned their automation off).
  for (const g of generated) {
    const app = progressive ? g.application : withAutomation(g.application);
    const r = await a.kc.run(["apply", "--server-side", "--field-manager=argocd-applicationset-controller", "--force-conflicts", "-f", "-"], { input: JSON.stringify(app) });
    if (r.code !== 0) problems.push(`Application/${g.application.metadata.name}: ${r.stderr.trim().split("\n").slice(-1)[0]}`);
  }
  const unplaced = generated.filter((g) => progressive && g.step < 0).map((g) => g.application.metadata.name);
  if (unplaced.length) problems.push(`no RollingSync step selects ${unplaced.join(", ")}: they would never sync`);

  const entries: RolloutEntry[] = [];
  const healthy = new Set<string>();
  const changed = (g: GeneratedApplication) => a.previous.get(g.application.metadata.name) !== specs.get(g.application.metadata.name);
  // Unchanged Applications of an earlier rollout are Healthy already.
  for (const g of generated) if (!changed(g)) healthy.add(g.application.metadata.name);
  const order = progressive ? [...new Set(generated.map((g) => g.step))].filter((s) => s >= 0).sort((x, y) => x - y) : [0];
  const steps = order.map((s) => generated.filter((g) => !progressive || g.step === s));
  let stoppedAt: number | undefined;
  for (const [i, step] of steps.entries()) {
    const allowed = appsToSync(steps.map((st) => st.map((g) => g.application.metadata.name)), healthy);
    for (const g of step) {
      const name = g.application.metadata.name;
      if (!allowed.has(name)) continue;
      if (!changed(g)) {
        entries.push({ name, step: g.step, synced: false, healthy: true });
        continue;
      }
      const ok = await a.sync(g.application as unknown as Application);
      if (ok) healthy.add(name);
      entries.push({ name, step: g.step, synced: true, healthy: ok });
    }
    if (progressive && !step.every((g) => healthy.has(g.application.metadata.name))) {
      stoppedAt = order[i];
      break;
    }
  }
  return { entries, stoppedAt, progressive, problems, specs };
}

/** Without progressive syncs the controller leaves the template's automation as written. */
function withAutomation(app: GeneratedApplication["application"]): GeneratedApplication["application"] {
  const copy = JSON.parse(JSON.stringify(app)) as GeneratedApplication["application"];
  const automated = (copy.spec as { syncPolicy?: { automated?: { enabled?: boolean } } } | undefined)?.syncPolicy?.automated;
  if (automated) delete automated.enabled;
  return copy;
}
