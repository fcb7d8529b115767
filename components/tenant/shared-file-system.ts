import { ownerTag } from "../../facts/project";
import * as pulumi from "@pulumi/pulumi";
import * as ec2 from "@pulumi/aws/ec2";
import * as efs from "@pulumi/aws/efs";
import * as vpc from "@pulumi/aws/vpc";
import { policyDocument, toJson } from "../security/iam";

/** NFS. */
export const NFS_PORT = 2049;

/**
 * The access point's root (what nodes see at /mnt/efs): root's, 0755. Users write only in
 * their own directories and the shared one, which the Slurm Prolog makes as root on the node
 * (components/identity/user-directories.ts).
 */
const EFS_ROOT_DIRECTORY = { path: "/clusterra", ownerUid: 0, ownerGid: 0, permissions: "0755" } as const;

export interface SharedFileSystemArgs {
  /** The stack's name prefix: the clusterra:owner tag its security groups carry (set at creation only; the deploy role changes only such groups). */
  readonly owner: string;
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
 * point (root access included, for the Prolog), automatic backups, protected.
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
      { vpcId: args.vpcId, description: `EFS of ${args.tenantId}: NFS from the cluster nodes only`, tags: { Name: `clusterra-${args.tenantId}-efs`, ...ownerTag(args.owner) } },
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
        rootDirectory: { path: EFS_ROOT_DIRECTORY.path, creationInfo: { ownerUid: EFS_ROOT_DIRECTORY.ownerUid, ownerGid: EFS_ROOT_DIRECTORY.ownerGid, permissions: EFS_ROOT_DIRECTORY.permissions } },
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
                // Root access: the Prolog (root on the node) makes each user's directory with their
                // uid; without it EFS squashes root to 65534 and nobody can. Jobs never run as root.
                Action: ["elasticfilesystem:ClientMount", "elasticfilesystem:ClientWrite", "elasticfilesystem:ClientRootAccess"],
                Resource: fsArn,
                Condition: {
                  StringEquals: { "elasticfilesystem:AccessPointArn": apArn },
                  ArnEquals: { "aws:PrincipalArn": roles },
                  Bool: { "elasticfilesystem:AccessedViaMountTarget": "true" },
                },
              },
              {
                // Within the account an identity policy alone would do: no other role mounts users' files.
                Sid: "OnlyTheNodesMount",
                Effect: "Deny",
                Principal: { AWS: "*" },
                Action: ["elasticfilesystem:ClientMount", "elasticfilesystem:ClientWrite", "elasticfilesystem:ClientRootAccess"],
                Resource: fsArn,
                Condition: { ArnNotEquals: { "aws:PrincipalArn": roles } },
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
