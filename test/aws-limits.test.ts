import * as assert from "node:assert/strict";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { stringify } from "yaml";
import { checkDeployment } from "../planning/policy-check";
import { planStack } from "../planning/plan";
import { maxTenantIdLength } from "../config/tenant-names";
import { EXAMPLE_STACKS, exampleFile, exampleRoot, plan } from "./helpers";

/** Characters EC2 accepts in security-group and rule descriptions (EC2 API reference). */
const EC2_DESCRIPTION = /^[a-zA-Z0-9. _\-:/()#,@[\]+=&;{}!$*]{0,255}$/;

const DESCRIBED = [
  "aws:ec2/securityGroup:SecurityGroup",
  "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
  "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule",
];

describe("AWS naming limits in every example plan", function () {
  this.timeout(60000);

  it("security-group and rule descriptions use only the characters EC2 accepts", async () => {
    for (const stack of EXAMPLE_STACKS) {
      for (const r of (await plan(stack)).deployment.deployment.resources.filter((x) => DESCRIBED.includes(x.type))) {
        const description = r.inputs?.description;
        if (description !== undefined) assert.match(String(description), EC2_DESCRIPTION, `${r.urn}`);
      }
    }
  });

  it("load balancer and target group names fit ELB's 32 characters and do not end in a hyphen", async () => {
    for (const stack of EXAMPLE_STACKS) {
      for (const r of (await plan(stack)).deployment.deployment.resources.filter((x) => x.type.startsWith("aws:lb/") && x.inputs?.name)) {
        assert.match(String(r.inputs?.name), /^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,30}[a-zA-Z0-9])?$/, r.urn);
      }
    }
  });

  it("EventBridge rule names fit 64 characters", async () => {
    for (const r of (await plan("connector-demo")).deployment.deployment.resources.filter((x) => x.type === "aws:cloudwatch/eventRule:EventRule")) {
      assert.ok(String(r.inputs?.name).length <= 64, r.urn);
    }
  });
});

describe("AWS's limits on every value a plan sets (policy within-aws-limits)", function () {
  this.timeout(120000);

  it("finds none over in the example stacks, each checking its names, documents, tags and rules", async () => {
    for (const stack of EXAMPLE_STACKS) {
      const report = checkDeployment((await plan(stack)).deployment, { tenants: [] });
      assert.deepEqual(report.violations.filter((v) => v.policy === "within-aws-limits").map((v) => v.message), [], stack);
      assert.equal(report.limits.over, 0, stack);
      assert.ok(report.limits.values > 40 && report.limits.limits >= 15, `${stack}: ${report.limits.values} values against ${report.limits.limits} limits`);
    }
  });

  it("finds none over at the longest tenant id config accepts, whose names are the longest a tenant makes", async () => {
    const id = "t".repeat(maxTenantIdLength("dev").length);
    // The examples' repository with one more tenant, central's host enlarged to hold it.
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "clusterra-longest-"));
    fs.cpSync(path.join(exampleRoot(), "stacks"), path.join(root, "stacks"), { recursive: true });
    const central = exampleFile("central-dev").values;
    fs.writeFileSync(path.join(root, "stacks", "Pulumi.central-dev.yaml"), stringify({ config: { ...central, "clusterra:controlPlane": { ...(central["clusterra:controlPlane"] as object), instanceType: "t4g.xlarge" } } }));
    const values = { ...exampleFile("tenant-acme-dev").values, "clusterra:tenant": { id, accountId: "999988887777" }, "aws:allowedAccountIds": ["999988887777"], "clusterra:network": { vpcCidr: "10.16.32.0/20", availabilityZones: 2 }, "clusterra:ports": { slurmctld: 30000, srun: 30001 } };
    fs.writeFileSync(path.join(root, "stacks", `Pulumi.tenant-${id}-dev.yaml`), stringify({ config: values }));
    const p = await planStack({ stack: `tenant-${id}-dev`, root }, undefined);
    // The tenant's side, and central's with the tenant's role, rules and secrets in it.
    for (const d of [p.deployment, p.central]) {
      assert.ok(d);
      const report = checkDeployment(d, { tenants: [] });
      assert.deepEqual(report.violations.filter((v) => v.policy === "within-aws-limits").map((v) => `${v.urn}: ${v.message}`), []);
      assert.equal(report.limits.over, 0);
    }
  });

  it("names the resource, the field, its size and the limit when a value is over, and plan says so in its one line", async () => {
    const { main } = await import("../cli/main");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "clusterra-over-"));
    // A connector's cluster name goes into its function's name: one character over Lambda's 64.
    const connector = exampleFile("connector-demo");
    const deployment = (await plan("connector-demo")).deployment;
    const fn = deployment.deployment.resources.find((r) => r.type === "aws:lambda/function:Function");
    assert.ok(fn?.inputs);
    const over = JSON.parse(JSON.stringify(deployment));
    const changed = over.deployment.resources.find((r: { urn: string }) => r.urn === fn.urn);
    changed.inputs.name = changed.outputs.name = "f".repeat(65);
    const report = checkDeployment(over, { tenants: [] });
    assert.deepEqual(report.violations.filter((v) => v.policy === "within-aws-limits").map((v) => [v.urn, v.message.split(". Fix:")[0]]), [
      [fn.urn, "name is 65 characters, over 64 (Lambda API reference, CreateFunction FunctionName: 64 characters)"],
    ]);
    assert.equal(report.limits.over, 1);
    const out: string[] = [];
    assert.equal(await main(["plan", "--stack", connector.stack, "--out", dir], (s) => out.push(s), (s) => out.push(s), exampleRoot()), 0);
    assert.match(out.join("\n"), /^AWS limits: \d+ values checked against \d+ limits \(facts\/aws-limits\.ts\), 0 over$/m);
  });

  it("holds each SSM parameter's value to its tier: a host file over the Standard tier's 4,096 characters is named", async () => {
    const deployment = (await plan("tenant-acme-dev")).deployment;
    const file = deployment.deployment.resources.find((r) => r.type === "aws:ssm/parameter:Parameter" && typeof r.inputs?.insecureValue === "string");
    assert.ok(file?.inputs);
    const over = JSON.parse(JSON.stringify(deployment));
    const changed = over.deployment.resources.find((r: { urn: string }) => r.urn === file.urn);
    changed.inputs.insecureValue = changed.outputs.insecureValue = "x".repeat(4097);
    const violations = (d: unknown) => checkDeployment(d as typeof deployment, { tenants: [] }).violations.filter((v) => v.policy === "within-aws-limits").map((v) => [v.urn, v.message.split(". Fix:")[0]]);
    assert.deepEqual(violations(over), [[file.urn, 'value is 4097 characters, over 4096 in its tier Standard (Systems Manager quotas: "Parameter value size, standard tier: 4 KB")']]);
    changed.inputs.tier = changed.outputs.tier = "Advanced";
    assert.deepEqual(violations(over), []);
  });
});
