import * as pulumi from "@pulumi/pulumi";
import { centralHostMetrics } from "../host/central-cloud-init";
import type { CentralConfig } from "../../config/types";
import { dataVolumeGiB } from "../../facts/central-host";
import { CLUSTER_API_PORT } from "../../facts/contract";
import { alarmTopicName } from "../../facts/alarms";
import { SNAPSHOT_RETAIN_DAYS } from "../../facts/project";
import { Alarms } from "../observability/alarms";
import { MonitoringSink } from "../observability/metrics-sharing";
import { ARGOCD_CLUSTER_SECRET, platformName, TAG_KEYS, tenantExternalSecretsRoleName, tenantServerRoleName } from "../../facts/project";
import { centralFleetPath, centralStackFleetFiles } from "../fleet/central";
import { keptTenantIds, orphanedTenantPaths, pruneFleetPaths } from "../fleet/central-addons";
import { emitFleetFiles, pruneFleet } from "../fleet/writer";
import { PrivateNetwork } from "../network/private-network";
import { StackKey } from "../security/stack-key";
import { ArgoCd } from "./argocd";
import { ClusterApiAccess } from "./cluster-api-access";
import { ClusterApiTls } from "./cluster-api-tls";
import { DataSnapshots } from "../storage/data-snapshots";
import { K3sHost } from "./k3s-host";
import { PlatformSecrets } from "./platform-secrets";
import { ConnectorServiceNetwork } from "./service-network";
import type { CentralOutputs } from "./outputs";
import { StateTables } from "./state-tables";
import { tenantSecretsArn } from "./tenant-attachment";
import { TenantLink } from "./tenant-link";

export interface CentralEnvironmentArgs {
  /** The validated central stack configuration. */
  readonly config: CentralConfig;
  /** The account the provider deploys into. */
  readonly accountId: pulumi.Output<string>;
}


/**
 * Everything one environment's central side runs: network, key, K3s host, state tables,
 * secrets, cluster-api's access, the role tenants attach through, and ArgoCD.
 */
export class CentralEnvironment extends pulumi.ComponentResource {
  public readonly outputs: { [K in keyof CentralOutputs]: pulumi.Input<CentralOutputs[K]> };

  constructor(name: string, args: CentralEnvironmentArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:central:CentralEnvironment", name, {}, opts);
    const { config, accountId } = args;
    const child = { parent: this };
    const common = { region: config.region, partition: config.partition, accountId };

    // Each tenant cluster's External Secrets role reads that tenant's keys (and only those) in central.
    // Its K3s server publishes ArgoCD's credential for it: encrypting that one secret only.
    const secretReaders = pulumi.output(accountId).apply((account) =>
      config.tenants.flatMap((t) => {
        const roleIn = (name: string) => `arn:${config.partition}:iam::${t.accountId}:role/${name}`;
        const secrets = tenantSecretsArn({ partition: config.partition, region: config.region, accountId: account, environment: config.environment, tenantId: t.id });
        return [
          { accountId: t.accountId, roleArn: roleIn(tenantExternalSecretsRoleName(config.environment, t.id)), secretArnPattern: secrets },
          {
            accountId: t.accountId,
            roleArn: roleIn(tenantServerRoleName(config.environment, t.id)),
            secretArnPattern: `${secrets.slice(0, -1)}${ARGOCD_CLUSTER_SECRET}-*`,
            actions: ["kms:GenerateDataKey", "kms:Encrypt"] as const,
          },
        ];
      }),
    );
    const key = new StackKey(
      `${name}`,
      { ...common, aliasName: `${config.scope}/central`, purpose: `central ${config.scope}: state, secrets, volumes, logs, alarms`, logsService: true, alarmsService: true, secretReaders },
      child,
    );
    const snapshotTag = { key: TAG_KEYS.backup, value: `${config.scope}-central-data` };
    const network = new PrivateNetwork(
      `${name}`,
      { ...common, cidr: config.network.vpcCidr, zones: config.network.availabilityZones, logKeyArn: key.keyArn, namePrefix: platformName(config.scope) },
      child,
    );
    // The host's disk use: what it publishes and what its alarms watch.
    const hostMetrics = centralHostMetrics(config.scope, config.region);
    const host = new K3sHost(
      `${name}-k3s`,
      {
        ...common,
        environment: config.environment,
        scope: config.scope,
        instanceType: config.controlPlane.instanceType,
        k3sVersion: config.controlPlane.k3sVersion,
        vpcId: network.vpcId,
        vpcCidr: network.cidr,
        subnetId: network.privateSubnetIds[0],
        subnetCidr: network.privateSubnetCidrs[0],
        zone: network.zones.apply((z) => z[0]),
        kmsKeyArn: key.keyArn,
        // Datastore, images and every tenant's MariaDB and slurmctld state: grows with the tenants.
        dataVolumeGiB: dataVolumeGiB(config.tenants.length),
        metrics: hostMetrics,
        ...(config.controlPlane.dataSnapshotId ? { dataSnapshotId: config.controlPlane.dataSnapshotId } : {}),
        profile: config.profile,
        dataVolumeTags: { [snapshotTag.key]: snapshotTag.value },
        egress: network.privateEgress,
      },
      child,
    );
    new DataSnapshots(`${name}-snapshots`, { ...common, purpose: `the central ${config.scope} data volume`, targetTag: snapshotTag, retainDays: SNAPSHOT_RETAIN_DAYS, namePrefix: platformName(config.scope) }, child);
    const tables = new StateTables(`${name}-state`, { scope: config.scope, kmsKeyArn: key.keyArn }, child);
    const secrets = new PlatformSecrets(`${name}-secrets`, { scope: config.scope, kmsKeyArn: key.keyArn }, child);
    const clusterApiTls = new ClusterApiTls(`${name}-cluster-api-tls`, { scope: config.scope, hostAddress: host.privateIp, kmsKeyArn: key.keyArn }, child);
    const clusterApi = new ClusterApiAccess(
      `${name}-cluster-api`,
      {
        ...common,
        tlsSecretArn: clusterApiTls.secretArn,
        environment: config.environment,
        scope: config.scope,
        hostRoleArn: host.roleArn,
        hostRoleName: host.roleName,
        tableArns: tables.arns,
        signingKeyArn: secrets.signingKeyArn,
        kmsKeyArn: key.keyArn,
        tenants: config.tenants.map((t) => ({ id: t.id, accountId: t.accountId })),
      },
      child,
    );
    // Per tenant of this environment's stack files: everything of it on central's side.
    const links = config.tenants.map(
      (tenant) =>
        [
          tenant.id,
          new TenantLink(
            `${name}-tenant-${tenant.id}`,
            {
              ...common,
              environment: config.environment,
              tenant,
              vpcId: network.vpcId,
              routeTableId: network.privateRouteTableId,
              hostPrivateIp: host.privateIp,
              hostSecurityGroupId: host.securityGroupId,
              kmsKeyArn: key.keyArn,
              hostRoleArn: host.roleArn,
              hostRoleName: host.roleName,
            },
            child,
          ),
        ] as const,
    );
    // Connector mode: the Lattice service network connectors' slurmrestd services join.
    new ConnectorServiceNetwork(
      `${name}-connectors`,
      { ...common, scope: config.scope, vpcId: network.vpcId, clientSecurityGroupId: host.securityGroupId, callerRoleArn: clusterApi.roleArn, connectors: config.connectors },
      child,
    );
    new ArgoCd(
      `${name}-argocd`,
      { environment: config.environment, scope: config.scope, kubeconfig: host.kubeconfig, repoUrl: config.fleet.repoUrl, revision: config.fleet.revision, fleetPath: centralFleetPath(config.scope) },
      child,
    );
    // The cloud's facts of this environment: its facts file, from which its other fleet files derive (components/fleet/central.ts).
    const heartbeatEndpoint = pulumi.interpolate`https://${host.privateIp}:${CLUSTER_API_PORT}`;
    const facts = pulumi
      .all([clusterApi.roleArn, host.privateIp, heartbeatEndpoint, clusterApiTls.caCertPem])
      .apply(([clusterApiRoleArn, centralHostIp, heartbeat, heartbeatCaPem]) => ({ clusterApiRoleArn, centralHostIp, heartbeatEndpoint: heartbeat, heartbeatCaPem }));
    emitFleetFiles(facts.apply((f) => centralStackFleetFiles(config, f)));
    // Tenants whose stack file is gone are pruned (a deployed one only when named for removal).
    pruneFleet((root) => orphanedTenantPaths(root, config.scope, keptTenantIds(config.environment, root), config.removeTenants), pruneFleetPaths);

    const alarms = new Alarms(
      `${name}`,
      {
        ...common,
        topic: { name: alarmTopicName(platformName(config.scope)), kmsKeyArn: key.keyArn },
        alarmPrefix: `${alarmTopicName(platformName(config.scope))}-`,
        instances: { host: { instanceId: host.instanceId, recover: true } },
        disks: { host: hostMetrics },
      },
      child,
    );
    // Tenant accounts share their EC2 metrics here, so the operator's alarms watch each tenant's server.
    const sink = new MonitoringSink(`${name}-monitoring`, { name: platformName(config.scope, "monitoring"), sourceAccountIds: config.tenants.map((t) => t.accountId) }, child);

    this.outputs = {
      // What the facts file must say (`fleet check --outputs`).
      fleetFacts: facts,
      accountId,
      region: config.region,
      environment: config.environment,
      vpcId: network.vpcId,
      vpcCidr: network.cidr,
      privateSubnetIds: pulumi.all(network.privateSubnetIds),
      routeTableIds: pulumi.all([network.privateRouteTableId]),
      hostInstanceId: host.instanceId,
      hostPrivateIp: host.privateIp,
      hostSecurityGroupId: host.securityGroupId,
      tenantRoleArns: pulumi.all(Object.fromEntries(links.map(([id, link]) => [id, link.roleArn]))),
      slurmctldEndpoints: pulumi.all(Object.fromEntries(links.map(([id, link]) => [id, link.endpoint]))),
      heartbeatEndpoint,
      clusterApiCaPem: clusterApiTls.caCertPem,
      kmsKeyArn: key.keyArn,
      alarmTopicArn: alarms.topicArn,
      monitoringSinkArn: sink.sinkArn,
    };
    this.registerOutputs(this.outputs);
  }
}
