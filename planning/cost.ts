/**
 * Monthly cost of a deployment, line by line, from the captured resources and the one
 * price table (facts/prices.ts). Idle lines are what the resources cost with no jobs and
 * no traffic (hours, provisioned storage, keys, secrets); usage lines price storage,
 * requests and data at the stated assumptions (facts/usage.ts). Every resource type has a
 * rule here, is free for a reason (facts/prices.ts NO_CHARGE), or is reported unpriced.
 */
import { HOST_BOOT, HOST_COUNTS, HOST_DISK } from "../facts/alarms";
import { CENTRAL_PROVIDER_NAME } from "../facts/project";
import * as fs from "fs";
import * as path from "path";
import { isKnownInstanceType } from "../facts/instance-types";
import { EBS_GB_MONTH, HOURS_PER_MONTH, INSTANCE_HOUR, monthly, NO_CHARGE, PRICES, type Price } from "../facts/prices";
import { USAGE_ASSUMPTIONS as U } from "../facts/usage";
import type { Deployment, DeploymentResource } from "./deployment";

/** Who gets the bill: the operator (central account) or the customer (its own account). */
export type Payer = "operator" | "customer";
/** Idle: billed with nothing running; usage: at the stated assumptions. */
export type Basis = "idle" | "usage";

export interface CostLine {
  readonly item: string;
  readonly type: string;
  readonly urn: string;
  readonly monthlyUsd: number;
  readonly payer: Payer;
  readonly basis: Basis;
  /** How the figure was reached: quantity x price. */
  readonly detail: string;
}

/** A resource the estimate cannot price: never counted as zero. */
export interface Unpriced {
  readonly type: string;
  readonly urn: string;
  readonly why: string;
}


/**
 * Central stacks bill the operator; tenant and connector stacks bill the customer, except
 * what a tenant stack creates in central through its central provider.
 */
export function payerOf(deployment: Deployment, r: DeploymentResource): Payer {
  // urn:pulumi:<stack>::<project>::<type>::<name>
  const stack = deployment.deployment.resources.find((x) => x.type === "pulumi:pulumi:Stack")?.urn.split("::")[0].split(":").pop();
  const provider = r.provider?.split("::")[3];
  if (provider === CENTRAL_PROVIDER_NAME) return "operator";
  return stack !== undefined && /^central-/.test(stack) ? "operator" : "customer";
}

const cents = (usd: number) => Math.round(usd * 100) / 100;
const money = (usd: number) => `$${Number(usd.toPrecision(6))}`;

type Line = Omit<CostLine, "payer" | "urn" | "type">;
type Rule = (inputs: Record<string, any>, context: Context, outputs: Record<string, any>) => Line[] | string;

/** What a rule needs to know about the rest of the graph. */
interface Context {
  /** Tag key=value pairs a snapshot policy targets. */
  readonly snapshotTags: ReadonlySet<string>;
  /** Queues a Lambda event source polls (by ARN). */
  readonly lambdaQueues: ReadonlySet<string>;
  /** Queues that are another queue's dead-letter target (by ARN). */
  readonly deadLetterQueues: ReadonlySet<string>;
}

function graphContext(resources: readonly DeploymentResource[]): Context {
  const inputsOf = (type: string) => resources.filter((r) => r.type === type).map((r) => (r.inputs ?? {}) as Record<string, any>);
  const redrive = (policy: unknown) => (typeof policy === "string" ? JSON.parse(policy) : policy) as { deadLetterTargetArn?: string } | undefined;
  return {
    snapshotTags: new Set(inputsOf("aws:dlm/lifecyclePolicy:LifecyclePolicy").flatMap((i) => Object.entries((i.policyDetails?.targetTags ?? {}) as Record<string, string>).map(([k, v]) => `${k}=${v}`))),
    lambdaQueues: new Set(inputsOf("aws:lambda/eventSourceMapping:EventSourceMapping").map((i) => String(i.eventSourceArn))),
    deadLetterQueues: new Set(inputsOf("aws:sqs/queue:Queue").map((i) => redrive(i.redrivePolicy)?.deadLetterTargetArn).filter((a): a is string => typeof a === "string")),
  };
}

const hourly = (item: string, price: Price, count = 1, what = "h"): Line => ({
  item,
  monthlyUsd: cents(monthly(price) * count),
  basis: "idle",
  detail: `${count === 1 ? "" : `${count} x `}${HOURS_PER_MONTH} ${what} x ${money(price.usd)}`,
});
const perMonth = (item: string, price: Price): Line => ({ item, monthlyUsd: price.usd, basis: "idle", detail: `${money(price.usd)} a month` });
/** Requests a resource makes on a timer, whatever the load: idle cost. */
const idleRequests = (item: string, count: number, price: Price): Line => ({ item, monthlyUsd: cents((count / 1e6) * price.usd), basis: "idle", detail: `${count.toLocaleString("en-US")} requests x ${money(price.usd)}/${price.per}` });
const stored = (item: string, gb: number, price: Price, basis: Basis): Line => ({ item, monthlyUsd: cents(gb * price.usd), basis, detail: `${gb} GB x ${money(price.usd)}/${price.per}` });
const used = (item: string, quantity: number, unit: string, price: Price, per = 1): Line => ({
  item,
  monthlyUsd: cents((quantity / per) * price.usd),
  basis: "usage",
  detail: `${quantity.toLocaleString("en-US")} ${unit} x ${money(price.usd)}/${price.per}`,
});

function ebs(type: string, sizeGiB: number, role = ""): Line | string {
  const price = EBS_GB_MONTH[type];
  return price ? stored(`EBS ${type}${role} ${sizeGiB} GiB`, sizeGiB, price, "idle") : `EBS volume type ${type} has no price in facts/prices.ts`;
}

/** Requests an SQS queue takes a month from `pollers` empty long polls plus its messages. */
function sqsRequests(pollers: number, messages: number): number {
  const pollsPerPoller = Math.round((HOURS_PER_MONTH * 3600) / U.longPollSeconds);
  return pollers * pollsPerPoller + messages * U.sqsRequestsPerMessage;
}

const RULES: Readonly<Record<string, Rule>> = {
  "aws:ec2/instance:Instance": (i) => {
    if (!isKnownInstanceType(i.instanceType)) return `instance type ${i.instanceType} has no price in facts/prices.ts`;
    const root = ebs(i.rootBlockDevice?.volumeType ?? "gp3", Number(i.rootBlockDevice?.volumeSize ?? 8), " root");
    if (typeof root === "string") return root;
    const ip = i.associatePublicIpAddress === true ? [hourly("public IPv4 address", PRICES.publicIpv4Hour)] : [];
    return [hourly(`EC2 ${i.instanceType}`, INSTANCE_HOUR[i.instanceType]), root, ...ip];
  },
  "aws:ebs/volume:Volume": (i, c) => {
    const volume = ebs(i.type ?? "gp3", Number(i.size));
    if (typeof volume === "string") return volume;
    const snapshotted = Object.entries((i.tags ?? {}) as Record<string, string>).some(([k, v]) => c.snapshotTags.has(`${k}=${v}`));
    // A month of incremental snapshots keeps the changed blocks, never more than the volume holds.
    return [volume, ...(snapshotted ? [stored("EBS snapshots (daily, incremental)", Math.min(U.snapshotGb, Number(i.size)), PRICES.ebsSnapshotGbMonth, "usage")] : [])];
  },
  "aws:ec2/natGateway:NatGateway": () => [hourly("NAT gateway", PRICES.natGatewayHour), used("NAT gateway data", U.natGb, "GB", PRICES.natGatewayPerGb)],
  "aws:ec2/eip:Eip": () => [hourly("public IPv4 address", PRICES.publicIpv4Hour)],
  "aws:ec2/vpcEndpoint:VpcEndpoint": (i) =>
    i.vpcEndpointType === "Interface" ? [hourly(`interface endpoint ${i.serviceName}`, PRICES.interfaceEndpointAzHour, (i.subnetIds ?? []).length || 1, "AZ-h")] : [],
  "aws:ec2/vpcPeeringConnection:VpcPeeringConnection": () => [used("VPC peering cross-AZ data, both ways", U.peeringCrossAzGb * 2, "GB", PRICES.peeringCrossAzPerGb)],
  "aws:ec2/flowLog:FlowLog": () => [used("VPC flow log ingestion", U.flowLogGb, "GB", PRICES.logsIngestPerGb)],
  "aws:cloudwatch/logGroup:LogGroup": () => [stored("CloudWatch Logs storage", U.logGroupStoredGb, PRICES.logsStoredGbMonth, "usage")],
  "aws:lb/loadBalancer:LoadBalancer": (i) => {
    const network = (i.loadBalancerType ?? "application") === "network";
    return [hourly(`${network ? "NLB" : "ALB"} ${i.name ?? ""}`.trim(), network ? PRICES.nlbHour : PRICES.albHour)];
  },
  "aws:vpclattice/service:Service": () => [hourly("VPC Lattice service", PRICES.latticeServiceHour)],
  "aws:kms/key:Key": () => [perMonth("KMS key", PRICES.kmsKeyMonth)],
  "aws:cloudwatch/metricAlarm:MetricAlarm": (i) => [
    perMonth("CloudWatch alarm", PRICES.alarmMonth),
    // A host's disk alarm watches a custom metric the host publishes; its root mount's alarm carries the host's PutMetricData calls.
    ...(i.metricName === HOST_DISK.metric ? [perMonth("custom metric (disk use of one mount)", PRICES.customMetricMonth)] : []),
    ...(i.metricName === HOST_BOOT.metric ? [perMonth("custom metric (a host's boot state)", PRICES.customMetricMonth)] : []),
    ...(String(i.metricName) in HOST_COUNTS ? [perMonth(`custom metric (a host's count: ${HOST_COUNTS[i.metricName as keyof typeof HOST_COUNTS].what})`, PRICES.customMetricMonth)] : []),
    ...(i.metricName === HOST_DISK.metric && i.dimensions?.Mount === "/" ? [idleRequests("PutMetricData calls (one per host every 5 min)", (30 * 24 * 3600) / HOST_DISK.periodSeconds, PRICES.metricRequestsPerMillion)] : []),
  ],
  "aws:secretsmanager/secret:Secret": () => [perMonth("Secrets Manager secret", PRICES.secretMonth)],
  "aws:ssm/parameter:Parameter": (i) => (i.tier === "Advanced" ? [perMonth("SSM advanced parameter", PRICES.ssmAdvancedParameterMonth)] : []),
  "aws:efs/fileSystem:FileSystem": () => [stored("EFS Standard storage", U.efsGb, PRICES.efsStandardGbMonth, "usage")],
  "aws:efs/backupPolicy:BackupPolicy": (i) => (i.backupPolicy?.status === "ENABLED" ? [stored("EFS backups (AWS Backup, warm)", U.efsGb, PRICES.efsBackupGbMonth, "usage")] : []),
  "aws:s3/bucket:Bucket": () => [stored("S3 Standard storage", U.s3Gb, PRICES.s3StandardGbMonth, "usage")],
  "aws:dynamodb/table:Table": (i) => {
    if (i.billingMode !== "PAY_PER_REQUEST") return "provisioned-capacity DynamoDB tables have no price rule (the project uses on-demand)";
    return [
      stored("DynamoDB storage", U.dynamoDbGbPerTable, PRICES.dynamoDbGbMonth, "usage"),
      used("DynamoDB writes", U.dynamoDbWritesPerTable, "writes", PRICES.dynamoDbWritesPerMillion, 1e6),
      used("DynamoDB reads", U.dynamoDbReadsPerTable, "reads", PRICES.dynamoDbReadsPerMillion, 1e6),
      ...(i.pointInTimeRecovery?.enabled ? [stored("DynamoDB point-in-time recovery", U.dynamoDbGbPerTable, PRICES.dynamoDbPitrGbMonth, "usage")] : []),
    ];
  },
  "aws:lambda/function:Function": (i) => {
    const arm = (i.architectures ?? []).includes("arm64");
    const gbSeconds = Math.round(U.events * (U.lambdaMsPerInvocation / 1000) * (Number(i.memorySize ?? 128) / 1024));
    return [
      used("Lambda requests", U.events, "invocations", PRICES.lambdaRequestsPerMillion, 1e6),
      used(`Lambda compute (${arm ? "arm64" : "x86_64"}, ${i.memorySize ?? 128} MB)`, gbSeconds, "GB-s", arm ? PRICES.lambdaArmGbSecond : PRICES.lambdaX86GbSecond),
    ];
  },
  "aws:sqs/queue:Queue": (_, c, o) => {
    // A dead-letter queue takes only failures; a Lambda's queue its events and five pollers;
    // any other (Karpenter's interruption queue) one long-polling reader and rare messages.
    if (c.deadLetterQueues.has(o.arn)) return [used("SQS requests (dead-letter queue, failures only)", 0, "requests", PRICES.sqsRequestsPerMillion, 1e6)];
    const lambda = c.lambdaQueues.has(o.arn);
    return [used("SQS requests", sqsRequests(lambda ? U.lambdaPollers : U.karpenterPollers, lambda ? U.events : 0), "requests", PRICES.sqsRequestsPerMillion, 1e6)];
  },
};

export interface CostEstimate {
  readonly lines: CostLine[];
  readonly totalUsd: number;
  readonly byPayer: Record<Payer, number>;
  /** The idle lines' sums. */
  readonly idle: { readonly totalUsd: number; readonly byPayer: Record<Payer, number> };
  readonly unpriced: Unpriced[];
  /** Types present and free, with why. */
  readonly free: { readonly type: string; readonly count: number; readonly why: string }[];
}

function sums(lines: readonly CostLine[]): { totalUsd: number; byPayer: Record<Payer, number> } {
  const sum = (payer?: Payer) => cents(lines.filter((l) => payer === undefined || l.payer === payer).reduce((s, l) => s + l.monthlyUsd, 0));
  return { totalUsd: sum(), byPayer: { operator: sum("operator"), customer: sum("customer") } };
}

/** The whole estimate: every line, its sums, and what is free or unpriced. */
export function estimateCost(deployment: Deployment): CostEstimate {
  const resources = deployment.deployment.resources;
  const context = graphContext(resources);
  const lines: CostLine[] = [];
  const unpriced: Unpriced[] = [];
  const free = new Map<string, { count: number; why: string }>();
  for (const r of resources) {
    const rule = RULES[r.type];
    const why = NO_CHARGE[r.type] ?? (!r.custom && !r.type.startsWith("pulumi:") ? "a component: its children are priced" : undefined);
    if (rule) {
      const result = rule((r.inputs ?? {}) as Record<string, any>, context, (r.outputs ?? {}) as Record<string, any>);
      if (typeof result === "string") unpriced.push({ type: r.type, urn: r.urn, why: result });
      else lines.push(...result.map((l) => ({ ...l, type: r.type, urn: r.urn, payer: payerOf(deployment, r) })));
    } else if (why !== undefined) {
      const f = free.get(r.type) ?? { count: 0, why };
      free.set(r.type, { ...f, count: f.count + 1 });
    } else {
      unpriced.push({ type: r.type, urn: r.urn, why: "no price rule in planning/cost.ts and not listed free in facts/prices.ts" });
    }
  }
  return {
    lines,
    ...sums(lines),
    idle: sums(lines.filter((l) => l.basis === "idle")),
    unpriced,
    free: [...free.entries()].map(([type, f]) => ({ type, ...f })).sort((a, b) => a.type.localeCompare(b.type)),
  };
}

export interface IdleCost {
  readonly lines: CostLine[];
  readonly totalUsd: number;
  readonly byPayer: Record<Payer, number>;
}

/** Only what is billed with nothing running. */
export function idleCost(deployment: Deployment): IdleCost {
  const estimate = estimateCost(deployment);
  return { lines: estimate.lines.filter((l) => l.basis === "idle"), ...estimate.idle };
}

/** cost.json: the estimate in the shape `plan` writes beside resources.json. */
export function costDocument(estimate: CostEstimate, region: string): Record<string, unknown> {
  return {
    currency: "USD",
    monthly: {
      total: estimate.totalUsd,
      byPayer: estimate.byPayer,
      idle: { total: estimate.idle.totalUsd, byPayer: estimate.idle.byPayer },
      items: estimate.lines.map((l) => ({ item: l.item, payer: l.payer, basis: l.basis, monthlyUsd: l.monthlyUsd, detail: l.detail, type: l.type, urn: l.urn })),
    },
    assumptions: {
      pricesRegion: "us-east-1",
      stackRegion: region,
      hoursPerMonth: HOURS_PER_MONTH,
      freeTiers: "not deducted",
      usage: U,
    },
    unpriced: estimate.unpriced,
    free: estimate.free,
  };
}

export function writeCostFile(outDir: string, estimate: CostEstimate, region: string): string {
  const file = path.join(outDir, "cost.json");
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(file, JSON.stringify(costDocument(estimate, region), null, 2) + "\n");
  return file;
}

function grouped(lines: readonly CostLine[]): string[] {
  const byItem = new Map<string, { usd: number; n: number }>();
  for (const l of lines) {
    const g = byItem.get(l.item) ?? { usd: 0, n: 0 };
    byItem.set(l.item, { usd: g.usd + l.monthlyUsd, n: g.n + 1 });
  }
  return [...byItem.entries()].sort((a, b) => b[1].usd - a[1].usd || a[0].localeCompare(b[0])).map(([item, g]) => `  ${`$${cents(g.usd).toFixed(2)}`.padStart(9)}  ${item}${g.n > 1 ? ` (x${g.n})` : ""}`);
}

/** The table `plan` prints: idle, then at the usage assumptions, each by payer. */
export function formatCost(estimate: CostEstimate, region = "us-east-1"): string {
  const out = [`monthly cost: $${estimate.totalUsd.toFixed(2)} (idle $${estimate.idle.totalUsd.toFixed(2)}), us-east-1 list prices, ${HOURS_PER_MONTH} h${region === "us-east-1" ? "" : `; this stack is in ${region}`}`];
  for (const payer of ["customer", "operator"] as const) {
    const mine = estimate.lines.filter((l) => l.payer === payer);
    if (mine.length === 0) continue;
    out.push(`  ${payer} pays $${estimate.byPayer[payer].toFixed(2)} (idle $${estimate.idle.byPayer[payer].toFixed(2)}):`);
    for (const basis of ["idle", "usage"] as const) {
      const lines = mine.filter((l) => l.basis === basis);
      if (lines.length) out.push(`   ${basis === "idle" ? "idle" : "at the usage assumptions (facts/usage.ts)"}:`, ...grouped(lines));
    }
  }
  if (estimate.unpriced.length > 0) {
    out.push(`  warning: ${estimate.unpriced.length} resource(s) unpriced, not counted: add a rule or a price:`, ...estimate.unpriced.map((u) => `    ${u.type} ${u.urn.split("::").pop()}: ${u.why}`));
  }
  return out.join("\n");
}
