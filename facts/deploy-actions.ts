/**
 * The AWS API calls `pulumi up` makes for each resource type a customer-side stack creates:
 * the Pulumi AWS provider's (Terraform provider's) documented create, read, update and delete
 * calls, by the IAM action each needs. The customer's deploy role (access/deploy-role.ts) is
 * generated from this table and the plan; every action is checked against the IAM catalog.
 *
 * Resource types are the catalog's (`service:type`, as its action files name them). A row
 * says which type the resource itself is, where its ARN's name comes from, and which inputs
 * name the other resources the calls act on (so each call's every resource can be scoped
 * and simulated).
 */

/** Where the name part of a resource's ARN comes from. */
export type ArnName = { readonly input: string } | { readonly output: string } | "id";

/** Another resource a call acts on: the catalog type, and the input naming it (a list or one id or name). */
export interface ParentRef {
  readonly type: string;
  /** Input holding the other account's id, when the resource is not in the stack's account (a peer VPC). */
  readonly accountInput?: string;
}

export interface DeployActions {
  /** The catalog type of the resource itself; absent when it is not an AWS resource of its own (a route, an attachment). */
  readonly resource?: string;
  /** The ARN's name (default: the resource's id). */
  readonly name?: ArnName;
  /** Inputs naming resources the calls also act on: input key -> its catalog type. */
  readonly parents?: Readonly<Record<string, string | ParentRef>>;
  /** Resources the create makes besides itself, never existing before (a RunInstances' volumes and interface). */
  readonly made?: readonly string[];
  /** A role the create passes to a service: the input naming it (a role ARN or name, or an instance profile's name) and the service. */
  readonly passes?: { readonly input: string; readonly service: string; readonly via?: "instance-profile" };
  /** A KMS key the service uses on the caller's behalf (kms:ViaService): the input naming it and the service's endpoint name. */
  readonly usesKey?: { readonly input: string; readonly service: string };
  readonly create: readonly string[];
  readonly read: readonly string[];
  readonly update: readonly string[];
  readonly delete: readonly string[];
}

/** Tag calls AWS authorizes with a create that tags: ec2:CreateTags with ec2:CreateAction. */
const EC2_TAGS = { update: ["ec2:CreateTags", "ec2:DeleteTags"] } as const;

function row(r: Omit<DeployActions, "update" | "read"> & { readonly update?: readonly string[]; readonly read?: readonly string[] }): DeployActions {
  return { update: [], read: [], ...r };
}

/** The KMS calls a service makes with the caller's permissions when it encrypts a resource with a customer key. */
export const KMS_USE_ACTIONS = ["kms:CreateGrant", "kms:Decrypt", "kms:DescribeKey", "kms:Encrypt", "kms:GenerateDataKey", "kms:GenerateDataKeyWithoutPlaintext", "kms:ReEncryptFrom", "kms:ReEncryptTo"] as const;

const S3_BUCKET_READ = [
  "s3:ListBucket",
  "s3:GetBucketAcl",
  "s3:GetBucketCORS",
  "s3:GetBucketWebsite",
  "s3:GetBucketVersioning",
  "s3:GetAccelerateConfiguration",
  "s3:GetBucketRequestPayment",
  "s3:GetBucketLogging",
  "s3:GetLifecycleConfiguration",
  "s3:GetReplicationConfiguration",
  "s3:GetEncryptionConfiguration",
  "s3:GetBucketObjectLockConfiguration",
  "s3:GetBucketTagging",
  "s3:GetBucketPolicy",
];
const bucketPart = (put: string[], get: string[], del: string[] = []) => row({ parents: { bucket: "s3:bucket" }, create: put, read: get, update: put, delete: del });
const sgRule = (direction: "Ingress" | "Egress") =>
  row({
    resource: "ec2:security-group-rule",
    parents: { securityGroupId: "ec2:security-group" },
    create: [`ec2:AuthorizeSecurityGroup${direction}`],
    read: ["ec2:DescribeSecurityGroupRules"],
    update: ["ec2:ModifySecurityGroupRules", `ec2:UpdateSecurityGroupRuleDescriptions${direction}`, ...EC2_TAGS.update],
    delete: [`ec2:RevokeSecurityGroup${direction}`],
  });

/** By Pulumi resource type. */
export const DEPLOY_ACTIONS: Readonly<Record<string, DeployActions>> = {
  // --- network (EC2)
  "aws:ec2/vpc:Vpc": row({
    resource: "ec2:vpc",
    create: ["ec2:CreateVpc"],
    read: ["ec2:DescribeVpcs", "ec2:DescribeVpcAttribute", "ec2:DescribeSecurityGroups", "ec2:DescribeRouteTables", "ec2:DescribeNetworkAcls"],
    update: ["ec2:ModifyVpcAttribute", ...EC2_TAGS.update],
    delete: ["ec2:DeleteVpc"],
  }),
  "aws:ec2/subnet:Subnet": row({ resource: "ec2:subnet", parents: { vpcId: "ec2:vpc" }, create: ["ec2:CreateSubnet"], read: ["ec2:DescribeSubnets"], update: ["ec2:ModifySubnetAttribute", ...EC2_TAGS.update], delete: ["ec2:DeleteSubnet", "ec2:DescribeNetworkInterfaces"] }),
  "aws:ec2/routeTable:RouteTable": row({ resource: "ec2:route-table", parents: { vpcId: "ec2:vpc" }, create: ["ec2:CreateRouteTable"], read: ["ec2:DescribeRouteTables"], update: [...EC2_TAGS.update], delete: ["ec2:DeleteRouteTable"] }),
  "aws:ec2/routeTableAssociation:RouteTableAssociation": row({ parents: { routeTableId: "ec2:route-table", subnetId: "ec2:subnet" }, create: ["ec2:AssociateRouteTable"], read: ["ec2:DescribeRouteTables"], update: ["ec2:ReplaceRouteTableAssociation"], delete: ["ec2:DisassociateRouteTable"] }),
  "aws:ec2/route:Route": row({ parents: { routeTableId: "ec2:route-table" }, create: ["ec2:CreateRoute"], read: ["ec2:DescribeRouteTables"], update: ["ec2:ReplaceRoute"], delete: ["ec2:DeleteRoute"] }),
  "aws:ec2/internetGateway:InternetGateway": row({
    resource: "ec2:internet-gateway",
    parents: { vpcId: "ec2:vpc" },
    create: ["ec2:CreateInternetGateway", "ec2:AttachInternetGateway"],
    read: ["ec2:DescribeInternetGateways"],
    update: [...EC2_TAGS.update],
    delete: ["ec2:DetachInternetGateway", "ec2:DeleteInternetGateway"],
  }),
  "aws:ec2/securityGroup:SecurityGroup": row({
    resource: "ec2:security-group",
    parents: { vpcId: "ec2:vpc" },
    // The provider removes the egress rule AWS adds to every new group: the stack's rules are its own resources.
    create: ["ec2:CreateSecurityGroup", "ec2:RevokeSecurityGroupEgress"],
    read: ["ec2:DescribeSecurityGroups", "ec2:DescribeSecurityGroupRules"],
    update: [...EC2_TAGS.update],
    delete: ["ec2:DeleteSecurityGroup", "ec2:DescribeNetworkInterfaces"],
  }),
  // Adopted, not created: the provider tags the VPC's default group and removes its rules (see access/deploy-role.ts).
  "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup": row({
    resource: "ec2:security-group",
    create: ["ec2:CreateTags", "ec2:RevokeSecurityGroupIngress", "ec2:RevokeSecurityGroupEgress"],
    read: ["ec2:DescribeSecurityGroups", "ec2:DescribeSecurityGroupRules"],
    delete: [],
  }),
  "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": sgRule("Ingress"),
  "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": sgRule("Egress"),
  "aws:ec2/instance:Instance": row({
    resource: "ec2:instance",
    parents: { subnetId: "ec2:subnet", vpcSecurityGroupIds: "ec2:security-group", ami: "ec2:image" },
    made: ["ec2:volume", "ec2:network-interface"],
    passes: { input: "iamInstanceProfile", service: "ec2.amazonaws.com", via: "instance-profile" },
    usesKey: { input: "rootBlockDevice.kmsKeyId", service: "ec2" },
    create: ["ec2:RunInstances", "ec2:ModifyInstanceAttribute"],
    read: ["ec2:DescribeInstances", "ec2:DescribeInstanceAttribute", "ec2:DescribeInstanceTypes", "ec2:DescribeVolumes", "ec2:DescribeInstanceCreditSpecifications", "ec2:DescribeImages", "ec2:DescribeTags"],
    update: ["ec2:ModifyInstanceAttribute", "ec2:ModifyInstanceMetadataOptions", "ec2:StopInstances", "ec2:StartInstances", "ec2:AssociateIamInstanceProfile", "ec2:ReplaceIamInstanceProfileAssociation", "ec2:DescribeIamInstanceProfileAssociations", ...EC2_TAGS.update],
    delete: ["ec2:TerminateInstances"],
  }),
  "aws:ec2/eip:Eip": row({
    resource: "ec2:elastic-ip",
    parents: { instance: "ec2:instance" },
    create: ["ec2:AllocateAddress", "ec2:AssociateAddress"],
    read: ["ec2:DescribeAddresses", "ec2:DescribeAddressesAttribute"],
    update: ["ec2:AssociateAddress", "ec2:DisassociateAddress", ...EC2_TAGS.update],
    delete: ["ec2:DisassociateAddress", "ec2:ReleaseAddress"],
  }),
  "aws:ebs/volume:Volume": row({
    resource: "ec2:volume",
    usesKey: { input: "kmsKeyId", service: "ec2" },
    create: ["ec2:CreateVolume"],
    read: ["ec2:DescribeVolumes", "ec2:DescribeVolumesModifications"],
    update: ["ec2:ModifyVolume", ...EC2_TAGS.update],
    delete: ["ec2:DeleteVolume"],
  }),
  "aws:ec2/volumeAttachment:VolumeAttachment": row({ parents: { instanceId: "ec2:instance", volumeId: "ec2:volume" }, create: ["ec2:AttachVolume"], read: ["ec2:DescribeVolumes"], delete: ["ec2:DetachVolume", "ec2:StopInstances", "ec2:StartInstances"] }),
  "aws:ec2/flowLog:FlowLog": row({
    resource: "ec2:vpc-flow-log",
    parents: { vpcId: "ec2:vpc" },
    passes: { input: "iamRoleArn", service: "vpc-flow-logs.amazonaws.com" },
    create: ["ec2:CreateFlowLogs"],
    read: ["ec2:DescribeFlowLogs"],
    update: [...EC2_TAGS.update],
    delete: ["ec2:DeleteFlowLogs"],
  }),
  "aws:ec2/vpcEndpoint:VpcEndpoint": row({
    resource: "ec2:vpc-endpoint",
    parents: { vpcId: "ec2:vpc", routeTableIds: "ec2:route-table", subnetIds: "ec2:subnet", securityGroupIds: "ec2:security-group" },
    create: ["ec2:CreateVpcEndpoint"],
    read: ["ec2:DescribeVpcEndpoints", "ec2:DescribePrefixLists", "ec2:DescribeVpcEndpointServices"],
    update: ["ec2:ModifyVpcEndpoint", ...EC2_TAGS.update],
    delete: ["ec2:DeleteVpcEndpoints"],
  }),
  // The server's address held in an adopted subnet. DeleteSubnetCidrReservation takes no resource: AWS cannot scope it.
  "aws:ec2/subnetCidrReservation:SubnetCidrReservation": row({ parents: { subnetId: "ec2:subnet" }, create: ["ec2:CreateSubnetCidrReservation"], read: ["ec2:GetSubnetCidrReservations"], delete: ["ec2:DeleteSubnetCidrReservation"] }),
  // A tag on a resource the stack adopts (Karpenter's discovery tag on a customer's subnet).
  "aws:ec2/tag:Tag": row({ parents: { resourceId: "ec2:subnet" }, create: ["ec2:CreateTags"], read: ["ec2:DescribeTags"], update: ["ec2:CreateTags"], delete: ["ec2:DeleteTags"] }),
  "aws:ec2/vpcPeeringConnection:VpcPeeringConnection": row({
    resource: "ec2:vpc-peering-connection",
    parents: { vpcId: "ec2:vpc", peerVpcId: { type: "ec2:vpc", accountInput: "peerOwnerId" } },
    create: ["ec2:CreateVpcPeeringConnection"],
    read: ["ec2:DescribeVpcPeeringConnections"],
    update: ["ec2:ModifyVpcPeeringConnectionOptions", ...EC2_TAGS.update],
    delete: ["ec2:DeleteVpcPeeringConnection"],
  }),

  // --- IAM (by name)
  "aws:iam/role:Role": row({
    resource: "iam:role",
    name: { input: "name" },
    create: ["iam:CreateRole", "iam:TagRole"],
    read: ["iam:GetRole", "iam:ListRolePolicies", "iam:ListAttachedRolePolicies"],
    update: ["iam:UpdateRole", "iam:UpdateRoleDescription", "iam:UpdateAssumeRolePolicy", "iam:TagRole", "iam:UntagRole"],
    delete: ["iam:DeleteRole", "iam:ListInstanceProfilesForRole", "iam:DeleteRolePolicy", "iam:DetachRolePolicy"],
  }),
  "aws:iam/rolePolicy:RolePolicy": row({ parents: { role: "iam:role" }, create: ["iam:PutRolePolicy"], read: ["iam:GetRolePolicy"], update: ["iam:PutRolePolicy"], delete: ["iam:DeleteRolePolicy"] }),
  "aws:iam/policy:Policy": row({
    resource: "iam:policy",
    name: { input: "name" },
    create: ["iam:CreatePolicy", "iam:TagPolicy"],
    read: ["iam:GetPolicy", "iam:GetPolicyVersion", "iam:ListPolicyVersions"],
    update: ["iam:CreatePolicyVersion", "iam:DeletePolicyVersion", "iam:TagPolicy", "iam:UntagPolicy"],
    delete: ["iam:DeletePolicy", "iam:ListEntitiesForPolicy"],
  }),
  "aws:iam/rolePolicyAttachment:RolePolicyAttachment": row({ parents: { role: "iam:role" }, create: ["iam:AttachRolePolicy"], read: ["iam:ListAttachedRolePolicies"], delete: ["iam:DetachRolePolicy"] }),
  "aws:iam/instanceProfile:InstanceProfile": row({
    resource: "iam:instance-profile",
    name: { input: "name" },
    passes: { input: "role", service: "ec2.amazonaws.com" },
    create: ["iam:CreateInstanceProfile", "iam:TagInstanceProfile", "iam:AddRoleToInstanceProfile"],
    read: ["iam:GetInstanceProfile"],
    update: ["iam:TagInstanceProfile", "iam:UntagInstanceProfile", "iam:AddRoleToInstanceProfile", "iam:RemoveRoleFromInstanceProfile"],
    delete: ["iam:RemoveRoleFromInstanceProfile", "iam:DeleteInstanceProfile"],
  }),

  // --- storage
  "aws:s3/bucket:Bucket": row({ resource: "s3:bucket", name: { input: "bucket" }, create: ["s3:CreateBucket", "s3:PutBucketTagging"], read: S3_BUCKET_READ, update: ["s3:PutBucketTagging"], delete: ["s3:DeleteBucket"] }),
  "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration": bucketPart(["s3:PutLifecycleConfiguration"], ["s3:GetLifecycleConfiguration"]),
  "aws:s3/bucketOwnershipControls:BucketOwnershipControls": bucketPart(["s3:PutBucketOwnershipControls"], ["s3:GetBucketOwnershipControls"]),
  "aws:s3/bucketPolicy:BucketPolicy": bucketPart(["s3:PutBucketPolicy"], ["s3:GetBucketPolicy"], ["s3:DeleteBucketPolicy"]),
  "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock": bucketPart(["s3:PutBucketPublicAccessBlock"], ["s3:GetBucketPublicAccessBlock"]),
  "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration": bucketPart(["s3:PutEncryptionConfiguration"], ["s3:GetEncryptionConfiguration"]),
  "aws:s3/bucketVersioning:BucketVersioning": bucketPart(["s3:PutBucketVersioning"], ["s3:GetBucketVersioning"]),
  "aws:efs/fileSystem:FileSystem": row({
    resource: "elasticfilesystem:file-system",
    usesKey: { input: "kmsKeyId", service: "elasticfilesystem" },
    create: ["elasticfilesystem:CreateFileSystem", "elasticfilesystem:TagResource", "elasticfilesystem:PutLifecycleConfiguration"],
    read: ["elasticfilesystem:DescribeFileSystems", "elasticfilesystem:DescribeLifecycleConfiguration", "elasticfilesystem:ListTagsForResource"],
    update: ["elasticfilesystem:UpdateFileSystem", "elasticfilesystem:PutLifecycleConfiguration", "elasticfilesystem:TagResource", "elasticfilesystem:UntagResource"],
    delete: ["elasticfilesystem:DeleteFileSystem", "elasticfilesystem:DescribeMountTargets"],
  }),
  // EFS makes the mount target's network interface with the caller's EC2 permissions.
  "aws:efs/mountTarget:MountTarget": row({
    parents: { fileSystemId: "elasticfilesystem:file-system", subnetId: "ec2:subnet", securityGroups: "ec2:security-group" },
    made: ["ec2:network-interface"],
    create: ["elasticfilesystem:CreateMountTarget", "ec2:CreateNetworkInterface", "ec2:DescribeSubnets", "ec2:DescribeNetworkInterfaces"],
    read: ["elasticfilesystem:DescribeMountTargets", "elasticfilesystem:DescribeMountTargetSecurityGroups", "ec2:DescribeNetworkInterfaceAttribute"],
    update: ["elasticfilesystem:ModifyMountTargetSecurityGroups"],
    delete: ["elasticfilesystem:DeleteMountTarget", "ec2:DeleteNetworkInterface"],
  }),
  "aws:efs/accessPoint:AccessPoint": row({
    resource: "elasticfilesystem:access-point",
    parents: { fileSystemId: "elasticfilesystem:file-system" },
    create: ["elasticfilesystem:CreateAccessPoint", "elasticfilesystem:TagResource"],
    read: ["elasticfilesystem:DescribeAccessPoints"],
    update: ["elasticfilesystem:TagResource", "elasticfilesystem:UntagResource"],
    delete: ["elasticfilesystem:DeleteAccessPoint"],
  }),
  "aws:efs/backupPolicy:BackupPolicy": row({ parents: { fileSystemId: "elasticfilesystem:file-system" }, create: ["elasticfilesystem:PutBackupPolicy"], read: ["elasticfilesystem:DescribeBackupPolicy"], update: ["elasticfilesystem:PutBackupPolicy"], delete: ["elasticfilesystem:PutBackupPolicy"] }),
  "aws:efs/fileSystemPolicy:FileSystemPolicy": row({ parents: { fileSystemId: "elasticfilesystem:file-system" }, create: ["elasticfilesystem:PutFileSystemPolicy"], read: ["elasticfilesystem:DescribeFileSystemPolicy"], update: ["elasticfilesystem:PutFileSystemPolicy"], delete: ["elasticfilesystem:DeleteFileSystemPolicy"] }),
  "aws:dlm/lifecyclePolicy:LifecyclePolicy": row({
    resource: "dlm:policy",
    passes: { input: "executionRoleArn", service: "dlm.amazonaws.com" },
    create: ["dlm:CreateLifecyclePolicy", "dlm:TagResource"],
    read: ["dlm:GetLifecyclePolicy", "dlm:ListTagsForResource"],
    update: ["dlm:UpdateLifecyclePolicy", "dlm:TagResource", "dlm:UntagResource"],
    delete: ["dlm:DeleteLifecyclePolicy"],
  }),

  // --- keys, parameters, secrets
  "aws:kms/key:Key": row({
    resource: "kms:key",
    name: { output: "keyId" },
    create: ["kms:CreateKey", "kms:TagResource", "kms:EnableKeyRotation"],
    read: ["kms:DescribeKey", "kms:GetKeyPolicy", "kms:GetKeyRotationStatus", "kms:ListResourceTags"],
    update: ["kms:PutKeyPolicy", "kms:UpdateKeyDescription", "kms:EnableKeyRotation", "kms:DisableKeyRotation", "kms:TagResource", "kms:UntagResource"],
    delete: ["kms:ScheduleKeyDeletion"],
  }),
  "aws:kms/alias:Alias": row({ resource: "kms:alias", name: { input: "name" }, parents: { targetKeyId: "kms:key" }, create: ["kms:CreateAlias"], read: ["kms:ListAliases"], update: ["kms:UpdateAlias"], delete: ["kms:DeleteAlias"] }),
  "aws:ssm/parameter:Parameter": row({
    resource: "ssm:parameter",
    name: { input: "name" },
    usesKey: { input: "keyId", service: "ssm" },
    create: ["ssm:PutParameter", "ssm:AddTagsToResource"],
    read: ["ssm:GetParameter", "ssm:GetParameters", "ssm:DescribeParameters", "ssm:ListTagsForResource"],
    update: ["ssm:PutParameter", "ssm:AddTagsToResource", "ssm:RemoveTagsFromResource"],
    delete: ["ssm:DeleteParameter"],
  }),
  "aws:secretsmanager/secret:Secret": row({
    resource: "secretsmanager:Secret",
    name: { input: "name" },
    create: ["secretsmanager:CreateSecret", "secretsmanager:TagResource"],
    read: ["secretsmanager:DescribeSecret", "secretsmanager:GetResourcePolicy"],
    update: ["secretsmanager:UpdateSecret", "secretsmanager:TagResource", "secretsmanager:UntagResource"],
    delete: ["secretsmanager:DeleteSecret"],
  }),

  // --- events and queues
  "aws:sqs/queue:Queue": row({
    resource: "sqs:queue",
    name: { input: "name" },
    create: ["sqs:CreateQueue", "sqs:TagQueue", "sqs:GetQueueUrl"],
    read: ["sqs:GetQueueAttributes", "sqs:ListQueueTags"],
    update: ["sqs:SetQueueAttributes", "sqs:TagQueue", "sqs:UntagQueue"],
    delete: ["sqs:DeleteQueue"],
  }),
  "aws:sqs/queuePolicy:QueuePolicy": row({ parents: { queueUrl: "sqs:queue" }, create: ["sqs:SetQueueAttributes"], read: ["sqs:GetQueueAttributes"], update: ["sqs:SetQueueAttributes"], delete: ["sqs:SetQueueAttributes"] }),
  "aws:sqs/redriveAllowPolicy:RedriveAllowPolicy": row({ parents: { queueUrl: "sqs:queue" }, create: ["sqs:SetQueueAttributes"], read: ["sqs:GetQueueAttributes"], update: ["sqs:SetQueueAttributes"], delete: ["sqs:SetQueueAttributes"] }),
  "aws:cloudwatch/eventRule:EventRule": row({
    resource: "events:rule-on-default-event-bus",
    name: { input: "name" },
    create: ["events:PutRule", "events:TagResource"],
    read: ["events:DescribeRule", "events:ListTagsForResource"],
    update: ["events:PutRule", "events:EnableRule", "events:DisableRule", "events:TagResource", "events:UntagResource"],
    delete: ["events:DeleteRule"],
  }),
  "aws:cloudwatch/eventTarget:EventTarget": row({ parents: { rule: "events:rule-on-default-event-bus" }, create: ["events:PutTargets"], read: ["events:ListTargetsByRule"], update: ["events:PutTargets"], delete: ["events:RemoveTargets"] }),
  "aws:cloudwatch/logGroup:LogGroup": row({
    resource: "logs:log-group",
    name: { input: "name" },
    create: ["logs:CreateLogGroup", "logs:TagResource", "logs:PutRetentionPolicy", "logs:AssociateKmsKey"],
    read: ["logs:DescribeLogGroups", "logs:ListTagsForResource"],
    update: ["logs:PutRetentionPolicy", "logs:DeleteRetentionPolicy", "logs:AssociateKmsKey", "logs:DisassociateKmsKey", "logs:TagResource", "logs:UntagResource"],
    delete: ["logs:DeleteLogGroup"],
  }),
  "aws:cloudwatch/metricAlarm:MetricAlarm": row({
    resource: "cloudwatch:alarm",
    name: { input: "name" },
    create: ["cloudwatch:PutMetricAlarm", "cloudwatch:TagResource"],
    read: ["cloudwatch:DescribeAlarms", "cloudwatch:ListTagsForResource"],
    update: ["cloudwatch:PutMetricAlarm", "cloudwatch:TagResource", "cloudwatch:UntagResource"],
    delete: ["cloudwatch:DeleteAlarms"],
  }),
  "aws:sns/topic:Topic": row({
    resource: "sns:topic",
    name: { input: "name" },
    create: ["sns:CreateTopic", "sns:TagResource", "sns:SetTopicAttributes"],
    read: ["sns:GetTopicAttributes", "sns:ListTagsForResource", "sns:GetDataProtectionPolicy"],
    update: ["sns:SetTopicAttributes", "sns:TagResource", "sns:UntagResource"],
    delete: ["sns:DeleteTopic"],
  }),
  "aws:sns/topicPolicy:TopicPolicy": row({ parents: { arn: "sns:topic" }, create: ["sns:SetTopicAttributes"], read: ["sns:GetTopicAttributes"], update: ["sns:SetTopicAttributes"], delete: ["sns:SetTopicAttributes"] }),
  // Metric sharing into central's monitoring account: the sink is central's; cloudwatch:Link takes no resource.
  "aws:oam/link:Link": row({
    resource: "oam:Link",
    parents: { sinkIdentifier: "oam:Sink" },
    create: ["oam:CreateLink", "oam:TagResource", "cloudwatch:Link"],
    read: ["oam:GetLink", "oam:ListTagsForResource"],
    update: ["oam:UpdateLink", "oam:TagResource", "oam:UntagResource", "cloudwatch:Link"],
    delete: ["oam:DeleteLink"],
  }),

  // --- a connector: the event pipeline and slurmrestd's service, shared with central
  "aws:lambda/function:Function": row({
    resource: "lambda:function",
    name: { input: "name" },
    passes: { input: "role", service: "lambda.amazonaws.com" },
    create: ["lambda:CreateFunction", "lambda:TagResource", "lambda:GetFunction"],
    read: ["lambda:GetFunction", "lambda:GetFunctionCodeSigningConfig", "lambda:ListVersionsByFunction", "lambda:GetFunctionConcurrency", "lambda:GetRuntimeManagementConfig", "lambda:ListTags"],
    update: ["lambda:UpdateFunctionCode", "lambda:UpdateFunctionConfiguration", "lambda:PutFunctionConcurrency", "lambda:TagResource", "lambda:UntagResource"],
    delete: ["lambda:DeleteFunction"],
  }),
  "aws:lambda/eventSourceMapping:EventSourceMapping": row({
    resource: "lambda:eventSourceMapping",
    parents: { functionName: "lambda:function" },
    create: ["lambda:CreateEventSourceMapping"],
    read: ["lambda:GetEventSourceMapping"],
    update: ["lambda:UpdateEventSourceMapping"],
    delete: ["lambda:DeleteEventSourceMapping"],
  }),
  "aws:ram/resourceShare:ResourceShare": row({
    resource: "ram:resource-share",
    create: ["ram:CreateResourceShare", "ram:TagResource"],
    read: ["ram:GetResourceShares", "ram:ListResourceSharePermissions"],
    update: ["ram:UpdateResourceShare", "ram:TagResource", "ram:UntagResource"],
    delete: ["ram:DeleteResourceShare"],
  }),
  "aws:ram/resourceAssociation:ResourceAssociation": row({ parents: { resourceShareArn: "ram:resource-share", resourceArn: "vpc-lattice:Service" }, create: ["ram:AssociateResourceShare", "vpc-lattice:PutResourcePolicy", "vpc-lattice:GetResourcePolicy"], read: ["ram:GetResourceShareAssociations"], delete: ["ram:DisassociateResourceShare", "vpc-lattice:DeleteResourcePolicy"] }),
  "aws:ram/principalAssociation:PrincipalAssociation": row({ parents: { resourceShareArn: "ram:resource-share" }, create: ["ram:AssociateResourceShare"], read: ["ram:GetResourceShareAssociations"], delete: ["ram:DisassociateResourceShare"] }),
  "aws:vpclattice/service:Service": row({
    resource: "vpc-lattice:Service",
    create: ["vpc-lattice:CreateService", "vpc-lattice:TagResource"],
    read: ["vpc-lattice:GetService", "vpc-lattice:ListTagsForResource"],
    update: ["vpc-lattice:UpdateService", "vpc-lattice:TagResource", "vpc-lattice:UntagResource"],
    delete: ["vpc-lattice:DeleteService"],
  }),
  "aws:vpclattice/listener:Listener": row({
    resource: "vpc-lattice:Listener",
    parents: { serviceIdentifier: "vpc-lattice:Service" },
    create: ["vpc-lattice:CreateListener", "vpc-lattice:TagResource"],
    read: ["vpc-lattice:GetListener"],
    update: ["vpc-lattice:UpdateListener", "vpc-lattice:TagResource", "vpc-lattice:UntagResource"],
    delete: ["vpc-lattice:DeleteListener"],
  }),
  "aws:vpclattice/targetGroup:TargetGroup": row({
    resource: "vpc-lattice:TargetGroup",
    create: ["vpc-lattice:CreateTargetGroup", "vpc-lattice:TagResource"],
    read: ["vpc-lattice:GetTargetGroup"],
    update: ["vpc-lattice:UpdateTargetGroup", "vpc-lattice:TagResource", "vpc-lattice:UntagResource"],
    delete: ["vpc-lattice:DeleteTargetGroup"],
  }),
  "aws:vpclattice/targetGroupAttachment:TargetGroupAttachment": row({ parents: { targetGroupIdentifier: "vpc-lattice:TargetGroup" }, create: ["vpc-lattice:RegisterTargets"], read: ["vpc-lattice:ListTargets"], delete: ["vpc-lattice:DeregisterTargets"] }),
  "aws:vpclattice/authPolicy:AuthPolicy": row({ parents: { resourceIdentifier: "vpc-lattice:Service" }, create: ["vpc-lattice:PutAuthPolicy"], read: ["vpc-lattice:GetAuthPolicy"], update: ["vpc-lattice:PutAuthPolicy"], delete: ["vpc-lattice:DeleteAuthPolicy"] }),
};

/** The calls behind the program's reads at plan time (invokes), by invoke token. */
export const INVOKE_ACTIONS: Readonly<Record<string, { readonly actions: readonly string[]; readonly resource?: string; readonly name?: string }>> = {
  "aws:index/getCallerIdentity:getCallerIdentity": { actions: [] },
  "aws:index/getRegion:getRegion": { actions: [] },
  "aws:index/getPartition:getPartition": { actions: [] },
  "aws:index/getAvailabilityZones:getAvailabilityZones": { actions: ["ec2:DescribeAvailabilityZones"] },
  "aws:secretsmanager/getRandomPassword:getRandomPassword": { actions: ["secretsmanager:GetRandomPassword"] },
  "aws:ec2/getVpc:getVpc": { actions: ["ec2:DescribeVpcs", "ec2:DescribeVpcAttribute"] },
  "aws:ec2/getSubnet:getSubnet": { actions: ["ec2:DescribeSubnets"] },
  "aws:ec2/getRouteTable:getRouteTable": { actions: ["ec2:DescribeRouteTables"] },
  // Public parameters (the current Amazon Linux image) belong to no account.
  "aws:ssm/getParameter:getParameter": { actions: ["ssm:GetParameter"], resource: "ssm:parameter", name: "name" },
};
