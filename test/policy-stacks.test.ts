import * as assert from "node:assert/strict";
import type { Deployment, DeploymentResource } from "../planning/deployment";
import { checkDeployment } from "../planning/policy-check";
import { tenantsFromStackFiles } from "../config";
import { EXAMPLE_STACKS, exampleRoot, plan } from "./helpers";

/** One violating resource, parented to the stack and using its AWS provider. */
function inject(deployment: Deployment, type: string, name: string, inputs: Record<string, unknown>, extra: Partial<DeploymentResource> = {}): [Deployment, string] {
  const resources = deployment.deployment.resources;
  const stack = resources.find((r) => r.type === "pulumi:pulumi:Stack")!;
  const provider = resources.find((r) => r.type === "pulumi:providers:aws")!;
  const prefix = stack.urn.split("::").slice(0, 2).join("::");
  const urn = `${prefix}::${type}::${name}`;
  const resource: DeploymentResource = { urn, custom: true, type, id: `${name}-id`, inputs, outputs: inputs, parent: stack.urn, protect: false, dependencies: [], provider: `${provider.urn}::${provider.id}`, ...extra };
  return [{ ...deployment, deployment: { ...deployment.deployment, resources: [...resources, resource] } }, urn];
}

const VIOLATIONS: [string, string, Record<string, unknown>, Partial<DeploymentResource>?][] = [
  ["aws:iam/policy:Policy", "admin-everything", { policy: JSON.stringify({ Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: "*", Resource: "*" }] }) }],
  ["aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "ssh-from-anywhere", { securityGroupId: "sg-0123456789abcdef0", ipProtocol: "tcp", fromPort: 22, toPort: 22, cidrIpv4: "0.0.0.0/0" }],
  ["aws:ec2/instance:Instance", "imdsv1-box", { ami: "ami-0123456789abcdef0", instanceType: "t4g.small", metadataOptions: { httpTokens: "optional" }, rootBlockDevice: { encrypted: true } }],
  ["aws:dynamodb/table:Table", "unprotected-table", { name: "t", hashKey: "id", attributes: [{ name: "id", type: "S" }], billingMode: "PAY_PER_REQUEST" }],
  ["aws:sqs/queue:Queue", "plain-queue", { name: "q", sqsManagedSseEnabled: false }],
];

describe("policy pack over the example stacks", function () {
  this.timeout(60000);
  const tenants = tenantsFromStackFiles(exampleRoot());

  for (const stack of EXAMPLE_STACKS) {
    it(`${stack}: zero violations, mandatory or advisory`, async () => {
      const report = checkDeployment((await plan(stack)).deployment, { tenants, root: exampleRoot() });
      assert.deepEqual(report.violations, []);
      assert.ok(report.policies >= 30);
    });

    it(`${stack}: every injected violation fails the check, naming its URN`, async () => {
      const { deployment } = await plan(stack);
      for (const [type, name, inputs, extra] of VIOLATIONS) {
        const [bad, urn] = inject(deployment, type, name, inputs, extra);
        const report = checkDeployment(bad, { tenants, root: exampleRoot() });
        assert.equal(report.passed, false, `${name} in ${stack} passed`);
        assert.ok(report.violations.some((v) => v.urn === urn && v.level === "mandatory"), `${name}: ${JSON.stringify(report.violations)}`);
        assert.ok(report.violations.every((v) => v.urn === urn || v.urn === "" || v.urn.endsWith("::pulumi:pulumi:Stack::clusterra-" + stack)), `only the injected resource is blamed: ${JSON.stringify(report.violations.map((v) => v.urn))}`);
      }
    });
  }

  it("says which resources carry secret inputs it could not inspect", async () => {
    const report = checkDeployment((await plan("central-dev")).deployment, { tenants, root: exampleRoot() });
    // The listener certificate's private keys reach the TLS resources and its secret as secrets.
    assert.deepEqual(report.secretInputs.map((u) => u.split("::").pop()).sort(), ["central-dev-argocd-k3s", "central-dev-cluster-api-tls-ca", "central-dev-cluster-api-tls-secret", "central-dev-cluster-api-tls-server", "central-dev-cluster-api-tls-server", "central-dev-secrets-signing-key"]);
  });

  it("a tenant stack that names another tenant's resources fails isolation", async () => {
    const { deployment } = await plan("tenant-acme-dev");
    const [bad, urn] = inject(deployment, "aws:iam/rolePolicy:RolePolicy", "peek", {
      role: "r",
      policy: JSON.stringify({ Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: "s3:GetObject", Resource: "arn:aws:s3:::clusterra-dev-globex-files/*" }] }),
    });
    const report = checkDeployment(bad, { tenants, root: exampleRoot() });
    assert.ok(report.violations.some((v) => v.policy === "tenant-isolation" && v.urn === urn), JSON.stringify(report.violations));
  });
});

describe("clusterra policy check on a plan's resources.json", function () {
  this.timeout(60000);

  it("exits 0 on each example plan and 1 naming the URN once a violation is injected into the file", async () => {
    const fs = await import("fs");
    const os = await import("os");
    const path = await import("path");
    const { main } = await import("../cli/main");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "clusterra-policy-"));
    for (const stack of EXAMPLE_STACKS) {
      const { deployment } = await plan(stack);
      const clean = path.join(dir, `${stack}.json`);
      fs.writeFileSync(clean, JSON.stringify(deployment));
      const quiet = () => undefined;
      assert.equal(await main(["policy", "check", clean], quiet, quiet, exampleRoot()), 0, stack);
      const [bad, urn] = inject(deployment, "aws:ec2/instance:Instance", "open-box", { ami: "ami-0123456789abcdef0", instanceType: "t4g.small", associatePublicIpAddress: true, metadataOptions: { httpTokens: "required" }, rootBlockDevice: { encrypted: true } });
      const dirty = path.join(dir, `${stack}-bad.json`);
      fs.writeFileSync(dirty, JSON.stringify(bad));
      const out: string[] = [];
      assert.equal(await main(["policy", "check", dirty], (s) => out.push(s), quiet, exampleRoot()), 1, stack);
      assert.match(out.join("\n"), new RegExp(`ec2-no-public-ip \\[mandatory, \\w+\\] ${urn.replace(/[$.*+?^()[\]{}|\\]/g, "\\$&")}`));
      const json: string[] = [];
      assert.equal(await main(["policy", "check", dirty, "--json"], (s) => json.push(s), quiet, exampleRoot()), 1);
      assert.ok(JSON.parse(json.join("\n")).violations.some((v: { urn: string }) => v.urn === urn));
    }
  });
});
