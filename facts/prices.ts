/**
 * The one price table (us-east-1, on-demand list prices, USD). The cost estimate derives
 * from here and nowhere else. Every price names where it comes from and when it was
 * recorded: "brief §7" is the field brief's table (public AWS and third-party pages,
 * 2026-11); the others are AWS's public pricing pages, recorded on the date given and not
 * re-fetched since (this machine has no internet).
 */
import type { InstanceTypeName } from "./instance-types";

export const HOURS_PER_MONTH = 730;

export interface Price {
  readonly usd: number;
  /** The unit the price is per. */
  readonly per: "hour" | "month" | "GB" | "GB-month" | "million requests" | "GB-second";
  readonly source: string;
  /** When the figure was recorded. */
  readonly date: string;
}

const BRIEF = "field brief §7 (/work/shared/BRIEF.md)";
const BRIEF_DATE = "2026-11";
const RECORDED = "2026-11-23";
const aws = (page: string) => `https://aws.amazon.com/${page}/pricing/`;
const brief = (usd: number, per: Price["per"]): Price => ({ usd, per, source: BRIEF, date: BRIEF_DATE });
const listed = (usd: number, per: Price["per"], page: string): Price => ({ usd, per, source: aws(page), date: RECORDED });
const ec2 = (usd: number): Price => ({ usd, per: "hour", source: "https://aws.amazon.com/ec2/pricing/on-demand/", date: RECORDED });

/** Linux on-demand instance-hours; every type of facts/instance-types.ts has one (a test checks). */
export const INSTANCE_HOUR: Readonly<Record<InstanceTypeName, Price>> = {
  "t4g.small": brief(0.0168, "hour"),
  "t4g.medium": brief(0.0336, "hour"),
  "t4g.large": ec2(0.0672),
  "t4g.xlarge": ec2(0.1344),
  "t4g.2xlarge": ec2(0.2688),
  "m7g.large": brief(0.0816, "hour"),
  "m7g.xlarge": ec2(0.1632),
  "m7g.2xlarge": ec2(0.3264),
  "r7g.large": ec2(0.1071),
  "r7g.xlarge": ec2(0.2142),
  "r7g.2xlarge": ec2(0.4284),
  "c7g.2xlarge": ec2(0.289),
  "t3.medium": brief(0.0416, "hour"),
  "t3.large": ec2(0.0832),
};

/** EBS storage by volume type. */
export const EBS_GB_MONTH: Readonly<Record<string, Price>> = {
  gp3: brief(0.08, "GB-month"),
  gp2: listed(0.1, "GB-month", "ebs"),
  io1: listed(0.125, "GB-month", "ebs"),
  io2: listed(0.125, "GB-month", "ebs"),
  st1: listed(0.045, "GB-month", "ebs"),
  sc1: listed(0.015, "GB-month", "ebs"),
  standard: listed(0.05, "GB-month", "ebs"),
};

export const PRICES = {
  ebsSnapshotGbMonth: listed(0.05, "GB-month", "ebs"),
  natGatewayHour: brief(0.045, "hour"),
  natGatewayPerGb: brief(0.045, "GB"),
  interfaceEndpointAzHour: brief(0.01, "hour"),
  interfaceEndpointPerGb: brief(0.01, "GB"),
  publicIpv4Hour: brief(0.005, "hour"),
  /** Cross-AZ traffic over a peering, each way; same-AZ is free. */
  peeringCrossAzPerGb: brief(0.01, "GB"),
  nlbHour: listed(0.0225, "hour", "elasticloadbalancing"),
  albHour: listed(0.0225, "hour", "elasticloadbalancing"),
  latticeServiceHour: brief(0.025, "hour"),
  latticePerGb: brief(0.025, "GB"),
  efsStandardGbMonth: brief(0.3, "GB-month"),
  /** AWS Backup of EFS, warm storage. */
  efsBackupGbMonth: listed(0.05, "GB-month", "backup"),
  s3StandardGbMonth: brief(0.023, "GB-month"),
  dynamoDbWritesPerMillion: brief(0.625, "million requests"),
  dynamoDbReadsPerMillion: brief(0.125, "million requests"),
  dynamoDbGbMonth: brief(0.25, "GB-month"),
  /** Continuous backups (point-in-time recovery), per GB of table. */
  dynamoDbPitrGbMonth: listed(0.2, "GB-month", "dynamodb"),
  lambdaRequestsPerMillion: brief(0.2, "million requests"),
  lambdaX86GbSecond: brief(0.0000166667, "GB-second"),
  lambdaArmGbSecond: listed(0.0000133334, "GB-second", "lambda"),
  sqsRequestsPerMillion: brief(0.4, "million requests"),
  kmsKeyMonth: listed(1, "month", "kms"),
  secretMonth: listed(0.4, "month", "secrets-manager"),
  ssmAdvancedParameterMonth: listed(0.05, "month", "systems-manager"),
  logsIngestPerGb: listed(0.5, "GB", "cloudwatch"),
  logsStoredGbMonth: listed(0.03, "GB-month", "cloudwatch"),
  /** A standard-resolution metric alarm. */
  alarmMonth: listed(0.1, "month", "cloudwatch"),
  /** A custom metric (a host's disk use, per mount; its boot state), the first 10,000. */
  customMetricMonth: listed(0.3, "month", "cloudwatch"),
  /** PutMetricData calls: $0.01 per 1,000. */
  metricRequestsPerMillion: listed(10, "million requests", "cloudwatch"),
  /** What replaces peering past its quota (README, peering scale). */
  transitGatewayAttachmentHour: listed(0.05, "hour", "transit-gateway"),
} as const satisfies Record<string, Price>;

/** Monthly cost of something billed by the hour, to the cent. */
export function monthly(hourly: Price | number): number {
  const usd = typeof hourly === "number" ? hourly : hourly.usd;
  return Math.round(usd * HOURS_PER_MONTH * 100) / 100;
}

/**
 * Resource types AWS does not bill for (or bills only through another resource, which
 * carries the price), each with why. A type in neither this table nor the estimate's rules
 * is reported as unpriced, never counted as zero.
 */
export const NO_CHARGE: Readonly<Record<string, string>> = {
  "tls:index/privateKey:PrivateKey": "made by Pulumi's TLS provider on the machine that runs `pulumi up`: no cloud resource",
  "tls:index/selfSignedCert:SelfSignedCert": "made locally by Pulumi's TLS provider: no cloud resource",
  "tls:index/certRequest:CertRequest": "made locally by Pulumi's TLS provider: no cloud resource",
  "tls:index/locallySignedCert:LocallySignedCert": "made locally by Pulumi's TLS provider: no cloud resource",
  "aws:ec2/vpc:Vpc": "VPCs are free; their NAT, endpoints and addresses are priced",
  "aws:ec2/subnet:Subnet": "subnets are free",
  "aws:ec2/subnetCidrReservation:SubnetCidrReservation": "subnet CIDR reservations are free",
  "aws:ec2/routeTable:RouteTable": "route tables are free",
  "aws:ec2/route:Route": "routes are free",
  "aws:ec2/routeTableAssociation:RouteTableAssociation": "free",
  "aws:ec2/internetGateway:InternetGateway": "free; inbound data is free and outbound data is billed as data transfer, not by the gateway",
  "aws:ec2/securityGroup:SecurityGroup": "security groups are free",
  "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup": "security groups are free",
  "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": "security-group rules are free",
  "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": "security-group rules are free",
  "aws:ec2/volumeAttachment:VolumeAttachment": "the volume carries the price",
  "aws:ec2/vpcPeeringConnectionAccepter:VpcPeeringConnectionAccepter": "the peering connection carries the data price",
  "aws:ec2/tag:Tag": "tags are free",
  "aws:iam/role:Role": "IAM is free",
  "aws:iam/rolePolicy:RolePolicy": "IAM is free",
  "aws:iam/policy:Policy": "IAM is free",
  "aws:iam/rolePolicyAttachment:RolePolicyAttachment": "IAM is free",
  "aws:iam/instanceProfile:InstanceProfile": "IAM is free",
  "aws:kms/alias:Alias": "aliases are free; the key carries the price",
  "aws:secretsmanager/secretVersion:SecretVersion": "versions are included in the secret's monthly price",
  "aws:secretsmanager/secretPolicy:SecretPolicy": "resource policies are free",
  "aws:s3/bucketPolicy:BucketPolicy": "bucket settings are free; the bucket carries storage",
  "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock": "bucket settings are free",
  "aws:s3/bucketOwnershipControls:BucketOwnershipControls": "bucket settings are free",
  "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration": "bucket settings are free (SSE-KMS with a bucket key keeps KMS requests negligible)",
  "aws:s3/bucketVersioning:BucketVersioning": "bucket settings are free; old versions are storage, expired after 30 days",
  "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration": "lifecycle rules are free",
  "aws:efs/accessPoint:AccessPoint": "access points are free",
  "aws:efs/fileSystemPolicy:FileSystemPolicy": "free",
  "aws:efs/mountTarget:MountTarget": "mount targets are free (their ENIs too)",
  "aws:lb/listener:Listener": "included in the load balancer's hour and capacity units",
  "aws:lb/targetGroup:TargetGroup": "included in the load balancer's price",
  "aws:lb/targetGroupAttachment:TargetGroupAttachment": "included in the load balancer's price",
  "aws:cloudwatch/eventRule:EventRule": "events from AWS services on the default bus are free",
  "aws:cloudwatch/eventTarget:EventTarget": "delivery to SQS is free; the queue carries request prices",
  "aws:lambda/eventSourceMapping:EventSourceMapping": "Lambda's SQS pollers are free; their requests are priced on the queue",
  "aws:sqs/queuePolicy:QueuePolicy": "free",
  "aws:sns/topic:Topic": "a topic is free; alarm notifications are a few requests and emails a month, inside SNS's free tier",
  "aws:sns/topicPolicy:TopicPolicy": "free",
  "aws:oam/sink:Sink": "cross-account observability: sharing metrics costs nothing (the alarms that read them are priced)",
  "aws:oam/sinkPolicy:SinkPolicy": "free",
  "aws:oam/link:Link": "cross-account observability: sharing metrics costs nothing",
  "aws:sqs/redriveAllowPolicy:RedriveAllowPolicy": "free",
  "aws:dlm/lifecyclePolicy:LifecyclePolicy": "Data Lifecycle Manager is free; its snapshots are priced on the volumes it targets",
  "aws:ssm/parameter:Parameter": "standard-tier parameters are free (advanced ones are priced)",
  "aws:vpclattice/serviceNetwork:ServiceNetwork": "service networks are free; services carry the hour",
  "aws:vpclattice/serviceNetworkVpcAssociation:ServiceNetworkVpcAssociation": "free",
  "aws:vpclattice/serviceNetworkServiceAssociation:ServiceNetworkServiceAssociation": "free",
  "aws:vpclattice/targetGroup:TargetGroup": "included in the service's price",
  "aws:vpclattice/listener:Listener": "included in the service's price",
  "aws:vpclattice/authPolicy:AuthPolicy": "a policy on the service network: free",
  "aws:vpclattice/targetGroupAttachment:TargetGroupAttachment": "included in the service's price",
  "aws:ram/resourceShare:ResourceShare": "AWS RAM is free",
  "aws:ram/resourceAssociation:ResourceAssociation": "AWS RAM is free",
  "aws:ram/principalAssociation:PrincipalAssociation": "AWS RAM is free",
  "aws:ram/resourceShareAccepter:ResourceShareAccepter": "AWS RAM is free",
  "aws:lambda/permission:Permission": "free",
  "kubernetes:helm.sh/v3:Release": "runs on the K3s host, whose instance is priced",
  "kubernetes:argoproj.io/v1alpha1:Application": "a Kubernetes object on the K3s host",
  "kubernetes:argoproj.io/v1alpha1:AppProject": "a Kubernetes object on the K3s host",
  "command:local:Command": "runs on the deployer's machine",
  "pulumi:providers:aws": "Pulumi bookkeeping, not a cloud resource",
  "pulumi:providers:kubernetes": "Pulumi bookkeeping, not a cloud resource",
  "pulumi:pulumi:Stack": "Pulumi bookkeeping, not a cloud resource",
  "pulumi:pulumi:StackReference": "reads another stack's outputs",
};
