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

/** Identity policies (attached to a role/user/group) carried by a resource type. */
const IDENTITY_POLICY_TYPES = new Set([
  "aws:iam/rolePolicy:RolePolicy",
  "aws:iam/userPolicy:UserPolicy",
  "aws:iam/groupPolicy:GroupPolicy",
  "aws:iam/policy:Policy",
]);

/** Resource-based policies (`policy` input) of resource types this project may create. */
const RESOURCE_POLICY_TYPES = new Set([
  "aws:s3/bucketPolicy:BucketPolicy",
  "aws:s3/bucket:Bucket",
  "aws:s3/bucketV2:BucketV2",
  "aws:sqs/queue:Queue",
  "aws:sqs/queuePolicy:QueuePolicy",
  "aws:kms/key:Key",
  "aws:secretsmanager/secret:Secret",
  "aws:secretsmanager/secretPolicy:SecretPolicy",
  "aws:sns/topic:Topic",
  "aws:sns/topicPolicy:TopicPolicy",
  "aws:ecr/repositoryPolicy:RepositoryPolicy",
  "aws:efs/fileSystemPolicy:FileSystemPolicy",
  "aws:vpclattice/authPolicy:AuthPolicy",
  "aws:vpclattice/resourcePolicy:ResourcePolicy",
  "aws:cloudwatch/eventBusPolicy:EventBusPolicy",
]);

/** Every type that carries a policy document this pack reads. */
export const POLICY_DOCUMENT_TYPES: readonly string[] = [
  "aws:iam/role:Role",
  ...IDENTITY_POLICY_TYPES,
  ...RESOURCE_POLICY_TYPES,
];

/** The policy documents in a resource's inputs. */
export function documentsOf(type: string, props: Record<string, unknown>): DocumentRef[] {
  const docs: DocumentRef[] = [];
  if (type === "aws:iam/role:Role") {
    if (props.assumeRolePolicy !== undefined) docs.push({ kind: "trust", field: "assumeRolePolicy", raw: props.assumeRolePolicy });
    asArray(props.inlinePolicies).forEach((p, i) => {
      const policy = asRecord(p)?.policy;
      if (policy !== undefined && policy !== "") docs.push({ kind: "identity", field: `inlinePolicies[${i}].policy`, raw: policy });
    });
  } else if (IDENTITY_POLICY_TYPES.has(type)) {
    if (props.policy !== undefined) docs.push({ kind: "identity", field: "policy", raw: props.policy });
  } else if (RESOURCE_POLICY_TYPES.has(type)) {
    if (props.policy !== undefined && props.policy !== "") docs.push({ kind: "resource", field: "policy", raw: props.policy });
  }
  return docs;
}

const parsed = new Map<string, readonly Statement[] | null>();

/** The statements of a document (null when it is not a policy document at all). */
export function statementsOf(raw: unknown): readonly Statement[] | null {
  if (typeof raw === "string") {
    let s = parsed.get(raw);
    if (s === undefined) {
      s = parseStatements(parseMaybeJson(raw));
      if (parsed.size > 5000) parsed.clear();
      parsed.set(raw, s);
    }
    return s;
  }
  return parseStatements(raw);
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

/** Whether a statement has a condition on any of the keys (case-insensitive). */
export function hasConditionKey(s: Statement, ...keys: string[]): boolean {
  return keys.some((k) => s.conditionKeys.has(k.toLowerCase()));
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
