/**
 * Which stateful resources a change replaces, from two plans of the same stack (before and
 * after): what `pulumi preview` would show as a replacement of an instance, volume, file
 * system, table, key, bucket or secret (facts/replacement.ts), computed offline. The
 * README's runbook table comes from it (test/replacement.test.ts).
 */
import { isDeepStrictEqual } from "util";
import { STATEFUL_TYPES, USER_DATA_INPUTS } from "../facts/replacement";
import type { Deployment, DeploymentResource } from "./deployment";

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

/** Every stateful resource of `before` that `after` replaces or no longer has, by URN. */
export function replacements(before: Deployment, after: Deployment): Replacement[] {
  const next = statefulOf(after);
  const out: Replacement[] = [];
  for (const [urn, r] of statefulOf(before)) {
    const what = STATEFUL_TYPES[r.type].what;
    const later = next.get(urn);
    if (!later) {
      out.push({ urn, what, because: ["removed"] });
      continue;
    }
    const changed = replacingInputs(r).filter((k) => !isDeepStrictEqual(r.inputs?.[k], later.inputs?.[k]));
    if (changed.length) out.push({ urn, what, because: changed });
  }
  return out;
}

/** A replacement as the runbook names it: `<what> <resource name> (<inputs>)`. */
export function describeReplacement(r: Replacement): string {
  return `${r.what} ${r.urn.split("::").pop()} (${r.because.join(", ")})`;
}
