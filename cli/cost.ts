/**
 * Idle monthly cost of a deployment: what the resources cost with no jobs running and no
 * traffic (hourly charges, provisioned storage, per-key and per-secret fees). Usage-priced
 * items (requests, GB processed, DynamoDB on-demand) are zero at idle and left out.
 */
import { monthly, PRICES } from "../facts/prices";
import type { Deployment, DeploymentResource } from "./deployment";

/** Who gets the bill: the operator (central account) or the customer (its own account). */
export type Payer = "operator" | "customer";

export interface CostLine {
  readonly item: string;
  readonly urn: string;
  readonly monthlyUsd: number;
  readonly payer: Payer;
}

/** The AWS provider a tenant stack acts in central through (components/tenant/stack.ts). */
const CENTRAL_PROVIDER_NAME = "central";

/**
 * Central stacks bill the operator; tenant and connector stacks bill the customer, except
 * what a tenant stack creates in central through its central provider.
 */
export function payerOf(deployment: Deployment, r: DeploymentResource): Payer {
  const kind = deployment.deployment.resources.find((x) => x.type === "pulumi:pulumi:Stack")?.urn.split("::")[1];
  const provider = r.provider?.split("::")[3];
  if (provider === CENTRAL_PROVIDER_NAME) return "operator";
  return kind !== undefined && /^central-/.test(kind) ? "operator" : "customer";
}

function line(r: DeploymentResource, item: string, monthlyUsd: number): Omit<CostLine, "payer"> {
  return { item, urn: r.urn, monthlyUsd: Math.round(monthlyUsd * 100) / 100 };
}

function priced(r: DeploymentResource): Omit<CostLine, "payer">[] {
  const i = (r.inputs ?? {}) as Record<string, any>;
  switch (r.type) {
    case "aws:ec2/instance:Instance": {
      const hourly = PRICES.instanceHour[i.instanceType];
      const root = Number(i.rootBlockDevice?.volumeSize ?? 8);
      return [
        hourly === undefined ? line(r, `${i.instanceType} (no price in facts/prices.ts)`, 0) : line(r, `EC2 ${i.instanceType}`, monthly(hourly)),
        line(r, `EBS gp3 root ${root} GiB`, root * PRICES.ebsGp3GbMonth),
      ];
    }
    case "aws:ebs/volume:Volume":
      return [line(r, `EBS ${i.type ?? "gp3"} ${i.size} GiB`, Number(i.size) * PRICES.ebsGp3GbMonth)];
    case "aws:ec2/natGateway:NatGateway":
      return [line(r, "NAT gateway", monthly(PRICES.natGatewayHour))];
    case "aws:ec2/eip:Eip":
      return [line(r, "public IPv4 address", monthly(PRICES.publicIpv4Hour))];
    case "aws:ec2/vpcEndpoint:VpcEndpoint":
      return i.vpcEndpointType === "Interface" ? [line(r, `interface endpoint ${i.serviceName}`, monthly(PRICES.interfaceEndpointAzHour * (i.subnetIds?.length ?? 1)))] : [];
    case "aws:lb/loadBalancer:LoadBalancer":
      return [line(r, `NLB ${i.name ?? ""}`.trim(), monthly(PRICES.nlbHour))];
    case "aws:vpclattice/service:Service":
      return [line(r, "VPC Lattice service", monthly(PRICES.latticeServiceHour))];
    case "aws:kms/key:Key":
      return [line(r, "KMS key", PRICES.kmsKeyMonth)];
    case "aws:secretsmanager/secret:Secret":
      return [line(r, "Secrets Manager secret", PRICES.secretMonth)];
    default:
      return [];
  }
}

export interface IdleCost {
  readonly lines: CostLine[];
  readonly totalUsd: number;
  readonly byPayer: Record<Payer, number>;
}

const cents = (usd: number) => Math.round(usd * 100) / 100;

export function idleCost(deployment: Deployment): IdleCost {
  const lines = deployment.deployment.resources.flatMap((r) => priced(r).map((l) => ({ ...l, payer: payerOf(deployment, r) })));
  const sum = (payer?: Payer) => cents(lines.filter((l) => payer === undefined || l.payer === payer).reduce((s, l) => s + l.monthlyUsd, 0));
  return { lines, totalUsd: sum(), byPayer: { operator: sum("operator"), customer: sum("customer") } };
}

export function formatCost(cost: IdleCost): string {
  const sections = (["customer", "operator"] as const).filter((payer) => cost.lines.some((l) => l.payer === payer)).flatMap((payer) => {
    const grouped = new Map<string, number>();
    for (const l of cost.lines.filter((x) => x.payer === payer)) grouped.set(l.item, (grouped.get(l.item) ?? 0) + l.monthlyUsd);
    const rows = [...grouped.entries()].sort((a, b) => b[1] - a[1]).map(([item, usd]) => `  ${`$${usd.toFixed(2)}`.padStart(9)}  ${item}`);
    return [`  ${payer} pays $${cost.byPayer[payer].toFixed(2)}:`, ...rows];
  });
  const unpriced = cost.lines.filter((l) => l.item.includes("no price")).length;
  const warning = unpriced > 0 ? [`  warning: ${unpriced} item(s) have no price in facts/prices.ts and count as $0: add them`] : [];
  return [`idle cost: $${cost.totalUsd.toFixed(2)} a month (us-east-1 list prices, 730 h; traffic extra)`, ...sections, ...warning].join("\n");
}
