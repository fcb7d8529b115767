import * as pulumi from "@pulumi/pulumi";
import { TENANT_STATE_MOUNT } from "../host/tenant-cloud-init";
import type { TenantConfig } from "../../config/types";
import { PrivateNetwork } from "../network/private-network";
import { AdoptedNetwork } from "../network/adopted-network";
import { isExisting } from "./existing-network";
import { StackKey } from "../security/stack-key";
import type { SlurmctldEndpointOutput } from "../central/outputs";
import { CentralPeering } from "./central-peering";
import { clusterApiRoleName, SNAPSHOT_RETAIN_DAYS, TAG_KEYS, tenantKeyAliasName, tenantMetricsRoleName, tenantServerRoleName } from "../../facts/project";
import { DataSnapshots } from "../storage/data-snapshots";
import { tenantServerAddress } from "../../config/subnet-layout";
import { clusterParameterNames, edgeAgentRoleName, KARPENTER_DISCOVERY_TAG, tenantClusterName, workerRoleName } from "../../facts/tenant-cluster";
import { arn, policyDocument, toJson } from "../security/iam";
import { emitFleetFiles } from "../fleet/writer";
import { hostMetricsNamespace, tenantAlarmPrefix } from "../../facts/alarms";
import { Alarms } from "../observability/alarms";
import { MetricsLink } from "../observability/metrics-sharing";
import { tenantStackFleetFiles } from "../fleet/tenant";
import { ClusterSecurityGroups } from "./cluster-security-groups";
import { EdgeAgentAccess } from "./edge-agent-access";
import { FilesBucket } from "./files-bucket";
import { TenantK3sServer } from "./k3s-server";
import { KarpenterInfra } from "./karpenter-infra";
import { argocdManagerManifest } from "../fleet/tenant-cluster";
import { ARGOCD_MANAGER } from "../../facts/fleet";
import { argocdCredentialPolicy, assumePodRolesStatement, ciliumOperatorStatements, efsClientStatements, karpenterControllerStatements, readSecureParameterStatements } from "./node-iam";
import { SharedFileSystem } from "./shared-file-system";
import { TenantSlurmKeys } from "./slurm-keys";

export interface TenantEnvironmentArgs {
  /** The validated tenant stack configuration. */
  readonly config: TenantConfig;
  /** The tenant account the stack's provider deploys into. */
  readonly accountId: pulumi.Output<string>;
  /** With an existing VPC: its subnets' distinct route tables, read at deploy. */
  readonly existingRouteTableIds?: readonly string[];
  /** With an existing VPC: the zone of its first subnet (the server's), read at deploy. */
  readonly existingServerZone?: string;
  /** Provider acting in the central account through its tenant-attachment role. */
  readonly centralProvider: pulumi.ProviderResource;
  /** What the central stack publishes. */
  readonly central: {
    /** Central VPC. */
    readonly vpcId: pulumi.Output<string>;
    /** The central K3s host's private address (ArgoCD, cluster-api and every slurmctld are there). */
    readonly hostPrivateIp: pulumi.Output<string>;
    /** Central's stack key (the tenant's Slurm keys are encrypted with it). */
    readonly kmsKeyArn: pulumi.Output<string>;
    /** cluster-api's private listener, where the edge-agent heartbeats. */
    readonly heartbeatEndpoint: pulumi.Output<string>;
    /** The CA that signs that listener's certificate. */
    readonly clusterApiCaPem: pulumi.Output<string>;
    /** Central's alarm topic: this tenant's server pages the operator there. */
    readonly alarmTopicArn: pulumi.Output<string>;
    /** Central's monitoring sink: this account shares its EC2 metrics with it. */
    readonly monitoringSinkArn: pulumi.Output<string>;
    /** This tenant's slurmctld endpoint, which central owns. */
    readonly slurmctldEndpoint: pulumi.Output<SlurmctldEndpointOutput>;
  };
}




/** The tenant's network either way: a new VPC whose K3s server is its NAT, or the customer's own. */
function tenantNetwork(name: string, config: TenantConfig, args: TenantEnvironmentArgs, logKeyArn: pulumi.Output<string>, discovery: Record<string, string>, parent: pulumi.Resource) {
  const common = { region: config.region, partition: config.partition, accountId: args.accountId };
  if (isExisting(config.network)) {
    const vpcArn = pulumi.interpolate`arn:${config.partition}:ec2:${config.region}:${args.accountId}:vpc/${config.network.vpcId}`;
    const network = new AdoptedNetwork(
      `${name}`,
      { vpcId: config.network.vpcId, vpcArn, cidr: config.network.vpcCidr, subnetIds: config.network.subnetIds, routeTableIds: args.existingRouteTableIds ?? [], subnetTags: discovery },
      { parent },
    );
    // The customer's VPC keeps its own egress: the server is a plain node in the first subnet, which it shares.
    if (args.existingServerZone === undefined) throw new Error(`${config.file}: the zone of clusterra:network.subnetIds[0] was not read`);
    return { network, routeTableIds: network.routeTableIds, serverSubnetId: network.privateSubnetIds[0], serverZone: pulumi.output(args.existingServerZone), natRouteTableIds: undefined, sharedServerSubnet: true };
  }
  const network = new PrivateNetwork(
    `${name}`,
    { ...common, cidr: config.network.vpcCidr, zones: config.network.availabilityZones, logKeyArn, privateSubnetTags: discovery, egress: "instance", namePrefix: tenantClusterName(config.environment, config.tenant.id) },
    { parent },
  );
  return {
    network,
    // The server (in the NAT subnet) talks to central too: both route tables get the route.
    routeTableIds: [network.privateRouteTableId, network.publicRouteTableId],
    serverSubnetId: network.publicSubnetId,
    // The NAT subnet is in the first zone.
    serverZone: network.zones.apply((z) => z[0]),
    natRouteTableIds: [network.privateRouteTableId],
    sharedServerSubnet: false,
  };
}

/**
 * A tenant's side: in its own account a key, a VPC whose K3s server is also its NAT, the
 * cluster's security groups, Karpenter's queue and node role, EFS, the files bucket and
 * the platform pods' roles; in central (through the tenant's own role there), its peering
 * acceptance and its Slurm keys; in fleet/, the cluster's add-ons with the values
 * resolved here. Central owns the tenant's slurmctld endpoint, routes and host rules.
 */
export class TenantEnvironment extends pulumi.ComponentResource {
  public readonly outputs: Record<string, pulumi.Input<unknown>>;

  constructor(name: string, args: TenantEnvironmentArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:tenant:TenantEnvironment", name, {}, opts);
    const { config, central } = args;
    const child = { parent: this };
    const common = { region: config.region, partition: config.partition, accountId: args.accountId };
    const clusterName = tenantClusterName(config.environment, config.tenant.id);

    const key = new StackKey(`${name}`, { ...common, aliasName: tenantKeyAliasName(config.environment, config.tenant.id), purpose: `tenant ${config.tenant.id}: volumes, files, queues, logs`, logsService: true, eventsService: true, spotVolumes: config.shapes.some((sh) => sh.capacityType === "spot") }, child);
    const discovery = { [KARPENTER_DISCOVERY_TAG]: clusterName };
    const net = tenantNetwork(name, config, args, key.keyArn, discovery, this);
    const network = net.network;
    const peering = new CentralPeering(
      `${name}-peering`,
      {
        tenantId: config.tenant.id,
        ports: config.ports,
        owner: clusterName,
        tenantVpcId: network.vpcId,
        tenantCidr: network.cidr,
        tenantRouteTableIds: net.routeTableIds,
        centralVpcId: central.vpcId,
        centralCidr: config.central.vpcCidr,
        centralAccountId: config.central.accountId,
        centralRegion: config.central.region,
        crossRegion: config.central.region !== config.region,
        centralHostIp: central.hostPrivateIp,
        centralProvider: args.centralProvider,
        workersSecurityGroupTags: discovery,
      },
      child,
    );
    const groups = new ClusterSecurityGroups(
      `${name}-nodes`,
      { tenantId: config.tenant.id, ports: config.ports, owner: clusterName, vpcId: network.vpcId, vpcCidr: network.cidr, workersSecurityGroupId: peering.workersSecurityGroupId, centralHostIp: central.hostPrivateIp },
      child,
    );

    // Names fixed up front break the cycles between roles, trusts, EFS and user data.
    const params = clusterParameterNames(config.environment, config.tenant.id);
    const serverRoleArn = pulumi.interpolate`arn:${config.partition}:iam::${args.accountId}:role/${tenantServerRoleName(config.environment, config.tenant.id)}`;
    const parameterArn = (parameter: string) => args.accountId.apply((account) => arn(config.partition, "ssm", config.region, account, `parameter${parameter}`));

    const efs = new SharedFileSystem(
      `${name}-efs`,
      {
        tenantId: config.tenant.id,
        owner: clusterName,
        vpcId: network.vpcId,
        subnetIds: network.privateSubnetIds,
        clientSecurityGroupIds: { server: groups.serverSecurityGroupId, workers: peering.workersSecurityGroupId },
        kmsKeyArn: key.keyArn,
        accountId: args.accountId,
        partition: config.partition,
        clientRoleArns: [serverRoleArn, pulumi.interpolate`arn:${config.partition}:iam::${args.accountId}:role/${workerRoleName(clusterName)}`],
      },
      child,
    );
    const karpenter = new KarpenterInfra(
      `${name}-karpenter`,
      {
        ...common,
        clusterName,
        kmsKeyArn: key.keyArn,
        nodeStatements: pulumi.all([parameterArn(params.agentJoin), key.keyArn, efs.fileSystemArn, efs.accessPointArn]).apply(([join, k, fsArn, apArn]) => [
          ...readSecureParameterStatements("AgentJoin", join, k),
          ...efsClientStatements(fsArn, apArn),
        ]),
      },
      child,
    );
    const keys = new TenantSlurmKeys(
      `${name}-slurm-keys`,
      {
        environment: config.environment,
        tenantId: config.tenant.id,
        clusterName,
        partition: config.partition,
        centralRegion: config.central.region,
        tenantAccountId: args.accountId,
        serverRoleArn,
        centralKmsKeyArn: central.kmsKeyArn,
        centralProvider: args.centralProvider,
        centralAccountId: config.central.accountId,
      },
      child,
    );
    const edgeAgent = new EdgeAgentAccess(`${name}-edge-agent`, { ...common, clusterName, roleName: edgeAgentRoleName(config.environment, config.tenant.id), serverRoleArn }, child);

    const scope = pulumi.output(args.accountId).apply((accountId) => ({ partition: config.partition, region: config.region, accountId, clusterName }));
    // The cluster's state volume, snapshotted daily to the region: a lost zone keeps the cluster.
    const stateSnapshots = { key: TAG_KEYS.backup, value: `${config.environment}-${config.tenant.id}-k3s-state` };
    new DataSnapshots(`${name}-snapshots`, { ...common, purpose: `tenant ${config.tenant.id}'s cluster state`, targetTag: stateSnapshots, retainDays: SNAPSHOT_RETAIN_DAYS, namePrefix: clusterName }, child);
    const metricsRoleArn = arn(config.partition, "iam", "", config.central.accountId, `role/${tenantMetricsRoleName(config.environment, config.tenant.id)}`);
    // The server's disk use (its root and its state volume), published into central's CloudWatch through central's role for it; central's alarms watch it.
    const serverMetrics = { region: config.central.region, namespace: hostMetricsNamespace(config.environment, { tenantId: config.tenant.id }), mounts: ["/", TENANT_STATE_MOUNT.mountPoint], roleArn: metricsRoleArn };
    const server = new TenantK3sServer(
      `${name}-k3s`,
      {
        ...common,
        environment: config.environment,
        tenantId: config.tenant.id,
        clusterName,
        k3sVersion: config.k3sVersion,
        ...(config.stateSnapshotId ? { stateSnapshotId: config.stateSnapshotId } : {}),
        subnetId: net.serverSubnetId,
        zone: net.serverZone,
        stateVolumeTags: { [stateSnapshots.key]: stateSnapshots.value },
        privateIp: tenantServerAddress(config.network),
        reserveAddress: net.sharedServerSubnet,
        securityGroupId: groups.serverSecurityGroupId,
        kmsKeyArn: key.keyArn,
        efs: { fileSystemId: efs.fileSystemId, fileSystemArn: efs.fileSystemArn, accessPointId: efs.accessPointId, accessPointArn: efs.accessPointArn },
        policies: {
          "karpenter-controller": pulumi
            .all([scope, network.vpcArn, karpenter.nodeRoleArn, karpenter.instanceProfileArn, karpenter.queueArn, key.keyArn])
            .apply(([s, vpcArn, nodeRoleArn, instanceProfileArn, interruptionQueueArn, queueKmsKeyArn]) =>
              toJson(policyDocument(...karpenterControllerStatements(s, { vpcArn, nodeRoleArn, instanceProfileArn, interruptionQueueArn, queueKmsKeyArn }))),
            ),
          "cilium-operator": pulumi.all([scope, network.vpcArn]).apply(([s, vpcArn]) => toJson(policyDocument(...ciliumOperatorStatements(s, { vpcArn })))),
          "pod-roles": pulumi.all([keys.externalSecretsRoleArn, edgeAgent.roleArn]).apply((roles) => toJson(policyDocument(assumePodRolesStatement(roles)))),
          // Its disk use goes to central's CloudWatch through the role central made for this server.
          "disk-metrics": toJson(policyDocument({ ...assumePodRolesStatement([metricsRoleArn]), Sid: "PublishDiskMetricsToCentral" })),
          "argocd-credential": pulumi.all([keys.argocdClusterSecretArn, central.kmsKeyArn]).apply(([secretArn, centralKmsKeyArn]) => toJson(argocdCredentialPolicy({ region: config.central.region, secretArn, centralKmsKeyArn }))),
        },
        metrics: serverMetrics,
        argocd: {
          // In an SSM parameter the server reads (not its user data, which EC2 caps at 16 KB).
          manifest: argocdManagerManifest(),
          credentialSecretArn: keys.argocdClusterSecretArn,
          centralRegion: config.central.region,
          serviceAccount: { namespace: ARGOCD_MANAGER.namespace, name: ARGOCD_MANAGER.serviceAccount },
        },
        ...(net.natRouteTableIds ? { nat: { vpcCidr: network.cidr, keepCidrs: [network.cidr, config.central.vpcCidr], privateRouteTableIds: net.natRouteTableIds } } : {}),
      },
      child,
    );
    const bucket = new FilesBucket(
      `${name}-files`,
      {
        tenantId: config.tenant.id, environment: config.environment, accountId: args.accountId, region: config.region, kmsKeyArn: key.keyArn, partition: config.partition,
        clusterApiRoleArn: arn(config.partition, "iam", "", config.central.accountId, `role/${clusterApiRoleName(config.central.scope)}`),
      },
      child,
    );

    // The cloud's facts of this tenant: its facts file, from which every other fleet file derives
    // (components/fleet/tenant.ts), and the stack output `fleetFacts` that `fleet check --outputs` compares it with.
    const facts = pulumi
        .all([
          pulumi.all([server.privateIp, key.keyArn, efs.fileSystemId, efs.accessPointId, karpenter.queueName, karpenter.instanceProfileName]),
          pulumi.all([central.slurmctldEndpoint, keys.secretArns, keys.externalSecretsRoleArn, edgeAgent.roleArn, keys.controlPlaneRoleArn]),
        ])
        .apply(([[serverAddress, kmsKeyArn, fileSystemId, accessPointId, interruptionQueueName, instanceProfileName], [slurmctld, keySecretArns, externalSecretsRoleArn, edgeAgentRoleArn, secretsRoleArn]]) =>
          ({
            serverAddress, kmsKeyArn, fileSystemId, accessPointId, interruptionQueueName, instanceProfileName,
            slurmctld: { port: slurmctld.port },
            srun: { from: config.ports.srunBlock.from, to: config.ports.srunBlock.to },
            keySecretArns: { slurm: keySecretArns.slurm, jwt: keySecretArns.jwt },
            externalSecretsRoleArn, edgeAgentRoleArn, secretsRoleArn,
          }),
        );
    emitFleetFiles(facts.apply((f) => tenantStackFleetFiles(config, f)));

    // The server watched from central (the operator pays): this account shares its EC2 metrics
    // with central's sink, and central's alarms on them page central's topic.
    new MetricsLink(`${name}-metrics`, { sinkArn: central.monitoringSinkArn, label: `${clusterName} $AccountName` }, child);
    new Alarms(
      `${name}-central-alarms`,
      { ...common, accountId: config.central.accountId, topic: { arn: central.alarmTopicArn }, alarmPrefix: tenantAlarmPrefix(config.environment, config.tenant.id), instances: { k3s: { instanceId: server.instanceId, recover: false, accountId: args.accountId } }, disks: { k3s: serverMetrics } },
      { parent: this, provider: args.centralProvider },
    );

    this.outputs = {
      fleetFacts: facts,
      tenantId: config.tenant.id,
      clusterName,
      vpcId: network.vpcId,
      vpcCidr: network.cidr,
      privateSubnetIds: pulumi.all(network.privateSubnetIds),
      peeringConnectionId: peering.connectionId,
      workersSecurityGroupId: peering.workersSecurityGroupId,
      serverSecurityGroupId: groups.serverSecurityGroupId,
      serverInstanceId: server.instanceId,
      serverPrivateIp: server.privateIp,
      kubeconfigParameter: params.kubeconfig,
      karpenterQueueName: karpenter.queueName,
      karpenterNodeRoleArn: karpenter.nodeRoleArn,
      efsFileSystemId: efs.fileSystemId,
      efsAccessPointId: efs.accessPointId,
      filesBucket: bucket.bucketName,
      slurmKeySecretArns: keys.secretArns,
      externalSecretsRoleArn: keys.externalSecretsRoleArn,
      edgeAgentRoleArn: edgeAgent.roleArn,
      slurmctldEndpoint: central.slurmctldEndpoint.host,
      slurmctldPort: central.slurmctldEndpoint.port,
      kmsKeyArn: key.keyArn,
    };
    this.registerOutputs(this.outputs);
  }
}
