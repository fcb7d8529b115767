/**
 * Safety: stateful resources survive a mistaken `pulumi destroy`, and every AWS
 * resource carries the project's tags.
 */
import type { PolicyResourceOptions, ResourceValidationArgs } from "@pulumi/policy";
import { MANAGED_BY, STACK_KINDS, TAG_KEYS } from "../../facts/project";
import { effectiveTags, tagMap } from "./provider";
import { TAGGABLE_TYPES } from "./taggable-types";
import { resourcePolicy, type PackResourcePolicy } from "./util";

/** Types whose deletion loses data or keys. */
export const STATEFUL_TYPES = [
  "aws:dynamodb/table:Table",
  "aws:efs/fileSystem:FileSystem",
  "aws:s3/bucket:Bucket",
  "aws:s3/bucketV2:BucketV2",
  "aws:secretsmanager/secret:Secret",
  "aws:kms/key:Key",
  "aws:kms/replicaKey:ReplicaKey",
  "aws:kms/externalKey:ExternalKey",
  "aws:dynamodb/tableReplica:TableReplica",
  // Data volumes (a root volume dies with its instance by design) and databases.
  "aws:ebs/volume:Volume",
  "aws:rds/instance:Instance",
  "aws:rds/cluster:Cluster",
] as const;

/**
 * Resource options as this pack reads them. `retainOnDelete` is not part of
 * @pulumi/policy's PolicyResourceOptions (the engine does not send it to analyzers), so
 * under `pulumi preview --policy-pack` only `protect` is visible; `clusterra policy check`
 * reads the deployment file's `retainOnDelete` and attaches it here.
 */
export type PackResourceOptions = PolicyResourceOptions & { retainOnDelete?: boolean };

export const statefulResourcesProtected = resourcePolicy("stateful-resources-protected", {
  description:
    "DynamoDB tables and table replicas, EFS file systems, S3 buckets, Secrets Manager secrets, KMS keys (replica and external keys too), " +
    "EBS data volumes and RDS instances and clusters " +
    "are protected (protect) or kept on delete (retainOnDelete). " +
    "Under the Pulumi CLI only protect is visible to policies.",
  remediation: "pass { protect: true } (or retainOnDelete: true) in the resource options",
  types: STATEFUL_TYPES,
  validate: (args, report) => {
    const opts = args.opts as PackResourceOptions;
    if (!opts.protect && !opts.retainOnDelete) report("neither protect nor retainOnDelete is set: a destroy or replacement deletes its data");
  },
});

/** Whether an AWS resource is taggable: a type of the generated table, or one with a `tags` input. */
export function isTaggable(args: Pick<ResourceValidationArgs, "type" | "props">): boolean {
  if (!args.type.startsWith("aws:")) return false;
  return TAGGABLE_TYPES.has(args.type) || args.props.tags !== undefined;
}

/** Tag problems of a resource's effective tags (provider default tags + own tags). */
export function tagProblems(tags: Readonly<Record<string, string>>): string[] {
  const problems: string[] = [];
  const managedBy = tags[TAG_KEYS.managedBy];
  if (managedBy !== MANAGED_BY) problems.push(managedBy === undefined ? `${TAG_KEYS.managedBy} is missing` : `${TAG_KEYS.managedBy} is "${managedBy}", not "${MANAGED_BY}"`);
  if (!tags[TAG_KEYS.environment]) problems.push(`${TAG_KEYS.environment} is missing`);
  const kind = tags[TAG_KEYS.stackKind];
  if (!kind) problems.push(`${TAG_KEYS.stackKind} is missing`);
  else if (!(STACK_KINDS as readonly string[]).includes(kind)) problems.push(`${TAG_KEYS.stackKind} is "${kind}", not one of ${STACK_KINDS.join(", ")}`);
  if (kind === "tenant" && !tags[TAG_KEYS.tenant]) problems.push(`${TAG_KEYS.tenant} is missing in a tenant stack`);
  return problems;
}

/** Auto Scaling groups take a `tags` list ({key, value, propagateAtLaunch}); the provider's defaultTags do not apply to them. */
const ASG = "aws:autoscaling/group:Group";

export const requiredTags = resourcePolicy("required-tags", {
  description:
    `Every taggable AWS resource carries ${TAG_KEYS.managedBy}=${MANAGED_BY}, ${TAG_KEYS.environment} and ${TAG_KEYS.stackKind} ` +
    `(plus ${TAG_KEYS.tenant} in tenant stacks), from the provider's defaultTags merged with its own tags; Auto Scaling groups, which ` +
    "the provider's defaultTags do not reach, carry them in their own tags list.",
  remediation: "create resources with the stack's explicit AWS provider, whose defaultTags come from stackTags() in facts/project.ts",
  validate: (args, report) => {
    if (args.type === ASG) {
      const problems = tagProblems(tagMap(args.props.tags));
      if (problems.length > 0) report(`tags (an Auto Scaling group gets none of the provider's defaultTags): ${problems.join("; ")}`);
      return;
    }
    if (!isTaggable(args)) return;
    const problems = tagProblems(effectiveTags(args.provider, args.props.tags));
    if (problems.length > 0) report(`tags: ${problems.join("; ")}`);
  },
});

export const SAFETY_POLICIES: readonly PackResourcePolicy[] = [statefulResourcesProtected, requiredTags];
