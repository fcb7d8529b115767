/**
 * What the Slurm journey needs to know about the deployment, read from the planned stacks
 * (addresses, subnets, security groups) and the committed fleet (what Slinky, Cilium,
 * Karpenter and Kubernetes are told): nothing about the network is invented here, so a
 * change to the project changes the journey's network with it.
 */
import * as fs from "fs";
import * as path from "path";
import { parseAllDocuments } from "yaml";
import { PROJECT_ROOT } from "../../config";
import type { PlanResult } from "../../planning/plan";
import type { TenantUser } from "../../config/users";
import { CENTRAL_K3S_RANGES, type PortRange, type TenantPorts } from "../../facts/contract";
import { ACCOUNTING_DATABASE, centralFleetPath, slinkyLoginPodLabels, slurmctldServiceAddress, SLURM_RELEASE, tenantNamespace } from "../../facts/fleet";
import { TENANT_DNS_FILE } from "../../components/fleet/tenant-dns";
import { mergeHelmValues, tenantAddOnValueFiles, tenantCentralChartAddOns } from "../../components/fleet/application-set";
import { renderTenantAddOn, toolPath } from "../../fleet-tools/render";
import type { NetworkPolicyObject } from "../host/network-policy";
import { groupsSelectedByTags, instances, securityGroupRules, securityGroups, subnets, vpcs, type SecurityGroupRule } from "../../access/security-groups";

export interface CentralSide {
  readonly environment: string;
  readonly vpcCidr: string;
  /** The K3s host's private address and subnet, as the plan gives the instance. */
  readonly hostAddress: string;
  readonly hostSubnet: string;
  readonly hostGroupIds: readonly string[];
  /** K3s's pod range on central (one node: its first /24 holds every pod). */
  readonly podCidr: string;
  /** Every tenant's DNS pods' NetworkPolicies, as central's fleet file holds them. */
  readonly dnsPolicies: readonly NetworkPolicyObject[];
}

export interface TenantSide {
  readonly id: string;
  readonly namespace: string;
  readonly vpcCidr: string;
  /** The subnet Karpenter launches slurmd nodes in (its EC2NodeClass subnet selector, first match). */
  readonly workerSubnet: string;
  /** Groups Karpenter attaches to slurmd nodes (EC2NodeClass security-group selector); Cilium ENI mode gives pod ENIs the same. */
  readonly workerGroupIds: readonly string[];
  readonly serverAddress: string;
  readonly serverSubnet: string;
  readonly serverGroupIds: readonly string[];
  /** The tenant's slurmctld NodePort on central, as the fleet's Service declares it. */
  readonly nodePort: number;
  /** Its ports on central as its stack file records them (`clusterra:ports`): what the fleet must open. */
  readonly recorded: TenantPorts;
  readonly externalTrafficPolicy: string;
  /** The tenant's srun NodePort Service on central, as the fleet declares it: its ports and where each leads. */
  readonly srun: {
    readonly ports: readonly { readonly port: number; readonly nodePort: number; readonly targetPort: number }[];
    /** The contiguous block the Service's nodePorts make (what the journey forwards). */
    readonly block: PortRange;
    readonly externalTrafficPolicy: string;
    readonly selector: Readonly<Record<string, string>>;
  };
  /** Cilium's masquerade decision. */
  readonly nativeRoutingCidr: string;
  readonly masquerade: boolean;
  /** The customer cluster's selector-less Service for slurmctld and its EndpointSlice. */
  readonly controllerService: { readonly host: string; readonly port: number; readonly endpointAddress: string; readonly endpointPort: number };
  /** NodeSets of the customer release: name and the Features its slurmd registers with. */
  readonly nodeSets: readonly { readonly name: string; readonly features: readonly string[] }[];
  /** How the first NodeSet's slurmd pods get the users. */
  readonly slurmdIdentity: PodIdentity;
  /** The root of the EFS access point, as the plan creates it: owner and mode of /mnt/efs. */
  readonly efsRoot: { readonly uid: number; readonly gid: number; readonly mode: number };
}

/**
 * How one kind of Slurm pod gets the tenant's users, as the fleet declares it: the
 * ConfigMap's files, the init container's command (run against the image's /etc), and
 * whether the Slurm container mounts the merged files over /etc's.
 */
export interface PodIdentity {
  readonly pod: string;
  /** The ConfigMap's data, by file name. */
  readonly files: Readonly<Record<string, string>>;
  readonly command: readonly string[];
  /** The init container's mount of the ConfigMap and of the merged directory. */
  readonly source: string;
  readonly merged: string;
  /** Files the Slurm container mounts from the merged directory, by their /etc path. */
  readonly mountedOverEtc: readonly string[];
}

/** The central release's values that shape slurm.conf (Slinky hybrid: partitions live here). */
export interface ControlPlaneValues {
  readonly clusterName: string;
  readonly extraConf: string;
  readonly accounting: { readonly host: string; readonly port: number; readonly database: string; readonly username: string };
  /** MariaDB's my.cnf from the fleet's MariaDB resource. */
  readonly mariadbCnf: string;
  /** The fleet's mariadb-operator Backup of the accounting database: what it dumps and how it compresses. */
  readonly backup: { readonly name: string; readonly databases: readonly string[]; readonly compression: string; readonly cron: string };
  readonly slurmctldIdentity: PodIdentity;
  readonly loginIdentity: PodIdentity;
  /** The NetworkPolicies of the tenant's namespace on central, as the chart renders them. */
  readonly networkPolicies: readonly NetworkPolicyObject[];
}

export interface JourneyWorld {
  /** The tenant's users, from its stack file (its identity source here). */
  readonly users: readonly TenantUser[];
  readonly central: CentralSide;
  readonly tenant: TenantSide;
  readonly controlPlane: ControlPlaneValues;
  /** The tenant that must not reach the first one's slurmctld. */
  readonly other: TenantSide;
  /** The other tenant's release on central (its namespace's NetworkPolicies, its database's port): the first tenant's code must not reach it. */
  readonly otherControlPlane: ControlPlaneValues;
  readonly rules: readonly SecurityGroupRule[];
}

export interface JourneyPlans {
  readonly central: PlanResult;
  readonly tenant: PlanResult;
  readonly other: PlanResult;
}

type Doc = Record<string, unknown>;

function readYaml(root: string, file: string): Doc[] {
  const text = fs.readFileSync(path.join(root, file), "utf8");
  return parseAllDocuments(text).map((d) => d.toJS() as Doc).filter((d) => d !== null && typeof d === "object");
}

/** A tenant's Helm add-on's values as its Application hands them to the chart (shared file, then the tenant's). */
function addOnValues(root: string, scope: string, tenantId: string, addon: string): Doc {
  return tenantAddOnValueFiles(scope, tenantId, addon).reduce<Doc>((v, f) => mergeHelmValues(v, readYaml(root, f)[0] ?? {}) as Doc, {});
}

function get(doc: unknown, ...keys: (string | number)[]): unknown {
  let v: unknown = doc;
  for (const k of keys) v = v === null || typeof v !== "object" ? undefined : (v as Record<string | number, unknown>)[k];
  return v;
}

function must<T>(value: T | undefined, what: string): T {
  if (value === undefined || value === null) throw new Error(`journey: cannot find ${what}`);
  return value;
}

function byKind(docs: readonly Doc[], kind: string, name?: string): Doc {
  return must(docs.find((d) => d.kind === kind && (name === undefined || get(d, "metadata", "name") === name)), `${kind}${name ? ` ${name}` : ""}`);
}

/**
 * A pod's identity from its values entry (`slurmd`/`slurmctld`/`login` container and
 * `podSpec`) and the ConfigMap of users its namespace holds: the init container that mounts
 * the ConfigMap is the one that merges.
 */
function podIdentity(pod: string, entry: Doc, container: string, configMaps: readonly Doc[]): PodIdentity {
  const volumes = ((get(entry, "podSpec", "volumes") as Doc[] | undefined) ?? []);
  const inits = ((get(entry, "podSpec", "initContainers") as Doc[] | undefined) ?? []);
  const byName = (n: unknown) => volumes.find((v) => v.name === n);
  for (const init of inits) {
    const mounts = ((init.volumeMounts as Doc[] | undefined) ?? []);
    const source = mounts.find((m) => get(byName(m.name), "configMap", "name") !== undefined);
    const merged = mounts.find((m) => get(byName(m.name), "emptyDir") !== undefined);
    if (!source || !merged) continue;
    const mapName = get(byName(source.name), "configMap", "name");
    const map = must(configMaps.find((m) => get(m, "metadata", "name") === mapName), `the ConfigMap ${String(mapName)} ${pod} mounts`);
    const mainMounts = ((get(entry, container, "volumeMounts") as Doc[] | undefined) ?? []).filter((m) => m.name === merged.name && typeof m.subPath === "string");
    return {
      pod,
      files: (map.data ?? {}) as Record<string, string>,
      command: ((init.command as unknown[]) ?? []).map(String).concat(((init.args as unknown[]) ?? []).map(String)),
      source: String(source.mountPath),
      merged: String(merged.mountPath),
      mountedOverEtc: mainMounts.filter((m) => m.mountPath === `/etc/${String(m.subPath)}`).map((m) => String(m.mountPath)),
    };
  }
  throw new Error(`journey: ${pod} has no init container that merges a ConfigMap of users into an emptyDir`);
}

function centralSide(plan: PlanResult, root: string): CentralSide {
  if (plan.config.kind !== "central") throw new Error(`journey: ${plan.config.stack} is not a central stack`);
  const resources = plan.deployment.deployment.resources;
  const hosts = instances(resources);
  if (hosts.length !== 1) throw new Error(`journey: central plan has ${hosts.length} instances, expected the one K3s host`);
  const host = hosts[0];
  const subnet = must(subnets(resources).find((s) => s.id === host.subnetId), `subnet ${host.subnetId} of the central host`);
  return {
    environment: plan.config.environment,
    vpcCidr: must(vpcs(resources)[0], "central VPC").cidr,
    hostAddress: host.privateIp,
    hostSubnet: subnet.cidr,
    hostGroupIds: host.groupIds,
    podCidr: CENTRAL_K3S_RANGES.clusterCidr,
    dnsPolicies: readYaml(root, `${centralFleetPath(plan.config.scope)}/${TENANT_DNS_FILE}`).filter((o) => o.kind === "NetworkPolicy") as unknown as NetworkPolicyObject[],
  };
}

function tenantSide(plan: PlanResult, root: string, helm: string): TenantSide {
  const config = plan.config;
  if (config.kind !== "tenant") throw new Error(`journey: ${config.stack} is not a tenant stack`);
  const id = config.tenant.id;
  const resources = plan.deployment.deployment.resources;
  // The cluster's own objects, rendered from its facts as ArgoCD renders them at sync time.
  const clusterObjects = renderTenantAddOn(root, helm, config.central.scope, id, "cluster-manifests") as Doc[];
  const nodeClass = byKind(clusterObjects, "EC2NodeClass");
  const terms = (key: string) => ((get(nodeClass, "spec", key) as Doc[] | undefined) ?? []).map((t) => (t.tags ?? {}) as Record<string, string>);
  const workerSubnet = must(subnets(resources).filter((s) => terms("subnetSelectorTerms").some((t) => Object.entries(t).every(([k, v]) => s.tags[k] === v)))[0], `a subnet for ${id}'s EC2NodeClass`);
  const workerGroups = groupsSelectedByTags(securityGroups(resources), terms("securityGroupSelectorTerms"));
  if (workerGroups.length === 0) throw new Error(`journey: no planned security group matches ${id}'s EC2NodeClass selector`);
  const servers = instances(resources);
  const server = must(servers[0], `${id}'s K3s server`);
  const serverSubnet = must(subnets(resources).find((s) => s.id === server.subnetId), `subnet of ${id}'s server`);

  // Its objects on central, rendered from its facts as ArgoCD renders them (its manifests and its guards: two Applications).
  const centralObjects = tenantCentralChartAddOns().flatMap((addon) => renderTenantAddOn(root, helm, config.central.scope, id, addon)) as Doc[];
  const nodePortService = byKind(centralObjects, "Service", "slurmctld-peering");
  const nodePortEntry = must((get(nodePortService, "spec", "ports") as Doc[] | undefined)?.[0], `${id}'s NodePort`);
  const srunService = byKind(centralObjects, "Service", "srun-peering");
  const srunPorts = ((get(srunService, "spec", "ports") as Doc[] | undefined) ?? []).map((p) => ({ port: Number(p.port), nodePort: Number(p.nodePort), targetPort: Number(p.targetPort) }));
  if (srunPorts.length === 0) throw new Error(`journey: ${id}'s srun Service has no ports`);
  const nodePorts = srunPorts.map((p) => p.nodePort);
  const cilium = addOnValues(root, config.central.scope, id, "cilium");
  const cluster = clusterObjects;
  const address = slurmctldServiceAddress(id);
  const service = byKind(cluster, "Service", address.name);
  const slice = byKind(cluster, "EndpointSlice");
  const slurmValues = addOnValues(root, config.central.scope, id, "slurm");
  // As the chart does: each NodeSet over nodesetDefaults.
  const enabled = Object.entries((slurmValues.nodesets ?? {}) as Record<string, Doc>)
    .map(([name, v]) => [name, mergeHelmValues(slurmValues.nodesetDefaults ?? {}, v) as Doc] as const)
    .filter(([, v]) => v.enabled !== false);
  const nodeSets = enabled.map(([name, v]) => ({ name, features: ((get(v, "extraConfMap", "Features") as string[] | undefined) ?? []).map(String) }));
  const first = must(enabled[0], `a NodeSet in ${id}'s slurm values`);
  const slurmdIdentity = podIdentity(`${id}'s slurmd (NodeSet ${first[0]})`, first[1], "slurmd", clusterObjects.filter((o) => o.kind === "ConfigMap"));
  const accessPoint = must(resources.find((r) => r.type === "aws:efs/accessPoint:AccessPoint"), `${id}'s EFS access point`);
  const creation = (get(accessPoint, "inputs", "rootDirectory", "creationInfo") ?? {}) as Doc;
  return {
    id,
    namespace: tenantNamespace(id),
    vpcCidr: must(vpcs(resources)[0], `${id}'s VPC`).cidr,
    workerSubnet: workerSubnet.cidr,
    workerGroupIds: workerGroups.map((g) => g.id),
    serverAddress: server.privateIp,
    serverSubnet: serverSubnet.cidr,
    serverGroupIds: server.groupIds,
    nodePort: Number(must(nodePortEntry.nodePort, `${id}'s nodePort`)),
    recorded: config.ports,
    externalTrafficPolicy: String(get(nodePortService, "spec", "externalTrafficPolicy") ?? "Cluster"),
    srun: {
      ports: srunPorts,
      block: { from: Math.min(...nodePorts), to: Math.max(...nodePorts) },
      externalTrafficPolicy: String(get(srunService, "spec", "externalTrafficPolicy") ?? "Cluster"),
      selector: (get(srunService, "spec", "selector") ?? {}) as Record<string, string>,
    },
    nativeRoutingCidr: String(must(cilium.ipv4NativeRoutingCIDR, "Cilium's ipv4NativeRoutingCIDR")),
    masquerade: cilium.enableIPv4Masquerade !== false,
    controllerService: {
      host: address.host,
      port: Number(must(get(service, "spec", "ports", 0, "port"), "the slurm-controller Service port")),
      endpointAddress: String(must(get(slice, "endpoints", 0, "addresses", 0), "the EndpointSlice address")),
      endpointPort: Number(must(get(slice, "ports", 0, "port"), "the EndpointSlice port")),
    },
    nodeSets,
    slurmdIdentity,
    efsRoot: { uid: Number(must(creation.ownerUid, "the access point's owner uid")), gid: Number(must(creation.ownerGid, "the access point's owner gid")), mode: parseInt(String(must(creation.permissions, "the access point's permissions")), 8) },
  };
}

function controlPlaneValues(plan: PlanResult, root: string, helm: string): ControlPlaneValues {
  if (plan.config.kind !== "tenant") throw new Error("journey: control-plane values belong to a tenant");
  const tenantId = plan.config.tenant.id;
  const values = addOnValues(root, plan.config.central.scope, tenantId, "control-plane");
  const storage = (get(values, "accounting", "storageConfig") ?? {}) as Doc;
  const scope = plan.config.central.scope;
  const centralObjects = tenantCentralChartAddOns().flatMap((addon) => renderTenantAddOn(root, helm, scope, tenantId, addon)) as Doc[];
  const databaseDocs = centralObjects;
  const mariadb = byKind(databaseDocs, "MariaDB");
  const backup = byKind(databaseDocs, "Backup");
  const users = centralObjects.filter((o) => o.kind === "ConfigMap");
  const loginSet = must(Object.values((values.loginsets ?? {}) as Record<string, Doc>)[0], "a LoginSet in the central release");
  return {
    clusterName: String(must(values.clusterName, "the central release's clusterName")),
    extraConf: String(get(values, "controller", "extraConf") ?? ""),
    slurmctldIdentity: podIdentity("slurmctld", must(values.controller as Doc | undefined, "controller values"), "slurmctld", users),
    loginIdentity: podIdentity("login", loginSet, "login", users),
    accounting: {
      host: String(storage.host ?? ACCOUNTING_DATABASE.service),
      port: Number(storage.port ?? ACCOUNTING_DATABASE.port),
      database: String(storage.database ?? ACCOUNTING_DATABASE.database),
      username: String(storage.username ?? ACCOUNTING_DATABASE.username),
    },
    mariadbCnf: String(get(mariadb, "spec", "myCnf") ?? ""),
    networkPolicies: centralObjects.filter((o) => o.kind === "NetworkPolicy").map((o) => ({ ...(o as unknown as NetworkPolicyObject), metadata: { ...(o.metadata as NetworkPolicyObject["metadata"]), namespace: tenantNamespace(tenantId) } })),
    backup: {
      name: String(get(backup, "metadata", "name")),
      databases: ((get(backup, "spec", "databases") as unknown[] | undefined) ?? []).map(String),
      compression: String(get(backup, "spec", "compression") ?? "none"),
      cron: String(must(get(backup, "spec", "schedule", "cron"), "the Backup's schedule")),
    },
  };
}

/** Everything the journey derives from the three plans and the fleet they wrote in `repository` (journey/example/repository.ts). */
export function journeyWorld(plans: JourneyPlans, repository: string, helm = toolPath(PROJECT_ROOT, "helm")): JourneyWorld {
  if (!helm) throw new Error("journey: helm renders the tenants' cluster objects from their facts; run `bash scripts/install-tools`");
  const tenant = tenantSide(plans.tenant, repository, helm);
  const other = tenantSide(plans.other, repository, helm);
  const rules = [plans.central, plans.tenant, plans.other].flatMap((p) => securityGroupRules(p.deployment.deployment.resources));
  const users = plans.tenant.config.kind === "tenant" ? plans.tenant.config.users : [];
  return { users, central: centralSide(plans.central, repository), tenant, other, controlPlane: controlPlaneValues(plans.tenant, repository, helm), otherControlPlane: controlPlaneValues(plans.other, repository, helm), rules };
}

/** Where the world disagrees with itself: each a defect of the project the journey reports. */
export function worldProblems(world: JourneyWorld): string[] {
  const problems: string[] = [];
  for (const t of [world.tenant, world.other]) {
    if (t.nodePort !== t.recorded.slurmctld) problems.push(`${t.id}: the fleet's NodePort ${t.nodePort} is not the ${t.recorded.slurmctld} its stack file records (clusterra:ports.slurmctld)`);
    problems.push(...srunProblems(t));
    if (t.controllerService.endpointAddress !== world.central.hostAddress) problems.push(`${t.id}: the EndpointSlice points at ${t.controllerService.endpointAddress}, the central host is ${world.central.hostAddress}`);
    if (t.controllerService.endpointPort !== t.nodePort) problems.push(`${t.id}: the EndpointSlice port ${t.controllerService.endpointPort} is not the NodePort ${t.nodePort}`);
  }
  const conf = srunPortRangeOf(world.controlPlane.extraConf);
  const block = world.tenant.srun.block;
  if (!conf || conf.from !== block.from || conf.to !== block.to) problems.push(`${world.tenant.id}: the central release's SrunPortRange ${conf ? `${conf.from}-${conf.to}` : "is missing"}, its srun Service forwards ${block.from}-${block.to}`);
  return problems;
}

/** The srun block's Service against the contract: the tenant's own block, each port forwarded as itself, to the login pod. */
export function srunProblems(t: TenantSide): string[] {
  const problems: string[] = [];
  const expected = t.recorded.srunBlock;
  const { block, ports } = t.srun;
  if (block.from !== expected.from || block.to !== expected.to || ports.length !== expected.to - expected.from + 1) {
    problems.push(`${t.id}: the srun Service's nodePorts ${block.from}-${block.to} (${ports.length}) are not the block ${expected.from}-${expected.to} its stack file records (clusterra:ports.srun)`);
  }
  const moved = ports.filter((p) => p.port !== p.nodePort || p.targetPort !== p.nodePort);
  if (moved.length > 0) problems.push(`${t.id}: srun ports not forwarded as themselves: ${moved.map((p) => `${p.nodePort}->${p.targetPort}`).join(", ")}`);
  const login = slinkyLoginPodLabels();
  if (Object.entries(login).some(([k, v]) => t.srun.selector[k] !== v)) problems.push(`${t.id}: the srun Service selects ${JSON.stringify(t.srun.selector)}, not the login pod ${JSON.stringify(login)}`);
  return problems;
}

/** The SrunPortRange a slurm.conf (here the central release's extraConf) gives srun. */
export function srunPortRangeOf(conf: string): PortRange | undefined {
  const m = /^\s*SrunPortRange=(\d+)-(\d+)\s*$/m.exec(conf);
  return m ? { from: Number(m[1]), to: Number(m[2]) } : undefined;
}

/** Slinky v1.2.1's names in a tenant namespace (pods of StatefulSets are `<name>-0`). */
export function slinkyNames(tenant: TenantSide): { controllerPod: string; controllerService: string; accountingPod: string; accountingService: string } {
  return {
    controllerPod: `${SLURM_RELEASE}-controller-0`,
    controllerService: tenant.controllerService.host,
    accountingPod: `${SLURM_RELEASE}-accounting-0`,
    accountingService: `${SLURM_RELEASE}-accounting.${tenant.namespace}`,
  };
}
