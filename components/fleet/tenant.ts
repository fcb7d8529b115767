/**
 * Everything one tenant stack writes into fleet/: its cluster's add-ons, its control
 * plane on central, its Applications, and central's entry for it (projects, app-of-apps,
 * the cluster credential). One call, so the stack and `fleet check` render the same way.
 */
import { ConfigError, readStackFile, resolveConfig, stackFilePath, stackShortName, type CentralConfig } from "../../config";
import type { FleetRepo } from "./argo";
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

/** The fleet repository a tenant's central follows (from central's validated stack file). */
export function centralFleetRepo(centralStack: string): FleetRepo {
  const short = stackShortName(centralStack);
  const read = readStackFile(stackFilePath(short), short);
  if (!read.file) throw new ConfigError(read.issues);
  const central = resolveConfig(read.file) as CentralConfig;
  return { repoUrl: central.fleet.repoUrl, revision: central.fleet.revision };
}
