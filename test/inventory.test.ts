/**
 * "What Clusterra deploys in your account", from the plan: the inventory's resources and
 * roles are the plan's, every "cannot" line is a simulator's refusal, and docs/inventory
 * holds each example's current inventory (UPDATE_INVENTORY=1 npm test rewrites them).
 */
import * as assert from "node:assert/strict";
import * as fs from "fs";
import * as path from "path";
import { buildInventory, encryptionOf, inventoryMarkdown, portsOf, purposeOf, retentionOf, type Inventory } from "../access/inventory";
import type { DeploymentResource } from "../planning/deployment";
import { plan } from "./helpers";

const DOCS = path.join(__dirname, "..", "..", "docs", "inventory");
const EXISTING_VPC = { vpcCidr: "10.16.0.0/20", vpcId: "vpc-0a1b2c3d4e5f60718", subnetIds: ["subnet-0a1b2c3d4e5f60718", "subnet-1a1b2c3d4e5f60718"], serverPrivateIp: "10.16.1.20" };

async function inventoryOf(stack: string, changes?: Record<string, unknown>): Promise<{ inv: Inventory; p: Awaited<ReturnType<typeof plan>> }> {
  const p = await plan(stack, changes);
  const inv = await buildInventory(p.config, p.deployment, p.central);
  assert.ok(inv, stack);
  return { inv, p };
}

/** The plan's resources in the customer's account: every cloud resource not made through the central provider (read from the provider, not by the inventory's own rule). */
function customerResources(p: Awaited<ReturnType<typeof plan>>): DeploymentResource[] {
  return p.deployment.deployment.resources.filter((r) => r.custom && !r.type.startsWith("pulumi:") && !/::central::/.test(String(r.provider ?? "")));
}

describe("the customer's inventory", function () {
  this.timeout(120000);

  for (const [label, stack, changes] of [
    ["tenant-acme-dev", "tenant-acme-dev", undefined],
    ["tenant-acme in an existing VPC", "tenant-acme-dev", { "clusterra:network": EXISTING_VPC }],
    ["connector-demo", "connector-demo", undefined],
  ] as const) {
    it(`${label}: lists every resource and role the plan puts in the customer's account, and proves each refusal`, async () => {
      const { inv, p } = await inventoryOf(stack, changes);
      const held = customerResources(p);
      assert.equal(inv.resourceCount, held.length);
      assert.equal(inv.groups.reduce((n, g) => n + g.resources.length, 0), held.length);
      const roles = held.filter((r) => r.type === "aws:iam/role:Role").map((r) => String(r.inputs?.name ?? `${r.urn.split("::").pop()}-*`)).sort();
      assert.deepEqual(inv.roles.map((r) => r.name).sort(), roles);
      assert.ok(inv.roles.every((r) => r.trust.length > 0 && r.permissions.length > 0), "every role has its trust and its permissions in words");
      assert.ok(inv.cannot.length >= 10, `${inv.cannot.length} refusals`);
      for (const c of inv.cannot) assert.match(c.verdict, /^(Implicitly|Explicitly)Denied$/, `${c.principal} ${c.what}`);
      // What the platform may do is its designed access only: a role assumed with its ExternalId.
      for (const c of inv.can) assert.match(c.what, /only with ExternalId/, `${c.principal} ${c.what}`);
      const md = inventoryMarkdown(inv);
      assert.match(md, new RegExp(`${held.length} resources in your account`));
      assert.equal((md.match(/^\| .* \| `[a-z0-9-]+:[A-Za-z]+` \| (Implicitly|Explicitly)Denied \|$/gm) ?? []).length, inv.cannot.length);
    });
  }

  it("refuses central's roles the files bucket, the file system, the key, a session on the server and the VPC, and lets cluster-api into the files role only with its ExternalId and a user's tag", async () => {
    const { inv } = await inventoryOf("tenant-acme-dev");
    const refused = (principal: RegExp, action: string) => inv.cannot.some((c) => principal.test(c.principal) && c.action === action);
    for (const action of ["s3:GetObject", "elasticfilesystem:ClientMount", "kms:Decrypt", "ssm:StartSession", "ec2:ModifyVpcAttribute", "ec2:CreateRoute"]) {
      for (const principal of [/K3s host/, /cluster-api/, /tenant-acme$/]) assert.ok(refused(principal, action), `${principal} ${action}`);
    }
    assert.deepEqual(inv.can.map((c) => `${c.principal}: ${c.what}`), ["clusterra-dev-cluster-api: assume a role: role clusterra-dev-acme-files, only with ExternalId clusterra-dev-acme-files and a clusterra:uid session tag"]);
  });

  it("lists every security-group rule in the customer's account: direction, ports, the peer in words, why", async () => {
    const { inv, p } = await inventoryOf("tenant-acme-dev");
    const rules = customerResources(p).filter((r) => /securityGroup(Ingress|Egress)Rule:/.test(r.type));
    assert.equal(inv.network.length, rules.length, "one row per rule resource");
    assert.ok(inv.network.every((r) => r.why.length > 0 && r.peer.length > 0 && r.ports.length > 0), "every row says its peer, ports and why");
    // Central's only way in: its host, to the API server, and to slurmd.
    const fromCentral = inv.network.filter((r) => r.direction === "in" && r.peer.startsWith("central's"));
    assert.deepEqual(fromCentral.map((r) => [r.group, r.ports, r.peer]), [
      ["tenant-acme-nodes-server", "tcp 6443", "central's host (10.0.0.10), over the peering"],
      ["tenant-acme-peering-workers", "tcp 6818", "central's host (10.0.0.10), over the peering"],
    ]);
    assert.ok(!inv.network.some((r) => r.direction === "in" && r.peer === "anywhere"), "nothing open to the internet");
    assert.match(inventoryMarkdown(inv), /\n## Network: every rule of every security group\n\n\d+ rules;[^\n]*\n\n\| group \| direction \| protocol and ports \| peer \| why \|\n/);
    assert.deepEqual([
      portsOf({ protocol: "tcp", fromPort: 6818, toPort: 6818 }), portsOf({ protocol: "tcp", fromPort: 32730, toPort: 32739 }), portsOf({ protocol: "all" }),
      portsOf({ protocol: "icmp", fromPort: 8, toPort: 0 }), portsOf({ protocol: "udp", fromPort: -1, toPort: -1 }), portsOf({ protocol: 47 }),
    ], ["tcp 6818", "tcp 32730-32739", "all", "icmp type 8 code 0", "udp, any port", "protocol 47, any port"]);
  });

  it("says how each resource is encrypted and kept, from its inputs", () => {
    const r = (type: string, inputs: Record<string, unknown>, protect = false) => ({ urn: `urn:pulumi:s::p::clusterra:tenant:SharedFileSystem$${type}::x`, custom: true, type, inputs, protect }) as DeploymentResource;
    assert.equal(purposeOf(r("aws:efs/fileSystem:FileSystem", {}).urn), "Shared file system");
    assert.equal(encryptionOf(r("aws:efs/fileSystem:FileSystem", { encrypted: true, kmsKeyId: "arn:aws:kms:us-east-1:1:key/k1" }), []), "encrypted (KMS key k1); clients must use TLS");
    assert.equal(encryptionOf(r("aws:ebs/volume:Volume", {}), []), "NOT encrypted");
    assert.equal(retentionOf(r("aws:efs/fileSystem:FileSystem", {}, true)), "protected: kept when the stack is destroyed");
    assert.equal(retentionOf(r("aws:cloudwatch/logGroup:LogGroup", { retentionInDays: 30 })), "logs kept 30 days");
  });

  it("docs/inventory holds each example customer stack's current inventory (UPDATE_INVENTORY=1 npm test rewrites them)", async () => {
    for (const stack of ["tenant-acme-dev", "tenant-globex-dev", "connector-demo", "connector-offline"]) {
      const p = await plan(stack);
      const inv = (await buildInventory(p.config, p.deployment, p.central, undefined, p.invokes)) as Inventory;
      assert.ok(inv.deployRole && inv.deployRole.deniedCalls.length === 0 && inv.deployRole.outside.every((o) => o.verdict !== "Allowed"), stack);
      const md = inventoryMarkdown(inv);
      if (process.env.UPDATE_INVENTORY) {
        fs.mkdirSync(DOCS, { recursive: true });
        fs.writeFileSync(path.join(DOCS, `${stack}.md`), md);
      }
      assert.equal(fs.existsSync(path.join(DOCS, `${stack}.md`)) ? fs.readFileSync(path.join(DOCS, `${stack}.md`), "utf8") : "", md, `docs/inventory/${stack}.md stale: regenerate with UPDATE_INVENTORY=1 npm test`);
    }
  });
});
