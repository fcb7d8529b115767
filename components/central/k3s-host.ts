import { hostAddress } from "../../config/cidr";
import { CENTRAL_HOST_NUMBER } from "../../facts/central-host";
import * as pulumi from "@pulumi/pulumi";
import * as ebs from "@pulumi/aws/ebs";
import * as ec2 from "@pulumi/aws/ec2";
import * as iam from "@pulumi/aws/iam";
import { getParameterOutput } from "@pulumi/aws/ssm/getParameter";
import { Command } from "@pulumi/command/local";
import { al2023AmiParameter } from "../../facts/versions";
import { arn, ec2Trust, hostFilesReadStatement, policyDocument, sessionManagerStatements, toJson, writeSecureParameterStatements, type Statement } from "../security/iam";
import { addBaselineEgress } from "../network/baseline-egress";
import { centralHostFiles, k3sServerUserData, publishedByDescription, type K3sServerInit } from "../host/central-cloud-init";
import { HostFileParameters } from "../host/host-file-parameters";
import { centralParameterPath, LABEL_KEYS } from "../../facts/project";
import { putMetricsStatement, type HostMetrics } from "../observability/host-metrics";

import { trustedKubeconfig } from "./kubeconfig";
import type { AccountScope } from "../security/scope";
import { platformName } from "../../facts/project";

export interface K3sHostArgs extends AccountScope {
  /** Environment name: the node's label. */
  readonly environment: string;
  /** The central's scope (facts/project.ts centralScope): SSM paths, the node's name. */
  readonly scope: string;
  /** EC2 type of the host (its architecture picks the AMI). */
  readonly instanceType: string;
  /** Pinned K3s release the host installs. */
  readonly k3sVersion: string;
  /** VPC of the host. */
  readonly vpcId: pulumi.Input<string>;
  /** That VPC's CIDR (the DNS egress rule targets it). */
  readonly vpcCidr: string;
  /** The subnet (and so the zone) the host and its data volume live in. */
  readonly subnetId: pulumi.Input<string>;
  /** That subnet's CIDR: the host's fixed address is its CENTRAL_HOST_NUMBER-th. */
  readonly subnetCidr: string;
  readonly zone: pulumi.Input<string>;
  /** Stack KMS key: root and data volumes, the kubeconfig parameter. */
  readonly kmsKeyArn: pulumi.Input<string>;
  /** Size of the K3s data volume (/var/lib/rancher): datastore and local volumes. */
  readonly dataVolumeGiB: number;
  /** Its disk use: where it publishes (its policy allows that namespace only). */
  readonly metrics: HostMetrics;
  /** A snapshot the data volume is made from (a restore); the volume is otherwise blank. */
  readonly dataSnapshotId?: string;
  /** AWS CLI profile for reading the kubeconfig back (the provider's, if any). */
  readonly profile?: string;
  /** Extra tags on the data volume (e.g. the snapshot policy's target tag). */
  readonly dataVolumeTags?: Readonly<Record<string, string>>;
  /** The subnet's way out (its NAT route): the host starts after it, since its boot downloads its files and K3s. */
  readonly egress?: readonly pulumi.Resource[];
}

/** Graviton instance types carry a `g` among the family's attribute letters (t4g, m7gd, c6gn), or are a1. */
export function architectureOf(instanceType: string): "arm64" | "x86_64" {
  return /^([a-z]+\d+[a-z-]*g[a-z-]*|a1)\./.test(instanceType) ? "arm64" : "x86_64";
}

/**
 * Shell that waits up to ten minutes for the CURRENT host ($INSTANCE_ID) to publish its
 * kubeconfig: an older host's publication (before a replacement) does not count.
 */
export function waitForParameterScript(region: string, parameter: string): string {
  const expected = publishedByDescription("$INSTANCE_ID");
  return [
    `for i in $(seq 1 60); do`,
    `  d=$(aws ssm describe-parameters --region ${region} --parameter-filters 'Key=Name,Values=${parameter}' --query 'Parameters[0].Description' --output text 2>/dev/null)`,
    `  [ "$d" = "${expected}" ] && echo "kubeconfig published by $INSTANCE_ID (try $i)" && exit 0`,
    `  sleep 10`,
    `done`,
    `echo "host $INSTANCE_ID did not publish ${parameter} within 10 minutes" >&2`,
    `exit 1`,
  ].join("\n");
}

/** SSM path of the host's kubeconfig. */
export function kubeconfigParameterName(scope: string): string {
  return `${centralParameterPath(scope)}/kubeconfig`;
}

/** Where the host's scripts and units are delivered from (components/host/host-files.ts). */
export function hostFilesPrefix(scope: string): string {
  return `${centralParameterPath(scope)}/host-files`;
}

/** The host role's own needs: Session Manager, reading its files, publishing its kubeconfig and its disk use, nothing else. */
export function hostPolicy(p: { partition: string; region: string; accountId: string; kmsKeyArn: string; kubeconfigParameter: string; filesPrefix: string; metricsNamespace: string }): string {
  const parameterArn = arn(p.partition, "ssm", p.region, p.accountId, `parameter${p.kubeconfigParameter}`);
  const statements: Statement[] = [...sessionManagerStatements(p), hostFilesReadStatement(p, p.filesPrefix), ...writeSecureParameterStatements("Kubeconfig", parameterArn, p.kmsKeyArn), putMetricsStatement(p.metricsNamespace)];
  return toJson(policyDocument(...statements));
}

/**
 * The central K3s host: one Graviton instance in a private subnet, IMDSv2 only with a hop
 * limit of 1 (pods cannot borrow the host's credentials), encrypted gp3 root, a separate
 * protected data volume for /var/lib/rancher, no key pair and no public address (access
 * through Session Manager). It publishes its kubeconfig to SSM; the program reads it back.
 */
export class K3sHost extends pulumi.ComponentResource {
  public readonly instanceId: pulumi.Output<string>;
  public readonly privateIp: pulumi.Output<string>;
  public readonly securityGroupId: pulumi.Output<string>;
  public readonly roleArn: pulumi.Output<string>;
  public readonly roleName: pulumi.Output<string>;
  public readonly kubeconfigParameter: string;
  /** The admin kubeconfig (secret), read back from SSM after the host has published it. */
  public readonly kubeconfig: pulumi.Output<string>;

  constructor(name: string, args: K3sHostArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:central:K3sHost", name, {}, opts);
    const child = { parent: this };
    this.kubeconfigParameter = kubeconfigParameterName(args.scope);
    const filesPrefix = hostFilesPrefix(args.scope);

    const role = new iam.Role(`${name}-role`, { description: `central K3s host (${args.scope})`, assumeRolePolicy: toJson(ec2Trust(args.partition)) }, child);
    const hostRolePolicy = new iam.RolePolicy(
      `${name}-host`,
      {
        role: role.name,
        policy: pulumi
          .all([args.accountId, args.kmsKeyArn])
          .apply(([accountId, kmsKeyArn]) => hostPolicy({ partition: args.partition, region: args.region, accountId, kmsKeyArn, kubeconfigParameter: this.kubeconfigParameter, filesPrefix, metricsNamespace: args.metrics.namespace })),
      },
      child,
    );
    const profile = new iam.InstanceProfile(`${name}-profile`, { role: role.name }, child);

    const sg = new ec2.SecurityGroup(`${name}-sg`, { vpcId: args.vpcId, description: "central K3s host: ingress only from rules the tenant stacks add", tags: { Name: `${name}` } }, child);
    addBaselineEgress(name, sg.id, args.vpcCidr, this);

    const dataVolume = new ebs.Volume(
      `${name}-data`,
      { availabilityZone: args.zone, size: args.dataVolumeGiB, type: "gp3", encrypted: true, kmsKeyId: args.kmsKeyArn, ...(args.dataSnapshotId ? { snapshotId: args.dataSnapshotId } : {}), tags: { Name: `${name}-data`, ...args.dataVolumeTags } },
      { parent: this, protect: true },
    );

    const ami = getParameterOutput({ name: al2023AmiParameter(architectureOf(args.instanceType)) }, child).value;
    const init = (kmsKeyId: string, dataVolumeId: string): K3sServerInit => ({
      k3sVersion: args.k3sVersion,
      region: args.region,
      kubeconfigParameter: this.kubeconfigParameter,
      kmsKeyId,
      dataVolumeId,
      nodeName: platformName(args.scope, "central"),
      nodeLabels: { [LABEL_KEYS.environment]: args.environment, [LABEL_KEYS.role]: "central" },
      metrics: args.metrics,
      filesPrefix,
    });
    const hostInit = pulumi.all([args.kmsKeyArn, dataVolume.id]).apply(([kmsKeyId, volumeId]) => init(kmsKeyId, volumeId));
    const userData = hostInit.apply(k3sServerUserData);
    // Its scripts and units: parameters, so a change to one reaches the host in place (the
    // deploy's values go into their contents only, never into which files there are).
    const files = new HostFileParameters(`${name}-files`, { prefix: filesPrefix, shape: centralHostFiles(init("", "")), files: hostInit.apply(centralHostFiles), host: `central's K3s host (${args.scope})` }, child);
    // A fixed address, reserved in its subnet so EC2 gives it to nothing else: a replacement
    // (deleted before its successor starts) comes back at the same one.
    const privateIp = hostAddress(args.subnetCidr, CENTRAL_HOST_NUMBER);
    const reservation = new ec2.SubnetCidrReservation(
      `${name}-address`,
      { subnetId: args.subnetId, cidrBlock: `${privateIp}/32`, reservationType: "explicit", description: `central K3s host ${name}: its fixed address` },
      { parent: this, protect: true },
    );
    const instance = new ec2.Instance(
      `${name}`,
      {
        ami,
        instanceType: args.instanceType,
        subnetId: args.subnetId,
        privateIp,
        vpcSecurityGroupIds: [sg.id],
        iamInstanceProfile: profile.name,
        associatePublicIpAddress: false,
        ebsOptimized: true,
        metadataOptions: { httpEndpoint: "enabled", httpTokens: "required", httpPutResponseHopLimit: 1, instanceMetadataTags: "disabled" },
        rootBlockDevice: { volumeType: "gp3", volumeSize: 30, encrypted: true, kmsKeyId: args.kmsKeyArn, deleteOnTermination: true },
        userData,
        // cloud-init runs once per instance: a changed user data (a K3s upgrade) means a new
        // host, which mounts the same data volume and takes over the same node.
        userDataReplaceOnChange: true,
        tags: { Name: name },
      },
      // A new AMI release must not replace the control plane; the old host goes before the
      // new one starts, so the data volume is free to move.
      // It boots with its policy in place (the first publication must not meet AccessDenied) and
      // its way out (its boot fetches its files and K3s: the boot unit would retry, but need not).
      { parent: this, ignoreChanges: ["ami"], deleteBeforeReplace: true, dependsOn: [hostRolePolicy, reservation, ...files.parameters, ...(args.egress ?? [])] },
    );
    new ec2.VolumeAttachment(`${name}-data`, { instanceId: instance.id, volumeId: dataVolume.id, deviceName: "/dev/sdf", stopInstanceBeforeDetaching: true }, child);

    // Wait (once per host) until the host has published; prints only the parameter's version.
    const published = new Command(
      `${name}-kubeconfig-published`,
      {
        create: waitForParameterScript(args.region, this.kubeconfigParameter),
        triggers: [instance.id],
        environment: { AWS_REGION: args.region, INSTANCE_ID: instance.id, ...(args.profile ? { AWS_PROFILE: args.profile } : {}) },
        logging: "stdoutAndStderr",
      },
      { parent: this },
    );
    // Read on every run, so certificates K3s renewed (and republished at boot) are picked up.
    const kubeconfig = getParameterOutput({ name: this.kubeconfigParameter, withDecryption: true }, { parent: this, dependsOn: [published] });

    this.instanceId = instance.id;
    this.privateIp = instance.privateIp;
    this.securityGroupId = sg.id;
    this.roleArn = role.arn;
    this.roleName = role.name;
    // Untrusted input: only its CA, client certificate and key pass, into a kubeconfig built here.
    this.kubeconfig = pulumi.secret(kubeconfig.value.apply(trustedKubeconfig));
    this.registerOutputs({ instanceId: this.instanceId, privateIp: this.privateIp, kubeconfigParameter: this.kubeconfigParameter });
  }
}
