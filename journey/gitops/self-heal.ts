/**
 * Drift on central, undone by ArgoCD itself: what contains a tenant (its NetworkPolicies, its
 * quota: the guards' Application; its pods' DNS binding: the root Application) is changed by
 * hand, as an operator's slip or a compromised tool would, and ArgoCD must put it back within
 * SELF_HEAL_BOUND_MS. The control, in the same run: the same kind of edit on an object of a
 * RollingSync Application (the tenant's users ConfigMap, control-plane-manifests) stays as it
 * was left, though ArgoCD reports that Application OutOfSync: ArgoCD v3.4.4 turns automated
 * sync off for what a RollingSync set generates, which is why the guards have a set of their own.
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

/** One hand-made change: how it is made, and the object it is made to. */
export interface Drift {
  readonly what: string;
  readonly object: Managed;
  readonly make: (kc: Kubectl) => Promise<{ code: number; stderr: string }>;
}

/** Per drift, when (ms after they were made) the object was back as git has it; undefined: not within the bound. */
export interface DriftOutcome {
  readonly what: string;
  readonly backAfterMs?: number;
  readonly problem?: string;
}

const args = (o: Managed) => [o.kind.toLowerCase(), o.name, ...(o.namespace ? ["-n", o.namespace] : [])];

/**
 * Makes every drift at once, then polls each object each second until it is as before or the
 * bound runs out. `before` is read first, so "as before" is git's state as ArgoCD synced it.
 */
export async function watchDrifts(kc: Kubectl, drifts: readonly Drift[], boundMs: number): Promise<DriftOutcome[]> {
  const before = new Map<Drift, string | undefined>();
  for (const d of drifts) before.set(d, comparable(await kc.get<Record<string, unknown>>(args(d.object))));
  const outcomes = new Map<Drift, DriftOutcome>();
  const started = Date.now();
  for (const d of drifts) {
    if (before.get(d) === undefined) outcomes.set(d, { what: d.what, problem: `${d.object.kind}/${d.object.name} was not there to change` });
    else {
      const r = await d.make(kc);
      if (r.code !== 0) outcomes.set(d, { what: d.what, problem: `the change was refused: ${r.stderr.trim().slice(0, 200)}` });
    }
  }
  // Each made drift must first be seen in effect (else a fast poll could read the state before it).
  const seen = new Set<Drift>();
  while (Date.now() - started < boundMs && drifts.some((d) => !outcomes.has(d))) {
    for (const d of drifts.filter((x) => !outcomes.has(x))) {
      const now = comparable(await kc.get<Record<string, unknown>>(args(d.object)));
      if (now !== before.get(d)) seen.add(d);
      else if (seen.has(d) || Date.now() - started > 2000) outcomes.set(d, { what: d.what, backAfterMs: Date.now() - started });
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
 * The control's step: the RollingSync Application's drift must still be there after the bound,
 * with ArgoCD reporting it OutOfSync (it saw the drift and left it). Pure.
 */
export function unhealedStep(name: string, outcome: DriftOutcome | undefined, sync: string | undefined, boundMs: number): JourneyStep {
  const stayed = !!outcome && !outcome.problem && outcome.backAfterMs === undefined;
  return step(name, stayed && sync === "OutOfSync", !outcome ? "no drift made"
    : outcome.problem ? `${outcome.what}: ${outcome.problem}`
      : `${outcome.what}: ${stayed ? `still as left after ${boundMs / 1000} s` : `back after ${((outcome.backAfterMs ?? 0) / 1000).toFixed(1)} s`}; its Application ${sync ?? "(not found)"}`);
}
