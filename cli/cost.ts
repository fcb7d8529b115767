/**
 * Idle monthly cost of a deployment: what the resources cost with no jobs running and no
 * traffic (hourly charges, provisioned storage, per-key and per-secret fees). Usage-priced
 * items (requests, GB processed, DynamoDB on-demand) are zero at idle and left out.
 */
import { monthly, PRICES } from "../facts/prices";
import type { Deployment, DeploymentResource } from "./deployment";

export interface CostLine {
  readonly item: string;
  readonly urn: string;
  readonly monthlyUsd: number;
}

function line(r: DeploymentResource, item: string, monthlyUsd: number): CostLine {
  return { item, urn: r.urn, monthlyUsd: Math.round(monthlyUsd * 100) / 100 };
}

function priced(r: DeploymentResource): CostLine[] {
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

export function idleCost(deployment: Deployment): { lines: CostLine[]; totalUsd: number } {
  const lines = deployment.deployment.resources.flatMap(priced);
  return { lines, totalUsd: Math.round(lines.reduce((s, l) => s + l.monthlyUsd, 0) * 100) / 100 };
}

export function formatCost(cost: { lines: CostLine[]; totalUsd: number }): string {
  const grouped = new Map<string, number>();
  for (const l of cost.lines) grouped.set(l.item, (grouped.get(l.item) ?? 0) + l.monthlyUsd);
  const rows = [...grouped.entries()].sort((a, b) => b[1] - a[1]).map(([item, usd]) => `  ${`$${usd.toFixed(2)}`.padStart(9)}  ${item}`);
  const unpriced = cost.lines.filter((l) => l.item.includes("no price")).length;
  const warning = unpriced > 0 ? [`  warning: ${unpriced} item(s) have no price in facts/prices.ts and count as $0: add them`] : [];
  return [`idle cost: $${cost.totalUsd.toFixed(2)} a month (us-east-1 list prices, 730 h; traffic extra)`, ...rows, ...warning].join("\n");
}
