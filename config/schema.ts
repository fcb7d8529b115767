/**
 * JSON Schemas of the `clusterra:*` keys, one per stack kind. Structure only (required
 * keys, unknown keys, types, patterns); what needs arithmetic (CIDRs, overlaps, zones) is
 * checked in validate.ts. Every leaf has a `description` saying what is valid: the error
 * messages quote it.
 */
import { CELL_NAME_MAX, STACK_KINDS } from "../facts/project";
import { NODE_PORT_RANGE, SRUN_PORT_BLOCK_SIZE } from "../facts/contract";
import { ROLLOUT_WAVES } from "../facts/fleet";
import { CAPACITY_TYPES, MEMORY_PER_CPU_GIB, SHAPE_SIZES } from "../facts/shapes";

type Schema = Record<string, unknown>;

const obj = (properties: Record<string, Schema>, required: string[] = Object.keys(properties)): Schema => ({
  type: "object",
  properties,
  required,
  additionalProperties: false,
  description: `an object with keys ${Object.keys(properties).join(", ")}`,
});

export const str = (pattern: string, description: string): Schema => ({ type: "string", pattern, description });

export const ACCOUNT_ID = str("^[0-9]{12}$", "a 12-digit AWS account id");
export const DNS_LABEL = str("^[a-z]([a-z0-9-]{0,30}[a-z0-9])?$", "a DNS label: lowercase letters, digits and '-', 1-32 characters, starting with a letter");
export const ENVIRONMENT = str("^[a-z][a-z0-9]{0,15}$", "a lowercase name: letters and digits, starting with a letter, at most 16 characters");
/** A second central of an environment (a cell): its name follows the environment's in every name and fleet path (facts/project.ts centralScope). */
const CELL = str(`^[a-z][a-z0-9]{0,${CELL_NAME_MAX - 1}}$`, `a lowercase name: letters and digits, starting with a letter, at most ${CELL_NAME_MAX} characters`);
const STACK_NAME = str("^([A-Za-z0-9_.-]+/){0,2}[A-Za-z0-9_.-]+$", "a stack name, optionally qualified as org/project/stack");
const CIDR = { type: "string", description: "a private IPv4 CIDR (10/8, 172.16/12, 192.168/16) of /16 to /24" };
const ZONES = { description: "a zone count from 1 to 6, or a list of zone names in the stack's region such as us-east-1a" };
export const SEMVER_K3S = str("^v1\\.[0-9]+\\.[0-9]+\\+k3s[0-9]+$", "a pinned K3s release such as v1.35.3+k3s1");
const INSTANCE_TYPE = str("^[a-z][a-z0-9-]*\\.[a-z0-9]+$", "an EC2 instance type such as t4g.medium");

const network = obj({ vpcCidr: CIDR, availabilityZones: ZONES });
const VPC_ID = str("^vpc-[0-9a-f]{8,17}$", "a VPC id such as vpc-0123456789abcdef0");
const SUBNET_IDS = {
  type: "array", minItems: 1, maxItems: 6, uniqueItems: true, description: "a list of 1 to 6 distinct private subnet ids, one per zone",
  items: str("^subnet-[0-9a-f]{8,17}$", "a subnet id such as subnet-0123456789abcdef0"),
};
/** The K3s server's fixed address in an existing VPC (a new VPC derives it); checked in validate.ts. */
const SERVER_PRIVATE_IP = { type: "string", description: "the K3s server's fixed IPv4 address, in vpcCidr and in the first of subnetIds (existing VPC only), such as 10.16.0.10" };
/** A tenant's network: a new VPC (vpcCidr + availabilityZones), or an existing one (vpcCidr + vpcId + subnetIds + serverPrivateIp). */
const tenantNetwork = obj({ vpcCidr: CIDR, availabilityZones: ZONES, vpcId: VPC_ID, subnetIds: SUBNET_IDS, serverPrivateIp: SERVER_PRIVATE_IP }, ["vpcCidr"]);

export const SCHEMAS: Readonly<Record<(typeof STACK_KINDS)[number], Schema>> = {
  central: obj({
    network,
    // A second (third, ...) central of the environment names its cell; the environment's first has none (README, "An environment outgrows one central").
    cell: CELL,
    controlPlane: obj(
      {
        instanceType: INSTANCE_TYPE,
        k3sVersion: SEMVER_K3S,
        // A replacement data volume made from a snapshot of the lost one (README, Day 2: a lost host or zone).
        dataSnapshotId: str("^snap-[0-9a-f]{8,17}$", "an EBS snapshot id such as snap-0123456789abcdef0 (one of the data volume's daily snapshots)"),
      },
      ["instanceType", "k3sVersion"],
    ),
    fleet: obj({
      // HTTPS only: the host's egress allows 443, and repository credentials are not wired yet.
      repoUrl: str("^https://[^\\s]+$", "an https:// git URL"),
      revision: str("^[A-Za-z0-9._/-]+$", "a branch, tag or commit"),
    }),
    clusterApi: obj({
      image: str("^[a-z0-9.-]+(:[0-9]+)?(/[a-z0-9._-]+)+(:[A-Za-z0-9._-]+|@sha256:[0-9a-f]{64})$", "a pinned container image reference such as ghcr.io/clusterra/cluster-api:1.4.2 or ...@sha256:<digest>"),
    }),
    // Tenants whose part central's next `pulumi up` may remove (README, Day 2, "Removing a tenant"):
    // central refuses to drop a tenant its last deployment served otherwise.
    removeTenants: {
      type: "array", uniqueItems: true, items: DNS_LABEL,
      description: "a list of distinct tenant ids, each one whose stack is destroyed and whose stack file is gone",
    },
    // Each tenant's accounting database backup (optional: daily at 02:15 UTC, kept 14 days).
    backups: obj(
      {
        schedule: str("^(\\S+) (\\S+) \\* \\* \\*$", "a cron schedule that runs at least daily (day-of-month, month and day-of-week `*`), such as \"15 2 * * *\" or \"0 */6 * * *\": at most 24 h of accounting lost"),
        retentionDays: { type: "integer", minimum: 1, maximum: 365, description: "a whole number of days from 1 to 365" },
      },
      [],
    ),
  }, ["network", "controlPlane", "fleet", "clusterApi"]),
  tenant: obj({
    tenant: obj({ id: DNS_LABEL, accountId: ACCOUNT_ID }),
    central: obj(
      {
        stack: STACK_NAME,
        accountId: ACCOUNT_ID,
        vpcCidr: CIDR,
        region: { type: "string", description: "the central stack's AWS region (default: this stack's region)" },
      },
      ["stack", "accountId", "vpcCidr"],
    ),
    network: tenantNetwork,
    // Its ports on central's host, allocated once (validation names free ones when the key is missing; config/tenant-ports.ts).
    ports: obj({
      slurmctld: { type: "integer", minimum: NODE_PORT_RANGE.from, maximum: NODE_PORT_RANGE.to, description: `a NodePort from ${NODE_PORT_RANGE.from} to ${NODE_PORT_RANGE.to}: the tenant's slurmctld on central` },
      srun: { type: "integer", minimum: NODE_PORT_RANGE.from, maximum: NODE_PORT_RANGE.to - SRUN_PORT_BLOCK_SIZE + 1, description: `the first of ${SRUN_PORT_BLOCK_SIZE} NodePorts from ${NODE_PORT_RANGE.from} to ${NODE_PORT_RANGE.to}: the tenant's srun block on central` },
    }),
    // The tenant cluster's K3s release (optional: facts/tenant-cluster.ts TENANT_K3S_VERSION); never ahead of central's, at most one minor behind.
    k3sVersion: SEMVER_K3S,
    // A replacement state volume for the tenant's server, made from a snapshot of the lost one (README, Day 2).
    stateSnapshotId: str("^snap-[0-9a-f]{8,17}$", "an EBS snapshot id such as snap-0123456789abcdef0 (one of the server state volume's daily snapshots)"),
    // When a fleet-wide change reaches this tenant (optional: facts/fleet.ts DEFAULT_ROLLOUT_WAVE).
    rolloutWave: { enum: [...ROLLOUT_WAVES], description: `one of ${ROLLOUT_WAVES.join(", ")}` },
    shapes: {
      type: "array",
      minItems: 1,
      description: "a non-empty list of shapes",
      items: obj(
        {
          name: DNS_LABEL,
          memoryPerCpuGiB: { enum: [...MEMORY_PER_CPU_GIB], description: `one of ${MEMORY_PER_CPU_GIB.join(", ")} (GiB per vCPU)` },
          sizes: {
            type: "array", minItems: 1, uniqueItems: true,
            description: `a non-empty list of distinct vCPU counts from ${SHAPE_SIZES.join(", ")}`,
            items: { enum: [...SHAPE_SIZES], description: `a vCPU count: one of ${SHAPE_SIZES.join(", ")}` },
          },
          maxNodes: { type: "integer", minimum: 1, maximum: 1000, description: "a whole number of nodes from 1 to 1000" },
          capacityType: { enum: [...CAPACITY_TYPES], description: `one of ${CAPACITY_TYPES.join(", ")}` },
        },
      ),
    },
    // The tenant's Linux users when its identity source is this stack file (names and id ranges checked in validate.ts).
    users: {
      type: "array",
      description: "a list of users",
      items: obj(
        {
          name: { type: "string", description: "a Linux user name" },
          uid: { type: "integer", description: "a whole-number uid" },
          gid: { type: "integer", description: "a whole-number gid (default: the uid)" },
        },
        ["name", "uid"],
      ),
    },
  }, ["tenant", "central", "network", "shapes"]),
  connector: obj({
    connector: obj({
      // EventBridge rule names (clusterra-<name>-events-spot-interruption) stop at 64 characters.
      clusterName: str("^[a-z]([a-z0-9-]{0,27}[a-z0-9])?$", "a DNS label of at most 29 characters"),
      vpcId: VPC_ID,
      subnetIds: {
        type: "array", minItems: 1, uniqueItems: true, description: "a non-empty list of distinct subnet ids",
        items: str("^subnet-[0-9a-f]{8,17}$", "a subnet id such as subnet-0123456789abcdef0"),
      },
      headNodeInstanceId: str("^i-[0-9a-f]{8,17}$", "an instance id such as i-0123456789abcdef0"),
      headNodeRoleName: str("^[A-Za-z0-9+=,.@_-]{1,64}$", "the IAM role name of the head node's instance profile"),
      clusterSecurityGroupIds: {
        type: "array", minItems: 1, uniqueItems: true, description: "a non-empty list of the cluster's security group ids (head and compute nodes)",
        items: str("^sg-[0-9a-f]{8,17}$", "a security group id such as sg-0123456789abcdef0"),
      },
      routeTableIds: {
        type: "array", minItems: 1, uniqueItems: true, description: "the route tables of the cluster's subnets (gateway endpoints are added to them)",
        items: str("^rtb-[0-9a-f]{8,17}$", "a route table id such as rtb-0123456789abcdef0"),
      },
      apiUrl: str("^https://[A-Za-z0-9.-]+(:[0-9]+)?(/[^\\s]*)?$", "an https:// URL"),
      jwtSecretName: str("^[A-Za-z0-9/_+=.@-]{1,512}$", "a Secrets Manager secret name"),
      noInternet: { type: "boolean", description: "true or false" },
      directoryService: { type: "boolean", description: "true when the cluster uses a directory service (default false)" },
    }, ["clusterName", "vpcId", "subnetIds", "headNodeInstanceId", "headNodeRoleName", "clusterSecurityGroupIds", "apiUrl", "jwtSecretName", "noInternet"]),
    central: obj({ stack: STACK_NAME, accountId: ACCOUNT_ID }),
  }),
};

/** Keys common to every kind. */
export const COMMON_SCHEMA: Schema = obj({ kind: { enum: [...STACK_KINDS], description: `one of ${STACK_KINDS.join(", ")}` }, environment: ENVIRONMENT });

/** Provider keys a stack file may set besides aws:region. */
export const AWS_KEYS: Readonly<Record<string, Schema>> = {
  region: { type: "string", description: "an AWS region such as us-east-1" },
  allowedAccountIds: { type: "array", minItems: 1, items: ACCOUNT_ID, description: "a list of 12-digit account ids the stack may deploy into" },
  profile: { type: "string", description: "a named AWS CLI profile" },
};
