/**
 * The one place configuration is checked. `validateStack` takes a stack's raw values and
 * the other stack files beside it, and returns either a typed StackConfig or every issue
 * found, each naming the file, the key, the value and what would be valid.
 */
import Ajv, { ErrorObject } from "ajv";
import { centralScope, CONFIG_NAMESPACE, StackKind } from "../facts/project";
import { ACCOUNTING_BACKUP, DEFAULT_ROLLOUT_WAVE, platformNameSlots, tenantClusterProjectSuffix, type RolloutWave } from "../facts/fleet";
import { REGIONS, ZONE_SUFFIXES } from "../facts/regions";
import { EFS_MOUNT_PATH, TENANT_K3S_VERSION } from "../facts/tenant-cluster";
import { checkCentralCapacity, openACell, tenantStacksOf } from "./capacity";
import { instanceTypeProblem } from "./catalog";
import { nearest } from "./validate-text";
import { cidrsOverlap, hostAddress, hostAddressProblem, ipv4AddressProblem, vpcCidrProblem } from "./cidr";
import { tenantServerAddress } from "./subnet-layout";
import { formatPorts, freePorts, ownPortConflict, portConflicts, PORTS_KEY, recordedPorts, TENANTS_PER_NODE_PORT_RANGE } from "./tenant-ports";
import { IDENTITY_FILES_MAX, identityFileBytes, userProblems, type TenantUser } from "./users";
import { maxTenantIdLength, tenantNameProblems } from "./tenant-names";
import { AWS_KEYS, COMMON_SCHEMA, SCHEMAS } from "./schema";
import type { CentralConfig, CentralTenant, ConfigIssue, ConnectorAttachment, ConnectorConfig, ExistingNetworkConfig, NetworkConfig, StackConfig, StackFile, TenantConfig } from "./types";
import type { TenantPorts } from "../facts/contract";

export type Validation = { ok: true; config: StackConfig } | { ok: false; issues: ConfigIssue[] };

const ajv = new Ajv({ allErrors: true, verbose: true, strict: false });
const validators = new Map<string, ReturnType<typeof ajv.compile>>();

function validatorFor(kind: StackKind | undefined) {
  const id = kind ?? "common";
  let v = validators.get(id);
  if (!v) {
    const common = COMMON_SCHEMA as { properties: object; required: string[] };
    const specific = (kind ? SCHEMAS[kind] : { properties: {}, required: [] }) as { properties: object; required: string[] };
    v = ajv.compile({
      ...COMMON_SCHEMA,
      properties: { ...common.properties, ...specific.properties },
      required: [...common.required, ...specific.required],
      additionalProperties: kind !== undefined ? false : true,
    });
    validators.set(id, v);
  }
  return v;
}

const awsValidator = ajv.compile({ type: "object", properties: AWS_KEYS, required: ["region"], additionalProperties: false });

/** Last segment of `org/project/stack`. */
export function stackShortName(stack: string): string {
  return stack.split("/").pop() as string;
}

export function validateStack(source: StackFile, siblings: readonly StackFile[] = []): Validation {
  const issues: ConfigIssue[] = [];
  const add = (key: string, value: unknown, problem: string, valid: string) =>
    issues.push({ file: source.file, key, value, problem, valid });

  const aws: Record<string, unknown> = {};
  const own: Record<string, unknown> = {};
  for (const [fullKey, value] of Object.entries(source.values)) {
    const [ns, ...rest] = fullKey.split(":");
    const key = rest.join(":");
    // Assigning these would change the object's prototype instead of adding a key.
    if (["__proto__", "constructor", "prototype"].includes(key)) add(fullKey, value, "is a reserved name", "configuration keys only");
    else if (ns === "aws" && key) aws[key] = value;
    else if (ns === CONFIG_NAMESPACE && key) own[key] = value;
    else add(fullKey, value, "unknown key", `keys in the namespaces aws: (${Object.keys(AWS_KEYS).join(", ")}) and ${CONFIG_NAMESPACE}:`);
  }

  if (!awsValidator(aws)) issues.push(...(awsValidator.errors ?? []).map((e) => fromAjv(source.file, "aws", e)));
  const region = typeof aws.region === "string" ? aws.region : undefined;
  if (region !== undefined && !(region in REGIONS)) {
    add("aws:region", region, "unknown region", `an AWS region such as ${nearest(region, Object.keys(REGIONS)) ?? "us-east-1"}`);
  }

  const kind = (["central", "tenant", "connector"] as const).find((k) => k === own.kind);
  const validate = validatorFor(kind);
  if (!validate(own)) issues.push(...(validate.errors ?? []).map((e) => fromAjv(source.file, CONFIG_NAMESPACE, e)));

  // Arithmetic checks run on whatever parts are well-formed, so every problem shows at once.
  const regionOk = region !== undefined && region in REGIONS;
  checkNetwork(own.network, "network", regionOk ? region : undefined, add);
  if (kind === "tenant") checkTenant(own, aws, source, siblings, add);
  if (kind === "connector") checkConnector(own, aws, siblings, add);
  if (kind === "central") checkCentral(own, add);
  if (kind === "central") checkCentralCell(source, own, siblings, add);
  if (kind === "central") {
    checkCentralHoldsItsTenants(source, own, siblings, add);
    checkRemovedTenants(own, tenantStacksOf(source.stack, siblings), add);
  }

  if (issues.length > 0) return { ok: false, issues: dedupe(issues) };
  const typed = toTyped(source, region as string, aws, own, kind as StackKind, centralOf(own, siblings), connectorsOf(source.stack, siblings));
  return { ok: true, config: typed.kind === "central" ? { ...typed, tenants: tenantsOf(source.stack, siblings) } : typed };
}

type Add = (key: string, value: unknown, problem: string, valid: string) => void;

function checkNetwork(network: unknown, key: string, region: string | undefined, add: Add): void {
  if (!isObject(network)) return;
  if (typeof network.vpcCidr === "string") {
    const problem = vpcCidrProblem(network.vpcCidr);
    if (problem) add(`${CONFIG_NAMESPACE}:${key}.vpcCidr`, network.vpcCidr, problem, "a private IPv4 CIDR of /16 to /24, such as 10.20.0.0/16");
  }
  const zones = network.availabilityZones;
  const zonesKey = `${CONFIG_NAMESPACE}:${key}.availabilityZones`;
  const zonesValid = `a zone count from 1 to ${ZONE_SUFFIXES.length}, or a list of distinct zone names in ${region ?? "the stack's region"} such as ${region ?? "us-east-1"}a`;
  if (typeof zones === "number") {
    if (!Number.isInteger(zones) || zones < 1 || zones > ZONE_SUFFIXES.length) add(zonesKey, zones, "not a valid zone count", zonesValid);
  } else if (Array.isArray(zones)) {
    const bad = zones.filter((z) => typeof z !== "string" || (region !== undefined && !new RegExp(`^${region}[a-z]$`).test(z)));
    if (zones.length === 0 || bad.length > 0) add(zonesKey, zones, bad.length ? `not zones of ${region}: ${bad.join(", ")}` : "empty list", zonesValid);
    else if (new Set(zones).size !== zones.length) add(zonesKey, zones, "a zone is listed twice", zonesValid);
  } else if (zones !== undefined) {
    add(zonesKey, zones, "neither a count nor a list", zonesValid);
  }
}

/** A tenant stack's name: tenant-<id>-<environment>. */
export function tenantStackName(id: string, environment: string): string {
  return `tenant-${id}-${environment}`;
}

/** Where a tenant deployed before ports were recorded finds the ones it has. */
const LIVE_PORTS = "its facts file's slurmctld.port and its SrunPortRange in central's slurm.conf";

function checkTenant(own: Record<string, unknown>, aws: Record<string, unknown>, source: StackFile, siblings: readonly StackFile[], add: Add): void {
  const ns = CONFIG_NAMESPACE;
  const central = isObject(own.central) ? own.central : {};
  const network = isObject(own.network) ? own.network : {};
  // A new VPC takes zones; an existing one takes its id and subnets; never a mix.
  const existing = network.vpcId !== undefined || network.subnetIds !== undefined;
  const cidr = typeof network.vpcCidr === "string" && !vpcCidrProblem(network.vpcCidr) ? network.vpcCidr : undefined;
  const serverKey = `${ns}:network.serverPrivateIp`;
  const serverValid = `an IPv4 address in network.vpcCidr${cidr ? ` (${cidr})` : ""} and in the first of subnetIds, not one AWS reserves (a subnet's first four and last), such as ${cidr ? hostAddress(cidr, 10) : "10.16.0.10"}`;
  if (isObject(own.network) && existing) {
    const valid = "either availabilityZones (a new VPC) or vpcId, subnetIds and serverPrivateIp (an existing VPC)";
    if (network.vpcId === undefined) add(`${ns}:network.vpcId`, undefined, "missing: subnetIds name an existing VPC's subnets", valid);
    if (network.subnetIds === undefined) add(`${ns}:network.subnetIds`, undefined, "missing: vpcId names an existing VPC", valid);
    if (network.availabilityZones !== undefined) add(`${ns}:network.availabilityZones`, network.availabilityZones, "set with an existing VPC, whose zones are its subnets'", valid);
    if (network.serverPrivateIp === undefined) add(serverKey, undefined, "missing: in an existing VPC the K3s server's fixed address is configured (central names it in its rules)", serverValid);
  } else if (isObject(own.network)) {
    if (network.availabilityZones === undefined) add(`${ns}:network.availabilityZones`, undefined, "missing", "a zone count from 1 to 6 or a list of zone names (or vpcId, subnetIds and serverPrivateIp for an existing VPC)");
    if (network.serverPrivateIp !== undefined) add(serverKey, network.serverPrivateIp, "set with a new VPC, where the server's address is derived from its NAT subnet", "leave it out (or adopt an existing VPC with vpcId and subnetIds)");
  }
  if (existing && typeof network.serverPrivateIp === "string") {
    const problem = cidr ? hostAddressProblem(network.serverPrivateIp, cidr) : ipv4AddressProblem(network.serverPrivateIp);
    if (problem) add(serverKey, network.serverPrivateIp, problem, serverValid);
  }
  const tenant = isObject(own.tenant) ? own.tenant : {};
  const centralCidr = typeof central.vpcCidr === "string" && !vpcCidrProblem(central.vpcCidr) ? central.vpcCidr : undefined;

  if (typeof central.vpcCidr === "string" && vpcCidrProblem(central.vpcCidr)) {
    add(`${ns}:central.vpcCidr`, central.vpcCidr, vpcCidrProblem(central.vpcCidr) as string, "the central stack's VPC CIDR, a private IPv4 CIDR of /16 to /24");
  }
  if (central.region !== undefined && !(typeof central.region === "string" && central.region in REGIONS)) {
    add(`${ns}:central.region`, central.region, "unknown region", "an AWS region such as us-east-1");
  }
  if (cidr && centralCidr && cidrsOverlap(cidr, centralCidr)) {
    add(`${ns}:network.vpcCidr`, cidr, `overlaps the central VPC ${centralCidr}`, "a private CIDR that overlaps neither central nor another tenant");
  }
  if (Array.isArray(aws.allowedAccountIds) && typeof tenant.accountId === "string" && !aws.allowedAccountIds.includes(tenant.accountId)) {
    add("aws:allowedAccountIds", aws.allowedAccountIds, `does not include the tenant account ${tenant.accountId}`, "a list that includes clusterra:tenant.accountId");
  }
  // One of the platform's own name slots (clusterra-<env>-cluster-api, -alarms, -connector-*, -tenant-*) would read as this tenant's.
  if (typeof tenant.id === "string" && typeof own.environment === "string" && platformNameSlots(own.environment).includes(tenant.id)) {
    add(`${ns}:tenant.id`, tenant.id, `would make the platform's own names (clusterra-${own.environment}-${tenant.id}-...) read as this tenant's`, `any other DNS label (not ${platformNameSlots(own.environment).join(", ")})`);
  }
  // tenant-<id>-cluster is tenant <id>'s cluster project: an id ending so would name another tenant's project.
  const clusterSuffix = tenantClusterProjectSuffix();
  if (typeof tenant.id === "string" && tenant.id.endsWith(clusterSuffix)) {
    add(`${ns}:tenant.id`, tenant.id, `ends in "${clusterSuffix}": its ArgoCD project would be tenant ${tenant.id.slice(0, -clusterSuffix.length)}'s cluster project`, `a DNS label not ending in "${clusterSuffix}"`);
  }
  // The names the id goes into bind its length (S3, IAM, Kubernetes); nothing else does.
  if (typeof tenant.id === "string" && typeof own.environment === "string") {
    const problems = tenantNameProblems(own.environment, tenant.id);
    const max = maxTenantIdLength(own.environment);
    if (problems.length > 0) add(`${ns}:tenant.id`, tenant.id, problems.join("; "), `an id of at most ${max.length} characters in environment ${own.environment} (${max.what} binds it)`);
  }
  // The stack's name says whose it is: `pulumi up -s tenant-acme-dev` must never deploy another tenant.
  if (typeof tenant.id === "string" && typeof own.environment === "string" && source.stack !== tenantStackName(tenant.id, own.environment)) {
    add(`${ns}:tenant.id`, tenant.id, `disagrees with the stack's name ${source.stack} (${source.file})`, `the id the stack is named for: stack ${tenantStackName(tenant.id, own.environment)} (stacks/Pulumi.tenant-<id>-<environment>.yaml) holds tenant ${tenant.id}`);
  }
  const users = typedUsers(own.users);
  for (const p of userProblems(users.map((u) => u.user), (i) => users[i].at)) add(`${ns}:users[${p.index}].${p.field}`, p.value, p.problem, p.valid);
  // Every Slurm pod reads the users from one ConfigMap, which Kubernetes refuses over its limit.
  const identityBytes = identityFileBytes(users.map((u) => u.user), EFS_MOUNT_PATH);
  if (identityBytes > IDENTITY_FILES_MAX) {
    add(`${ns}:users`, `${users.length} users`, `make passwd and group files of ${identityBytes.toLocaleString("en-US")} bytes, over the ${IDENTITY_FILES_MAX.toLocaleString("en-US")} the users' ConfigMap holds (Kubernetes refuses a ConfigMap's data over 1 MiB)`, `fewer users in the stack file: at most ${IDENTITY_FILES_MAX.toLocaleString("en-US")} bytes of passwd and group (about ${Math.floor((IDENTITY_FILES_MAX * users.length) / identityBytes).toLocaleString("en-US")} users of names like these)`);
  }
  const ports = recordedPorts(source.values);
  const ownConflict = ports ? ownPortConflict(ports) : undefined;
  if (ownConflict) add(PORTS_KEY, own.ports, ownConflict, "a block that starts after the slurmctld port or ends before it");
  if (Array.isArray(own.shapes)) {
    const seen = new Map<string, number>();
    own.shapes.forEach((s, i) => {
      if (!isObject(s) || typeof s.name !== "string") return;
      if (seen.has(s.name)) add(`${ns}:shapes[${i}].name`, s.name, `duplicates shapes[${seen.get(s.name)}].name`, "a name no other shape in this stack uses");
      else seen.set(s.name, i);
    });
  }

  // Across stack files: tenants joining the same central must differ in id and CIDR.
  const centralName = typeof central.stack === "string" ? stackShortName(central.stack) : undefined;
  if (centralName === undefined) return;
  const centralFile = siblings.find((f) => f.stack === centralName);
  if (!centralFile) {
    add(`${ns}:central.stack`, central.stack, "no stack file for that central stack", `a stack with a file in the stacks folder (${siblings.filter((f) => f.values[`${ns}:kind`] === "central").map((f) => f.stack).join(", ") || "none found"})`);
  } else {
    const theirs = centralFile.values[`${ns}:network`];
    const theirCidr = isObject(theirs) ? theirs.vpcCidr : undefined;
    if (typeof theirCidr === "string" && centralCidr && theirCidr !== centralCidr) {
      add(`${ns}:central.vpcCidr`, central.vpcCidr, `differs from ${centralFile.file}'s network.vpcCidr`, theirCidr);
    }
    const theirRegion = centralFile.values["aws:region"];
    if (typeof theirRegion === "string" && central.region !== undefined && central.region !== theirRegion) {
      add(`${ns}:central.region`, central.region, `differs from ${centralFile.file}'s aws:region`, `${theirRegion} (or leave it out: it defaults to the central stack's region)`);
    }
    const theirK3s = (centralFile.values[`${ns}:controlPlane`] as { k3sVersion?: unknown } | undefined)?.k3sVersion;
    const ownK3s = typeof own.k3sVersion === "string" ? own.k3sVersion : TENANT_K3S_VERSION;
    const skew = typeof theirK3s === "string" ? k3sSkewProblem(ownK3s, theirK3s) : undefined;
    if (skew) add(`${ns}:k3sVersion`, ownK3s, `${skew} (${centralFile.file}'s controlPlane.k3sVersion is ${theirK3s})`, `a release of Kubernetes ${minorOf(theirK3s as string) - 1} or ${minorOf(theirK3s as string)}: upgrade central first, then its tenants, one minor at a time`);
    const theirEnvironment = centralFile.values[`${ns}:environment`];
    if (typeof theirEnvironment === "string" && typeof own.environment === "string" && theirEnvironment !== own.environment) {
      add(`${ns}:environment`, own.environment, `differs from ${centralFile.file}'s environment`, theirEnvironment);
    }
    const theirAccounts = centralFile.values["aws:allowedAccountIds"];
    if (Array.isArray(theirAccounts) && typeof central.accountId === "string" && !theirAccounts.includes(central.accountId)) {
      add(`${ns}:central.accountId`, central.accountId, `not among ${centralFile.file}'s aws:allowedAccountIds`, theirAccounts.join(", "));
    }
  }
  if (typeof tenant.id === "string" && typeof own.environment === "string") {
    for (const c of cellsOf(own.environment, siblings)) {
      const clash = cellIdClash(c.cell, tenant.id);
      if (clash) add(`${ns}:tenant.id`, tenant.id, `${clash} of ${c.file}`, "a tenant id that is no cell of its environment and does not start with one and '-' (a cell's names are clusterra-<env>-<cell>-..., a tenant's clusterra-<env>-<id>-...)");
    }
  }
  // Every tenant of this central: whose ports this tenant's must not meet, and what is free.
  const taken: { file: string; id: string; ports: TenantPorts }[] = [];
  const unrecorded: string[] = [];
  for (const other of siblings) {
    if (other.stack === source.stack || other.values[`${ns}:kind`] !== "tenant") continue;
    const ot = other.values[`${ns}:tenant`];
    // Ids are unique per environment: the deploy role's ExternalId is clusterra-<env>-<id>.
    if (isObject(ot) && ot.id === tenant.id && typeof tenant.id === "string" && other.values[`${ns}:environment`] === own.environment) {
      add(`${ns}:tenant.id`, tenant.id, `also used by ${other.file} in environment ${String(own.environment)}`, "a tenant id unique in its environment");
    }
    // VPCs apart across the environment, whichever of its centrals each joins: a central routes
    // to all of its tenants, and the isolation policy and fleet check tell tenants apart by address.
    const on = other.values[`${ns}:network`];
    const otherCidr = isObject(on) && typeof on.vpcCidr === "string" && !vpcCidrProblem(on.vpcCidr) ? on.vpcCidr : undefined;
    if (cidr && otherCidr && cidrsOverlap(cidr, otherCidr) && other.values[`${ns}:environment`] === own.environment) {
      add(`${ns}:network.vpcCidr`, cidr, `overlaps ${other.file}'s network.vpcCidr ${otherCidr}`, `a CIDR no other tenant of environment ${String(own.environment)} uses (of any of its centrals): central routes to all of its tenants, and tenants are told apart by their addresses`);
    }
    const oc = other.values[`${ns}:central`];
    if (!isObject(oc) || typeof oc.stack !== "string" || stackShortName(oc.stack) !== centralName) continue;
    const theirPorts = recordedPorts(other.values);
    if (isObject(ot) && typeof ot.id === "string" && theirPorts) taken.push({ file: other.file, id: ot.id, ports: theirPorts });
    else if (!theirPorts) unrecorded.push(other.file);
  }
  // A tenant of this central that records no ports may be live with ports of its own (from
  // before ports were recorded): no port is named free until it records them.
  const free = unrecorded.length ? undefined : freePorts(taken.map((t) => t.ports));
  const freeText = unrecorded.length
    ? `no ports can be named free on ${centralName} while ${unrecorded.join(", ")} record${unrecorded.length === 1 ? "s" : ""} no valid ports: record ${unrecorded.length === 1 ? "its ports" : "theirs"} first (a live tenant keeps the ones it has: ${LIVE_PORTS})`
    : free ? `free on ${centralName}: ${PORTS_KEY}: ${formatPorts(free)}` : `none free on ${centralName}: its NodePort range holds ${TENANTS_PER_NODE_PORT_RANGE} tenants; ${openACell()}`;
  if (own.ports === undefined) {
    add(PORTS_KEY, undefined, "missing: a tenant's ports on central are recorded in its stack file, never derived", unrecorded.length ? freeText : `${freeText} (a tenant deployed before ports were recorded keeps the ones it has: ${LIVE_PORTS})`);
  }
  for (const t of ports ? taken : []) {
    for (const conflict of portConflicts(ports as TenantPorts, t.ports, t.id)) add(PORTS_KEY, own.ports, `${conflict} (${t.file})`, `ports no other tenant of ${centralName} has; ${freeText}`);
  }
}

/**
 * Xen-based families: no NVMe device names (the host finds its data volume by NVMe id) and
 * no current-generation networking. The `\.` keeps i3en, m5 and the like out.
 */
const XEN_FAMILIES = /^(t1|t2|m1|m2|m3|m4|c1|c3|c4|r3|r4|i2|i3|d2|x1|x1e|g2|g3|g3s|p2|p3|h1|cc2|cr1|hs1)\./;

function checkCentral(own: Record<string, unknown>, add: Add): void {
  const plane = isObject(own.controlPlane) ? own.controlPlane : {};
  const unknownType = typeof plane.instanceType === "string" ? instanceTypeProblem(plane.instanceType) : undefined;
  if (unknownType) add(`${CONFIG_NAMESPACE}:controlPlane.instanceType`, plane.instanceType, unknownType.problem, unknownType.valid);
  else if (typeof plane.instanceType === "string" && XEN_FAMILIES.test(plane.instanceType)) {
    add(`${CONFIG_NAMESPACE}:controlPlane.instanceType`, plane.instanceType, "a Xen-based instance type (no NVMe volume ids)", "a Nitro instance type such as t4g.medium or m7g.large");
  }
}

/** The cells of an environment's central stack files, by file. */
function cellsOf(environment: string, files: readonly StackFile[]): { file: string; stack: string; cell?: string }[] {
  return files
    .filter((f) => f.values[`${CONFIG_NAMESPACE}:kind`] === "central" && f.values[`${CONFIG_NAMESPACE}:environment`] === environment)
    .map((f) => {
      const cell = f.values[`${CONFIG_NAMESPACE}:cell`];
      return { file: f.file, stack: f.stack, ...(typeof cell === "string" ? { cell } : {}) };
    });
}

/** Why a tenant id and a cell of its environment would share names, or undefined. */
function cellIdClash(cell: string | undefined, id: string): string | undefined {
  if (cell === undefined) return undefined;
  if (id === cell) return `is the cell`;
  if (id.startsWith(`${cell}-`)) return `starts with the cell ${cell} and '-'`;
  return undefined;
}

/**
 * A central's cell: the environment's centrals differ in it (one, the first, has none), and no
 * tenant id of the environment is it or starts with it: their names would meet.
 */
function checkCentralCell(source: StackFile, own: Record<string, unknown>, siblings: readonly StackFile[], add: Add): void {
  if (typeof own.environment !== "string") return;
  const cell = typeof own.cell === "string" ? own.cell : undefined;
  const key = `${CONFIG_NAMESPACE}:cell`;
  if (cell !== undefined && platformNameSlots(own.environment).includes(cell)) {
    add(key, cell, `would make the first central's own names (clusterra-${own.environment}-${cell}-...) read as this cell's`, `any other short name (not ${platformNameSlots(own.environment).join(", ")})`);
  }
  const twin = cellsOf(own.environment, siblings).find((c) => c.stack !== source.stack && c.cell === cell);
  if (twin) {
    add(key, cell, `${twin.file} is a central of environment ${own.environment} ${cell === undefined ? "without a cell" : "with the same cell"}: their names and fleet folders would be the same`, `a cell no other central of ${own.environment} has (a short lowercase name such as b; the environment's first central has none)`);
  }
  for (const f of siblings) {
    const t = f.values[`${CONFIG_NAMESPACE}:tenant`];
    if (f.values[`${CONFIG_NAMESPACE}:kind`] !== "tenant" || f.values[`${CONFIG_NAMESPACE}:environment`] !== own.environment || !isObject(t) || typeof t.id !== "string") continue;
    const clash = cellIdClash(cell, t.id);
    if (clash) add(key, cell, `tenant ${t.id} of ${f.file}: its id ${clash.replace("is the cell", "is this cell").replace("starts with the cell", "starts with this cell")}`, "a cell that is no tenant id of the environment and that no tenant id starts with, followed by '-'");
  }
}

/** The tenant stacks that join a central must fit its host and its VPC's peering quota. */
function checkCentralHoldsItsTenants(source: StackFile, own: Record<string, unknown>, siblings: readonly StackFile[], add: Add): void {
  const plane = isObject(own.controlPlane) ? own.controlPlane : {};
  if (typeof plane.instanceType !== "string") return;
  const tenants = tenantStacksOf(source.stack, siblings);
  for (const e of checkCentralCapacity(plane.instanceType, tenants.length).errors) {
    if (e.on === "instanceType") add(`${CONFIG_NAMESPACE}:controlPlane.instanceType`, plane.instanceType, e.problem, e.valid);
    else add("(tenant stacks)", tenants.map((t) => t.stack), e.problem, e.valid);
  }
  checkTenantPortsOnCentral(source.stack, tenants, add);
}

/** The central key that names tenants whose part its next `pulumi up` may remove (components/central/live-tenants.ts). */
export const REMOVE_TENANTS_KEY = `${CONFIG_NAMESPACE}:removeTenants`;

/** A tenant named for removal has no stack file joining this central any more (central would keep, not remove, its part). */
function checkRemovedTenants(own: Record<string, unknown>, tenants: readonly StackFile[], add: Add): void {
  const removed = Array.isArray(own.removeTenants) ? own.removeTenants : [];
  for (const [i, id] of removed.entries()) {
    const still = tenants.find((t) => isObject(t.values[`${CONFIG_NAMESPACE}:tenant`]) && (t.values[`${CONFIG_NAMESPACE}:tenant`] as Record<string, unknown>).id === id);
    if (still) add(`${REMOVE_TENANTS_KEY}[${i}]`, id, `${still.file} still joins tenant ${String(id)} to this central`, `the id of a tenant whose stack is destroyed and whose stack file is removed (\`clusterra tenant remove --stack ${still.stack}\` prints the order), or leave it out`);
  }
}

/**
 * Central opens each tenant's recorded ports on its host: every tenant stack of it must record
 * valid ones (central would otherwise leave the tenant out: its rules, route, role and
 * endpoint gone on the next `pulumi up`), and no two may meet.
 */
function checkTenantPortsOnCentral(central: string, tenants: readonly StackFile[], add: Add): void {
  const recorded: { file: StackFile; id: string; ports: TenantPorts }[] = [];
  for (const f of tenants) {
    const ports = recordedPorts(f.values);
    const id = (f.values[`${CONFIG_NAMESPACE}:tenant`] as { id?: unknown } | undefined)?.id;
    if (!ports) {
      add("(tenant stacks)", f.stack, `${f.file} records no valid ${PORTS_KEY}: ${central} would leave the tenant out, its rules, route, role and endpoint removed by the next \`pulumi up -s ${central}\``, `${PORTS_KEY} in ${f.file}: a live tenant records the ports it has (its facts file's slurmctld.port, its SrunPortRange in ${central}'s slurm.conf), a new one free ones (\`clusterra plan --stack ${f.stack}\` names them)`);
    } else if (typeof id === "string") recorded.push({ file: f, id, ports });
  }
  for (let i = 0; i < recorded.length; i++) {
    for (const other of recorded.slice(i + 1)) {
      for (const conflict of portConflicts(recorded[i].ports, other.ports, other.id)) add("(tenant stacks)", recorded[i].file.stack, `tenant ${recorded[i].id} (${recorded[i].file.file}) ${conflict} (${other.file.file})`, `ports no two tenants of ${central} share`);
    }
  }
}

function checkConnector(own: Record<string, unknown>, aws: Record<string, unknown>, siblings: readonly StackFile[], add: Add): void {
  const ns = CONFIG_NAMESPACE;
  const c = isObject(own.connector) ? own.connector : undefined;
  if (c && typeof c.apiUrl === "string") {
    try {
      new URL(c.apiUrl);
    } catch {
      add(`${ns}:connector.apiUrl`, c.apiUrl, "not a URL", "an https:// URL");
    }
  }
  if (c && c.noInternet === true && c.routeTableIds === undefined) {
    add(`${ns}:connector.routeTableIds`, undefined, "missing (noInternet needs the S3 and DynamoDB gateway endpoints on them)", "the route tables of the cluster's subnets, such as [rtb-0123456789abcdef0]");
  }
  // Lattice is regional, and the control plane's service network must be this central's.
  const central = isObject(own.central) ? own.central : undefined;
  if (!central || typeof central.stack !== "string") return;
  const centrals = siblings.filter((f) => f.values[`${ns}:kind`] === "central");
  const file = centrals.find((f) => f.stack === stackShortName(central.stack as string));
  if (!file) {
    add(`${ns}:central.stack`, central.stack, "no central stack file of that name", `one of ${centrals.map((f) => f.stack).join(", ") || "(no central stack files found)"}`);
    return;
  }
  const mismatch = (key: string, ours: unknown, theirs: unknown, theirKey: string) => {
    if (ours !== undefined && theirs !== undefined && ours !== theirs) add(key, ours, `differs from ${file.file}'s ${theirKey}`, String(theirs));
  };
  mismatch(`${ns}:environment`, own.environment, file.values[`${ns}:environment`], "environment");
  mismatch("aws:region", aws.region, file.values["aws:region"], "aws:region (VPC Lattice services associate only within a region)");
  const accounts = file.values["aws:allowedAccountIds"];
  if (Array.isArray(accounts) && typeof central.accountId === "string" && !accounts.includes(central.accountId)) {
    add(`${ns}:central.accountId`, central.accountId, `not among ${file.file}'s aws:allowedAccountIds`, accounts.join(", "));
  }
  // Central names its side of each connector (share acceptance, association) after the cluster.
  const twin = c && connectorsOf(file.stack, siblings).find((other) => other.clusterName === c.clusterName);
  if (twin) add(`${ns}:connector.clusterName`, c.clusterName, `already attached to ${file.stack} by stack ${twin.stack}`, "a cluster name unique among the connectors of one central stack");
}

/** Connector stack files that name this central stack. */
function connectorsOf(stack: string, siblings: readonly StackFile[]): ConnectorAttachment[] {
  return siblings
    .filter((f) => f.values[`${CONFIG_NAMESPACE}:kind`] === "connector")
    .filter((f) => {
      const central = f.values[`${CONFIG_NAMESPACE}:central`];
      return isObject(central) && typeof central.stack === "string" && stackShortName(central.stack) === stackShortName(stack);
    })
    .map((f) => ({ stack: f.stack, clusterName: String((f.values[`${CONFIG_NAMESPACE}:connector`] as Record<string, unknown>)?.clusterName) }));
}

/** The region and scope of the central stack a tenant or connector joins, from that stack's file. */
function centralOf(own: Record<string, unknown>, siblings: readonly StackFile[]): { region?: string; scope: string } | undefined {
  const central = isObject(own.central) && typeof own.central.stack === "string" ? stackShortName(own.central.stack) : undefined;
  const file = siblings.find((f) => f.stack === central);
  if (!file) return undefined;
  const [region, environment, cell] = [file.values["aws:region"], file.values[`${CONFIG_NAMESPACE}:environment`], file.values[`${CONFIG_NAMESPACE}:cell`]];
  return { ...(typeof region === "string" ? { region } : {}), scope: centralScope(String(environment), typeof cell === "string" ? cell : undefined) };
}

function toTyped(source: StackFile, region: string, aws: Record<string, unknown>, own: Record<string, unknown>, kind: StackKind, joins: { region?: string; scope: string } | undefined, connectors: ConnectorAttachment[]): StackConfig {
  const base = {
    stack: source.stack,
    file: source.file,
    region,
    partition: REGIONS[region],
    environment: own.environment as string,
    ...(Array.isArray(aws.allowedAccountIds) ? { allowedAccountIds: aws.allowedAccountIds as string[] } : {}),
    ...(typeof aws.profile === "string" ? { profile: aws.profile } : {}),
  };
  switch (kind) {
    case "central":
      return {
        ...base, kind, ...(typeof own.cell === "string" ? { cell: own.cell } : {}), scope: centralScope(own.environment as string, typeof own.cell === "string" ? own.cell : undefined),
        network: newNetwork(own.network), controlPlane: own.controlPlane as never, fleet: own.fleet as never, clusterApi: own.clusterApi as never,
        backups: { ...ACCOUNTING_BACKUP.defaults, ...(own.backups as Partial<CentralConfig["backups"]> | undefined) }, connectors, tenants: [],
        removeTenants: Array.isArray(own.removeTenants) ? (own.removeTenants as string[]) : [],
      };
    case "tenant": {
      const central = own.central as TenantConfig["central"];
      return {
        ...base, kind, network: tenantNetwork(own.network as Record<string, unknown>), tenant: own.tenant as never, shapes: own.shapes as never, users: typedUsers(own.users).map((u) => u.user),
        k3sVersion: typeof own.k3sVersion === "string" ? own.k3sVersion : TENANT_K3S_VERSION,
        ports: recordedPorts(source.values) as TenantPorts,
        rolloutWave: typeof own.rolloutWave === "string" ? (own.rolloutWave as RolloutWave) : DEFAULT_ROLLOUT_WAVE,
        ...(typeof own.stateSnapshotId === "string" ? { stateSnapshotId: own.stateSnapshotId } : {}),
        central: { ...central, region: central.region ?? joins?.region ?? region, scope: (joins as { scope: string }).scope },
      };
    }
    case "connector": {
      const connector = own.connector as ConnectorConfig["connector"];
      return { ...base, kind, connector: { ...connector, directoryService: connector.directoryService ?? false }, central: { ...(own.central as { stack: string; accountId: string }), scope: (joins as { scope: string }).scope } };
    }
  }
}

/** A new VPC's network, from values validation accepted. */
/**
 * `clusterra:users` as typed users with their index in the file, the gid defaulting to the
 * uid; entries the schema refuses are left to its issues.
 */
function typedUsers(users: unknown): { at: number; user: TenantUser }[] {
  if (!Array.isArray(users)) return [];
  return users.flatMap((u, at) =>
    isObject(u) && typeof u.name === "string" && typeof u.uid === "number" ? [{ at, user: { name: u.name, uid: u.uid, gid: typeof u.gid === "number" ? u.gid : u.uid } }] : [],
  );
}

function newNetwork(n: unknown): NetworkConfig {
  const { vpcCidr, availabilityZones } = n as { vpcCidr: string; availabilityZones: number | string[] };
  return { vpcCidr, availabilityZones: typeof availabilityZones === "number" ? { count: availabilityZones } : { names: availabilityZones } };
}

/** A tenant's network, new or existing, from values validation accepted. */
function tenantNetwork(n: Record<string, unknown>): NetworkConfig | ExistingNetworkConfig {
  if (n.vpcId === undefined) return newNetwork(n);
  const { vpcCidr, vpcId, subnetIds, serverPrivateIp } = n as { vpcCidr: string; vpcId: string; subnetIds: string[]; serverPrivateIp: string };
  return { vpcCidr, vpcId, subnetIds, serverPrivateIp };
}

/**
 * A tenant's K3s server address from its file's raw network, or undefined when that network
 * is not well-formed (the tenant's own plan reports why).
 */
function serverAddressOf(network: Record<string, unknown>): string | undefined {
  let problems = 0;
  checkNetwork(network, "network", undefined, () => problems++);
  if (problems > 0 || typeof network.vpcCidr !== "string") return undefined;
  if (network.vpcId !== undefined) {
    const ip = network.serverPrivateIp;
    return typeof ip === "string" && hostAddressProblem(ip, network.vpcCidr) === undefined ? ip : undefined;
  }
  return network.availabilityZones === undefined ? undefined : tenantServerAddress(newNetwork(network));
}

/**
 * The tenants joining central stack `central`, from their stack files, by id. A tenant file
 * that is not well-formed is left out here: its own plan reports why.
 */
export function tenantsOf(central: string, files: readonly StackFile[]): CentralTenant[] {
  const ns = CONFIG_NAMESPACE;
  const tenants: CentralTenant[] = [];
  for (const f of files) {
    const [tenant, joins, network] = [f.values[`${ns}:tenant`], f.values[`${ns}:central`], f.values[`${ns}:network`]];
    if (f.values[`${ns}:kind`] !== "tenant" || !isObject(tenant) || !isObject(joins) || !isObject(network)) continue;
    if (typeof joins.stack !== "string" || stackShortName(joins.stack) !== central) continue;
    const { id, accountId } = tenant;
    const { vpcCidr } = network;
    const serverPrivateIp = serverAddressOf(network);
    const ports = recordedPorts(f.values);
    if (typeof id !== "string" || typeof accountId !== "string" || !/^\d{12}$/.test(accountId) || typeof vpcCidr !== "string" || serverPrivateIp === undefined || !ports) continue;
    tenants.push({ id, accountId, vpcCidr, serverPrivateIp, ports });
  }
  return tenants.sort((a, b) => a.id.localeCompare(b.id));
}

function fromAjv(file: string, ns: string, e: ErrorObject): ConfigIssue {
  const path = pointerToKey(ns, e.instancePath);
  const parent = (e.parentSchema ?? {}) as { properties?: Record<string, { description?: string }>; description?: string };
  if (e.keyword === "required") {
    const missing = (e.params as { missingProperty: string }).missingProperty;
    return { file, key: join(path, missing), value: undefined, problem: "missing", valid: parent.properties?.[missing]?.description ?? "a value" };
  }
  if (e.keyword === "additionalProperties") {
    const extra = (e.params as { additionalProperty: string }).additionalProperty;
    const known = Object.keys(parent.properties ?? {});
    const guess = nearest(extra, known);
    return {
      file, key: join(path, extra), value: (e.data as Record<string, unknown>)[extra],
      problem: guess ? `unknown key (did you mean ${guess}?)` : "unknown key",
      valid: `one of ${known.join(", ")}`,
    };
  }
  return { file, key: path, value: e.data, problem: e.message ?? e.keyword, valid: parent.description ?? "see the README's configuration table" };
}

/** `/shapes/0/name` under `clusterra` becomes `clusterra:shapes[0].name`. */
function pointerToKey(ns: string, pointer: string): string {
  const parts = pointer.split("/").slice(1).map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
  let key = `${ns}:`;
  parts.forEach((p, i) => {
    key += /^\d+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`;
  });
  return key;
}

function join(path: string, key: string): string {
  return path.endsWith(":") ? path + key : `${path}.${key}`;
}

function dedupe(issues: ConfigIssue[]): ConfigIssue[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const k = `${i.file}|${i.key}|${i.problem}`;
    return seen.has(k) ? false : (seen.add(k), true);
  });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Longest value an error message echoes. */
const MAX_ECHO = 200;

function echo(value: unknown): string {
  // YAML reads a key with nothing after it as null: say what was typed, not `null`.
  if (value === null) return "(no value)";
  const text = JSON.stringify(value) ?? String(value);
  return text.length > MAX_ECHO ? `${text.slice(0, MAX_ECHO)}... (${text.length} characters)` : text;
}

/** One line per issue: file, key, value, problem, what is valid. */
export function formatIssues(issues: readonly ConfigIssue[]): string {
  return issues.map((i) => `${i.file}: ${issueKey(i)}: ${issueReason(i)}`).join("\n");
}

/** An issue's key with its value as typed (`key = value`), for a line that names file, key, then reason. */
export function issueKey(i: ConfigIssue): string {
  return `${i.key}${i.value === undefined ? "" : ` = ${echo(i.value)}`}`;
}

/** An issue's problem and what is valid. */
export function issueReason(i: ConfigIssue): string {
  return `${i.problem}; valid: ${i.valid}`;
}

/** The Kubernetes minor of a K3s release (v1.35.3+k3s1: 35). */
function minorOf(k3sVersion: string): number {
  return Number(/^v1\.(\d+)\./.exec(k3sVersion)?.[1] ?? NaN);
}

/**
 * A tenant's K3s against its central's: never ahead (central's ArgoCD and the fleet's checks
 * know its version), and at most one minor behind (Kubernetes upgrades one minor at a time).
 */
function k3sSkewProblem(tenant: string, central: string): string | undefined {
  const [t, c] = [minorOf(tenant), minorOf(central)];
  if (Number.isNaN(t) || Number.isNaN(c)) return undefined;
  if (t > c) return `runs Kubernetes 1.${t}, ahead of central's 1.${c}`;
  if (t < c - 1) return `runs Kubernetes 1.${t}, more than one minor behind central's 1.${c}`;
  return undefined;
}
