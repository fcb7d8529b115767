import * as pulumi from "@pulumi/pulumi";
import * as dynamodb from "@pulumi/aws/dynamodb";
import { platformName } from "../../facts/project";

/** One table: its keys, indexes and the access patterns they serve. */
export interface TableSpec {
  readonly partitionKey: string;
  readonly sortKey?: string;
  readonly indexes?: readonly { readonly name: string; readonly partitionKey: string; readonly sortKey?: string }[];
  /** Attribute holding the epoch-seconds expiry, for tables whose items age out. */
  readonly ttlAttribute?: string;
  /** The queries the key design serves. */
  readonly accessPatterns: readonly string[];
}

/**
 * cluster-api's state. All keys are strings; time sort keys are ISO-8601 UTC with an id
 * suffix (`2026-11-21T23:00:00.000Z#<ulid>`), so they sort by time and never collide.
 */
export const STATE_TABLES: Readonly<Record<string, TableSpec>> = {
  tenants: {
    partitionKey: "tenantId",
    accessPatterns: ["get a tenant by id", "list tenants (admin, small: a scan)"],
  },
  users: {
    partitionKey: "tenantId",
    sortKey: "userId",
    indexes: [{ name: "byEmail", partitionKey: "email" }],
    accessPatterns: ["list a tenant's users", "get a user by tenant and id", "find a user by email at sign-in (byEmail)"],
  },
  clusters: {
    partitionKey: "tenantId",
    sortKey: "clusterId",
    indexes: [{ name: "byCluster", partitionKey: "clusterId" }],
    accessPatterns: ["list a tenant's clusters", "get a cluster by tenant and id", "resolve a heartbeat's cluster id to its tenant (byCluster)"],
  },
  events: {
    partitionKey: "clusterId",
    sortKey: "eventTime",
    indexes: [{ name: "byTenantTime", partitionKey: "tenantId", sortKey: "eventTime" }],
    ttlAttribute: "expiresAt",
    accessPatterns: ["a cluster's events by time range", "a tenant's events across clusters by time (byTenantTime)", "events expire after their retention (TTL)"],
  },
  chats: {
    partitionKey: "conversationId",
    sortKey: "messageTime",
    indexes: [{ name: "byUser", partitionKey: "userId", sortKey: "messageTime" }],
    ttlAttribute: "expiresAt",
    accessPatterns: ["a conversation's history in order", "a user's recent conversations (byUser)", "old chats expire (TTL)"],
  },
  memories: {
    partitionKey: "userId",
    sortKey: "memoryId",
    indexes: [{ name: "byTenant", partitionKey: "tenantId", sortKey: "memoryId" }],
    accessPatterns: ["a user's memories", "a tenant's memories, for export and deletion (byTenant)"],
  },
};

export function tableName(environment: string, table: string): string {
  return platformName(environment, table);
}

/** The DynamoDB inputs a spec becomes: pure, so tests read the key design directly. */
export function tableInputs(environment: string, table: string, spec: TableSpec, kmsKeyArn: pulumi.Input<string>): dynamodb.TableArgs {
  const keyNames = [spec.partitionKey, spec.sortKey, ...(spec.indexes ?? []).flatMap((i) => [i.partitionKey, i.sortKey])].filter((k): k is string => !!k);
  return {
    name: tableName(environment, table),
    billingMode: "PAY_PER_REQUEST",
    hashKey: spec.partitionKey,
    ...(spec.sortKey ? { rangeKey: spec.sortKey } : {}),
    attributes: [...new Set(keyNames)].map((name) => ({ name, type: "S" })),
    globalSecondaryIndexes: (spec.indexes ?? []).map((i) => ({ name: i.name, hashKey: i.partitionKey, ...(i.sortKey ? { rangeKey: i.sortKey } : {}), projectionType: "ALL" })),
    ...(spec.ttlAttribute ? { ttl: { attributeName: spec.ttlAttribute, enabled: true } } : {}),
    pointInTimeRecovery: { enabled: true },
    serverSideEncryption: { enabled: true, kmsKeyArn },
    deletionProtectionEnabled: true,
  };
}

export interface StateTablesArgs {
  /** Environment name: table names. */
  readonly environment: string;
  /** Customer-managed key for encryption at rest. */
  readonly kmsKeyArn: pulumi.Input<string>;
}

/** The six state tables, protected against deletion twice: by DynamoDB and by Pulumi. */
export class StateTables extends pulumi.ComponentResource {
  public readonly arns: Record<string, pulumi.Output<string>>;
  public readonly names: Record<string, string>;

  constructor(name: string, args: StateTablesArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:central:StateTables", name, {}, opts);
    this.arns = {};
    this.names = {};
    for (const [table, spec] of Object.entries(STATE_TABLES)) {
      const t = new dynamodb.Table(`${name}-${table}`, tableInputs(args.environment, table, spec, args.kmsKeyArn), { parent: this, protect: true });
      this.arns[table] = t.arn;
      this.names[table] = tableName(args.environment, table);
    }
    this.registerOutputs({ arns: this.arns });
  }
}
