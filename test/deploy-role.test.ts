/**
 * The customer's deploy role, generated from the plan: the IAM simulator allows every call
 * of every planned create (with the plan's names, tags and region) and refuses a sample of
 * requests outside the stack; the documents fit IAM's limits; docs/inventory holds each
 * example's current template (UPDATE_INVENTORY=1 npm test rewrites them).
 */
import * as assert from "node:assert/strict";
import * as fs from "fs";
import * as path from "path";
import { buildDeployRole, deployRoleTemplate, customerResources, MANAGED_POLICY_MAX_CHARS, mergeGrants, proveDeployRole, splitPolicies, type DeployRole } from "../access/deploy-role";
import { DEPLOY_ACTIONS, INVOKE_ACTIONS, KMS_USE_ACTIONS } from "../facts/deploy-actions";
import { expandAction } from "../policies/rules/iam-catalog";
import { plan } from "./helpers";

const DOCS = path.join(__dirname, "..", "..", "docs", "inventory");
const EXISTING_VPC = { vpcCidr: "10.16.0.0/20", vpcId: "vpc-0a1b2c3d4e5f60718", subnetIds: ["subnet-0a1b2c3d4e5f60718", "subnet-1a1b2c3d4e5f60718"], serverPrivateIp: "10.16.1.20" };

async function roleOf(stack: string, changes?: Record<string, unknown>) {
  const p = await plan(stack, changes);
  const role = buildDeployRole(p.config, p.deployment, p.invokes);
  assert.ok(role, stack);
  return { p, role };
}

describe("the customer's deploy role", function () {
  this.timeout(120000);

  it("names only actions the IAM catalog knows", () => {
    const actions = [...Object.values(DEPLOY_ACTIONS).flatMap((r) => [...r.create, ...r.read, ...r.update, ...r.delete]), ...Object.values(INVOKE_ACTIONS).flatMap((r) => r.actions), ...KMS_USE_ACTIONS];
    const unknown = [...new Set(actions)].filter((a) => expandAction(a).length !== 1);
    assert.deepEqual(unknown, []);
  });

  for (const [label, stack, changes] of [
    ["tenant-acme-dev", "tenant-acme-dev", undefined],
    ["tenant-acme in an existing VPC", "tenant-acme-dev", { "clusterra:network": EXISTING_VPC }],
    ["connector-demo", "connector-demo", undefined],
  ] as const) {
    it(`${label}: allows every call of every planned create, refuses the outside sample, and fits IAM's limits`, async () => {
      const { p, role } = await roleOf(stack, changes);
      const { creates, outside } = await proveDeployRole(p.config, p.deployment, role);
      assert.ok(creates.length >= customerResources(p.deployment).length, `${creates.length} requests for ${customerResources(p.deployment).length} resources`);
      assert.deepEqual(creates.filter((c) => c.verdict !== "Allowed").map((c) => `${c.what}: ${c.action} ${c.resource}`), []);
      assert.ok(outside.length >= 15);
      assert.deepEqual(outside.filter((c) => c.verdict === "Allowed").map((c) => `${c.what}: ${c.action} ${c.resource}`), []);
      for (const policy of role.policies) assert.ok(JSON.stringify(policy.document).length <= MANAGED_POLICY_MAX_CHARS, `${policy.name}: ${JSON.stringify(policy.document).length}`);
      // Every write is scoped: by name, by tag, by an exact ARN, or by region where AWS takes no resource.
      for (const s of role.statements) {
        if (s.Resource.includes("*")) assert.ok(s.Condition, `${s.Sid} on * without a condition`);
      }
    });
  }

  it("a tenant's role trusts only the operator's deployer for that tenant, with its ExternalId", async () => {
    const { role } = await roleOf("tenant-acme-dev");
    assert.equal(role.roleName, "clusterra-deploy-dev-acme");
    const trust = JSON.stringify(role.trust);
    assert.match(trust, /"sts:ExternalId":"clusterra-dev-acme"/);
    assert.match(trust, /"aws:PrincipalArn":"arn:aws:iam::111122223333:role\/clusterra-deployer-dev-acme"/);
  });

  it("merges grants into statements and splits them within the size limit, in order", () => {
    const grants = Array.from({ length: 120 }, (_, i) => ({ kind: "Own", action: `ec2:Action${i % 7}`, resources: [`arn:aws:ec2:us-east-1:444455556666:thing-${i % 40}/*`] }));
    const statements = mergeGrants(grants);
    assert.equal(statements.length, 40);
    const policies = splitPolicies("clusterra-deploy-dev-x", [...statements, ...statements, ...statements, ...statements, ...statements]);
    assert.ok(policies.length > 1);
    assert.deepEqual(policies.map((p) => p.name).slice(0, 2), ["clusterra-deploy-dev-x-1", "clusterra-deploy-dev-x-2"]);
    for (const p of policies) assert.ok(JSON.stringify(p.document).length <= MANAGED_POLICY_MAX_CHARS);
    assert.throws(() => splitPolicies("x", Array.from({ length: 40 }, () => statements).flat()), /over IAM's default 10 a role/);
  });

  it("docs/inventory holds each example's deploy role template (UPDATE_INVENTORY=1 npm test rewrites them)", async () => {
    for (const stack of ["tenant-acme-dev", "tenant-globex-dev", "connector-demo", "connector-offline"]) {
      const { role } = await roleOf(stack);
      const file = path.join(DOCS, `${stack}.deploy-role.yaml`);
      const text = deployRoleTemplate(role as DeployRole);
      if (process.env.UPDATE_INVENTORY) fs.writeFileSync(file, text);
      assert.equal(fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "", text, `docs/inventory/${stack}.deploy-role.yaml stale: regenerate with UPDATE_INVENTORY=1 npm test`);
    }
  });
});
