/**
 * Everything one tenant stack writes into fleet/: its cloud facts, its cluster's add-ons' values
 * and manifests, its control plane on central, and central's entry for it (projects, the
 * cluster credential its Applications are generated from). One call from the stack file and the facts, so
 * `pulumi up`, `fleet write` and `fleet check` render the same way.
 */
import { ConfigError, PROJECT_ROOT, readStackFile, resolveConfig, stackFilePath, stackShortName, type CentralConfig, type TenantConfig } from "../../config";
import { coveringCidr } from "../../config/cidr";
import { srunPortBlock } from "../../facts/contract";
import { tenantClusterName } from "../../facts/tenant-cluster";
import { nodeSetPlans } from "../tenant/sizing";
import { centralOnlySecretNames, slurmKeySecretNames } from "../tenant/slurm-keys";
import { factsFile, tenantFactsPath, type TenantCloudFacts } from "./facts";
import { controlPlaneDocuments, type ControlPlaneFacts } from "./control-plane";
import { tenantAppDocuments, type TenantAppsFacts } from "./tenant-apps";
import { tenantClusterFleetFiles, type TenantClusterFacts } from "./tenant-cluster";
import type { FleetFileSet } from "./writer";
import { yamlFile } from "./yaml-file";

export function tenantFleetFiles(cluster: TenantClusterFacts, controlPlane: ControlPlaneFacts, apps: TenantAppsFacts): FleetFileSet {
  const source = `pulumi up -s tenant-${cluster.tenantId}-${cluster.environment}`;
  const documents = { ...controlPlaneDocuments(controlPlane), ...tenantAppDocuments(apps) };
  return {
    ...tenantClusterFleetFiles(cluster),
    ...Object.fromEntries(Object.entries(documents).map(([file, docs]) => [file, yamlFile(source, ...docs)])),
  };
}

/** A tenant stack's whole fleet output: its facts file and every file derived from its stack file and those facts. */
export function tenantStackFleetFiles(config: TenantConfig, facts: TenantCloudFacts, root = PROJECT_ROOT): FleetFileSet {
  const id = config.tenant.id;
  const clusterName = tenantClusterName(config.environment, id);
  const nodeSets = nodeSetPlans(config.shapes);
  const central = centralConfigOf(config.central.stack, root);
  const common = { environment: config.environment, tenantId: id, clusterName };
  const derived = tenantFleetFiles(
    {
      ...common,
      region: config.region,
      serverAddress: facts.serverAddress,
      nativeRoutingCidr: coveringCidr([config.network.vpcCidr, config.central.vpcCidr]),
      karpenter: { interruptionQueueName: facts.interruptionQueueName },
      k3sVersion: config.k3sVersion,
      nodeSets,
      centralRegion: config.central.region,
      users: config.users,
    },
    {
      ...common,
      centralRegion: config.central.region,
      secretNames: { ...slurmKeySecretNames(config.environment, id), mariadb: centralOnlySecretNames(config.environment, id).mariadb },
      tenantCidr: config.network.vpcCidr,
      srunPortBlock: srunPortBlock(id),
      nodeSets,
      users: config.users,
    },
    {
      ...common,
      rolloutWave: config.rolloutWave,
      repoUrl: central.fleet.repoUrl,
      serverAddress: facts.serverAddress,
      centralRegion: config.central.region,
      secretsRoleArn: facts.secretsRoleArn,
      clusterCredentialSecret: centralOnlySecretNames(config.environment, id).argocdCluster,
    },
  );
  return { [tenantFactsPath(config.environment, id)]: factsFile(config.stack, facts), ...derived };
}

/** A tenant's central, from its validated stack file (the fleet repository it follows, its backup policy). */
export function centralConfigOf(centralStack: string, root = PROJECT_ROOT): CentralConfig {
  const short = stackShortName(centralStack);
  const read = readStackFile(stackFilePath(short), short, root);
  if (!read.file) throw new ConfigError(read.issues);
  return resolveConfig(read.file, root) as CentralConfig;
}
