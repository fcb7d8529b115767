import type { TenantUser } from "./users";
/** Typed, validated configuration: what components receive. */
import type { Partition } from "../facts/regions";
import type { RolloutWave } from "../facts/fleet";
import type { TenantPorts } from "../facts/contract";

/** Zones: a count resolved against the region's available zones, or explicit names. */
export type ZoneSelection = { readonly count: number } | { readonly names: readonly string[] };

export interface NetworkConfig {
  /** The VPC's private IPv4 CIDR. */
  readonly vpcCidr: string;
  readonly availabilityZones: ZoneSelection;
}

/** A tenant's existing VPC, adopted instead of a new one: the customer keeps its egress. */
export interface ExistingNetworkConfig {
  /** The VPC's CIDR (checked against the VPC at deploy). */
  readonly vpcCidr: string;
  readonly vpcId: string;
  /** Private subnets, one per zone: nodes, EFS mount targets, Karpenter's workers. */
  readonly subnetIds: readonly string[];
  /** The K3s server's fixed address, in the first subnet (central names it in its host rules). */
  readonly serverPrivateIp: string;
}

interface BaseConfig {
  /** Stack name (the last segment of org/project/stack). */
  readonly stack: string;
  /** Stack file the values came from, relative to the project root. */
  readonly file: string;
  readonly region: string;
  readonly partition: Partition;
  readonly environment: string;
  /** Accounts the AWS provider may act in (the provider refuses any other). */
  readonly allowedAccountIds?: readonly string[];
  /** Named AWS CLI profile the providers and the kubeconfig reader use. */
  readonly profile?: string;
}

export interface CentralConfig extends BaseConfig {
  readonly kind: "central";
  /** Its cell when it is not its environment's first central (`clusterra:cell`). */
  readonly cell?: string;
  /** What its platform-wide names and fleet folders take: the environment, or the environment and its cell (facts/project.ts centralScope). */
  readonly scope: string;
  readonly network: NetworkConfig;
  readonly controlPlane: {
    readonly instanceType: string;
    readonly k3sVersion: string;
    /** Build the data volume from this snapshot (a restore after a lost volume); absent: a blank volume. */
    readonly dataSnapshotId?: string;
  };
  readonly fleet: { readonly repoUrl: string; readonly revision: string };
  /** cluster-api's container image, pinned by tag or digest. */
  readonly clusterApi: { readonly image: string };
  /** Each tenant's accounting database backup: when (cron, UTC) and for how long it is kept. */
  readonly backups: { readonly schedule: string; readonly retentionDays: number };
  /** Connector stacks that name this central (from the stack files beside it). */
  readonly connectors: readonly ConnectorAttachment[];
  /** The tenants whose stack files join this central: central owns their shared-side resources. */
  readonly tenants: readonly CentralTenant[];
  /** Tenants whose part its next `pulumi up` may remove, their stack files gone (`clusterra:removeTenants`; none by default). */
  readonly removeTenants: readonly string[];
}

/** A tenant as its central stack sees it, from the tenant's stack file. */
export interface CentralTenant {
  readonly id: string;
  readonly accountId: string;
  /** The tenant VPC's CIDR: central routes it and admits it on the tenant's endpoint only. */
  readonly vpcCidr: string;
  /** The tenant's K3s server's fixed address: the peer of the host flows (heartbeats in, ArgoCD out). */
  readonly serverPrivateIp: string;
  /** Its ports on the host, as its stack file records them. */
  readonly ports: TenantPorts;
}

export interface ShapeConfig {
  readonly name: string;
  readonly memoryPerCpuGiB: 2 | 4 | 8 | 16;
  /** vCPU counts, one NodeSet each. */
  readonly sizes: readonly number[];
  readonly maxNodes: number;
  readonly capacityType: "spot" | "on-demand";
}

export interface TenantConfig extends BaseConfig {
  readonly kind: "tenant";
  readonly tenant: { readonly id: string; readonly accountId: string };
  /** The central it joins; `scope` is that central's (its names and fleet folders, this tenant's fleet folder among them). */
  readonly central: { readonly stack: string; readonly accountId: string; readonly vpcCidr: string; readonly region: string; readonly scope: string };
  readonly network: NetworkConfig | ExistingNetworkConfig;
  readonly shapes: readonly ShapeConfig[];
  /** The tenant's Linux users (`clusterra:users`, gid defaulting to the uid); empty when none are configured. */
  readonly users: readonly TenantUser[];
  /** The K3s release of the tenant's server and workers. */
  readonly k3sVersion: string;
  /** Its ports on central's host, as the stack file records them (`clusterra:ports`). */
  readonly ports: TenantPorts;
  /** Build the server's state volume from this snapshot (a restore after a lost volume); absent: a blank volume. */
  readonly stateSnapshotId?: string;
  /** When a fleet-wide change reaches this tenant's Applications (RollingSync). */
  readonly rolloutWave: RolloutWave;
}

export interface ConnectorConfig extends BaseConfig {
  readonly kind: "connector";
  readonly connector: {
    readonly clusterName: string;
    readonly vpcId: string;
    readonly subnetIds: readonly string[];
    readonly headNodeInstanceId: string;
    /** The head node's instance role: the job hooks send with it. */
    readonly headNodeRoleName: string;
    /** The cluster's security groups: the only sources the endpoints admit. */
    readonly clusterSecurityGroupIds: readonly string[];
    /** Route tables of the cluster's subnets (required with noInternet). */
    readonly routeTableIds?: readonly string[];
    readonly apiUrl: string;
    readonly jwtSecretName: string;
    readonly noInternet: boolean;
    readonly directoryService: boolean;
  };
  /** The control plane the cluster attaches to. */
  readonly central: { readonly stack: string; readonly accountId: string; readonly scope: string };
}

/** A connector attached to a central environment, as that central stack sees it. */
export interface ConnectorAttachment {
  /** The connector's stack (its outputs carry the shared service). */
  readonly stack: string;
  readonly clusterName: string;
}

export type StackConfig = CentralConfig | TenantConfig | ConnectorConfig;

/** One stack file as read from disk: its values keyed `namespace:key`. */
export interface StackFile {
  readonly stack: string;
  readonly file: string;
  readonly values: Readonly<Record<string, unknown>>;
}

/** One thing wrong with the configuration. */
export interface ConfigIssue {
  readonly file: string;
  readonly key: string;
  /** The offending value, or undefined when the key is missing. */
  readonly value: unknown;
  readonly problem: string;
  /** What would be valid. */
  readonly valid: string;
}
