/**
 * Drift on central, undone by ArgoCD itself: what contains a tenant (its NetworkPolicies, its
 * quota: the guards' Application; its pods' DNS binding: the root Application) is changed by
 * hand, as an operator's slip or a compromised tool would, and ArgoCD must put it back within
 * SELF_HEAL_BOUND_MS. Beside it, a note: the same kind of edit on an object of a RollingSync
 * Application (the tenant's users ConfigMap, control-plane-manifests), and what became of it.
 */
import type { Kubectl } from "../kube/kubectl";
import { sleep } from "../kube/processes";
import { step, type JourneyStep } from "../host/step";
import type { ApplicationObject } from "./applications";

/** How soon ArgoCD puts back a hand-made change to what contains a tenant (README, "Self-heal"). */
export const SELF_HEAL_BOUND_MS = 60_000;

/** One object of an Application, as its status lists it. */
export interface Managed {
  readonly kind: string;
  readonly name: string;
  readonly namespace?: string;
}

/** The first object of `kind` an Application's status says it manages. Pure. */
export function managedObject(app: ApplicationObject | undefined, kind: string): Managed | undefined {
  const r = (app?.status?.resources ?? []).find((x) => x.kind === kind);
  return r ? { kind: r.kind, name: r.name, ...(r.namespace ? { namespace: r.namespace } : {}) } : undefined;
}

/** What a drift's check compares: the object's spec (a ConfigMap's data), or undefined when it is gone. Pure. */
export function comparable(o: Record<string, unknown> | undefined): string | undefined {
  if (!o) return undefined;
  return JSON.stringify(o.kind === "ConfigMap" ? o.data ?? {} : o.spec ?? {});
}

/** An object's identity and version as the API server gives them: a re-created object has a new uid, a written one a new resourceVersion. */
export interface Seen {
  readonly state?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
}

export function seen(o: Record<string, unknown> | undefined): Seen {
  const m = (o?.metadata ?? {}) as { uid?: string; resourceVersion?: string };
  return { state: comparable(o), uid: m.uid, resourceVersion: m.resourceVersion };
}

/**
 * Whether an object is back as it was before a hand-made change, by a write after it: the same
 * spec, and a new uid (deleted and made again) or a new resourceVersion (written back). A change
 * that changed nothing (same uid, same version) is never taken for one put back. Pure.
 */
export function putBack(before: Seen, now: Seen): boolean {
  return now.state !== undefined && now.state === before.state && (now.uid !== before.uid || now.resourceVersion !== before.resourceVersion);
}

/** One hand-made change: how it is made, and the object it is made to. */
export interface Drift {
  readonly what: string;
  /** The object to change; undefined when the Application that should manage it does not (`absent` says so). */
  readonly object?: Managed;
  readonly make: (kc: Kubectl) => Promise<{ code: number; stderr: string }>;
  readonly absent?: string;
}

/** Per drift, when (ms after it was made) the object was back as git has it; undefined: not within the bound. */
export interface DriftOutcome {
  readonly what: string;
  readonly backAfterMs?: number;
  readonly problem?: string;
}

const args = (o: Managed) => [o.kind.toLowerCase(), o.name, ...(o.namespace ? ["-n", o.namespace] : [])];

/**
 * Makes every drift at once, then polls each object each second until it is put back or the
 * bound runs out (each drift's time from its own change). `before` is read first: git's state
 * as ArgoCD synced it (the caller checks its Applications are Synced).
 */
export async function watchDrifts(kc: Kubectl, drifts: readonly Drift[], boundMs: number): Promise<DriftOutcome[]> {
  const read = async (o: Managed) => seen(await kc.get<Record<string, unknown>>(args(o)));
  const outcomes = new Map<Drift, DriftOutcome>();
  const made = new Map<Drift, { at: number; before: Seen }>();
  for (const d of drifts) {
    if (!d.object) {
      outcomes.set(d, { what: d.what, problem: d.absent ?? "no object to change" });
      continue;
    }
    const before = await read(d.object);
    if (before.state === undefined) {
      outcomes.set(d, { what: d.what, problem: `${d.object.kind}/${d.object.name} was not there to change` });
      continue;
    }
    const at = Date.now();
    const r = await d.make(kc);
    if (r.code !== 0) outcomes.set(d, { what: d.what, problem: `the change was refused: ${r.stderr.trim().slice(0, 200)}` });
    else made.set(d, { at, before });
  }
  const open = () => drifts.filter((d) => !outcomes.has(d));
  while (open().some((d) => Date.now() - (made.get(d)?.at ?? 0) < boundMs)) {
    for (const d of open()) {
      const m = made.get(d);
      if (!m || !d.object) continue;
      if (putBack(m.before, await read(d.object))) outcomes.set(d, { what: d.what, backAfterMs: Date.now() - m.at });
    }
    await sleep(1000);
  }
  return drifts.map((d) => outcomes.get(d) ?? { what: d.what });
}

/** The step of what must heal: every drift back within the bound. Pure. */
export function healedStep(name: string, outcomes: readonly DriftOutcome[], boundMs: number): JourneyStep {
  const bad = outcomes.filter((o) => o.problem || o.backAfterMs === undefined);
  return step(name, outcomes.length > 0 && bad.length === 0, outcomes.map((o) => `${o.what}: ${o.problem ?? (o.backAfterMs === undefined ? `NOT back after ${boundMs / 1000} s` : `back after ${(o.backAfterMs / 1000).toFixed(1)} s`)}`).join("; "));
}

/**
 * What became of the same kind of edit to an object of a RollingSync Application: a note, not a
 * check. ArgoCD v3.4.4 turns automated sync off for those Applications, yet its ApplicationSet
 * controller finds each one's spec differing from the one it generates at every reconcile
 * ("Application has pending changes (spec differs)", thousands of times a run) and so syncs
 * again whatever is OutOfSync when its step allows: an accident of that loop, not a self-heal
 * the fleet may rely on (a stopped rollout holds it, and the loop is a defect of its own). Pure.
 */
export function rollingSyncDriftDetail(outcome: DriftOutcome | undefined, sync: string | undefined, boundMs: number): string {
  if (!outcome) return "no drift made";
  if (outcome.problem) return `${outcome.what}: ${outcome.problem}`;
  return `${outcome.what}: ${outcome.backAfterMs === undefined ? `still as left after ${boundMs / 1000} s` : `back after ${(outcome.backAfterMs / 1000).toFixed(1)} s`}; its Application ${sync ?? "(not found)"}`;
}
