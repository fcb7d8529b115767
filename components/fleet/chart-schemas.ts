/**
 * The values.schema.json of the tenant local charts (fleet/charts/tenant-cluster,
 * tenant-control-plane, tenant-guards, edge-agent, tenant-entry). Helm checks the merged values against it before it renders, and so
 * does ArgoCD at every sync, whatever ran in CI: a value off its pattern (an id with a shell
 * character, an address that is not one, a port outside the NodePort range) stops the render
 * instead of reaching a worker's boot script or a Service. Built from the patterns the stack
 * files and facts files are validated with, and written by the central stack with every
 * tenant's shared values (`pulumi up`, `fleet write`; `fleet check --render` compares).
 */
import { DNS_LABEL, ENVIRONMENT, SEMVER_K3S, str } from "../../config/schema";
import { NODE_PORT_RANGE, SRUN_PORT_BLOCK_SIZE } from "../../facts/contract";
import { CLUSTER_SECRET_FACTS, LOCAL_CHARTS, ROLLOUT_WAVES, tenantClusterProjectSuffix, type ClusterSecretFact } from "../../facts/fleet";
import { REGIONS } from "../../facts/regions";
import { ARGOCD_IN_CLUSTER } from "../../facts/versions";
import { CAPACITY_TYPES, SHAPE_FAMILIES, SHAPE_SIZES } from "../../facts/shapes";
import { centralFactSchema, tenantFactSchema, type CentralCloudFacts, type TenantCloudFacts } from "./facts";

type Schema = Record<string, unknown>;

/** An object with exactly these keys, all required. */
const obj = (properties: Record<string, Schema>): Schema => ({ type: "object", properties, required: Object.keys(properties), additionalProperties: false });
const list = (items: Schema, description: string): Schema => ({ type: "array", items, minItems: 1, description });
const facts = (...keys: (keyof TenantCloudFacts)[]): Record<string, Schema> => Object.fromEntries(keys.map((k) => [k, tenantFactSchema(k)]));
const centralFacts = (...keys: (keyof CentralCloudFacts)[]): Record<string, Schema> => Object.fromEntries(keys.map((k) => [k, centralFactSchema(k)]));

const REGION: Schema = { type: "string", enum: Object.keys(REGIONS), description: "an AWS region the program accepts (facts/regions.ts)" };
/** Lines of /etc/passwd or /etc/group: no quote, no `$`, no backslash; each line ends with a newline. */
// `*` is a user's password field (config/users.ts NO_PASSWORD).
const ETC_LINES = str("^([A-Za-z0-9_.,:/ *-]*\\n)*$", "lines of passwd or group entries, each ending with a newline");
const USERS = obj({ passwd: ETC_LINES, group: ETC_LINES });
/** Tag values the stack writes (facts/project.ts stackTags). */
const TAGS: Schema = { type: "object", additionalProperties: str("^[A-Za-z0-9_.:/=+@ -]{1,256}$", "a tag value"), minProperties: 1 };
const NODE_PORT: Schema = { type: "integer", minimum: NODE_PORT_RANGE.from, maximum: NODE_PORT_RANGE.to };
const TENANT_CIDR = str("^(10|172|192)\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}/[0-9]{1,2}$", "the tenant VPC's private IPv4 CIDR");
const SRUN_PORTS: Schema = { ...obj({ from: NODE_PORT, to: NODE_PORT }), description: `the tenant's srun block: ${SRUN_PORT_BLOCK_SIZE} NodePorts` };

/**
 * A chart's schema: the tenant's own keys and the facts the chart reads, all required. The
 * shared values (every tenant's, written with the ApplicationSet) are only required to be
 * there: they are the facts/ tables, and the tenant's files cannot change them (read last).
 */
function chartSchema(title: string, tenant: Record<string, Schema>, shared: readonly string[]): Schema {
  return {
    $schema: "http://json-schema.org/draft-07/schema#",
    title,
    type: "object",
    properties: { ...tenant, ...Object.fromEntries(shared.map((k) => [k, { type: ["object", "array"] }])) },
    required: [...Object.keys(tenant), ...shared],
  };
}

/** fleet/charts/tenant-cluster/values.schema.json */
export function tenantClusterValuesSchema(): Schema {
  const shape = obj({
    name: DNS_LABEL,
    category: { type: "string", enum: [...new Set(Object.values(SHAPE_FAMILIES).map((f) => f.category))] },
    sizes: list({ type: "string", enum: SHAPE_SIZES.map(String) }, "the shape's vCPU sizes"),
    capacityTypes: list({ type: "string", enum: [...CAPACITY_TYPES] }, "capacity types Karpenter may launch"),
    cpuLimit: str("^[1-9][0-9]*$", "the pool's CPU limit"),
  });
  return chartSchema("A tenant cluster's own objects: the tenant's values and facts", {
    tenantId: DNS_LABEL,
    environment: ENVIRONMENT,
    clusterName: DNS_LABEL,
    region: REGION,
    centralRegion: REGION,
    k3sVersion: SEMVER_K3S,
    controllerNamespace: DNS_LABEL,
    tags: TAGS,
    shapes: list(shape, "one entry per shape"),
    users: USERS,
    ...facts("serverAddress", "kmsKeyArn", "fileSystemId", "accessPointId", "instanceProfileName", "slurmctld", "keySecretArns", "externalSecretsRoleArn"),
    ...centralFacts("centralHostIp"),
  }, ["nodeClass", "nodePool", "slurmKeys", "usersConfigMap", "controllerService", "slurmClusterName"]);
}

/** fleet/charts/tenant-control-plane/values.schema.json */
export function tenantControlPlaneValuesSchema(): Schema {
  const secretName = str("^[A-Za-z0-9/_+=.@-]{1,512}$", "a Secrets Manager secret name");
  return chartSchema("A tenant's objects on central: the tenant's values and facts", {
    centralRegion: REGION,
    srunPorts: SRUN_PORTS,
    secretNames: obj({ slurm: secretName, jwt: secretName, mariadb: secretName }),
    users: USERS,
    ...facts("secretsRoleArn", "slurmctld"),
    ...centralFacts("centralHostIp"),
  }, ["namespaced", "secrets", "usersConfigMap", "peering"]);
}

/** fleet/charts/tenant-guards/values.schema.json: what its policies read of the tenant (its VPC, its srun block) and of central (its host). */
export function tenantGuardsValuesSchema(): Schema {
  return chartSchema("What contains a tenant on central: the tenant's values and central's facts", {
    tenantCidr: TENANT_CIDR,
    srunPorts: SRUN_PORTS,
    ...centralFacts("centralHostIp"),
  }, ["guards", "policies"]);
}

/** fleet/charts/edge-agent/values.schema.json: the agent's identity and the facts it reads (its role goes into an AWS config file). */
export function edgeAgentValuesSchema(): Schema {
  return chartSchema("A tenant's edge-agent: the tenant's values and facts", {
    tenantId: DNS_LABEL,
    clusterName: DNS_LABEL,
    aws: obj({ region: REGION }),
    ...facts("edgeAgentRoleArn"),
    ...centralFacts("heartbeatEndpoint", "heartbeatCaPem"),
  }, ["image", "nodeSets", "heartbeat"]);
}

/** fleet/charts/tenant-entry/values.schema.json: the tenant's id (its folder's name), its wave and the facts its entry reads. */
export function tenantEntryValuesSchema(): Schema {
  return chartSchema("A tenant's entry on central: its folder's name, its wave and facts", {
    tenantId: { ...DNS_LABEL, not: { pattern: `${tenantClusterProjectSuffix()}$` }, description: `the tenant's folder; a DNS label not ending in "${tenantClusterProjectSuffix()}" (it would name another tenant's cluster project)` },
    rolloutWave: { type: "string", enum: [...ROLLOUT_WAVES] },
    environment: ENVIRONMENT,
    centralRegion: REGION,
    inCluster: { type: "string", const: ARGOCD_IN_CLUSTER },
    ...facts("serverAddress", "secretsRoleArn", ...(Object.keys(CLUSTER_SECRET_FACTS) as ClusterSecretFact[])),
  }, ["names", "labels", "projects", "credential"]);
}

/** Each tenant local chart's schema file, by path. */
export function tenantChartSchemaFiles(): Record<string, string> {
  return {
    [`${LOCAL_CHARTS.edgeAgent}/values.schema.json`]: `${JSON.stringify(edgeAgentValuesSchema(), null, 2)}\n`,
    [`${LOCAL_CHARTS.tenantCluster}/values.schema.json`]: `${JSON.stringify(tenantClusterValuesSchema(), null, 2)}\n`,
    [`${LOCAL_CHARTS.tenantControlPlane}/values.schema.json`]: `${JSON.stringify(tenantControlPlaneValuesSchema(), null, 2)}\n`,
    [`${LOCAL_CHARTS.tenantEntry}/values.schema.json`]: `${JSON.stringify(tenantEntryValuesSchema(), null, 2)}\n`,
    [`${LOCAL_CHARTS.tenantGuards}/values.schema.json`]: `${JSON.stringify(tenantGuardsValuesSchema(), null, 2)}\n`,
  };
}
