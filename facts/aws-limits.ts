/**
 * AWS's (and Kubernetes') documented limits on values this program sets, as data: a value
 * over one is a plan error (the policy pack's checks and configuration read them), never a
 * deploy-time refusal.
 */
export interface DocumentedLimit {
  readonly max: number;
  readonly unit: "bytes" | "characters";
  /** What the limit bounds. */
  readonly what: string;
  /** Where AWS documents it. */
  readonly source: string;
}

export const AWS_LIMITS = {
  ssmStandardParameter: { max: 4096, unit: "characters", what: "an SSM parameter's value in the Standard tier", source: "Systems Manager quotas: \"Parameter value size, standard tier: 4 KB\"" },
  ssmAdvancedParameter: { max: 8192, unit: "characters", what: "an SSM parameter's value in the Advanced tier (Intelligent-Tiering promotes to it)", source: "Systems Manager quotas: \"Parameter value size, advanced tier: 8 KB\"" },
  userData: { max: 16384, unit: "bytes", what: "EC2 user data before base64 (an instance's, a launch template's, a spot request's, a launch configuration's)", source: "EC2 API reference, RunInstances UserData: \"User data is limited to 16 KB\"" },
} as const satisfies Record<string, DocumentedLimit>;

/** Kubernetes' own limits on objects the fleet makes: over one, the API server refuses the object at sync. */
export const KUBERNETES_LIMITS = {
  configMapData: { max: 1048576, unit: "bytes", what: "a ConfigMap's data, all keys together", source: "Kubernetes documentation, ConfigMaps: \"The data stored in a ConfigMap cannot exceed 1 MiB\"" },
} as const satisfies Record<string, DocumentedLimit>;

/** How a limit measures a value. */
export type LimitMeasure =
  /** The value's length in characters. */
  | "characters"
  /** Its UTF-8 bytes. */
  | "bytes"
  /** Characters other than whitespace (IAM counts a policy document so). */
  | "characters, whitespace aside"
  /** Entries of a map (tags). */
  | "entries";

export interface ResourceLimit {
  /** Pulumi resource types whose `field` it bounds. */
  readonly types: readonly string[];
  readonly field: string;
  readonly measure: LimitMeasure;
  readonly max: number;
  /** What AWS calls it, and where AWS documents it. */
  readonly source: string;
}

const IAM_ROLE = "aws:iam/role:Role";
const IAM_POLICY_DOC = "IAM and AWS STS quotas";

/**
 * Per-resource limits on the values this program sets: names, policy documents, descriptions,
 * tags. Each value of each planned resource is checked against its row (policy
 * `within-aws-limits`, and the one line `clusterra plan` prints).
 */
export const RESOURCE_LIMITS: readonly ResourceLimit[] = [
  { types: [IAM_ROLE], field: "name", measure: "characters", max: 64, source: `${IAM_POLICY_DOC}: role name, 64 characters` },
  { types: [IAM_ROLE], field: "assumeRolePolicy", measure: "characters, whitespace aside", max: 2048, source: `${IAM_POLICY_DOC}: role trust policy length, 2,048 characters (the default quota)` },
  { types: [IAM_ROLE], field: "description", measure: "characters", max: 1000, source: "IAM API reference, CreateRole Description: 1,000 characters" },
  { types: ["aws:iam/policy:Policy"], field: "name", measure: "characters", max: 128, source: `${IAM_POLICY_DOC}: policy name, 128 characters` },
  { types: ["aws:iam/policy:Policy"], field: "policy", measure: "characters, whitespace aside", max: 6144, source: `${IAM_POLICY_DOC}: managed policy size, 6,144 characters` },
  { types: ["aws:iam/rolePolicy:RolePolicy"], field: "name", measure: "characters", max: 128, source: `${IAM_POLICY_DOC}: policy name, 128 characters` },
  { types: ["aws:iam/instanceProfile:InstanceProfile"], field: "name", measure: "characters", max: 128, source: `${IAM_POLICY_DOC}: instance profile name, 128 characters` },
  { types: ["aws:s3/bucket:Bucket", "aws:s3/bucketV2:BucketV2"], field: "bucket", measure: "characters", max: 63, source: "S3 bucket naming rules: 3 to 63 characters" },
  { types: ["aws:s3/bucketPolicy:BucketPolicy"], field: "policy", measure: "bytes", max: 20480, source: "S3 bucket policy: 20 KB" },
  { types: ["aws:kms/key:Key"], field: "policy", measure: "bytes", max: 32768, source: "KMS quotas: key policy document size, 32 KB" },
  { types: ["aws:kms/alias:Alias"], field: "name", measure: "characters", max: 256, source: "KMS API reference, CreateAlias AliasName: 256 characters" },
  { types: ["aws:lambda/function:Function"], field: "name", measure: "characters", max: 64, source: "Lambda API reference, CreateFunction FunctionName: 64 characters" },
  { types: ["aws:cloudwatch/eventRule:EventRule"], field: "name", measure: "characters", max: 64, source: "EventBridge API reference, PutRule Name: 64 characters" },
  { types: ["aws:cloudwatch/eventRule:EventRule"], field: "description", measure: "characters", max: 512, source: "EventBridge API reference, PutRule Description: 512 characters" },
  { types: ["aws:sqs/queue:Queue"], field: "name", measure: "characters", max: 80, source: "SQS quotas: queue name, 80 characters" },
  { types: ["aws:sns/topic:Topic"], field: "name", measure: "characters", max: 256, source: "SNS API reference, CreateTopic Name: 256 characters" },
  { types: ["aws:dynamodb/table:Table"], field: "name", measure: "characters", max: 255, source: "DynamoDB quotas: table name, 255 characters" },
  { types: ["aws:cloudwatch/metricAlarm:MetricAlarm"], field: "name", measure: "characters", max: 255, source: "CloudWatch API reference, PutMetricAlarm AlarmName: 255 characters" },
  { types: ["aws:cloudwatch/logGroup:LogGroup"], field: "name", measure: "characters", max: 512, source: "CloudWatch Logs API reference, CreateLogGroup: 512 characters" },
  { types: ["aws:secretsmanager/secret:Secret"], field: "name", measure: "characters", max: 512, source: "Secrets Manager API reference, CreateSecret Name: 512 characters" },
  { types: ["aws:secretsmanager/secret:Secret"], field: "description", measure: "characters", max: 2048, source: "Secrets Manager API reference, CreateSecret Description: 2,048 characters" },
  // 1,011 counts the ARN before the name too: the longest prefix (arn:aws-us-gov:ssm:us-gov-west-1:<account>:parameter) is 56.
  { types: ["aws:ssm/parameter:Parameter"], field: "name", measure: "characters", max: 1011 - 56, source: "Systems Manager quotas: parameter name, 1,011 characters with the ARN before it" },
  { types: ["aws:ec2/securityGroup:SecurityGroup"], field: "name", measure: "characters", max: 255, source: "EC2 API reference, CreateSecurityGroup GroupName: 255 characters" },
  { types: ["aws:ec2/securityGroup:SecurityGroup", "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"], field: "description", measure: "characters", max: 255, source: "EC2 API reference: a security group's and a rule's description, 255 characters" },
  { types: ["aws:vpclattice/service:Service"], field: "name", measure: "characters", max: 40, source: "VPC Lattice API reference, CreateService name: 3 to 40 characters" },
  { types: ["aws:vpclattice/serviceNetwork:ServiceNetwork"], field: "name", measure: "characters", max: 63, source: "VPC Lattice API reference, CreateServiceNetwork name: 3 to 63 characters" },
  { types: ["aws:vpclattice/targetGroup:TargetGroup"], field: "name", measure: "characters", max: 128, source: "VPC Lattice API reference, CreateTargetGroup name: 3 to 128 characters" },
  { types: ["aws:ram/resourceShare:ResourceShare"], field: "name", measure: "characters", max: 255, source: "RAM API reference, CreateResourceShare name" },
];

/** A role's inline policies, all of them together (aws:iam/rolePolicy resources and the role's inlinePolicies), as IAM counts them. */
export const ROLE_INLINE_POLICIES = { max: 10240, measure: "characters, whitespace aside", source: `${IAM_POLICY_DOC}: role inline policy size, 10,240 characters, all of a role's together` } as const;

/** Tags on any resource: at most 50 user tags, keys of 128 characters, values of 256 ("aws:" tags excepted). */
export const TAG_LIMITS = { entries: 50, keyCharacters: 128, valueCharacters: 256, source: "Tagging AWS resources: 50 tags per resource, key 128 and value 256 Unicode characters" } as const;

/** Rules per security group, each direction (the default quota; IPv4 and IPv6 counted apart). */
export const SECURITY_GROUP_RULES = { perDirection: 60, source: "Amazon VPC quotas: inbound or outbound rules per security group, 60" } as const;

/** An adjustable quota: what an account has until it asks, and the most AWS grants. */
export interface AdjustableQuota {
  readonly default: number;
  /** The most a quota increase grants (undefined: AWS documents none apart). */
  readonly max?: number;
  /** What AWS calls it in Service Quotas. */
  readonly name: string;
  readonly source: string;
}

const VPC_QUOTAS_SOURCE = "Amazon VPC quotas, docs.aws.amazon.com/vpc/latest/userguide/amazon-vpc-limits.html";

/**
 * Amazon VPC quotas that bound how many tenants one central takes: each tenant is one
 * active peering into central's VPC, one route in its private route table and one rule per
 * contract flow on its host's security group (config/capacity.ts).
 */
export const VPC_QUOTAS = {
  peeringsPerVpc: { default: 50, max: 125, name: "Active VPC peering connections per VPC", source: VPC_QUOTAS_SOURCE },
  routesPerRouteTable: { default: 50, max: 1000, name: "Routes per route table", source: VPC_QUOTAS_SOURCE },
  rulesPerSecurityGroup: { default: SECURITY_GROUP_RULES.perDirection, name: "Inbound or outbound rules per security group", source: VPC_QUOTAS_SOURCE },
} as const satisfies Record<string, AdjustableQuota>;

/** The name limit AWS sets on a resource type (its row above). */
export function nameLimit(type: string, field = "name"): number {
  const row = RESOURCE_LIMITS.find((l) => l.types.includes(type) && l.field === field);
  if (!row) throw new Error(`facts/aws-limits.ts has no limit on ${type}'s ${field}`);
  return row.max;
}
