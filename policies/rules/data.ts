/**
 * Data: S3 (public access block, TLS only, encryption), DynamoDB (PITR, CMK, deletion
 * protection), EFS, SQS (encryption, dead-letter queue for consumed queues), Secrets
 * Manager and KMS.
 *
 * The S3 and SQS checks relate two resources (a bucket and its public access block, a
 * queue and the event source mapping that consumes it), so they are stack policies.
 * A reference is matched by value (the `bucket` input holds the bucket's name/id; an
 * ARN or URL for queues), by the engine's property dependencies, or by dependencies.
 */
import type { PolicyResource } from "@pulumi/policy";
import { isAnyone, statementsOf, type Statement } from "./iam-docs";
import { wildcardRegExp } from "./iam-catalog";
import { providerAccounts } from "./provider";
import {
  asArray,
  asRecord,
  indexTargets,
  isNonEmptyString,
  isTrue,
  known,
  ofTypes,
  parseMaybeJson,
  referencedResources,
  resourcePolicy,
  stackPolicy,
  type PackPolicy,
} from "./util";

export const BUCKET_TYPES = ["aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2"] as const;
const BUCKET_IDS = ["bucket", "id", "arn"] as const;
const PAB = "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock";
const ACCOUNT_PAB = "aws:s3/accountPublicAccessBlock:AccountPublicAccessBlock";
const BUCKET_POLICY = "aws:s3/bucketPolicy:BucketPolicy";
const SSE_TYPES = [
  "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
  "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2",
] as const;
export const QUEUE = "aws:sqs/queue:Queue";
const REDRIVE_POLICY = "aws:sqs/redrivePolicy:RedrivePolicy";
const EVENT_SOURCE_MAPPING = "aws:lambda/eventSourceMapping:EventSourceMapping";

/** Read of a value that may be unknown during preview; UNKNOWN when it is. */
const UNKNOWN = Symbol("unknown");
function read(r: PolicyResource, field: string): unknown {
  return known<unknown>(() => r.props[field], UNKNOWN);
}

const PAB_FLAGS = ["blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets"] as const;

function missingFlags(r: PolicyResource): string[] | undefined {
  const values = PAB_FLAGS.map((f) => [f, read(r, f)] as const);
  if (values.some(([, v]) => v === UNKNOWN)) return undefined;
  return values.filter(([, v]) => !isTrue(v)).map(([f]) => f);
}

/**
 * Whether an account-level public access block covers a bucket: it must act in the
 * bucket's account (its accountId, else its provider's), not merely be in the deployment.
 */
function accountBlockCovers(block: PolicyResource, bucket: PolicyResource): boolean {
  const accountId = read(block, "accountId");
  const bucketAccounts = providerAccounts(bucket.provider);
  const sameProvider = (block.provider?.urn ?? "") === (bucket.provider?.urn ?? "");
  if (accountId === UNKNOWN) return true; // decided at update time
  if (!isNonEmptyString(accountId)) return sameProvider || providerAccounts(block.provider).some((a) => bucketAccounts.includes(a));
  if (bucketAccounts.length > 0) return bucketAccounts.includes(accountId);
  return sameProvider && providerAccounts(block.provider).includes(accountId);
}

export const s3PublicAccessBlock = stackPolicy("s3-public-access-block", {
  description:
    "Every S3 bucket has a BucketPublicAccessBlock (or an AccountPublicAccessBlock acting in the bucket's own account) with blockPublicAcls, " +
    "blockPublicPolicy, ignorePublicAcls and restrictPublicBuckets all true.",
  remediation: "add aws.s3.BucketPublicAccessBlock { bucket: bucket.id, blockPublicAcls: true, blockPublicPolicy: true, ignorePublicAcls: true, restrictPublicBuckets: true }",
  validate: (args, report) => {
    const buckets = ofTypes(args.resources, ...BUCKET_TYPES);
    const targets = indexTargets(buckets, BUCKET_IDS);
    const covered = new Set<string>();
    for (const a of ofTypes(args.resources, ACCOUNT_PAB)) {
      const missing = missingFlags(a);
      if (missing === undefined || missing.length === 0) for (const b of buckets) if (accountBlockCovers(a, b)) covered.add(b.urn);
    }
    for (const p of ofTypes(args.resources, PAB)) {
      const missing = missingFlags(p);
      if (missing && missing.length > 0) report(`public access block leaves ${missing.join(", ")} unset or false`, p.urn);
      else for (const b of referencedResources(p, "bucket", targets)) covered.add(b.urn);
    }
    for (const b of buckets) if (!covered.has(b.urn)) report("bucket has no public access block with all four flags true", b.urn);
  },
});

function isFalse(v: unknown): boolean {
  return v === false || (typeof v === "string" && v.toLowerCase() === "false") || (Array.isArray(v) && v.length > 0 && v.every(isFalse));
}

/** Whether one of the statement's Resource patterns covers an ARN (any partition). */
function covers(st: Statement, arn: string): boolean {
  const norm = (a: string): string => a.replace(/^arn:aws[a-z-]*:/, "arn:aws:");
  return st.resources.some((r) => wildcardRegExp(norm(r)).test(norm(arn)));
}

/**
 * A statement that denies every non-TLS request to a bucket: Deny, anyone, s3:* (or *),
 * on the bucket's ARN and all its objects (or "*"), with aws:SecureTransport false as its
 * only condition (any other condition narrows whom or what it denies). With no bucket
 * ARN (unknown during preview), any Resource will do.
 */
export function isTlsDeny(st: Statement, bucketArn?: string): boolean {
  if (st.effect.toLowerCase() !== "deny" || st.hasNotPrincipal || st.notResources || st.notActions) return false;
  if (!st.principals.some(isAnyone)) return false;
  if (!st.actions.some((a) => a === "*" || a.toLowerCase() === "s3:*")) return false;
  const conditions = Object.entries(st.condition).flatMap(([op, body]) => Object.entries(body).map(([k, v]) => [op, k, v] as const));
  if (conditions.length !== 1) return false;
  const [op, key, value] = conditions[0];
  if (!/^bool(ifexists)?$/i.test(op) || key.toLowerCase() !== "aws:securetransport" || !isFalse(value)) return false;
  if (bucketArn === undefined) return st.resources.length > 0;
  return covers(st, bucketArn) && covers(st, `${bucketArn}/*`);
}

/** true: has a TLS deny; false: has none; undefined: cannot tell yet (unknown during preview). */
function docDeniesPlainHttp(doc: unknown, bucketArn: string | undefined): boolean | undefined {
  if (doc === UNKNOWN) return undefined;
  if (doc === undefined || doc === null || doc === "") return false;
  return known(() => (statementsOf(doc) ?? []).some((st) => isTlsDeny(st, bucketArn)), undefined);
}

/** A bucket's ARN: its `arn` output, else built from its name; undefined while unknown. */
function bucketArnOf(b: PolicyResource): string | undefined {
  const arn = read(b, "arn");
  if (isNonEmptyString(arn)) return arn;
  const name = read(b, "bucket");
  if (isNonEmptyString(name)) return `arn:aws:s3:::${name}`;
  const id = read(b, "id");
  return isNonEmptyString(id) ? `arn:aws:s3:::${id}` : undefined;
}

export const s3TlsOnly = stackPolicy("s3-tls-only", {
  description:
    "Every S3 bucket's policy denies requests that do not use TLS: Deny s3:* to anyone on the bucket ARN and bucketArn/* (or \"*\") when " +
    "aws:SecureTransport is false, with no other narrowing condition.",
  remediation:
    'add a BucketPolicy statement {Effect: "Deny", Principal: "*", Action: "s3:*", Resource: [bucketArn, bucketArn + "/*"], Condition: {Bool: {"aws:SecureTransport": "false"}}}',
  validate: (args, report) => {
    const buckets = ofTypes(args.resources, ...BUCKET_TYPES);
    const targets = indexTargets(buckets, BUCKET_IDS);
    const ok = new Set<string>();
    for (const b of buckets) if (docDeniesPlainHttp(read(b, "policy"), bucketArnOf(b)) !== false) ok.add(b.urn);
    for (const p of ofTypes(args.resources, BUCKET_POLICY)) {
      const doc = read(p, "policy");
      for (const b of referencedResources(p, "bucket", targets)) if (docDeniesPlainHttp(doc, bucketArnOf(b)) !== false) ok.add(b.urn);
    }
    for (const b of buckets) {
      if (!ok.has(b.urn)) report("no bucket policy denies plain-HTTP (aws:SecureTransport false) requests to the bucket and all its objects, unconditionally otherwise", b.urn);
    }
  },
});

const SSE_ALGORITHMS = new Set(["AES256", "aws:kms", "aws:kms:dsse"]);

/** Whether an SSE rules value (list, or the inline single `rule`) sets a default algorithm. */
function rulesEncrypt(rules: unknown): boolean | undefined {
  if (rules === UNKNOWN) return undefined;
  return asArray(rules).some((r) => {
    const alg = asRecord(asRecord(r)?.applyServerSideEncryptionByDefault)?.sseAlgorithm;
    return typeof alg === "string" && SSE_ALGORITHMS.has(alg);
  });
}

export const s3EncryptionConfigured = stackPolicy("s3-encryption-configured", {
  description: "Every S3 bucket declares default server-side encryption (SSE-S3, SSE-KMS or DSSE-KMS).",
  remediation: 'add aws.s3.BucketServerSideEncryptionConfiguration { bucket: bucket.id, rules: [{ applyServerSideEncryptionByDefault: { sseAlgorithm: "aws:kms", kmsMasterKeyId } , bucketKeyEnabled: true }] }',
  validate: (args, report) => {
    const buckets = ofTypes(args.resources, ...BUCKET_TYPES);
    const targets = indexTargets(buckets, BUCKET_IDS);
    const ok = new Set<string>();
    for (const b of buckets) {
      const inline = read(b, "serverSideEncryptionConfiguration");
      if (inline === UNKNOWN) ok.add(b.urn);
      else {
        const cfg = asRecord(parseMaybeJson(inline));
        if (cfg && rulesEncrypt(cfg.rule ?? cfg.rules)) ok.add(b.urn);
      }
    }
    for (const c of ofTypes(args.resources, ...SSE_TYPES)) {
      if (rulesEncrypt(read(c, "rules")) === false) {
        report("server-side encryption configuration sets no sseAlgorithm (AES256, aws:kms or aws:kms:dsse)", c.urn);
        continue;
      }
      for (const b of referencedResources(c, "bucket", targets)) ok.add(b.urn);
    }
    for (const b of buckets) if (!ok.has(b.urn)) report("bucket has no default server-side encryption configuration", b.urn);
  },
});

const TABLE = "aws:dynamodb/table:Table";

export const dynamodbPitrEnabled = resourcePolicy("dynamodb-pitr-enabled", {
  description: "DynamoDB tables have point-in-time recovery on.",
  remediation: "set pointInTimeRecovery: { enabled: true }",
  types: [TABLE],
  validate: (args, report) => {
    if (!isTrue(asRecord(args.props.pointInTimeRecovery)?.enabled)) report("pointInTimeRecovery.enabled is not true");
  },
});

export const dynamodbEncryptedWithCmk = resourcePolicy("dynamodb-encrypted-with-cmk", {
  description: "DynamoDB tables are encrypted with a customer-managed KMS key (serverSideEncryption.enabled and kmsKeyArn).",
  remediation: "set serverSideEncryption: { enabled: true, kmsKeyArn: key.arn }",
  types: [TABLE],
  validate: (args, report) => {
    const sse = asRecord(args.props.serverSideEncryption);
    if (!isTrue(sse?.enabled)) report("serverSideEncryption.enabled is not true (the table uses an AWS-owned key)");
    else if (!isNonEmptyString(sse?.kmsKeyArn)) report("serverSideEncryption.kmsKeyArn is not set (the AWS-managed aws/dynamodb key is used)");
    else if (isAwsManagedKey(sse.kmsKeyArn)) report(`serverSideEncryption.kmsKeyArn ${sse.kmsKeyArn} is an AWS-managed key, not a customer-managed one`);
  },
});

export const dynamodbDeletionProtection = resourcePolicy("dynamodb-deletion-protection", {
  description: "DynamoDB tables have deletion protection on.",
  remediation: "set deletionProtectionEnabled: true",
  types: [TABLE],
  validate: (args, report) => {
    if (!isTrue(args.props.deletionProtectionEnabled)) report("deletionProtectionEnabled is not true");
  },
});

export const efsEncrypted = resourcePolicy("efs-encrypted", {
  description: "EFS file systems are encrypted at rest.",
  remediation: "set encrypted: true (and kmsKeyId for a customer-managed key); an existing file system must be recreated",
  types: ["aws:efs/fileSystem:FileSystem"],
  validate: (args, report) => {
    if (!isTrue(args.props.encrypted)) report("encrypted is not true");
  },
});

export const sqsEncrypted = resourcePolicy("sqs-encrypted", {
  description: "SQS queues are encrypted (kmsMasterKeyId or sqsManagedSseEnabled).",
  remediation: "set sqsManagedSseEnabled: true, or kmsMasterKeyId to a customer-managed key",
  types: [QUEUE],
  validate: (args, report) => {
    if (!isNonEmptyString(args.props.kmsMasterKeyId) && !isTrue(args.props.sqsManagedSseEnabled)) {
      report("neither kmsMasterKeyId nor sqsManagedSseEnabled is set");
    }
  },
});

/** Whether a redrive policy (JSON text or object) names a dead-letter queue. */
function hasDeadLetterTarget(v: unknown): boolean {
  const r = asRecord(parseMaybeJson(v));
  return isNonEmptyString(r?.deadLetterTargetArn) && r?.maxReceiveCount !== undefined;
}

export const sqsConsumedQueueHasDlq = stackPolicy("sqs-consumed-queue-has-dlq", {
  description: "A queue consumed by a Lambda event source mapping has a redrive policy to a dead-letter queue, so a poison message cannot loop forever.",
  remediation: 'set redrivePolicy: JSON.stringify({ deadLetterTargetArn: dlq.arn, maxReceiveCount: 3 }) on the consumed queue',
  validate: (args, report) => {
    const queues = ofTypes(args.resources, QUEUE);
    if (queues.length === 0) return;
    const targets = indexTargets(queues, ["arn", "id", "url", "name"]);
    const redriven = new Set<string>();
    for (const rp of ofTypes(args.resources, REDRIVE_POLICY)) {
      const v = read(rp, "redrivePolicy");
      if (v !== UNKNOWN && !hasDeadLetterTarget(v)) continue;
      for (const q of referencedResources(rp, "queueUrl", targets)) redriven.add(q.urn);
    }
    const reported = new Set<string>();
    for (const m of ofTypes(args.resources, EVENT_SOURCE_MAPPING)) {
      for (const q of referencedResources(m, "eventSourceArn", targets)) {
        if (reported.has(q.urn) || redriven.has(q.urn)) continue;
        const v = read(q, "redrivePolicy");
        if (v === UNKNOWN || hasDeadLetterTarget(v)) continue;
        reported.add(q.urn);
        report(`queue is consumed by event source mapping ${m.name} but has no redrivePolicy with a deadLetterTargetArn and maxReceiveCount`, q.urn);
      }
    }
  },
});

export const secretsmanagerUsesCmk = resourcePolicy("secretsmanager-uses-cmk", {
  description: "Secrets Manager secrets are encrypted with a customer-managed KMS key (not alias/aws/secretsmanager).",
  remediation: "set kmsKeyId to the stack's KMS key (so access needs kms:Decrypt on that key too)",
  types: ["aws:secretsmanager/secret:Secret"],
  validate: (args, report) => {
    const key = args.props.kmsKeyId;
    if (!isNonEmptyString(key)) report("kmsKeyId is not set (the AWS-managed aws/secretsmanager key is used)");
    else if (isAwsManagedKey(key)) report(`kmsKeyId ${key} is an AWS-managed key, not a customer-managed one`);
  },
});

/** An AWS-managed key named by its alias (`alias/aws/sqs`, `arn:aws:kms:...:alias/aws/ebs`). */
export function isAwsManagedKey(key: string): boolean {
  return /(^|:)alias\/aws\//.test(key);
}

/** Where each data store and log names its customer-managed key. */
const CMK_FIELDS: Readonly<Record<string, { readonly field: string; readonly enabled?: (props: Record<string, unknown>) => boolean }>> = {
  "aws:cloudwatch/logGroup:LogGroup": { field: "kmsKeyId" },
  "aws:sqs/queue:Queue": { field: "kmsMasterKeyId" },
  "aws:sns/topic:Topic": { field: "kmsMasterKeyId" },
  "aws:efs/fileSystem:FileSystem": { field: "kmsKeyId" },
  "aws:ebs/volume:Volume": { field: "kmsKeyId" },
  "aws:rds/instance:Instance": { field: "kmsKeyId" },
  "aws:rds/cluster:Cluster": { field: "kmsKeyId" },
  "aws:kinesis/stream:Stream": { field: "kmsKeyId" },
  "aws:ecr/repository:Repository": { field: "encryptionConfigurations" },
};

export const encryptionUsesCmk = resourcePolicy("encryption-uses-cmk", {
  description:
    `Data stores and logs that accept a customer-managed KMS key use one (${Object.keys(CMK_FIELDS).map((t) => t.split(":").pop()).join(", ")}; ` +
    "DynamoDB and Secrets Manager have their own policies): the key is set and is not an AWS-managed alias/aws/... key; SQS-managed SSE and SSE-S3 style defaults are not a CMK.",
  remediation: "set the key field (kmsKeyId / kmsMasterKeyId / encryptionConfigurations[].kmsKey) to the stack's KMS key",
  types: Object.keys(CMK_FIELDS),
  validate: (args, report) => {
    const { field } = CMK_FIELDS[args.type];
    if (args.type === "aws:ecr/repository:Repository") {
      const cfg = asArray(args.props.encryptionConfigurations).map(asRecord);
      if (!cfg.some((c) => c?.encryptionType === "KMS" && isNonEmptyString(c.kmsKey) && !isAwsManagedKey(c.kmsKey))) {
        report('encryptionConfigurations has no { encryptionType: "KMS", kmsKey: <customer-managed key> }');
      }
      return;
    }
    const key = args.props[field];
    if (!isNonEmptyString(key)) report(`${field} is not set (an AWS-owned or AWS-managed key is used)`);
    else if (isAwsManagedKey(key)) report(`${field} ${key} is an AWS-managed key, not a customer-managed one`);
  },
});

const VERSIONING_TYPES = ["aws:s3/bucketVersioningV2:BucketVersioningV2", "aws:s3/bucketVersioning:BucketVersioning"] as const;

export const s3VersioningEnabled = stackPolicy("s3-versioning-enabled", {
  description:
    'Every S3 bucket (they hold user data) is versioned: a BucketVersioning(V2) with versioningConfiguration.status "Enabled", or the bucket\'s own versioning.enabled.',
  remediation: 'add aws.s3.BucketVersioningV2 { bucket: bucket.id, versioningConfiguration: { status: "Enabled" } } (and a lifecycle rule expiring noncurrent versions)',
  validate: (args, report) => {
    const buckets = ofTypes(args.resources, ...BUCKET_TYPES);
    const targets = indexTargets(buckets, BUCKET_IDS);
    const ok = new Set<string>();
    for (const b of buckets) {
      const inline = read(b, "versioning");
      if (inline === UNKNOWN || isTrue(asRecord(parseMaybeJson(inline))?.enabled)) ok.add(b.urn);
    }
    for (const v of ofTypes(args.resources, ...VERSIONING_TYPES)) {
      const cfg = read(v, "versioningConfiguration");
      if (cfg !== UNKNOWN && asRecord(parseMaybeJson(cfg))?.status !== "Enabled") {
        report(`versioningConfiguration.status is "${String(asRecord(parseMaybeJson(cfg))?.status)}", not "Enabled"`, v.urn);
        continue;
      }
      for (const b of referencedResources(v, "bucket", targets)) ok.add(b.urn);
    }
    for (const b of buckets) if (!ok.has(b.urn)) report("bucket is not versioned: an overwrite or delete loses the user's data", b.urn);
  },
});

const PUBLIC_CANNED_ACLS = new Set(["public-read", "public-read-write", "authenticated-read"]);
const PUBLIC_GRANTEE = /acs\.amazonaws\.com\/groups\/global\/(AllUsers|AuthenticatedUsers)/i;
const ACL_TYPES = [
  ...BUCKET_TYPES,
  "aws:s3/bucketAclV2:BucketAclV2",
  "aws:s3/bucketAcl:BucketAcl",
  "aws:s3/bucketObject:BucketObject",
  "aws:s3/bucketObjectv2:BucketObjectv2",
  "aws:s3/objectCopy:ObjectCopy",
];

export const s3NoPublicAcl = resourcePolicy("s3-no-public-acl", {
  description: "No bucket or object ACL grants access to everyone or to any AWS account: no public-read, public-read-write or authenticated-read canned ACL, no grant to the AllUsers or AuthenticatedUsers group.",
  remediation: "drop the ACL (keep BucketOwnershipControls at BucketOwnerEnforced) and grant access through the bucket policy to named principals",
  types: ACL_TYPES,
  validate: (args, report) => {
    const acl = args.props.acl;
    if (typeof acl === "string" && PUBLIC_CANNED_ACLS.has(acl)) report(`acl is "${acl}"`);
    const grants = [...asArray(args.props.grants), ...asArray(asRecord(args.props.accessControlPolicy)?.grants)];
    grants.forEach((g, i) => {
      const grantee = asRecord(asRecord(g)?.grantee) ?? asRecord(g);
      const uri = grantee?.uri;
      if (typeof uri === "string" && PUBLIC_GRANTEE.test(uri)) report(`grant #${i + 1} gives ${String(asRecord(g)?.permission ?? asRecord(g)?.permissions ?? "access")} to ${uri}`);
    });
  },
});

export const kmsKeyRotation = resourcePolicy("kms-key-rotation", {
  description: "Symmetric KMS keys rotate automatically.",
  remediation: "set enableKeyRotation: true",
  types: ["aws:kms/key:Key"],
  validate: (args, report) => {
    const spec = args.props.customerMasterKeySpec ?? args.props.keySpec;
    const usage = args.props.keyUsage;
    // Asymmetric and HMAC keys cannot rotate automatically.
    if ((spec !== undefined && spec !== "SYMMETRIC_DEFAULT") || (usage !== undefined && usage !== "ENCRYPT_DECRYPT")) return;
    if (!isTrue(args.props.enableKeyRotation)) report("enableKeyRotation is not true");
  },
});

export const DATA_POLICIES: readonly PackPolicy[] = [
  s3PublicAccessBlock,
  s3TlsOnly,
  s3EncryptionConfigured,
  dynamodbPitrEnabled,
  dynamodbEncryptedWithCmk,
  dynamodbDeletionProtection,
  efsEncrypted,
  sqsEncrypted,
  sqsConsumedQueueHasDlq,
  secretsmanagerUsesCmk,
  kmsKeyRotation,
  s3NoPublicAcl,
  s3VersioningEnabled,
  encryptionUsesCmk,
];
