/**
 * AWS Secrets Manager as the plans make it, for the journey's External Secrets stand-in: the
 * secrets the plans create (name, ARN, the readers their resource policies name), a value for
 * those the plans give a version (generated as getRandomPassword makes it) or a server
 * publishes (its PutSecretValue), and GetSecretValue's answers, refusals included, as AWS
 * gives them. A key no plan creates is not found, and so is a bare name from another account
 * (AWS finds another account's secret by its ARN alone); a secret with no value yet has no
 * AWSCURRENT version; a role reads only where the secret's resource policy names it. That is
 * stricter than AWS for a role of the secret's own account, which its identity policy alone may
 * let read: every secret the plans create names each of its readers in its policy, so a store
 * reading with any other role (another tenant's, say) is a fault either way. Identity and KMS
 * key policies are not evaluated here (the plans' IAM simulator does that).
 */
import * as crypto from "crypto";

/** A resource of a plan, as its deployment lists it. */
export interface PlannedResource {
  readonly type: string;
  readonly inputs?: Record<string, unknown>;
  readonly outputs?: Record<string, unknown>;
}

/** One secret a plan creates. */
export interface PlannedSecret {
  readonly name: string;
  readonly arn: string;
  /** The plan writes its first value (a SecretVersion); otherwise someone publishes it later. */
  readonly versioned: boolean;
  /** The principals its resource policy lets call GetSecretValue. */
  readonly readers: readonly string[];
}

const SECRET = "aws:secretsmanager/secret:Secret";
const VERSION = "aws:secretsmanager/secretVersion:SecretVersion";
const POLICY = "aws:secretsmanager/secretPolicy:SecretPolicy";
const GET_SECRET_VALUE = "secretsmanager:GetSecretValue";

/** The secrets these plans create, with whether a plan versions each and who may read it. Pure. */
export function plannedSecrets(resources: readonly PlannedResource[]): PlannedSecret[] {
  const secrets = resources.filter((r) => r.type === SECRET).map((r) => ({ name: String(r.inputs?.name ?? r.outputs?.name ?? ""), arn: String(r.outputs?.arn ?? "") }));
  const of = (id: unknown) => secrets.find((s) => s.name === id || s.arn === id);
  const versioned = new Set(resources.filter((r) => r.type === VERSION).map((r) => of(r.inputs?.secretId)?.arn));
  const readers = new Map<string, string[]>();
  for (const p of resources.filter((r) => r.type === POLICY)) {
    const secret = of(p.inputs?.secretArn);
    if (secret) readers.set(secret.arn, [...(readers.get(secret.arn) ?? []), ...policyReaders(String(p.inputs?.policy ?? "{}"))]);
  }
  return secrets.filter((s) => s.name && s.arn).map((s) => ({ ...s, versioned: versioned.has(s.arn), readers: readers.get(s.arn) ?? [] }));
}

/** The AWS principals a resource policy allows GetSecretValue. Pure. */
export function policyReaders(policy: string): string[] {
  type Statement = { Effect?: string; Action?: string | string[]; Principal?: { AWS?: string | string[] } };
  let doc: { Statement?: Statement | Statement[] };
  try {
    doc = JSON.parse(policy) as typeof doc;
  } catch {
    return [];
  }
  const list = <T>(x: T | T[] | undefined): T[] => (x === undefined ? [] : Array.isArray(x) ? x : [x]);
  return list(doc.Statement).filter((s) => s.Effect === "Allow" && list(s.Action).some((a) => a === GET_SECRET_VALUE || a === "secretsmanager:*")).flatMap((s) => list(s.Principal?.AWS));
}

/** The account of an ARN (its fifth field). Pure. */
export function arnAccount(arn: string): string {
  return arn.split(":")[4] ?? "";
}

/** The region of an ARN (its fourth field). Pure. */
export function arnRegion(arn: string): string {
  return arn.split(":")[3] ?? "";
}

/** GetSecretValue's answer: the value, or AWS's error. */
export type SecretAnswer = { readonly value: string } | { readonly error: string };

/**
 * Secrets Manager for the journey: what the plans create, each versioned secret's value
 * generated once (64 letters and digits, as the plans' getRandomPassword asks), and values
 * published later (`put`).
 */
export class SecretsManager {
  private readonly values = new Map<string, string>();

  constructor(readonly secrets: readonly PlannedSecret[]) {
    for (const s of secrets.filter((x) => x.versioned)) this.values.set(s.arn, randomPassword(64));
  }

  /** The secret a name or ARN names, if a plan creates it. */
  find(id: string): PlannedSecret | undefined {
    return this.secrets.find((s) => s.name === id || s.arn === id);
  }

  /** PutSecretValue by whoever the secret's policy lets write (the journey has checked who): false when no plan creates the secret. */
  put(id: string, value: string): boolean {
    const s = this.find(id);
    if (s) this.values.set(s.arn, value);
    return !!s;
  }

  /** GetSecretValue of `id` in `region`, by `role` (the SecretStore's): AWS's answer. */
  get(id: string, region: string, role: string): SecretAnswer {
    return getSecretValue(this.find(id), this.values, id, region, role);
  }
}

/** GetSecretValue's answer for the secret found (or none), as AWS gives it. Pure. */
export function getSecretValue(secret: PlannedSecret | undefined, values: ReadonlyMap<string, string>, id: string, region: string, role: string): SecretAnswer {
  const byName = id !== secret?.arn;
  if (!secret || arnRegion(secret.arn) !== region || (byName && arnAccount(role) !== arnAccount(secret.arn))) return { error: "ResourceNotFoundException: Secrets Manager can't find the specified secret." };
  if (!secret.readers.includes(role)) {
    return { error: `AccessDeniedException: User: arn:aws:sts::${arnAccount(role)}:assumed-role/${role.split("/").pop()}/external-secrets is not authorized to perform: ${GET_SECRET_VALUE} on resource: ${id} because no resource-based policy allows the ${GET_SECRET_VALUE} action` };
  }
  const value = values.get(secret.arn);
  return value === undefined ? { error: "ResourceNotFoundException: Secrets Manager can't find the specified secret value for staging label: AWSCURRENT" } : { value };
}

/** A remote reference's value as External Secrets' AWS provider reads it: the whole secret, or one property of its JSON. Pure. */
export function remoteValue(answer: SecretAnswer, key: string, property?: string): SecretAnswer {
  if ("error" in answer || !property) return answer;
  let doc: unknown;
  try {
    doc = JSON.parse(answer.value);
  } catch {
    doc = undefined;
  }
  const v = doc && typeof doc === "object" ? (doc as Record<string, unknown>)[property] : undefined;
  if (v === undefined) return { error: `key ${property} does not exist in secret ${key}` };
  return { value: typeof v === "string" ? v : JSON.stringify(v) };
}

/** Letters and digits, as Secrets Manager's GetRandomPassword gives them with punctuation excluded. */
function randomPassword(length: number): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  return Array.from(crypto.randomBytes(length), (b) => alphabet[b % alphabet.length]).join("");
}
