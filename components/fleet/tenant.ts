/**
 * Everything one tenant stack writes into fleet/: its cloud facts, its cluster's add-ons' values
 * and manifests, its control plane on central, and its entry file (its rollout wave: the
 * tenant-entries ApplicationSet renders central's entry for it from its folder). One call
 * from the stack file and the facts, so `pulumi up`, `fleet write` and `fleet check` render
 * the same way.
 */
import type { TenantConfig } from "../../config";
import { coveringCidr } from "../../config/cidr";
import { TENANT_ENTRY_FILE, TENANT_USERS_FILE, tenantFleetPath, type RolloutWave } from "../../facts/fleet";
import { EFS_MOUNT_PATH, tenantClusterName } from "../../facts/tenant-cluster";
import { usersFiles } from "../identity/passwd";
import { nodeSetPlans } from "../../config/sizing";
import { centralOnlySecretNames, slurmKeySecretNames } from "../../facts/project";
import { factsFile, tenantFactsPath, type TenantCloudFacts } from "./facts";
import { controlPlaneDocuments, type ControlPlaneFacts } from "./control-plane";
import { tenantEntryValues } from "./tenant-entry";
import { tenantClusterFleetFiles, type TenantClusterFacts } from "./tenant-cluster";
import type { FleetFileSet } from "./writer";
import { yamlFile } from "./yaml-file";

/** What a tenant's entry on central reads from its own folder besides its facts. */
export interface TenantEntryFacts {
  /** When a fleet-wide change reaches the tenant (its Applications' and cluster Secret's wave label). */
  readonly rolloutWave: RolloutWave;
}

export function tenantFleetFiles(cluster: TenantClusterFacts, controlPlane: ControlPlaneFacts, entry: TenantEntryFacts): FleetFileSet {
  const source = `stack tenant-${cluster.tenantId}-${cluster.environment}`;
  return {
    ...tenantClusterFleetFiles(cluster),
    ...Object.fromEntries(Object.entries(controlPlaneDocuments(controlPlane)).map(([file, docs]) => [file, yamlFile(source, ...docs)])),
    [`${tenantFleetPath(cluster.scope, cluster.tenantId)}/${TENANT_ENTRY_FILE}`]: yamlFile(source, tenantEntryValues(entry.rolloutWave)),
    [`${tenantFleetPath(cluster.scope, cluster.tenantId)}/${TENANT_USERS_FILE}`]: yamlFile(source, { users: usersFiles(cluster.users, EFS_MOUNT_PATH) }),
  };
}

/** A tenant stack's whole fleet output: its facts file and every file derived from its stack file and those facts. */
export function tenantStackFleetFiles(config: TenantConfig, facts: TenantCloudFacts): FleetFileSet {
  const id = config.tenant.id;
  const clusterName = tenantClusterName(config.environment, id);
  const nodeSets = nodeSetPlans(config.shapes);
  const common = { environment: config.environment, scope: config.central.scope, tenantId: id, clusterName };
  const derived = tenantFleetFiles(
    {
      ...common,
      region: config.region,
      nativeRoutingCidr: coveringCidr([config.network.vpcCidr, config.central.vpcCidr]),
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
      srunPortBlock: config.ports.srunBlock,
      nodeSets,
      users: config.users,
    },
    { rolloutWave: config.rolloutWave },
  );
  return { [tenantFactsPath(config.central.scope, id)]: factsFile(config.stack, facts), ...derived };
}
