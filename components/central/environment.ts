import * as pulumi from "@pulumi/pulumi";
import type { CentralConfig } from "../../config/types";
import { CLUSTER_API_PORT, SLURM_PORTS } from "../../facts/contract";
import { TAG_KEYS } from "../../facts/project";
import { centralFleetFiles, centralFleetPath } from "../fleet/central";
import { centralAddOnFiles, orphanedTenantPaths, pruneFleetPaths, tenantIdsOf } from "../fleet/central-addons";
import { emitFleetFiles, pruneFleet } from "../fleet/writer";
import { PrivateNetwork } from "../network/private-network";
import { StackKey } from "../security/stack-key";
import { ArgoCd } from "./argocd";
import { ClusterApiAccess } from "./cluster-api-access";
import { DataSnapshots } from "./data-snapshots";
import { K3sHost } from "./k3s-host";
import { PlatformSecrets, signingKeySecretName } from "./platform-secrets";
import type { CentralOutputs } from "./stack";
import { StateTables } from "./state-tables";
import { TenantAttachmentRole } from "./tenant-attachment";

export interface CentralEnvironmentArgs {
  /** The validated central stack configuration. */
  readonly config: CentralConfig;
  /** The account the provider deploys into. */
  readonly accountId: pulumi.Output<string>;
}

/** K3s data volume: datastore plus every tenant's MariaDB and slurmctld state. */
const DATA_VOLUME_GIB = 100;
/** Daily snapshots of the data volume kept. */
const SNAPSHOT_RETAIN_DAYS = 14;

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

    const key = new StackKey(`${name}`, { ...common, aliasName: `${config.environment}/central`, purpose: `central ${config.environment}: state, secrets, volumes, logs`, logsService: true }, child);
    const snapshotTag = { key: TAG_KEYS.backup, value: `${config.environment}-central-data` };
    const network = new PrivateNetwork(
      `${name}`,
      { ...common, cidr: config.network.vpcCidr, zones: config.network.availabilityZones, logKeyArn: key.keyArn },
      child,
    );
    const host = new K3sHost(
      `${name}-k3s`,
      {
        ...common,
        environment: config.environment,
        instanceType: config.controlPlane.instanceType,
        k3sVersion: config.controlPlane.k3sVersion,
        vpcId: network.vpcId,
        vpcCidr: network.cidr,
        subnetId: network.privateSubnetIds[0],
        zone: network.zones.apply((z) => z[0]),
        kmsKeyArn: key.keyArn,
        dataVolumeGiB: DATA_VOLUME_GIB,
        profile: config.profile,
        dataVolumeTags: { [snapshotTag.key]: snapshotTag.value },
      },
      child,
    );
    new DataSnapshots(`${name}-snapshots`, { ...common, environment: config.environment, targetTag: snapshotTag, retainDays: SNAPSHOT_RETAIN_DAYS }, child);
    const tables = new StateTables(`${name}-state`, { environment: config.environment, kmsKeyArn: key.keyArn }, child);
    const secrets = new PlatformSecrets(`${name}-secrets`, { environment: config.environment, kmsKeyArn: key.keyArn }, child);
    const clusterApi = new ClusterApiAccess(
      `${name}-cluster-api`,
      {
        ...common,
        environment: config.environment,
        hostRoleArn: host.roleArn,
        hostRoleName: host.roleName,
        tableArns: tables.arns,
        signingKeyArn: secrets.signingKeyArn,
        kmsKeyArn: key.keyArn,
      },
      child,
    );
    const attachment = new TenantAttachmentRole(
      `${name}-tenant-attachment`,
      { ...common, environment: config.environment, vpcId: network.vpcId, routeTableIds: [network.privateRouteTableId], hostSecurityGroupId: host.securityGroupId },
      child,
    );
    new ArgoCd(
      `${name}-argocd`,
      { environment: config.environment, kubeconfig: host.kubeconfig, repoUrl: config.fleet.repoUrl, revision: config.fleet.revision, fleetPath: centralFleetPath(config.environment) },
      child,
    );
    emitFleetFiles(
      clusterApi.roleArn.apply((roleArn) =>
        centralFleetFiles({
          environment: config.environment,
          region: config.region,
          repoUrl: config.fleet.repoUrl,
          revision: config.fleet.revision,
          image: config.clusterApi.image,
          roleArn,
          signingKeySecretName: signingKeySecretName(config.environment),
          tableNames: tables.names,
        }),
      ),
    );
    // Fleet (issue 10): the add-ons every tenant's control plane needs; tenants whose stack file is gone are pruned.
    emitFleetFiles(pulumi.output(centralAddOnFiles(config.environment, config.fleet)));
    pruneFleet((root) => orphanedTenantPaths(root, config.environment, tenantIdsOf(config.environment)), pruneFleetPaths);

    this.outputs = {
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
      peeringRoleArn: attachment.roleArn,
      slurmctldEndpoint: pulumi.all([pulumi.all(network.privateSubnetIds), host.instanceId]).apply(([subnetIds, targetInstanceId]) => ({ subnetIds, targetInstanceId, port: SLURM_PORTS.slurmctld })),
      heartbeatEndpoint: pulumi.interpolate`https://${host.privateIp}:${CLUSTER_API_PORT}`,
      kmsKeyArn: key.keyArn,
    };
    this.registerOutputs(this.outputs);
  }
}
