import * as assert from "node:assert/strict";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parse } from "yaml";
import { centralLinesFor, formatCentralCapacity, formatGrowth, formatOperatorMarginal } from "../planning/capacity";
import { costDocument, estimateCost, idleCost } from "../planning/cost";
import type { Deployment, DeploymentResource } from "../planning/deployment";
import { main } from "../cli/main";
import { checkCentralCapacity, hostCapacity, RESOURCE_NAMES } from "../config/capacity";
import { validateStack } from "../config";
import { CENTRAL_HOST_RESERVED } from "../facts/central-host";
import { INSTANCE_TYPES } from "../facts/instance-types";
import { EBS_GB_MONTH, INSTANCE_HOUR, PRICES } from "../facts/prices";
import { EXAMPLE_STACKS, exampleFile, exampleFiles, exampleRoot, plan, withValues } from "./helpers";

/** A deployment of the given resources in stack `stack`. */
function deploymentOf(stack: string, resources: Partial<DeploymentResource>[]): Deployment {
  const stackUrn = `urn:pulumi:${stack}::clusterra::pulumi:pulumi:Stack::clusterra-${stack}`;
  return {
    version: 3,
    deployment: {
      resources: [
        { urn: stackUrn, custom: false, type: "pulumi:pulumi:Stack" },
        ...resources.map((r, i) => ({ urn: `urn:pulumi:${stack}::clusterra::${r.type}::r${i}`, custom: true, ...r }) as DeploymentResource),
      ],
    },
  };
}

describe("cost estimate", function () {
  this.timeout(60000);

  it("prices a known graph line by line, by payer and basis", () => {
    const centralProvider = "urn:pulumi:tenant-x-dev::clusterra::pulumi:providers:aws::central::id-1";
    const d = deploymentOf("tenant-x-dev", [
      { type: "aws:ec2/instance:Instance", inputs: { instanceType: "t4g.small", associatePublicIpAddress: true, rootBlockDevice: { volumeType: "gp2", volumeSize: 20 } } },
      { type: "aws:ec2/vpcEndpoint:VpcEndpoint", inputs: { vpcEndpointType: "Interface", serviceName: "com.amazonaws.us-east-1.ssm", subnetIds: ["a", "b", "c"] } },
      { type: "aws:ec2/vpcEndpoint:VpcEndpoint", inputs: { vpcEndpointType: "Gateway", serviceName: "com.amazonaws.us-east-1.s3" } },
      { type: "aws:lb/loadBalancer:LoadBalancer", inputs: { loadBalancerType: "network", name: "nlb-x" }, provider: centralProvider },
      { type: "aws:dynamodb/table:Table", inputs: { billingMode: "PAY_PER_REQUEST", pointInTimeRecovery: { enabled: true } } },
      { type: "aws:lambda/function:Function", inputs: { memorySize: 1024, architectures: ["x86_64"] } },
      { type: "aws:ec2/vpc:Vpc", inputs: {} },
    ]);
    const e = estimateCost(d);
    const rows = e.lines.map((l) => [l.item, l.monthlyUsd, l.payer, l.basis]);
    assert.deepEqual(rows, [
      ["EC2 t4g.small", 12.26, "customer", "idle"],
      ["EBS gp2 root 20 GiB", 2, "customer", "idle"],
      ["public IPv4 address", 3.65, "customer", "idle"],
      ["interface endpoint com.amazonaws.us-east-1.ssm", 21.9, "customer", "idle"],
      ["NLB nlb-x", 16.43, "operator", "idle"],
      ["DynamoDB storage", 0.25, "customer", "usage"],
      ["DynamoDB writes", 0.63, "customer", "usage"],
      ["DynamoDB reads", 0.63, "customer", "usage"],
      ["DynamoDB point-in-time recovery", 0.2, "customer", "usage"],
      ["Lambda requests", 0.02, "customer", "usage"],
      ["Lambda compute (x86_64, 1024 MB)", 0.33, "customer", "usage"],
    ]);
    assert.deepEqual(e.idle.byPayer, { operator: 16.43, customer: 39.81 });
    assert.deepEqual(e.byPayer, { operator: 16.43, customer: 41.87 });
    assert.deepEqual(e.unpriced, []);
    assert.deepEqual(e.free.map((f) => f.type), ["aws:ec2/vpc:Vpc", "pulumi:pulumi:Stack"]);
  });

  it("prices SQS by who reads each queue: a Lambda's pollers and events, one long poll, a dead-letter queue's failures", () => {
    const arn = (n: string) => `arn:aws:sqs:us-east-1:444455556666:${n}`;
    const e = estimateCost(deploymentOf("connector-x", [
      { type: "aws:sqs/queue:Queue", inputs: { redrivePolicy: JSON.stringify({ deadLetterTargetArn: arn("dlq"), maxReceiveCount: 3 }) }, outputs: { arn: arn("events") } },
      { type: "aws:sqs/queue:Queue", inputs: {}, outputs: { arn: arn("dlq") } },
      { type: "aws:sqs/queue:Queue", inputs: {}, outputs: { arn: arn("interruption") } },
      { type: "aws:lambda/eventSourceMapping:EventSourceMapping", inputs: { eventSourceArn: arn("events") } },
    ]));
    assert.deepEqual(e.lines.map((l) => [l.item, l.detail, l.monthlyUsd]), [
      ["SQS requests", "957,000 requests x $0.4/million requests", 0.38],
      ["SQS requests (dead-letter queue, failures only)", "0 requests x $0.4/million requests", 0],
      ["SQS requests", "131,400 requests x $0.4/million requests", 0.05],
    ]);
  });

  it("lists an unknown type and an unknown instance type as unpriced, never as $0", () => {
    const e = estimateCost(deploymentOf("central-x", [{ type: "aws:memorydb/cluster:Cluster", inputs: {} }, { type: "aws:ec2/instance:Instance", inputs: { instanceType: "x2gd.metal" } }]));
    assert.deepEqual(e.lines, []);
    assert.deepEqual(e.unpriced.map((u) => [u.type, u.why]), [
      ["aws:memorydb/cluster:Cluster", "no price rule in planning/cost.ts and not listed free in facts/prices.ts"],
      ["aws:ec2/instance:Instance", "instance type x2gd.metal has no price in facts/prices.ts"],
    ]);
    const doc = costDocument(e, "us-east-1") as { unpriced: unknown[] };
    assert.equal(doc.unpriced.length, 2);
  });

  it("prices every resource type of every example plan or lists it free: nothing unpriced", async () => {
    for (const stack of EXAMPLE_STACKS) assert.deepEqual(estimateCost((await plan(stack)).deployment).unpriced, [], stack);
  });

  it("has a price, with its source and date, for every instance type the project sizes from", () => {
    assert.deepEqual(Object.keys(INSTANCE_HOUR).sort(), Object.keys(INSTANCE_TYPES).sort());
    for (const p of [...Object.values(INSTANCE_HOUR), ...Object.values(EBS_GB_MONTH), ...Object.values(PRICES)]) {
      assert.match(p.source, /^(https:\/\/aws\.amazon\.com\/|field brief)/);
      assert.match(p.date, /^\d{4}-\d{2}(-\d{2})?$/);
    }
  });

  it("prices the central side from facts/prices.ts, all of it the operator's", async () => {
    const cost = idleCost((await plan("central-dev")).deployment);
    const items = Object.fromEntries(cost.lines.map((l) => [l.item, l.monthlyUsd]));
    assert.deepEqual(items, {
      "EC2 t4g.large": 49.06,
      "EBS gp3 root 30 GiB": 2.4,
      "EBS gp3 100 GiB": 8,
      "NAT gateway": 32.85,
      "public IPv4 address": 3.65,
      "KMS key": 1,
      "Secrets Manager secret": 0.4,
      "CloudWatch alarm": 0.1,
      // The host's disk use, boot state and unlimited volumes: two mounts' metrics, one of the boot, one count, one call every five minutes.
      "custom metric (disk use of one mount)": 0.3,
      "custom metric (a host's boot state)": 0.3,
      "custom metric (a host's count: local volumes not held to their sizes)": 0.3,
      "PutMetricData calls (one per host every 5 min)": 0.09,
    });
    // A tenant adds no priced resource to central (its slurmctld port is one rule on the host's group).
    assert.deepEqual(cost.byPayer, { operator: 99.65, customer: 0 });
    const usage = estimateCost((await plan("central-dev")).deployment).lines.filter((l) => l.basis === "usage");
    assert.equal(usage.filter((l) => l.item === "DynamoDB point-in-time recovery").length, 6);
    assert.deepEqual(usage.find((l) => l.item.startsWith("EBS snapshots"))?.detail, "20 GB x $0.05/GB-month");
  });

  it("charges the operator what a tenant stack creates in central, and says what one more tenant adds", async () => {
    const acme = await plan("tenant-acme-dev");
    const cost = estimateCost(acme.deployment);
    // The tenant's keys and its server's alarms are in central; central builds nothing priced for it (rules, roles and a route are free).
    assert.equal(cost.idle.byPayer.operator, 3.09);
    const forAcme = centralLinesFor(acme.central!, "acme");
    assert.deepEqual(forAcme.map((l) => l.item), []);
    assert.equal(
      formatOperatorMarginal(cost, exampleFile("central-dev"), forAcme),
      "operator's marginal cost of this tenant: $3.09 a month idle (Secrets Manager secret x4 $1.60, CloudWatch alarm x5 $0.50, custom metric (a host's boot state) $0.30, custom metric (disk use of one mount) x2 $0.60, PutMetricData calls (one per host every 5 min) $0.09); with its share of the central host (t4g.large $49.06 / 2 tenants it holds) $27.62",
    );
    assert.equal(formatGrowth((await plan("connector-demo")).config, estimateCost((await plan("connector-demo")).deployment), exampleFiles()), undefined);
  });
});

describe("central capacity", function () {
  this.timeout(60000);

  it("sums the host's reservations and one tenant's requests against the instance type", () => {
    const large = hostCapacity("t4g.large")!;
    assert.deepEqual([large.allocatable, large.reserved, large.perTenant], [
      { cpuMillis: 2000, memoryMiB: 7477, pods: 110 },
      { cpuMillis: 1200, memoryMiB: 4158, pods: 23 },
      { cpuMillis: 365, memoryMiB: 1072, pods: 6 },
    ]);
    assert.deepEqual([large.maxTenants, large.limitedBy], [2, "cpuMillis"]);
    assert.deepEqual([hostCapacity("t4g.medium")!.maxTenants, hostCapacity("t4g.medium")!.limitedBy], [0, "memoryMiB"]);
    assert.deepEqual([hostCapacity("m7g.2xlarge")!.maxTenants, hostCapacity("m7g.2xlarge")!.limitedBy], [14, "pods"]);
    assert.equal(hostCapacity("i3en.large"), undefined);
  });

  it("reserves for cluster-api exactly what its chart requests", () => {
    const values = parse(fs.readFileSync(path.join(__dirname, "..", "..", "fleet", "charts", "cluster-api", "values.yaml"), "utf8"));
    const { cpu, memory } = values.resources.requests;
    assert.deepEqual([`${CENTRAL_HOST_RESERVED.clusterApi.cpuMillis}m`, `${CENTRAL_HOST_RESERVED.clusterApi.memoryMiB}Mi`], [cpu, memory]);
  });

  it("rejects a central whose tenants do not fit, naming the type that would", () => {
    const central = exampleFile("central-dev");
    const tenants = (n: number) =>
      Array.from({ length: n }, (_, i) => withValues(exampleFile("tenant-acme-dev"), { "clusterra:tenant": { id: `t${i}`, accountId: "444455556666" }, "clusterra:ports": { slurmctld: 30000 + i * 11, srun: 30001 + i * 11 } }, `tenant-t${i}-dev`));
    assert.equal(validateStack(central, tenants(2)).ok, true);
    const three = validateStack(central, tenants(3));
    assert.ok(!three.ok);
    assert.deepEqual(three.issues.map((i) => [i.key, i.value, i.problem, i.valid]), [
      ["clusterra:controlPlane.instanceType", "t4g.large", "holds 2 tenant control plane(s) (CPU runs out first) but 3 tenant stacks join this central", "t4g.xlarge, the cheapest type that holds 3"],
    ]);
    const small = validateStack(withValues(central, { "clusterra:controlPlane": { instanceType: "t4g.medium", k3sVersion: "v1.35.3+k3s1" } }), tenants(1));
    assert.ok(!small.ok && /valid: t4g.large/.test(`valid: ${small.issues[0].valid}`));
  });

  it("checks the peering quota: a warning past the default, an error past AWS's maximum", () => {
    assert.deepEqual(checkCentralCapacity("t4g.large", 2).warnings, []);
    assert.match(checkCentralCapacity("t4g.large", 51).warnings[0], /over the default quota of 50/);
    const over = checkCentralCapacity("t4g.large", 126).errors;
    assert.deepEqual(over.map((e) => e.on), ["instanceType", "tenants"]);
    assert.match(over[1].problem, /over AWS's maximum of 125 per VPC/);
    assert.match(checkCentralCapacity("i3en.large", 1).warnings[0], /not checked/);
  });

  it("checks the route quota of central's private route table: its own 3 routes and one per tenant, a warning past 50", () => {
    const routeWarnings = (tenants: number) => checkCentralCapacity("t4g.large", tenants).warnings.filter((w) => /route table/.test(w));
    assert.deepEqual(routeWarnings(47), []);
    assert.deepEqual(routeWarnings(48), [
      "48 tenants put 51 routes in central's private route table (its 3 own, the NAT default and gateway endpoints, and one per tenant): over the default quota of 50; raise \"Routes per route table\" (at most 1000) before they join",
    ]);
  });
});

describe("plan writes cost.json and the diagram", function () {
  this.timeout(60000);

  it("cost.json in the issue's shape, architecture.dot and .svg beside resources.json", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "clusterra-cost-"));
    try {
      const out: string[] = [];
      assert.equal(await main(["plan", "--stack", "connector-demo", "--out", dir], (s) => out.push(s), (s) => out.push(s), exampleRoot()), 0, out.join("\n"));
      const doc = JSON.parse(fs.readFileSync(path.join(dir, "cost.json"), "utf8"));
      assert.equal(doc.currency, "USD");
      assert.deepEqual(Object.keys(doc.monthly.byPayer).sort(), ["customer", "operator"]);
      assert.equal(doc.monthly.total, Math.round(doc.monthly.items.reduce((s: number, i: { monthlyUsd: number }) => s + i.monthlyUsd, 0) * 100) / 100);
      assert.ok(doc.monthly.items.every((i: { payer: string }) => i.payer === "customer"));
      assert.deepEqual(doc.monthly.idle, { total: 19.75, byPayer: { operator: 0, customer: 19.75 } });
      assert.equal(doc.assumptions.usage.events, 100000);
      assert.deepEqual(doc.unpriced, []);
      assert.match(out.join("\n"), /customer pays \$\d+\.\d\d \(idle \$19\.75\)/);
      assert.match(fs.readFileSync(path.join(dir, "architecture.dot"), "utf8"), /^digraph architecture \{/);
      assert.match(fs.readFileSync(path.join(dir, "architecture.svg"), "utf8"), /<svg/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("prints how many tenants the central host holds and how many more fit", () => {
    assert.equal(
      formatCentralCapacity("central-dev", "t4g.large", exampleFiles()),
      [
        "central capacity: 2 tenant(s) join central-dev (tenant-acme-dev, tenant-globex-dev)",
        "  t4g.large allocatable 2000m CPU, 7477 MiB, 110 pods (less 7.5 % VM overhead and kubelet's eviction threshold)",
        "  reserved by the host (K3s, ArgoCD, cluster-api, operators; facts/central-host.ts): 1200m CPU, 4158 MiB, 23 pods",
        "  one tenant's control plane and its DNS (facts/control-plane.ts): 365m CPU, 1072 MiB, 6 pods",
        "  holds 2 tenant(s) (CPU runs out first): 0 more fit",
        `  one central holds at most 14 whatever its host (the largest host type (t4g.2xlarge) holds 14): past that, new tenants join a second central of the environment (a cell: a central stack file with clusterra:cell, README "An environment outgrows one central")`,
        "  data volume 100 GiB for 2 tenant(s): 30 GiB the host's, 24 GiB per tenant (slurmctld state, MariaDB, its backups), at least 100 GiB; grows with the tenants (100 GiB at 2)",
      ].join("\n"),
    );
    assert.match(formatCentralCapacity("central-dev", "t4g.medium", exampleFiles()), /error: holds 0 .*valid: t4g.large/);
    // More tenants than any host holds: the way out is a cell, said with how far one central goes.
    const many = Array.from({ length: 19 }, (_, i) => withValues(exampleFile("tenant-acme-dev"), { "clusterra:tenant": { id: `t${i}`, accountId: "444455556666" } }, `tenant-t${i}-dev`));
    assert.match(formatCentralCapacity("central-dev", "t4g.2xlarge", many), /error: holds 14 .* but 19 tenant stacks join this central; valid: none of facts\/instance-types.ts holds them: new tenants join a second central of the environment \(a cell: .*\); one central holds at most 14 \(the largest host type \(t4g.2xlarge\) holds 14\)/);
  });
});

describe("README's cost and capacity figures", function () {
  this.timeout(60000);
  const readme = fs.readFileSync(path.join(__dirname, "..", "..", "README.md"), "utf8");
  const usd = (n: number) => (n === 0 ? "—" : `$${n.toFixed(2)}`);

  it("match the example plans", async () => {
    for (const stack of EXAMPLE_STACKS) {
      const e = estimateCost((await plan(stack)).deployment);
      const row = `| ${stack} | ${usd(e.idle.byPayer.operator)} | ${usd(e.idle.byPayer.customer)} | ${usd(e.byPayer.operator)} | ${usd(e.byPayer.customer)} |`;
      assert.ok(readme.includes(row), `README lacks ${row}`);
    }
  });

  it("match the capacity of each instance type it lists, and show every example stack's diagram", () => {
    const rows = [...readme.matchAll(/^\| (t4g\.\w+) \| \$([\d.]+) \| (\d+) \| (\w+)/gm)];
    assert.ok(rows.length >= 4);
    for (const [, type, price, tenants, limit] of rows) {
      const c = hostCapacity(type)!;
      assert.deepEqual([Number(price), Number(tenants), limit], [Math.round(INSTANCE_HOUR[type as keyof typeof INSTANCE_HOUR].usd * 730 * 100) / 100, c.maxTenants, RESOURCE_NAMES[c.limitedBy]], type);
    }
    for (const stack of EXAMPLE_STACKS) assert.ok(readme.includes(`![${stack}](docs/architecture/${stack}.svg)`), stack);
  });
});
