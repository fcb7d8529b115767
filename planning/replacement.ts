/**
 * Which stateful resources a change replaces, from two plans of the same stack (before and
 * after): what `pulumi preview` would show as a replacement of an instance, volume, file
 * system, table, key, bucket or secret (facts/replacement.ts), computed offline. The
 * README's runbook table comes from it (test/replacement.test.ts).
 */
import { isDeepStrictEqual } from "util";
import { STATEFUL_TYPES, USER_DATA_INPUTS } from "../facts/replacement";
import { SECRET_SIG_KEY, type Deployment, type DeploymentResource } from "./deployment";

export interface Replacement {
  readonly urn: string;
  /** What the runbook calls it (instance, volume, ...). */
  readonly what: string;
  /** The inputs that changed and replace it, or "removed" when the plan after has no such resource. */
  readonly because: readonly string[];
}

function statefulOf(d: Deployment): Map<string, DeploymentResource> {
  return new Map(d.deployment.resources.filter((r) => r.custom && STATEFUL_TYPES[r.type]).map((r) => [r.urn, r]));
}

/** The inputs of a resource that replace it when they change (user data only where it says so). */
export function replacingInputs(r: DeploymentResource): string[] {
  const type = STATEFUL_TYPES[r.type];
  if (!type) return [];
  const inputs = r.inputs ?? {};
  const replaceOnUserData = inputs.userDataReplaceOnChange === true;
  const ignored = new Set(r.ignoreChanges ?? []);
  return [...type.replacedBy, ...(replaceOnUserData ? USER_DATA_INPUTS : [])].filter((k) => !ignored.has(k));
}

/** A secret value (redacted in a plan: two secrets cannot be told apart). */
function isSecret(v: unknown): boolean {
  return typeof v === "object" && v !== null && SECRET_SIG_KEY in v;
}

/** An input's value at a dotted path (a field of a nested input). */
function inputAt(r: DeploymentResource | undefined, key: string): unknown {
  return key.split(".").reduce<unknown>((v, k) => (v && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined), r?.inputs);
}

/**
 * Every stateful resource of `before` that `after` replaces or no longer has, by URN: an input
 * that replaces it changed (a secret one cannot be compared: named as such), or one of them
 * comes from a resource replaced itself (the offline plan gives a new resource the same id,
 * so a replaced key or subnet would otherwise hide the volumes and instances that use it).
 */
export function replacements(before: Deployment, after: Deployment): Replacement[] {
  const next = statefulOf(after);
  const found = new Map<string, Replacement>();
  for (const [urn, r] of statefulOf(before)) {
    const what = STATEFUL_TYPES[r.type].what;
    const later = next.get(urn);
    if (!later) {
      found.set(urn, { urn, what, because: ["removed"] });
      continue;
    }
    const because = replacingInputs(r).flatMap((k) => {
      const [a, b] = [inputAt(r, k), inputAt(later, k)];
      if (isSecret(a) || isSecret(b)) return [`${k} (a secret: not compared)`];
      return isDeepStrictEqual(a, b) ? [] : [k];
    });
    if (because.length) found.set(urn, { urn, what, because });
  }
  // Replacements travel along the inputs that replace: to a fixpoint.
  for (let grew = true; grew; ) {
    grew = false;
    for (const [urn, r] of next) {
      if (found.has(urn)) continue;
      const via = replacingInputs(r).flatMap((k) => (r.propertyDependencies?.[k.split(".")[0]] ?? []).filter((d) => found.has(d)).map((d) => `${k} (${found.get(d)?.what} ${d.split("::").pop()} is replaced)`));
      if (via.length) {
        found.set(urn, { urn, what: STATEFUL_TYPES[r.type].what, because: via });
        grew = true;
      }
    }
  }
  return [...found.values()];
}

/** A replacement as the runbook names it: `<what> <resource name> (<inputs>)`. */
export function describeReplacement(r: Replacement): string {
  return `${r.what} ${r.urn.split("::").pop()} (${r.because.join(", ")})`;
}
