import * as pulumi from "@pulumi/pulumi";
import * as ec2 from "@pulumi/aws/ec2";
import * as efs from "@pulumi/aws/efs";
import * as vpc from "@pulumi/aws/vpc";
import { policyDocument, toJson } from "../security/iam";

/** NFS. */
export const NFS_PORT = 2049;

/** POSIX owner of the access point's root: Slurm's job user space starts above system ids. */
const ROOT_OWNER = { uid: 1000, gid: 1000 };

export interface SharedFileSystemArgs {
  /** Tenant id: names. */
  readonly tenantId: string;
  readonly vpcId: pulumi.Input<string>;
  /** One mount target per private subnet (one per zone). */
  readonly subnetIds: pulumi.Input<string>[];
  /** Groups of the nodes that mount it: the only NFS clients admitted. */
  readonly clientSecurityGroupIds: Record<string, pulumi.Input<string>>;
  /** Stack key. */
  readonly kmsKeyArn: pulumi.Input<string>;
  /** The account whose roles mount it. */
  readonly accountId: pulumi.Input<string>;
  readonly partition: string;
  /** Roles that may mount it (through the access point, over TLS); named by condition, so they may come later. */
  readonly clientRoleArns: pulumi.Input<string>[];
}

/**
 * The tenant's EFS at /mnt/efs (scripts, job output): encrypted with the stack key, a
 * mount target per zone, NFS admitted only from the cluster's nodes, one access point,
 * a file-system policy that demands TLS and IAM-authorized mounts through that access
 * point, automatic backups, protected.
 */
export class SharedFileSystem extends pulumi.ComponentResource {
  public readonly fileSystemId: pulumi.Output<string>;
  public readonly fileSystemArn: pulumi.Output<string>;
  public readonly accessPointId: pulumi.Output<string>;
  public readonly accessPointArn: pulumi.Output<string>;
  public readonly securityGroupId: pulumi.Output<string>;

  constructor(name: string, args: SharedFileSystemArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:tenant:SharedFileSystem", name, {}, opts);
    const child = { parent: this };
    const fs = new efs.FileSystem(
      `${name}`,
      {
        encrypted: true,
        kmsKeyId: args.kmsKeyArn,
        performanceMode: "generalPurpose",
        throughputMode: "elastic",
        lifecyclePolicies: [{ transitionToIa: "AFTER_30_DAYS" }, { transitionToPrimaryStorageClass: "AFTER_1_ACCESS" }],
        tags: { Name: `clusterra-${args.tenantId}-files` },
      },
      { parent: this, protect: true },
    );
    new efs.BackupPolicy(`${name}-backup`, { fileSystemId: fs.id, backupPolicy: { status: "ENABLED" } }, child);

    const sg = new ec2.SecurityGroup(
      `${name}-sg`,
      { vpcId: args.vpcId, description: `EFS of ${args.tenantId}: NFS from the cluster nodes only`, tags: { Name: `clusterra-${args.tenantId}-efs` } },
      child,
    );
    for (const [client, groupId] of Object.entries(args.clientSecurityGroupIds)) {
      const nfs = { ipProtocol: "tcp", fromPort: NFS_PORT, toPort: NFS_PORT, description: `NFS between ${client} nodes and EFS` };
      new vpc.SecurityGroupIngressRule(`${name}-from-${client}`, { ...nfs, securityGroupId: sg.id, referencedSecurityGroupId: groupId }, child);
      new vpc.SecurityGroupEgressRule(`${name}-${client}-out`, { ...nfs, securityGroupId: groupId, referencedSecurityGroupId: sg.id }, child);
    }
    const targets = args.subnetIds.map((subnetId, i) => new efs.MountTarget(`${name}-${i}`, { fileSystemId: fs.id, subnetId, securityGroups: [sg.id] }, child));

    const accessPoint = new efs.AccessPoint(
      `${name}-ap`,
      {
        fileSystemId: fs.id,
        rootDirectory: { path: "/clusterra", creationInfo: { ownerUid: ROOT_OWNER.uid, ownerGid: ROOT_OWNER.gid, permissions: "0775" } },
        tags: { Name: `clusterra-${args.tenantId}-files` },
      },
      child,
    );
    new efs.FileSystemPolicy(
      `${name}-policy`,
      {
        fileSystemId: fs.id,
        bypassPolicyLockoutSafetyCheck: false,
        policy: pulumi.all([fs.arn, accessPoint.arn, pulumi.all(args.clientRoleArns), args.accountId]).apply(([fsArn, apArn, roles, account]) =>
          toJson(
            policyDocument(
              {
                Sid: "NodesMountThroughTheAccessPoint",
                Effect: "Allow",
                Principal: { AWS: `arn:${args.partition}:iam::${account}:root` },
                Action: ["elasticfilesystem:ClientMount", "elasticfilesystem:ClientWrite"],
                Resource: fsArn,
                Condition: {
                  StringEquals: { "elasticfilesystem:AccessPointArn": apArn },
                  ArnEquals: { "aws:PrincipalArn": roles },
                  Bool: { "elasticfilesystem:AccessedViaMountTarget": "true" },
                },
              },
              { Sid: "DenyWithoutTls", Effect: "Deny", Principal: { AWS: "*" }, Action: "*", Resource: fsArn, Condition: { Bool: { "aws:SecureTransport": "false" } } },
            ),
          ),
        ),
      },
      { parent: this, dependsOn: targets },
    );

    this.fileSystemId = fs.id;
    this.fileSystemArn = fs.arn;
    this.accessPointId = accessPoint.id;
    this.accessPointArn = accessPoint.arn;
    this.securityGroupId = sg.id;
    this.registerOutputs({ fileSystemId: this.fileSystemId, accessPointId: this.accessPointId });
  }
}
