/**
 * Small helpers shared by the rule modules. Nothing here imports @pulumi/policy at run
 * time (only its types), so tests and tools can load the rules without starting the
 * policy server.
 */
import type {
  EnforcementLevel,
  PolicyConfigSchema,
  PolicyResource,
  ReportViolation,
  ResourceValidation,
  ResourceValidationArgs,
  ResourceValidationPolicy,
  StackValidation,
  StackValidationPolicy,
} from "@pulumi/policy";
import { TAG_KEYS } from "../../facts/project";
import { EXEMPTIBLE_POLICIES, POLICY_FACTS, type PolicyName } from "./catalog";

/** A resource policy of this pack: severity and remediation always set. */
export interface PackResourcePolicy extends ResourceValidationPolicy {
  name: PolicyName;
  validateResource: ResourceValidation;
}

/** A stack policy of this pack. */
export interface PackStackPolicy extends StackValidationPolicy {
  name: PolicyName;
}

export type PackPolicy = PackResourcePolicy | PackStackPolicy;

/** Resource types a resource validation applies to (undefined: every type). */
const TYPES = Symbol("clusterra.resourceTypes");
type TypedValidation = ResourceValidation & { [TYPES]?: ReadonlySet<string>; __pulumiType?: string };

/**
 * Restricts a validation to some resource types. Other types are reported as not
 * applicable, as @pulumi/policy's validateResourceOfType does; a single type also gets
 * the `__pulumiType` marker the policy server uses to skip the call altogether.
 */
export function onTypes(types: readonly string[], validate: ResourceValidation): ResourceValidation {
  const set = new Set(types);
  const fn: TypedValidation = (args, report) => {
    if (!set.has(args.type)) return args.notApplicable(`applies to ${types.join(", ")} only`);
    return validate(args, report);
  };
  fn[TYPES] = set;
  if (types.length === 1) fn.__pulumiType = types[0];
  return fn;
}

/** The resource types a policy's validation is restricted to, if any (for fast dispatch). */
export function resourceTypesOf(policy: PackResourcePolicy): ReadonlySet<string> | undefined {
  return (policy.validateResource as TypedValidation)[TYPES];
}

interface Common {
  description: string;
  /** What to do about a violation; also appended to every message. */
  remediation: string;
  enforcementLevel?: EnforcementLevel;
  configSchema?: PolicyConfigSchema;
}

/** A violation message: the problem, then the remediation hint. */
export type Reporter = (problem: string, urn?: string) => void;

function withHint(report: ReportViolation, remediation: string): Reporter {
  return (problem, urn) => report(`${problem}. Fix: ${remediation}`, urn);
}

/** What every policy of the pack declares: name, description, level, severity, remediation. */
function declared(name: PolicyName, spec: Common) {
  return {
    name,
    description: spec.description,
    enforcementLevel: spec.enforcementLevel ?? "mandatory",
    severity: POLICY_FACTS[name].severity,
    remediationSteps: spec.remediation,
    ...(spec.configSchema ? { configSchema: spec.configSchema } : {}),
  };
}

/** Declares a resource policy; severity comes from the catalog table. */
export function resourcePolicy(
  name: PolicyName,
  spec: Common & { types?: readonly string[]; validate: (args: ResourceValidationArgs, report: Reporter) => void },
): PackResourcePolicy {
  const inner: ResourceValidation = (args, report) => {
    // A resource with a valid, named exception to this policy is not judged by it (policy-exception-valid judges the exception).
    if (known(() => exceptionOf(args.props.tags).exempts, undefined) === name) return;
    spec.validate(args, withHint(report, spec.remediation));
  };
  return { ...declared(name, spec), validateResource: spec.types ? onTypes(spec.types, inner) : inner };
}

/** Declares a stack policy; severity comes from the catalog table. */
export function stackPolicy(
  name: PolicyName,
  spec: Common & { validate: StackValidationWithHint },
): PackStackPolicy {
  const validateStack: StackValidation = (args, report) => {
    const exempt = exemptions(args.resources);
    const filtered: ReportViolation = (message, urn) => {
      if (urn === undefined || exempt.get(urn) !== name) report(message, urn);
    };
    return spec.validate(args, withHint(filtered, spec.remediation));
  };
  return { ...declared(name, spec), validateStack };
}

// ---------------------------------------------------------------------------------------
// Policy exceptions

const exemptionCache = new WeakMap<readonly PolicyResource[], ReadonlyMap<string, PolicyName>>();
/** URN -> the policy each resource of a stack is validly exempt from (computed once per stack, for every stack policy). */
function exemptions(resources: readonly PolicyResource[]): ReadonlyMap<string, PolicyName> {
  let found = exemptionCache.get(resources);
  if (!found) {
    const map = new Map<string, PolicyName>();
    for (const r of resources) {
      const exempts = known(() => exceptionOf(r.props.tags).exempts, undefined);
      if (exempts !== undefined) map.set(r.urn, exempts);
    }
    exemptionCache.set(resources, map);
    found = map;
  }
  return found;
}

/** What a resource's own tags say about a policy exception. */
export interface PolicyException {
  /** The policy named in the exception tag, if any. */
  readonly policy?: string;
  /** The reason tag's value, if any. */
  readonly reason?: string;
  /** The policy the resource is exempt from: set only when the exception is valid. */
  readonly exempts?: PolicyName;
}

/**
 * A resource's exception, from its own tags only (never the provider's default tags,
 * which would exempt every resource): valid when it names one policy of the exemptible
 * table and gives a non-empty reason.
 */
export function exceptionOf(ownTags: unknown): PolicyException {
  if (ownTags === undefined || ownTags === null) return {};
  const tags = tagMap(ownTags);
  const policy = tags[TAG_KEYS.policyException];
  const reason = tags[TAG_KEYS.policyExceptionReason];
  const valid = policy !== undefined && Object.hasOwn(EXEMPTIBLE_POLICIES, policy) && reason !== undefined && reason.trim().length > 0;
  return { ...(policy !== undefined ? { policy } : {}), ...(reason !== undefined ? { reason } : {}), ...(valid ? { exempts: policy as PolicyName } : {}) };
}
type StackValidationWithHint = (args: Parameters<StackValidation>[0], report: Reporter) => void;

// ---------------------------------------------------------------------------------------
// Values

/** True for `true` and `"true"` (some inputs, e.g. launch-template EBS flags, are strings). */
export function isTrue(v: unknown): boolean {
  return v === true || (typeof v === "string" && v.toLowerCase() === "true");
}

export function isNonEmptyString(v: unknown): v is string {
  return typeof v === "string" && v.length > 0;
}

export function asArray(v: unknown): unknown[] {
  if (v === undefined || v === null) return [];
  return Array.isArray(v) ? v : [v];
}

export function asRecord(v: unknown): Record<string, unknown> | undefined {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

export type Tags = Readonly<Record<string, string>>;

export const EMPTY_TAGS: Tags = Object.freeze({});

/** Key/value map of a `tags` value: a map, JSON text of one, or a list of {key, value}. */
export function tagMap(v: unknown): Tags {
  const p = parseMaybeJson(v);
  if (Array.isArray(p)) {
    const out: Record<string, string> = {};
    for (const t of p) {
      const r = asRecord(t);
      const k = r?.key ?? r?.Key;
      const val = r?.value ?? r?.Value;
      if (typeof k === "string" && (typeof val === "string" || typeof val === "number" || typeof val === "boolean")) out[k] = String(val);
    }
    return out;
  }
  const r = asRecord(p);
  if (!r) return EMPTY_TAGS;
  const out: Record<string, string> = {};
  for (const [k, val] of Object.entries(r)) {
    if (typeof val === "string" || typeof val === "number" || typeof val === "boolean") out[k] = String(val);
  }
  return out;
}

/** Strings of a string-or-list value (other entries dropped). */
export function strings(v: unknown): string[] {
  return asArray(v).filter((x): x is string => typeof x === "string");
}

/**
 * A value that may arrive as JSON text (policy documents; provider inputs, which the
 * engine serializes when they are nested) or as the object itself.
 */
export function parseMaybeJson(v: unknown): unknown {
  if (typeof v !== "string") return v;
  const t = v.trim();
  if (!t.startsWith("{") && !t.startsWith("[")) return v;
  try {
    return JSON.parse(t);
  } catch {
    return v;
  }
}

/** Case-insensitive property read (policy documents come with any capitalisation). */
export function getCI(obj: Record<string, unknown>, key: string): unknown {
  if (key in obj) return obj[key];
  const lower = key.toLowerCase();
  for (const k of Object.keys(obj)) if (k.toLowerCase() === lower) return obj[k];
  return undefined;
}

// ---------------------------------------------------------------------------------------
// Unknown values (preview)

/**
 * During `pulumi preview` the policy server wraps props in a proxy that throws
 * UnknownValueError on values that are not known yet. A stack policy must not lose every
 * result because one resource has an unknown value, so reads inside stack policies go
 * through this: an unknown value reads as `fallback`.
 */
export function known<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch (e) {
    if (isUnknownValueError(e)) return fallback;
    throw e;
  }
}

export function isUnknownValueError(e: unknown): boolean {
  return typeof e === "object" && e !== null && (e as { constructor?: { name?: string } }).constructor?.name === "UnknownValueError";
}

// ---------------------------------------------------------------------------------------
// Stack helpers

/** Resources of some types. */
export function ofTypes(resources: readonly PolicyResource[], ...types: string[]): PolicyResource[] {
  const set = new Set(types);
  return resources.filter((r) => set.has(r.type));
}

/** Resources indexed by URN and by the values other resources use to refer to them. */
export interface TargetIndex {
  readonly byUrn: ReadonlyMap<string, PolicyResource>;
  readonly byId: ReadonlyMap<string, readonly PolicyResource[]>;
}

/** Indexes resources by URN and by the values of `fields` (id, name, ARN, URL). */
export function indexTargets(resources: readonly PolicyResource[], fields: readonly string[]): TargetIndex {
  const byUrn = new Map<string, PolicyResource>();
  const byId = new Map<string, PolicyResource[]>();
  for (const r of resources) {
    byUrn.set(r.urn, r);
    for (const f of fields) {
      const v = known(() => r.props[f] as unknown, undefined);
      if (!isNonEmptyString(v)) continue;
      const list = byId.get(v);
      if (!list) byId.set(v, [r]);
      else if (!list.includes(r)) list.push(r);
    }
  }
  return { byUrn, byId };
}

/**
 * The resources among `targets` that `from` refers to through its input `field`: by
 * value (the field holds one of the target's identifiers), by the engine's property
 * dependencies, or, when neither finds one and `useDependencies`, by plain dependencies.
 */
export function referencedResources(from: PolicyResource, field: string, targets: TargetIndex, useDependencies = true): PolicyResource[] {
  const found: PolicyResource[] = [];
  const add = (r: PolicyResource): void => {
    if (!found.includes(r)) found.push(r);
  };
  const value = known(() => from.props[field] as unknown, undefined);
  for (const v of strings(value)) for (const r of targets.byId.get(v) ?? []) add(r);
  for (const d of from.propertyDependencies?.[field] ?? []) {
    const r = targets.byUrn.get(d.urn);
    if (r) add(r);
  }
  if (found.length === 0 && useDependencies) {
    for (const d of from.dependencies ?? []) {
      const r = targets.byUrn.get(d.urn);
      if (r) add(r);
    }
  }
  return found;
}
