import * as pulumi from "@pulumi/pulumi";
import * as dynamodb from "@pulumi/aws/dynamodb";
import { STATE_TABLES, tableName, type TableSpec } from "../../facts/state-tables";

/** The DynamoDB inputs a spec becomes: pure, so tests read the key design directly. */
export function tableInputs(scope: string, table: string, spec: TableSpec, kmsKeyArn: pulumi.Input<string>): dynamodb.TableArgs {
  const keyNames = [spec.partitionKey, spec.sortKey, ...(spec.indexes ?? []).flatMap((i) => [i.partitionKey, i.sortKey])].filter((k): k is string => !!k);
  return {
    name: tableName(scope, table),
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
  /** The central's scope (facts/project.ts centralScope): table names. */
  readonly scope: string;
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
      const t = new dynamodb.Table(`${name}-${table}`, tableInputs(args.scope, table, spec, args.kmsKeyArn), { parent: this, protect: true });
      this.arns[table] = t.arn;
      this.names[table] = tableName(args.scope, table);
    }
    this.registerOutputs({ arns: this.arns });
  }
}
