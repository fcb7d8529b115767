/**
 * IAM policy documents as they reach a policy: JSON text in `policy` /
 * `assumeRolePolicy` / `inlinePolicies[].policy`, or the object form
 * (`aws.iam.PolicyDocument`), with any capitalisation of the keys.
 */
import { asArray, asRecord, getCI, parseMaybeJson, strings } from "./util";

export type DocumentKind = "identity" | "trust" | "resource";

export interface DocumentRef {
  readonly kind: DocumentKind;
  /** Input path, for messages: `policy`, `inlinePolicies[0].policy`, ... */
  readonly field: string;
  /** The raw value (string or object). */
  readonly raw: unknown;
}

export interface Principal {
  readonly kind: "*" | "AWS" | "Service" | "Federated" | "CanonicalUser" | string;
  readonly value: string;
}

export interface Statement {
  readonly sid?: string;
  readonly effect: string;
  readonly actions: readonly string[];
  /** Set when the statement uses NotAction. */
  readonly notActions?: readonly string[];
  readonly resources: readonly string[];
  readonly notResources?: readonly string[];
  readonly principals: readonly Principal[];
  readonly hasNotPrincipal: boolean;
  /** Condition keys, lower-cased, across every operator. */
  readonly conditionKeys: ReadonlySet<string>;
  /** Operator -> key -> values, as written. */
  readonly condition: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

/**
 * Every resource type carrying a policy document this pack reads: the input holding it
 * and what kind of document it is. (Role is special: a trust policy and a list of inline
 * identity policies; see documentsOf.)
 */
const DOCUMENT_FIELDS: Readonly<Record<string, { readonly field: string; readonly kind: DocumentKind }>> = {
  // Identity policies (attached to a role, user, group or permission set)
  "aws:iam/rolePolicy:RolePolicy": { field: "policy", kind: "identity" },
  "aws:iam/userPolicy:UserPolicy": { field: "policy", kind: "identity" },
  "aws:iam/groupPolicy:GroupPolicy": { field: "policy", kind: "identity" },
  "aws:iam/policy:Policy": { field: "policy", kind: "identity" },
  "aws:ssoadmin/permissionSetInlinePolicy:PermissionSetInlinePolicy": { field: "inlinePolicy", kind: "identity" },
  // Resource-based policies
  "aws:s3/bucketPolicy:BucketPolicy": { field: "policy", kind: "resource" },
  "aws:s3/bucket:Bucket": { field: "policy", kind: "resource" },
  "aws:s3/bucketV2:BucketV2": { field: "policy", kind: "resource" },
  "aws:s3/accessPoint:AccessPoint": { field: "policy", kind: "resource" },
  "aws:s3control/accessPointPolicy:AccessPointPolicy": { field: "policy", kind: "resource" },
  "aws:sqs/queue:Queue": { field: "policy", kind: "resource" },
  "aws:sqs/queuePolicy:QueuePolicy": { field: "policy", kind: "resource" },
  "aws:kms/key:Key": { field: "policy", kind: "resource" },
  "aws:kms/keyPolicy:KeyPolicy": { field: "policy", kind: "resource" },
  "aws:secretsmanager/secret:Secret": { field: "policy", kind: "resource" },
  "aws:secretsmanager/secretPolicy:SecretPolicy": { field: "policy", kind: "resource" },
  "aws:sns/topic:Topic": { field: "policy", kind: "resource" },
  "aws:sns/topicPolicy:TopicPolicy": { field: "policy", kind: "resource" },
  "aws:ecr/repositoryPolicy:RepositoryPolicy": { field: "policy", kind: "resource" },
  "aws:efs/fileSystemPolicy:FileSystemPolicy": { field: "policy", kind: "resource" },
  "aws:ec2/vpcEndpoint:VpcEndpoint": { field: "policy", kind: "resource" },
  "aws:ec2/vpcEndpointPolicy:VpcEndpointPolicy": { field: "policy", kind: "resource" },
  "aws:cloudwatch/logResourcePolicy:LogResourcePolicy": { field: "policyDocument", kind: "resource" },
  "aws:vpclattice/authPolicy:AuthPolicy": { field: "policy", kind: "resource" },
  "aws:vpclattice/resourcePolicy:ResourcePolicy": { field: "policy", kind: "resource" },
  "aws:cloudwatch/eventBusPolicy:EventBusPolicy": { field: "policy", kind: "resource" },
};

/** Every type that carries a policy document this pack reads. */
export const POLICY_DOCUMENT_TYPES: readonly string[] = ["aws:iam/role:Role", ...Object.keys(DOCUMENT_FIELDS)];

/** The policy documents in a resource's inputs. */
export function documentsOf(type: string, props: Record<string, unknown>): DocumentRef[] {
  const docs: DocumentRef[] = [];
  if (type === "aws:iam/role:Role") {
    if (props.assumeRolePolicy !== undefined) docs.push({ kind: "trust", field: "assumeRolePolicy", raw: props.assumeRolePolicy });
    asArray(props.inlinePolicies).forEach((p, i) => {
      const policy = asRecord(p)?.policy;
      if (policy !== undefined && policy !== "") docs.push({ kind: "identity", field: `inlinePolicies[${i}].policy`, raw: policy });
    });
    return docs;
  }
  const spec = DOCUMENT_FIELDS[type];
  if (spec) {
    const raw = props[spec.field];
    if (raw !== undefined && raw !== null && raw !== "") docs.push({ kind: spec.kind, field: spec.field, raw });
  }
  return docs;
}

const parsed = new Map<string, readonly Statement[] | null>();

/** The statements of a document (null when it is not a policy document at all). */
export function statementsOf(raw: unknown): readonly Statement[] | null {
  if (typeof raw === "string") {
    let s = parsed.get(raw);
    if (s === undefined) {
      s = parseStatements(parseMaybeJson(unquoted(raw)));
      if (parsed.size > 5000) parsed.clear();
      parsed.set(raw, s);
    }
    return s;
  }
  return parseStatements(raw);
}

/** JSON text of JSON text (a document serialized twice) as the inner text. */
function unquoted(raw: string): string {
  const t = raw.trim();
  if (!t.startsWith('"')) return raw;
  try {
    const inner: unknown = JSON.parse(t);
    return typeof inner === "string" ? inner : raw;
  } catch {
    return raw;
  }
}

function parseStatements(doc: unknown): readonly Statement[] | null {
  const d = asRecord(doc);
  if (!d) return null;
  const st = getCI(d, "Statement");
  if (st === undefined) return null;
  return asArray(st).flatMap((s) => {
    const r = asRecord(s);
    return r ? [normalize(r)] : [];
  });
}

function normalize(s: Record<string, unknown>): Statement {
  const notAction = getCI(s, "NotAction");
  const notResource = getCI(s, "NotResource");
  const condition: Record<string, Record<string, unknown>> = {};
  const conditionKeys = new Set<string>();
  const c = asRecord(getCI(s, "Condition"));
  if (c) {
    for (const [op, body] of Object.entries(c)) {
      const b = asRecord(body);
      if (!b) continue;
      condition[op] = b;
      for (const k of Object.keys(b)) conditionKeys.add(k.toLowerCase());
    }
  }
  const sid = getCI(s, "Sid");
  return {
    ...(typeof sid === "string" ? { sid } : {}),
    effect: String(getCI(s, "Effect") ?? ""),
    actions: strings(getCI(s, "Action")),
    ...(notAction !== undefined ? { notActions: strings(notAction) } : {}),
    resources: strings(getCI(s, "Resource")),
    ...(notResource !== undefined ? { notResources: strings(notResource) } : {}),
    principals: principals(getCI(s, "Principal")),
    hasNotPrincipal: getCI(s, "NotPrincipal") !== undefined,
    conditionKeys,
    condition,
  };
}

function principals(p: unknown): Principal[] {
  if (p === undefined || p === null) return [];
  if (typeof p === "string") return [{ kind: p === "*" ? "*" : "AWS", value: p }];
  const r = asRecord(p);
  if (!r) return [];
  const out: Principal[] = [];
  for (const [kind, v] of Object.entries(r)) for (const value of strings(v)) out.push({ kind, value });
  return out;
}

export function isAllow(s: Statement): boolean {
  return s.effect.toLowerCase() === "allow";
}

/** A principal that means anyone: `"*"` or `{"AWS": "*"}`. */
export function isAnyone(p: Principal): boolean {
  return p.value === "*" && (p.kind === "*" || p.kind.toLowerCase() === "aws");
}

/** The 12-digit account of an AWS principal (`123456789012`, `arn:aws:iam::123456789012:role/x`). */
export function principalAccount(p: Principal): string | undefined {
  if (p.kind.toLowerCase() !== "aws") return undefined;
  if (/^\d{12}$/.test(p.value)) return p.value;
  const m = /^arn:[a-z-]+:(?:iam|sts)::(\d{12}):/.exec(p.value);
  return m ? m[1] : undefined;
}

/**
 * Condition operators that pin a key to the values listed: the positive string and ARN
 * comparisons, also in their ForAnyValue: / ForAllValues: set forms. Null, the Not*
 * operators and the ...IfExists forms (true when the key is absent) pin nothing.
 */
const PINNING_OPERATORS = new Set(["stringequals", "stringequalsignorecase", "stringlike", "arnequals", "arnlike"]);

export function isPinningOperator(op: string): boolean {
  return PINNING_OPERATORS.has(op.replace(/^for(any|all)value:/i, "").toLowerCase());
}

/**
 * Whether a condition value matches (nearly) anything: `*`, an ARN in any account
 * (`arn:aws:iam::*:*`, `arn:aws:iam::*:role/*`), an ARN of any resource, or a pattern with
 * fewer than three literal letters or digits (`o-*`).
 */
export function isWildcardValue(value: string): boolean {
  const t = value.trim();
  if (/^[*?]*$/.test(t)) return true;
  const arn = /^arn:([^:]*):([^:]*):([^:]*):([^:]*):(.*)$/.exec(t);
  if (arn) {
    const [, partition, service, , account, resource] = arn;
    if (/[*?]/.test(partition + service + account)) return true;
    // With no account in the ARN (S3), a wildcard name is anyone's resource of that name.
    return account === "" && /[*?]/.test(resource);
  }
  const cut = t.search(/[*?]/);
  if (cut >= 0 && /^arn:/i.test(t)) return true; // an ARN cut short by its wildcard
  if (cut < 0) return (t.match(/[A-Za-z0-9]/g) ?? []).length < 3;
  // A wildcard may follow a whole name (a path `o-abc/r-ab12/*`, a host `ec2.amazonaws.com*`), never complete an
  // identifier (`o-*`, `vpce-0a*`, `1111*`, an ARN cut short `arn:aws:sns:*`).
  const prefix = t.slice(0, cut);
  const literal = (prefix.match(/[A-Za-z0-9]/g) ?? []).length;
  return literal < 3 || !(/[/:]$/.test(prefix) || /\.[A-Za-z0-9-]+\.[A-Za-z]{2,}$/.test(prefix));
}

/**
 * The values a statement pins one of the keys to: for each positive operator on a key,
 * its values. undefined when no such condition exists or any value is a wildcard (so the
 * condition lets anything through).
 */
export function pinnedValues(s: Statement, ...keys: string[]): string[] | undefined {
  const wanted = new Set(keys.map((k) => k.toLowerCase()));
  let found: string[] | undefined;
  for (const [op, body] of Object.entries(s.condition)) {
    if (!isPinningOperator(op)) continue;
    for (const [k, v] of Object.entries(body)) {
      if (!wanted.has(k.toLowerCase())) continue;
      const values = asArray(v).map((x) => (typeof x === "string" || typeof x === "number" || typeof x === "boolean" ? String(x) : ""));
      if (values.length === 0 || values.some(isWildcardValue)) continue;
      found = [...(found ?? []), ...values];
    }
  }
  return found;
}

/**
 * Whether a statement pins any of the keys (case-insensitive) with a positive operator to
 * values that are not wildcards. A key that is merely present (Null, StringNotEquals,
 * StringLike "*", ...IfExists) does not count.
 */
export function hasPinningCondition(s: Statement, ...keys: string[]): boolean {
  return pinnedValues(s, ...keys) !== undefined;
}

/**
 * Whether a statement's conditions narrow which resources it reaches: a positive,
 * non-wildcard condition on a resource or request tag, the resource's account or
 * organisation, or a service-specific key (ec2:Vpc, ec2:CreateAction, iam:PassedToService,
 * kms:ViaService, ...). Global keys about the request (aws:SecureTransport, aws:TagKeys,
 * aws:RequestedRegion) narrow nothing.
 */
export function hasScopingCondition(s: Statement): boolean {
  const keys = [...s.conditionKeys].filter((k) => !k.startsWith("aws:") || /^aws:(resourcetag\/|requesttag\/|resourceaccount$|resourceorgid$|resourceorgpaths$)/.test(k));
  return keys.length > 0 && hasPinningCondition(s, ...keys);
}

/**
 * Whether a Resource value means "any resource": `*`, or an ARN whose region, account and
 * resource parts are all wildcards or empty (`arn:aws:s3:::*`, any object of any bucket,
 * `arn:aws:iam::*:*`, `arn:aws:sqs:*:*:*`, `arn:*:*:*:*:*`).
 */
export function isAnyResource(resource: string): boolean {
  const r = resource.trim();
  if (/^[*?]+$/.test(r)) return true;
  const m = /^arn:([^:]*):([^:]*):(.*)$/.exec(r);
  if (!m) return false;
  const rest = m[3];
  return /[*]/.test(rest) && /^[*?:/]*$/.test(rest);
}
