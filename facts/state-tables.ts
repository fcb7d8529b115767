/**
 * cluster-api's DynamoDB tables as data: keys, indexes and the access patterns they serve
 * (components/central/state-tables.ts makes them; the fleet names them to cluster-api).
 */
import { platformName } from "./project";

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

/** A table's name in an environment. */
export function tableName(environment: string, table: string): string {
  return platformName(environment, table);
}
