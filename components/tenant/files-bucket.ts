import * as pulumi from "@pulumi/pulumi";
import * as s3 from "@pulumi/aws/s3";
import * as iam from "@pulumi/aws/iam";
import { policyDocument, toJson, type PolicyDocument } from "../security/iam";
import { FILES_SESSION_SECONDS, tenantFilesBucketName, UID_SESSION_TAG, tenantFilesExternalId, tenantFilesRoleName } from "../../facts/project";

/** Prefixes of the files bucket: one per user, and one every user of the tenant shares. */
export const FILES_PREFIXES = { user: "users", shared: "shared" } as const;

/** Days before noncurrent versions and incomplete uploads go. */
const NONCURRENT_DAYS = 30;
const INCOMPLETE_UPLOAD_DAYS = 7;

/**
 * What a user's session may do in the files bucket: list and use its own prefix
 * users/<uid>/ (the uid from the session tag, never from the request) and shared/, and
 * nothing else. A session without the tag matches no prefix.
 */
export function filesAccessPolicy(bucketArn: string): PolicyDocument {
  const own = `${FILES_PREFIXES.user}/\${aws:PrincipalTag/${UID_SESSION_TAG}}/`;
  const shared = `${FILES_PREFIXES.shared}/`;
  return policyDocument(
    {
      Sid: "ListOwnAndSharedPrefixes",
      Effect: "Allow",
      Action: "s3:ListBucket",
      Resource: bucketArn,
      Condition: { StringLike: { "s3:prefix": [`${own}*`, `${shared}*`, own, shared] } },
    },
    {
      Sid: "UseOwnAndSharedObjects",
      Effect: "Allow",
      Action: ["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:GetObjectVersion", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"],
      Resource: [`${bucketArn}/${own}*`, `${bucketArn}/${shared}*`],
    },
  );
}

export interface FilesBucketArgs {
  /** Tenant id: the bucket's name. */
  readonly tenantId: string;
  readonly environment: string;
  /** The tenant account (bucket names are global). */
  readonly accountId: pulumi.Input<string>;
  readonly region: string;
  /** Stack key. */
  readonly kmsKeyArn: pulumi.Input<string>;
  readonly partition: string;
  /** Central's cluster-api role: the only principal that may open a user's files session. */
  readonly clusterApiRoleArn: string;
}

/**
 * Who may open a files session: central's cluster-api role only, with the tenant's ExternalId,
 * and only by tagging the session with the user's uid (which filesAccessPolicy confines it
 * to); no other session tag may be set.
 */
export function filesRoleTrust(clusterApiRoleArn: string, externalId: string): PolicyDocument {
  return policyDocument(
    {
      Sid: "ClusterApiAssumesWithExternalId",
      Effect: "Allow",
      Principal: { AWS: clusterApiRoleArn },
      Action: "sts:AssumeRole",
      Condition: { StringEquals: { "sts:ExternalId": externalId } },
    },
    {
      Sid: "OnlyTheUidTag",
      Effect: "Allow",
      Principal: { AWS: clusterApiRoleArn },
      Action: "sts:TagSession",
      Condition: {
        ArnEquals: { "aws:PrincipalArn": clusterApiRoleArn },
        Null: { [`aws:RequestTag/${UID_SESSION_TAG}`]: "false" },
        "ForAllValues:StringEquals": { "aws:TagKeys": [UID_SESSION_TAG] },
      },
    },
  );
}

/**
 * The tenant's files bucket: private (all four public-access blocks, owner-enforced
 * objects), SSE-KMS with the stack key and a bucket key, versioned, TLS-only, old
 * versions and incomplete uploads expired, protected. Layout users/<uid>/ and shared/.
 */
export class FilesBucket extends pulumi.ComponentResource {
  public readonly bucketName: pulumi.Output<string>;
  public readonly bucketArn: pulumi.Output<string>;
  /** The role cluster-api assumes for a user's files session. */
  public readonly filesRoleArn: pulumi.Output<string>;

  constructor(name: string, args: FilesBucketArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:tenant:FilesBucket", name, {}, opts);
    const child = { parent: this };
    const bucket = new s3.Bucket(
      `${name}`,
      // The account id keeps the global name unique; region and tenant make it readable.
      { bucket: pulumi.output(args.accountId).apply((account) => tenantFilesBucketName(args.environment, args.tenantId, account)), forceDestroy: false },
      { parent: this, protect: true },
    );
    new s3.BucketPublicAccessBlock(`${name}`, { bucket: bucket.id, blockPublicAcls: true, blockPublicPolicy: true, ignorePublicAcls: true, restrictPublicBuckets: true }, child);
    new s3.BucketOwnershipControls(`${name}`, { bucket: bucket.id, rule: { objectOwnership: "BucketOwnerEnforced" } }, child);
    new s3.BucketServerSideEncryptionConfiguration(
      `${name}`,
      { bucket: bucket.id, rules: [{ applyServerSideEncryptionByDefault: { sseAlgorithm: "aws:kms", kmsMasterKeyId: args.kmsKeyArn }, bucketKeyEnabled: true }] },
      child,
    );
    const versioning = new s3.BucketVersioning(`${name}`, { bucket: bucket.id, versioningConfiguration: { status: "Enabled" } }, child);
    new s3.BucketLifecycleConfiguration(
      `${name}`,
      {
        bucket: bucket.id,
        rules: [
          { id: "expire-old-versions", status: "Enabled", filter: {}, noncurrentVersionExpiration: { noncurrentDays: NONCURRENT_DAYS } },
          { id: "abort-incomplete-uploads", status: "Enabled", filter: {}, abortIncompleteMultipartUpload: { daysAfterInitiation: INCOMPLETE_UPLOAD_DAYS } },
        ],
      },
      { parent: this, dependsOn: [versioning] },
    );
    new s3.BucketPolicy(
      `${name}`,
      {
        bucket: bucket.id,
        policy: bucket.arn.apply((arn) =>
          toJson(policyDocument({ Sid: "DenyWithoutTls", Effect: "Deny", Principal: "*", Action: "s3:*", Resource: [arn, `${arn}/*`], Condition: { Bool: { "aws:SecureTransport": "false" } } })),
        ),
      },
      child,
    );
    this.bucketName = bucket.bucket;
    this.bucketArn = bucket.arn;
    const role = new iam.Role(
      `${name}-files-role`,
      {
        name: tenantFilesRoleName(args.environment, args.tenantId),
        description: `a user's files session in tenant ${args.tenantId}'s bucket (cluster-api, tagged with the user's uid)`,
        maxSessionDuration: FILES_SESSION_SECONDS,
        assumeRolePolicy: toJson(filesRoleTrust(args.clusterApiRoleArn, tenantFilesExternalId(args.environment, args.tenantId))),
      },
      child,
    );
    new iam.RolePolicy(`${name}-files-access`, { role: role.name, policy: bucket.arn.apply((a) => toJson(filesAccessPolicy(a))) }, child);
    // Objects are SSE-KMS with the stack key: a session reads and writes them through S3 only.
    new iam.RolePolicy(
      `${name}-files-key`,
      {
        role: role.name,
        policy: pulumi.output(args.kmsKeyArn).apply((key) =>
          toJson(policyDocument({ Sid: "ObjectsThroughS3Only", Effect: "Allow", Action: ["kms:Decrypt", "kms:GenerateDataKey"], Resource: key, Condition: { StringEquals: { "kms:ViaService": `s3.${args.region}.amazonaws.com` } } })),
        ),
      },
      child,
    );
    this.filesRoleArn = role.arn;
    this.registerOutputs({ bucketName: this.bucketName, bucketArn: this.bucketArn, filesRoleArn: this.filesRoleArn });
  }
}
