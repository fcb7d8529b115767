/**
 * IAM documents of the customer cluster, as pure functions of the names they scope to:
 * the K3s server's role (Session Manager, its kubeconfig, Karpenter's controller, Cilium's
 * ENI operator), the worker node role, External Secrets' and edge-agent's roles. Tests
 * evaluate them with an IAM simulator; components only attach them.
 */
import { clusterOwnedTag } from "../../facts/tenant-cluster";
import { arn, policyDocument, type PolicyDocument, type Statement } from "../security/iam";
export { sessionManagerStatements, writeSecureParameterStatements } from "../security/iam";

/** Where and for whom a document grants. */
export interface ClusterScope {
  readonly partition: string;
  readonly region: string;
  /** The tenant account. */
  readonly accountId: string;
  /** The cluster's name: Karpenter's and Cilium's tags carry it. */
  readonly clusterName: string;
}

const ec2Arn = (s: ClusterScope, resource: string, account: string = s.accountId) => arn(s.partition, "ec2", s.region, account, resource);
const clusterTag = (s: ClusterScope) => clusterOwnedTag(s.clusterName);
const inRegion = (s: ClusterScope) => ({ StringEquals: { "aws:RequestedRegion": s.region } });

/** Reading one SecureString parameter (the agent token), decrypting only through SSM for that parameter. */
export function readSecureParameterStatements(sid: string, parameterArn: string, kmsKeyArn: string): Statement[] {
  return [
    { Sid: `${sid}Read`, Effect: "Allow", Action: "ssm:GetParameter", Resource: parameterArn },
    { Sid: `${sid}Decrypt`, Effect: "Allow", Action: "kms:Decrypt", Resource: kmsKeyArn, Condition: { StringEquals: { "kms:EncryptionContext:PARAMETER_ARN": parameterArn } } },
  ];
}

/**
 * Mounting the tenant's EFS through its access point, with IAM authorization (`-o iam`), as
 * root: the Prolog makes each user's directory with their uid (components/identity/user-directories.ts).
 */
export function efsClientStatements(fileSystemArn: string, accessPointArn: string): Statement[] {
  return [
    {
      Sid: "MountSharedFileSystem",
      Effect: "Allow",
      Action: ["elasticfilesystem:ClientMount", "elasticfilesystem:ClientWrite", "elasticfilesystem:ClientRootAccess"],
      Resource: fileSystemArn,
      Condition: { StringEquals: { "elasticfilesystem:AccessPointArn": accessPointArn } },
    },
  ];
}

/**
 * Karpenter's controller, derived from the upstream v1.14.1 CloudFormation template and
 * scoped to this account and cluster. Dropped off EKS: eks:DescribeCluster (clusterEndpoint
 * is set), zonal shift (an EKS feature) and instance-profile management (the EC2NodeClass
 * names the profile this stack creates). Kept: pricing (live Spot/on-demand prices; the
 * cluster has egress) and SSM reads of AWS's public AMI parameters.
 */
export function karpenterControllerStatements(s: ClusterScope, p: { vpcArn: string; nodeRoleArn: string; instanceProfileArn: string; interruptionQueueArn: string; queueKmsKeyArn: string }): Statement[] {
  const owned = { [`aws:RequestTag/${clusterTag(s)}`]: "owned", "aws:RequestTag/eks:eks-cluster-name": s.clusterName };
  const launched = ["fleet/*", "instance/*", "volume/*", "network-interface/*", "launch-template/*", "spot-instances-request/*"].map((r) => ec2Arn(s, r));
  return [
    {
      // Amazon's own images only (AL2023): upstream allows any image.
      Sid: "AllowScopedEC2InstanceAccessActions",
      Effect: "Allow",
      Action: ["ec2:RunInstances", "ec2:CreateFleet"],
      Resource: ec2Arn(s, "image/*", ""),
      Condition: { StringEquals: { "ec2:Owner": "amazon" } },
    },
    {
      // Upstream allows every subnet and group of every account; these are this VPC's. No
      // snapshot, capacity reservation or placement group: the EC2NodeClass uses none.
      Sid: "AllowScopedEC2NetworkAccessActions",
      Effect: "Allow",
      Action: ["ec2:RunInstances", "ec2:CreateFleet"],
      Resource: [ec2Arn(s, "security-group/*"), ec2Arn(s, "subnet/*")],
      Condition: { StringEquals: { "ec2:Vpc": p.vpcArn } },
    },
    {
      Sid: "AllowScopedEC2LaunchTemplateAccessActions",
      Effect: "Allow",
      Action: ["ec2:RunInstances", "ec2:CreateFleet"],
      Resource: ec2Arn(s, "launch-template/*"),
      Condition: { StringEquals: { [`aws:ResourceTag/${clusterTag(s)}`]: "owned" }, StringLike: { "aws:ResourceTag/karpenter.sh/nodepool": "*" } },
    },
    {
      Sid: "AllowScopedEC2InstanceActionsWithTags",
      Effect: "Allow",
      Action: ["ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"],
      Resource: launched,
      Condition: { StringEquals: owned, StringLike: { "aws:RequestTag/karpenter.sh/nodepool": "*" } },
    },
    {
      Sid: "AllowScopedResourceCreationTagging",
      Effect: "Allow",
      Action: "ec2:CreateTags",
      Resource: launched,
      Condition: { StringEquals: { ...owned, "ec2:CreateAction": ["RunInstances", "CreateFleet", "CreateLaunchTemplate"] }, StringLike: { "aws:RequestTag/karpenter.sh/nodepool": "*" } },
    },
    {
      Sid: "AllowScopedResourceTagging",
      Effect: "Allow",
      Action: "ec2:CreateTags",
      Resource: ec2Arn(s, "instance/*"),
      Condition: {
        StringEquals: { [`aws:ResourceTag/${clusterTag(s)}`]: "owned" },
        StringLike: { "aws:ResourceTag/karpenter.sh/nodepool": "*" },
        StringEqualsIfExists: { "aws:RequestTag/eks:eks-cluster-name": s.clusterName },
        "ForAllValues:StringEquals": { "aws:TagKeys": ["eks:eks-cluster-name", "karpenter.sh/nodeclaim", "Name"] },
      },
    },
    {
      Sid: "AllowScopedDeletion",
      Effect: "Allow",
      Action: ["ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"],
      Resource: [ec2Arn(s, "instance/*"), ec2Arn(s, "launch-template/*")],
      Condition: { StringEquals: { [`aws:ResourceTag/${clusterTag(s)}`]: "owned" }, StringLike: { "aws:ResourceTag/karpenter.sh/nodepool": "*" } },
    },
    {
      Sid: "AllowRegionalReadActions",
      Effect: "Allow",
      // Describe calls take no resource ARNs.
      Action: ["ec2:DescribeCapacityReservations", "ec2:DescribeImages", "ec2:DescribeInstances", "ec2:DescribeInstanceStatus", "ec2:DescribeInstanceTypeOfferings",
        "ec2:DescribeInstanceTypes", "ec2:DescribeLaunchTemplates", "ec2:DescribePlacementGroups", "ec2:DescribeSecurityGroups", "ec2:DescribeSpotPriceHistory", "ec2:DescribeSubnets"],
      Resource: "*",
      Condition: inRegion(s),
    },
    { Sid: "AllowSSMReadActions", Effect: "Allow", Action: "ssm:GetParameter", Resource: arn(s.partition, "ssm", s.region, "", "parameter/aws/service/*") },
    // The Price List API takes no resource ARNs.
    { Sid: "AllowPricingReadActions", Effect: "Allow", Action: "pricing:GetProducts", Resource: "*" },
    {
      Sid: "AllowPassingInstanceRole",
      Effect: "Allow",
      Action: "iam:PassRole",
      Resource: p.nodeRoleArn,
      Condition: { StringEquals: { "iam:PassedToService": [s.partition === "aws-cn" ? "ec2.amazonaws.com.cn" : "ec2.amazonaws.com"] } },
    },
    { Sid: "AllowInstanceProfileReadActions", Effect: "Allow", Action: "iam:GetInstanceProfile", Resource: p.instanceProfileArn },
    // Listing takes no resource ARN.
    { Sid: "AllowUnscopedInstanceProfileListAction", Effect: "Allow", Action: "iam:ListInstanceProfiles", Resource: "*" },
    { Sid: "AllowInterruptionQueueActions", Effect: "Allow", Action: ["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"], Resource: p.interruptionQueueArn },
    {
      // Workers' root volumes are encrypted with the stack key (EC2NodeClass): EC2 uses it on
      // the launching principal's behalf, through EC2 only (Karpenter's troubleshooting: a
      // node terminates before ready on a failed encrypted EBS volume otherwise).
      Sid: "AllowEncryptedVolumesWithStackKey",
      Effect: "Allow",
      Action: ["kms:GenerateDataKeyWithoutPlaintext", "kms:Decrypt", "kms:ReEncryptFrom", "kms:ReEncryptTo", "kms:DescribeKey"],
      Resource: p.queueKmsKeyArn,
      Condition: { StringEquals: { "kms:ViaService": `ec2.${s.region}.amazonaws.com` } },
    },
    {
      Sid: "AllowVolumeGrantsOnStackKey",
      Effect: "Allow",
      Action: "kms:CreateGrant",
      Resource: p.queueKmsKeyArn,
      Condition: { StringEquals: { "kms:ViaService": `ec2.${s.region}.amazonaws.com` }, Bool: { "kms:GrantIsForAWSResource": "true" } },
    },
    {
      // The queue is encrypted with the stack key: reading it decrypts through SQS only.
      Sid: "AllowInterruptionQueueDecrypt",
      Effect: "Allow",
      Action: "kms:Decrypt",
      Resource: p.queueKmsKeyArn,
      Condition: { StringEquals: { "kms:ViaService": `sqs.${s.region}.amazonaws.com` } },
    },
  ];
}

/**
 * Cilium's operator in ENI mode: reads the VPC, and creates, attaches, addresses and
 * deletes ENIs only inside this VPC, on instances of this cluster. The prefix-list reads
 * of Cilium's documented policy serve only `toGroups` network policies on AWS prefix
 * lists, which the platform does not use: left out.
 */
export function ciliumOperatorStatements(s: ClusterScope, p: { vpcArn: string }): Statement[] {
  const inVpc = { StringEquals: { "ec2:Vpc": p.vpcArn } };
  return [
    {
      Sid: "CiliumReadNetwork",
      Effect: "Allow",
      // Describe calls take no resource ARNs.
      Action: ["ec2:DescribeInstanceTypes", "ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets", "ec2:DescribeVpcs", "ec2:DescribeRouteTables",
        "ec2:DescribeSecurityGroups", "ec2:DescribeTags"],
      Resource: "*",
      Condition: inRegion(s),
    },
    { Sid: "CiliumCreateEniInVpc", Effect: "Allow", Action: "ec2:CreateNetworkInterface", Resource: [ec2Arn(s, "subnet/*"), ec2Arn(s, "security-group/*")], Condition: inVpc },
    // The new interface itself has no ARN yet to condition on; subnet and group pin the VPC.
    { Sid: "CiliumCreateEni", Effect: "Allow", Action: "ec2:CreateNetworkInterface", Resource: ec2Arn(s, "network-interface/*") },
    {
      Sid: "CiliumTagNewEni",
      Effect: "Allow",
      Action: "ec2:CreateTags",
      Resource: ec2Arn(s, "network-interface/*"),
      Condition: { StringEquals: { "ec2:CreateAction": "CreateNetworkInterface" } },
    },
    {
      Sid: "CiliumManageEniInVpc",
      Effect: "Allow",
      Action: ["ec2:AttachNetworkInterface", "ec2:DeleteNetworkInterface", "ec2:ModifyNetworkInterfaceAttribute", "ec2:AssignPrivateIpAddresses", "ec2:UnassignPrivateIpAddresses"],
      Resource: ec2Arn(s, "network-interface/*"),
      Condition: inVpc,
    },
    {
      Sid: "CiliumAttachToClusterInstances",
      Effect: "Allow",
      Action: ["ec2:AttachNetworkInterface", "ec2:ModifyNetworkInterfaceAttribute"],
      Resource: ec2Arn(s, "instance/*"),
      Condition: { StringEquals: { [`aws:ResourceTag/${clusterTag(s)}`]: "owned" } },
    },
    { Sid: "CiliumEniSecurityGroups", Effect: "Allow", Action: "ec2:ModifyNetworkInterfaceAttribute", Resource: [ec2Arn(s, "security-group/*"), ec2Arn(s, "subnet/*")], Condition: inVpc },
  ];
}

/** Assuming the roles of platform pods that run on the server's host network. */
export function assumePodRolesStatement(roleArns: readonly string[]): Statement {
  return { Sid: "AssumePlatformPodRoles", Effect: "Allow", Action: "sts:AssumeRole", Resource: [...roleArns] };
}

/** The ECR namespace of the platform's private images (and pull-through caches) in a tenant account. */
export const ECR_NAMESPACE = "clusterra";

/** ECR pulls from the platform's repositories in this account. */
export function ecrPullStatements(s: Pick<ClusterScope, "partition" | "region" | "accountId">): Statement[] {
  return [
    // Registry tokens take no resource ARN.
    { Sid: "EcrAuthorization", Effect: "Allow", Action: "ecr:GetAuthorizationToken", Resource: "*" },
    {
      Sid: "EcrPull",
      Effect: "Allow",
      Action: ["ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer", "ecr:BatchCheckLayerAvailability"],
      Resource: arn(s.partition, "ecr", s.region, s.accountId, `repository/${ECR_NAMESPACE}/*`),
    },
  ];
}

/**
 * External Secrets reads this tenant's Slurm keys from central's Secrets Manager, and
 * nothing else: two secret ARNs, decrypted only through Secrets Manager.
 */
export function externalSecretsPolicy(p: { region: string; secretArns: readonly string[]; centralKmsKeyArn: string }): PolicyDocument {
  return policyDocument(
    { Sid: "ReadTenantSlurmKeys", Effect: "Allow", Action: ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"], Resource: [...p.secretArns] },
    {
      Sid: "DecryptThroughSecretsManager",
      Effect: "Allow",
      Action: "kms:Decrypt",
      Resource: p.centralKmsKeyArn,
      Condition: { StringEquals: { "kms:ViaService": `secretsmanager.${p.region}.amazonaws.com` } },
    },
  );
}

/** The server publishes central ArgoCD's token for this cluster into its one secret in central. */
export function argocdCredentialPolicy(p: { region: string; secretArn: string; centralKmsKeyArn: string }): PolicyDocument {
  return policyDocument(
    { Sid: "PublishArgoCdCredential", Effect: "Allow", Action: "secretsmanager:PutSecretValue", Resource: p.secretArn },
    {
      Sid: "EncryptThroughSecretsManager",
      Effect: "Allow",
      Action: "kms:GenerateDataKey",
      Resource: p.centralKmsKeyArn,
      Condition: { StringEquals: { "kms:ViaService": `secretsmanager.${p.region}.amazonaws.com` } },
    },
  );
}

/**
 * The edge-agent reports node state to cluster-api: it reads instance state, and proves
 * who it is with a signed sts:GetCallerIdentity (which needs no permission), so it holds
 * no secret.
 */
export function edgeAgentPolicy(s: ClusterScope): PolicyDocument {
  return policyDocument({
    Sid: "ReadInstanceState",
    Effect: "Allow",
    // Describe calls take no resource ARNs.
    Action: ["ec2:DescribeInstances", "ec2:DescribeInstanceStatus"],
    Resource: "*",
    Condition: inRegion(s),
  });
}

