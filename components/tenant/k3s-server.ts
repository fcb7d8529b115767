import { AWS_LIMITS } from "../../facts/aws-limits";
import * as pulumi from "@pulumi/pulumi";
import type { HostMetrics } from "../observability/host-metrics";
import * as ebs from "@pulumi/aws/ebs";
import * as ec2 from "@pulumi/aws/ec2";
import * as iam from "@pulumi/aws/iam";
import * as ssm from "@pulumi/aws/ssm";
import { getParameterOutput } from "@pulumi/aws/ssm/getParameter";
import { getRandomPasswordOutput } from "@pulumi/aws/secretsmanager/getRandomPassword";
import { TAG_KEYS, tenantServerRoleName } from "../../facts/project";
import { clusterOwnedTag, clusterParameterNames, serverPodCapacity, TENANT_SERVER, tenantNodeLabels } from "../../facts/tenant-cluster";
import { al2023AmiParameter } from "../../facts/versions";
import { ec2Trust, hostFilesReadStatement, policyDocument, toJson } from "../security/iam";
import type { AccountScope } from "../security/scope";
import { tenantServerHostFiles, tenantServerUserData, type ServerInit } from "../host/tenant-cloud-init";
import { HostFileParameters } from "../host/host-file-parameters";
import { efsClientStatements, readSecureParameterStatements, sessionManagerStatements, writeSecureParameterStatements } from "./node-iam";



/** Written until the server publishes the real value (ignored by later runs). */
const UNPUBLISHED = "unpublished";

export interface TenantK3sServerArgs extends AccountScope {
  readonly environment: string;
  readonly tenantId: string;
  readonly clusterName: string;
  readonly k3sVersion: string;
  /** The subnet the server lives in: the NAT subnet when it is the NAT, else a private one. */
  readonly subnetId: pulumi.Input<string>;
  /** That subnet's zone: the state volume lives there. */
  readonly zone: pulumi.Input<string>;
  /** Tags that mark the state volume for its daily snapshots. */
  readonly stateVolumeTags: Readonly<Record<string, string>>;
  /** A snapshot the state volume is made from (a restore); the volume is otherwise blank. */
  readonly stateSnapshotId?: string;
  /** The server's fixed private address (tenantServerAddress): central names it in its host rules. */
  readonly privateIp: string;
  /**
   * Reserve the address in its subnet (explicit CIDR reservation), so EC2 never hands it to
   * another interface, Cilium's pod addresses included, while the server is replaced: needed
   * where the subnet is shared (an existing VPC), not in the NAT subnet the server has alone.
   */
  readonly reserveAddress: boolean;
  readonly securityGroupId: pulumi.Input<string>;
  /** Stack key: root volume, parameters. */
  readonly kmsKeyArn: pulumi.Input<string>;
  readonly efs: { readonly fileSystemId: pulumi.Input<string>; readonly fileSystemArn: pulumi.Input<string>; readonly accessPointId: pulumi.Input<string>; readonly accessPointArn: pulumi.Input<string> };
  /** Managed policies for what runs on the server's host network (Karpenter, Cilium's operator, pod roles). */
  readonly policies: Readonly<Record<string, pulumi.Input<string>>>;
  /**
   * When set, the server is the private subnets' NAT: it gets an Elastic IP (no inbound
   * rule admits the internet) and the private route tables send 0.0.0.0/0 to it.
   */
  readonly nat?: { readonly vpcCidr: string; readonly keepCidrs: readonly string[]; readonly privateRouteTableIds: pulumi.Input<string>[] };
  /** Central ArgoCD's access (its account's objects as JSON, central's secret for the token). */
  /** Its disk use, published to central's account through the role central made for it. */
  readonly metrics: HostMetrics;
  readonly argocd: { readonly manifest: string; readonly credentialSecretArn: pulumi.Input<string>; readonly centralRegion: string; readonly serviceAccount: { readonly namespace: string; readonly name: string } };
}

/**
 * The customer cluster's fixed K3s server: Graviton, IMDSv2 with hop limit 1 (Karpenter,
 * Cilium's operator, External Secrets and the edge-agent run on the host network and so
 * reach the role; other pods cannot), encrypted root, no key pair, Session Manager, and
 * optionally the private subnets' NAT.
 */
export class TenantK3sServer extends pulumi.ComponentResource {
  public readonly instanceId: pulumi.Output<string>;
  public readonly privateIp: pulumi.Output<string>;
  public readonly roleArn: pulumi.Output<string>;
  public readonly publicIp?: pulumi.Output<string>;
  public readonly parameters: ReturnType<typeof clusterParameterNames>;

  constructor(name: string, args: TenantK3sServerArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:tenant:TenantK3sServer", name, {}, opts);
    const child = { parent: this };
    const params = clusterParameterNames(args.environment, args.tenantId);
    this.parameters = params;

    const generated = getRandomPasswordOutput({ passwordLength: 48, excludePunctuation: true, includeSpace: false }, child);
    const agentToken = new ssm.Parameter(
      `${name}-agent-token`,
      { name: params.agentToken, type: "SecureString", keyId: args.kmsKeyArn, value: pulumi.secret(generated.randomPassword.apply((p) => p ?? "")), description: "K3s agent token secret (joins agents, never servers)" },
      { parent: this, ignoreChanges: ["value"] },
    );
    const published = (id: "agent-join" | "kubeconfig", parameter: string, description: string) =>
      new ssm.Parameter(`${name}-${id}`, { name: parameter, type: "SecureString", keyId: args.kmsKeyArn, value: pulumi.secret(UNPUBLISHED), description }, { parent: this, ignoreChanges: ["value"] });
    const agentJoin = published("agent-join", params.agentJoin, "K3s agent join token with the server CA hash, published by the server");
    const kubeconfig = published("kubeconfig", params.kubeconfig, "K3s admin kubeconfig (server 127.0.0.1:6443), published by the server");
    // Central ArgoCD's account on this cluster, read by the server at every credential run: a
    // change to it reaches the server without touching its user data (no replacement). Not secret.
    const argocdManager = new ssm.Parameter(`${name}-argocd-manager`, { name: params.argocdManager, type: "String", tier: Buffer.byteLength(args.argocd.manifest) <= AWS_LIMITS.ssmStandardParameter.max ? "Standard" : "Advanced", value: args.argocd.manifest, description: "central ArgoCD's account (argocd-manager), applied by the server" }, child);

    const role = new iam.Role(`${name}-role`, { name: tenantServerRoleName(args.environment, args.tenantId), description: `K3s server of ${args.clusterName}`, assumeRolePolicy: toJson(ec2Trust(args.partition)) }, child);
    const nodePolicy = new iam.Policy(
      `${name}-node`,
      {
        name: `${args.clusterName}-node`,
        description: `K3s server of ${args.clusterName}: Session Manager, its parameters, EFS`,
        policy: pulumi
          .all([args.accountId, args.kmsKeyArn, agentToken.arn, agentJoin.arn, kubeconfig.arn, args.efs.fileSystemArn, args.efs.accessPointArn, argocdManager.arn])
          .apply(([accountId, key, token, join, kube, fsArn, apArn, manager]) =>
            toJson(
              policyDocument(
                ...sessionManagerStatements({ partition: args.partition, region: args.region, accountId }),
                ...readSecureParameterStatements("AgentToken", token, key),
                ...writeSecureParameterStatements("AgentJoin", join, key),
                ...writeSecureParameterStatements("Kubeconfig", kube, key),
                { Sid: "ArgoCdManagerRead", Effect: "Allow", Action: "ssm:GetParameter", Resource: manager },
                hostFilesReadStatement({ partition: args.partition, region: args.region, accountId }, params.serverFiles),
                ...efsClientStatements(fsArn, apArn),
              ),
            ),
          ),
      },
      child,
    );
    const attached = [["node", nodePolicy.arn] as const, ...Object.entries(args.policies).map(([id, doc]) => [id, new iam.Policy(`${name}-${id}`, { name: `${args.clusterName}-${id}`, description: `K3s server of ${args.clusterName}: ${id}`, policy: doc }, child).arn] as const)];
    const attachments = attached.map(([id, policyArn]) => new iam.RolePolicyAttachment(`${name}-${id}`, { role: role.name, policyArn }, child));
    const profile = new iam.InstanceProfile(`${name}-profile`, { name: tenantServerRoleName(args.environment, args.tenantId), role: role.name }, child);

    const instanceType = TENANT_SERVER.instanceType;
    const ami = getParameterOutput({ name: al2023AmiParameter("arm64") }, child).value;
    // The cluster's state outlives the instance: encrypted, protected, never deleted with it.
    const stateVolume = new ebs.Volume(
      `${name}-state`,
      { availabilityZone: args.zone, size: TENANT_SERVER.stateVolumeGiB, type: "gp3", encrypted: true, kmsKeyId: args.kmsKeyArn, ...(args.stateSnapshotId ? { snapshotId: args.stateSnapshotId } : {}), tags: { Name: `${args.clusterName}-k3s-state`, ...args.stateVolumeTags } },
      { parent: this, protect: true },
    );
    const init = (values: { kmsKeyArn: string; fileSystemId: string; accessPointId: string; credentialSecretArn: string; stateVolumeId: string }): ServerInit => ({
      stateVolumeId: values.stateVolumeId,
      k3sVersion: args.k3sVersion,
      region: args.region,
      kmsKeyArn: values.kmsKeyArn,
      efs: { fileSystemId: values.fileSystemId, accessPointId: values.accessPointId },
      nodeLabels: tenantNodeLabels(args.tenantId, "server"),
      agentTokenParameter: params.agentToken,
      agentJoinParameter: params.agentJoin,
      kubeconfigParameter: params.kubeconfig,
      filesPrefix: params.serverFiles,
      maxPods: serverPodCapacity(instanceType),
      nat: { sourceCidr: args.nat?.vpcCidr ?? "0.0.0.0/32", keepCidrs: args.nat ? [...args.nat.keepCidrs] : [] },
      argocd: { credentialSecretArn: values.credentialSecretArn, manifestParameter: params.argocdManager, centralRegion: args.argocd.centralRegion, serviceAccount: args.argocd.serviceAccount },
      metrics: args.metrics,
    });
    const serverInit = pulumi
      .all([args.kmsKeyArn, args.efs.fileSystemId, args.efs.accessPointId, args.argocd.credentialSecretArn, stateVolume.id])
      .apply(([kmsKeyArn, fileSystemId, accessPointId, credentialSecretArn, stateVolumeId]) => init({ kmsKeyArn, fileSystemId, accessPointId, credentialSecretArn, stateVolumeId }));
    const userData = serverInit.apply(tenantServerUserData);
    // Its scripts and units: parameters, so a change to one reaches the server in place. Which
    // files there are never depends on the values the deploy learns (they go into contents only).
    const files = new HostFileParameters(
      `${name}-files`,
      {
        prefix: params.serverFiles,
        shape: tenantServerHostFiles(init({ kmsKeyArn: "", fileSystemId: "", accessPointId: "", credentialSecretArn: "", stateVolumeId: "" })),
        files: serverInit.apply(tenantServerHostFiles),
        host: `the K3s server of ${args.clusterName}`,
      },
      child,
    );
    const reservation = args.reserveAddress
      ? [new ec2.SubnetCidrReservation(`${name}-address`, { subnetId: args.subnetId, cidrBlock: `${args.privateIp}/32`, reservationType: "explicit", description: `K3s server of ${args.clusterName}` }, child)]
      : [];
    const instance = new ec2.Instance(
      `${name}`,
      {
        ami,
        instanceType,
        subnetId: args.subnetId,
        privateIp: args.privateIp,
        vpcSecurityGroupIds: [args.securityGroupId],
        iamInstanceProfile: profile.name,
        associatePublicIpAddress: false,
        // As the NAT it forwards the workers' packets, which carry their own addresses.
        sourceDestCheck: args.nat === undefined,
        ebsOptimized: true,
        metadataOptions: { httpEndpoint: "enabled", httpTokens: "required", httpPutResponseHopLimit: 1, instanceMetadataTags: "disabled" },
        rootBlockDevice: { volumeType: "gp3", volumeSize: TENANT_SERVER.rootVolumeGiB, encrypted: true, kmsKeyId: args.kmsKeyArn, deleteOnTermination: true },
        userData,
        userDataReplaceOnChange: true,
        // Cilium's operator attaches ENIs only to instances of this cluster.
        tags: { Name: `${args.clusterName}-k3s-server`, [clusterOwnedTag(args.clusterName)]: "owned" },
      },
      // The fixed address is free again only once the old server is gone.
      { parent: this, ignoreChanges: ["ami"], deleteBeforeReplace: true, dependsOn: [...attachments, ...reservation, ...files.parameters] },
    );

    new ec2.VolumeAttachment(`${name}-state`, { instanceId: instance.id, volumeId: stateVolume.id, deviceName: "/dev/sdf", stopInstanceBeforeDetaching: true }, child);

    if (args.nat) {
      // Outbound only: no rule on the server's group admits the internet.
      const eip = new ec2.Eip(
        `${name}-egress`,
        {
          domain: "vpc",
          instance: instance.id,
          tags: {
            Name: `${args.clusterName}-egress`,
            [TAG_KEYS.policyException]: "ec2-no-public-ip",
            [TAG_KEYS.policyExceptionReason]: "egress NAT of the tenant VPC on the K3s server (idle floor under $30): no security-group rule admits the internet",
          },
        },
        child,
      );
      args.nat.privateRouteTableIds.forEach((routeTableId, i) => {
        new ec2.Route(`${name}-nat-${i}`, { routeTableId, destinationCidrBlock: "0.0.0.0/0", networkInterfaceId: instance.primaryNetworkInterfaceId }, child);
      });
      this.publicIp = eip.publicIp;
    }

    this.instanceId = instance.id;
    this.privateIp = instance.privateIp;
    this.roleArn = role.arn;
    this.registerOutputs({ instanceId: this.instanceId, privateIp: this.privateIp, roleArn: this.roleArn });
  }
}

