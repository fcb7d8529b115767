import * as assert from "node:assert/strict";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { ConfigError, formatIssues, readStackFile, resolveConfig, validateStack } from "../config";
import type { ConfigIssue, StackFile } from "../config/types";
import { main } from "../cli/main";
import { EXAMPLE_STACKS, exampleFile, exampleFiles, exampleRoot, withValues } from "./helpers";

/** Validates against the other example files, as the plan does. */
function issuesOf(file: StackFile, siblings = exampleFiles().filter((f) => f.stack !== file.stack)): ConfigIssue[] {
  const result = validateStack(file, siblings);
  return result.ok ? [] : result.issues;
}

/** The issues of acme's stack file as tenant `id`'s, named for it, in acme's place. */
function renamedIssues(id: string): ConfigIssue[] {
  const file = withValues(acme(), { "clusterra:tenant": { id, accountId: "444455556666" } }, `tenant-${id}-dev`);
  return issuesOf(file, exampleFiles().filter((f) => f.stack !== "tenant-acme-dev"));
}

function issueAt(issues: ConfigIssue[], key: string): ConfigIssue {
  const found = issues.find((i) => i.key === key);
  assert.ok(found, `expected an issue at ${key}; got:\n${formatIssues(issues)}`);
  return found;
}

const acme = () => exampleFile("tenant-acme-dev");
const central = () => exampleFile("central-dev");

describe("configuration", () => {
  it("accepts every example stack and types it", () => {
    for (const stack of EXAMPLE_STACKS) assert.deepEqual(issuesOf(exampleFile(stack)), [], stack);
    const result = validateStack(acme(), exampleFiles());
    assert.ok(result.ok);
    assert.equal(result.config.kind, "tenant");
    if (result.config.kind === "tenant") {
      assert.deepEqual(result.config.network, { vpcCidr: "10.16.0.0/20", availabilityZones: { count: 2 } });
      assert.equal(result.config.central.region, "us-east-1");
      assert.equal(result.config.partition, "aws");
    }
  });

  it("names missing required keys with what is valid", () => {
    const issues = issuesOf(withValues(central(), { "clusterra:fleet": undefined, "aws:region": undefined }));
    assert.equal(issueAt(issues, "clusterra:fleet").problem, "missing");
    assert.match(issueAt(issues, "aws:region").valid, /AWS region/);
    const nested = issuesOf(withValues(acme(), { "clusterra:tenant": { id: "acme" } }));
    assert.match(issueAt(nested, "clusterra:tenant.accountId").valid, /12-digit/);
  });

  it("rejects unknown keys and suggests the nearest known one", () => {
    const issues = issuesOf(withValues(central(), { "clusterra:netwrok": { vpcCidr: "10.0.0.0/16", availabilityZones: 2 }, "clusterra:controlPlane": { instanceType: "t4g.medium", k3sVersion: "v1.33.5+k3s1", instanceTyp: "x" }, "aws:regoin": "us-east-1", "gcp:project": "x" }));
    assert.match(issueAt(issues, "clusterra:netwrok").problem, /did you mean network\?/);
    assert.match(issueAt(issues, "clusterra:controlPlane.instanceTyp").problem, /did you mean instanceType\?/);
    assert.match(issueAt(issues, "aws:regoin").problem, /did you mean region\?/);
    assert.equal(issueAt(issues, "gcp:project").problem, "unknown key");
  });

  it("rejects an unknown kind", () => {
    const issue = issueAt(issuesOf(withValues(central(), { "clusterra:kind": "centrall" })), "clusterra:kind");
    assert.equal(issue.value, "centrall");
    assert.match(issue.valid, /central, tenant, connector/);
  });

  it("rejects malformed, public, too large, too small and misaligned CIDRs", () => {
    const cases: [string, RegExp][] = [
      ["10.0.0.0/33", /not an IPv4 CIDR/],
      ["10.0.0/16", /not an IPv4 CIDR|dotted/],
      ["8.8.0.0/16", /not a private/],
      ["10.0.0.0/8", /larger than \/16/],
      ["10.0.0.0/25", /smaller than \/24/],
      ["10.0.1.0/16", /host bits set/],
    ];
    for (const [cidr, problem] of cases) {
      const issue = issueAt(issuesOf(withValues(central(), { "clusterra:network": { vpcCidr: cidr, availabilityZones: 2 } })), "clusterra:network.vpcCidr");
      assert.match(issue.problem, problem, cidr);
      assert.equal(issue.value, cidr);
    }
  });

  it("rejects a tenant CIDR that overlaps central or another tenant of the same central", () => {
    const overCentral = issuesOf(withValues(acme(), { "clusterra:network": { vpcCidr: "10.0.128.0/20", availabilityZones: 2 } }));
    assert.match(issueAt(overCentral, "clusterra:network.vpcCidr").problem, /overlaps the central VPC 10.0.0.0\/16/);
    const overGlobex = issuesOf(withValues(acme(), { "clusterra:network": { vpcCidr: "10.16.16.0/24", availabilityZones: 2 } }));
    assert.match(issueAt(overGlobex, "clusterra:network.vpcCidr").problem, /overlaps stacks\/Pulumi.tenant-globex-dev.yaml/);
  });

  it("rejects a tenant id that is not a DNS label or is used by another stack of the same central", () => {
    assert.match(issueAt(issuesOf(withValues(acme(), { "clusterra:tenant": { id: "Acme_Corp", accountId: "444455556666" } })), "clusterra:tenant.id").valid, /DNS label/);
    const dup = issuesOf(withValues(acme(), { "clusterra:tenant": { id: "globex", accountId: "444455556666" } }, "tenant-other-dev"));
    assert.deepEqual(dup.filter((i) => i.key === "clusterra:tenant.id").map((i) => i.problem), [
      "disagrees with the stack's name tenant-other-dev (stacks/Pulumi.tenant-other-dev.yaml)",
      "also used by stacks/Pulumi.tenant-globex-dev.yaml in environment dev",
    ]);
  });

  it("rejects a tenant id other than the one its stack is named for, naming both and the name that holds it", () => {
    const misnamed = issuesOf(withValues(acme(), { "clusterra:tenant": { id: "initech", accountId: "444455556666" } }));
    assert.deepEqual(misnamed, [{
      file: "stacks/Pulumi.tenant-acme-dev.yaml", key: "clusterra:tenant.id", value: "initech",
      problem: "disagrees with the stack's name tenant-acme-dev (stacks/Pulumi.tenant-acme-dev.yaml)",
      valid: "the id the stack is named for: stack tenant-initech-dev (stacks/Pulumi.tenant-<id>-<environment>.yaml) holds tenant initech",
    }]);
    assert.deepEqual(renamedIssues("initech"), []);
  });

  it("rejects account ids that are not 12 digits, and a central account the central stack does not allow", () => {
    const issues = issuesOf(withValues(acme(), { "clusterra:tenant": { id: "acme", accountId: "4444" }, "clusterra:central": { stack: "central-dev", accountId: 111122223333, vpcCidr: "10.0.0.0/16" } }));
    assert.match(issueAt(issues, "clusterra:tenant.accountId").valid, /12-digit/);
    assert.match(issueAt(issues, "clusterra:central.accountId").problem, /must be string/);
    const wrong = issuesOf(withValues(acme(), { "clusterra:central": { stack: "central-dev", accountId: "999999999999", vpcCidr: "10.0.0.0/16" } }));
    assert.match(issueAt(wrong, "clusterra:central.accountId").problem, /allowedAccountIds/);
  });

  it("rejects an unknown region, zones outside it, and a central stack with no file", () => {
    const issues = issuesOf(withValues(acme(), { "aws:region": "us-east-9", "clusterra:central": { stack: "central-prod", accountId: "111122223333", vpcCidr: "10.0.0.0/16" } }));
    assert.equal(issueAt(issues, "aws:region").problem, "unknown region");
    assert.match(issueAt(issues, "clusterra:central.stack").valid, /central-dev/);
    const zones = issuesOf(withValues(acme(), { "clusterra:network": { vpcCidr: "10.16.0.0/20", availabilityZones: ["us-west-2a"] } }));
    assert.match(issueAt(zones, "clusterra:network.availabilityZones").problem, /not zones of us-east-1/);
    const count = issuesOf(withValues(acme(), { "clusterra:network": { vpcCidr: "10.16.0.0/20", availabilityZones: 0 } }));
    assert.equal(issueAt(count, "clusterra:network.availabilityZones").problem, "not a valid zone count");
  });

  it("rejects a tenant of another environment than its central, and ids too long for ELB names", () => {
    const env = issuesOf(withValues(acme(), { "clusterra:environment": "prod" }));
    assert.match(issueAt(env, "clusterra:environment").problem, /differs from stacks\/Pulumi.central-dev.yaml's environment/);
    // The names the id goes into bind it: S3's 63 characters for the files bucket first.
    assert.deepEqual(renamedIssues("a-very-long-tenant-name-x"), []);
    const long = renamedIssues("a".repeat(31));
    assert.match(issueAt(long, "clusterra:tenant.id").problem, /makes the files bucket's name \(S3: 63\) 64 characters/);
    assert.match(issueAt(long, "clusterra:tenant.id").valid, /at most 29 characters in environment dev \(Karpenter's capacity-reservation rule name \(EventBridge: 64\) binds it\)/);
    // 30 characters made that rule's name 65 (EventBridge refuses it at deploy): refused in the stack file.
    assert.match(issueAt(renamedIssues("a".repeat(30)), "clusterra:tenant.id").problem, /^makes Karpenter's capacity-reservation rule name \(EventBridge: 64\) 65 characters$/);
    assert.deepEqual(renamedIssues("a".repeat(29)), []);
  });

  it("takes any DNS label unique in its environment as an id (English words too), and rejects a central region other than central's and ids reused in an environment", () => {
    for (const id of ["data", "cloud", "security", "health-data", "genomics", "east", "central"]) {
      assert.deepEqual(renamedIssues(id).filter((i) => i.key === "clusterra:tenant.id"), [], id);
    }
    // Only the platform's own name slots are taken (clusterra-dev-cluster-api, -tenant-<id>, ...): structure, not words.
    const slot = issueAt(renamedIssues("cluster"), "clusterra:tenant.id");
    assert.match(slot.problem, /would make the platform's own names \(clusterra-dev-cluster-\.\.\.\) read as this tenant's/);
    assert.match(slot.valid, /not alarms, cluster, cluster-api, connector, connector-bridge, tenant/);
    // tenant-<id>-cluster is tenant <id>'s cluster project: an id ending so would name another tenant's.
    const project = issueAt(renamedIssues("globex-cluster"), "clusterra:tenant.id");
    assert.match(project.problem, /ends in "-cluster": its ArgoCD project would be tenant globex's cluster project/);
    const region = issuesOf(withValues(acme(), { "clusterra:central": { stack: "central-dev", accountId: "111122223333", vpcCidr: "10.0.0.0/16", region: "eu-west-1" } }));
    assert.match(issueAt(region, "clusterra:central.region").problem, /differs from stacks\/Pulumi.central-dev.yaml's aws:region/);
    const elsewhere = validateStack(withValues(acme(), { "aws:region": "us-west-2", "clusterra:network": { vpcCidr: "10.16.0.0/20", availabilityZones: 2 } }), exampleFiles());
    assert.ok(elsewhere.ok && elsewhere.config.kind === "tenant" && elsewhere.config.central.region === "us-east-1", "defaults to the central stack's region");
    const otherCentral = { stack: "central-dev2", file: "stacks/Pulumi.central-dev2.yaml", values: { ...central().values, "clusterra:network": { vpcCidr: "10.1.0.0/16", availabilityZones: 2 } } };
    const twin = withValues(acme(), { "clusterra:central": { stack: "central-dev2", accountId: "111122223333", vpcCidr: "10.1.0.0/16" } }, "tenant-acme2-dev");
    assert.ok(issuesOf(twin, [...exampleFiles(), otherCentral]).some((i) => i.key === "clusterra:tenant.id" && /also used by stacks\/Pulumi.tenant-acme-dev.yaml in environment dev/.test(i.problem)));
  });

  it("rejects Xen instance types for the host and connector names too long for rule names", () => {
    const xen = issuesOf(withValues(central(), { "clusterra:controlPlane": { instanceType: "m4.large", k3sVersion: "v1.35.3+k3s1" } }));
    assert.match(issueAt(xen, "clusterra:controlPlane.instanceType").problem, /Xen/);
    assert.deepEqual(issuesOf(withValues(central(), { "clusterra:controlPlane": { instanceType: "i3en.large", k3sVersion: "v1.35.3+k3s1" } })), []);
    const connector = exampleFile("connector-demo");
    const c = { ...(connector.values["clusterra:connector"] as Record<string, unknown>), clusterName: "a".repeat(30) };
    assert.match(issueAt(issuesOf(withValues(connector, { "clusterra:connector": c })), "clusterra:connector.clusterName").valid, /at most 29/);
  });

  it("rejects unknown or non-positive shape values and duplicate shape names", () => {
    const shapes = [
      { name: "cpu", memoryPerCpuGiB: 3, sizes: [4], maxNodes: 0, capacityType: "spot" },
      { name: "cpu", memoryPerCpuGiB: 4, sizes: [-4, 5], maxNodes: 2, capacityType: "reserved" },
    ];
    const issues = issuesOf(withValues(acme(), { "clusterra:shapes": shapes }));
    assert.match(issueAt(issues, "clusterra:shapes[0].memoryPerCpuGiB").valid, /one of 2, 4, 8, 16/);
    assert.match(issueAt(issues, "clusterra:shapes[0].maxNodes").valid, /from 1 to 1000/);
    assert.match(issueAt(issues, "clusterra:shapes[1].sizes[0]").valid, /vCPU count/);
    assert.ok(issues.some((i) => i.key === "clusterra:shapes[1].sizes[1]"));
    assert.match(issueAt(issues, "clusterra:shapes[1].capacityType").valid, /spot, on-demand/);
    assert.match(issueAt(issues, "clusterra:shapes[1].name").problem, /duplicates shapes\[0\].name/);
  });

  it("reports every error at once, each naming file, key and value", () => {
    const bad = withValues(acme(), { "aws:region": "mars-1", "clusterra:environment": "Dev", "clusterra:tenant": { id: "-x", accountId: "12" } });
    const issues = issuesOf(bad);
    assert.ok(issues.length >= 4, formatIssues(issues));
    const text = formatIssues(issues);
    for (const line of text.split("\n")) assert.match(line, /^stacks\/Pulumi\.tenant-acme-dev\.yaml: (aws|clusterra):\S+ = .+: .+; valid: .+$/);
    assert.throws(() => resolveConfig(bad, exampleRoot()), (e: unknown) => e instanceof ConfigError && e.issues.length === issues.length);
  });

  it("tells a tenant why its central stack file cannot be used", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "clusterra-root-"));
    fs.mkdirSync(path.join(root, "stacks"));
    fs.writeFileSync(path.join(root, "Pulumi.yaml"), "name: clusterra\n");
    fs.writeFileSync(path.join(root, "stacks", "Pulumi.central-dev.yaml"), "config:\n  a: [\n");
    assert.throws(() => resolveConfig(acme(), root), (e: unknown) => {
      const issues = (e as ConfigError).issues;
      assert.ok(issues.some((i) => i.key === "clusterra:central.stack"));
      assert.ok(issues.some((i) => i.file === "stacks/Pulumi.central-dev.yaml" && /not valid YAML/.test(i.problem)));
      return true;
    });
  });

  it("reports unreadable and malformed stack files as issues, not exceptions", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "clusterra-cfg-"));
    const bomb = ["config:", "  a: &a [x,x,x,x,x,x,x,x,x,x]", "  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]", "  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]", "  d: [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]"];
    fs.writeFileSync(path.join(dir, "bomb.yaml"), bomb.join("\n") + "\n");
    assert.match(readStackFile(path.join(dir, "bomb.yaml"), "x").issues[0].problem, /cannot be read as data: Excessive alias count/);
    fs.writeFileSync(path.join(dir, "dup.yaml"), "config:\n  aws:region: us-east-1\n  aws:region: us-west-2\n  x: 1\n  x: 2\n");
    assert.deepEqual(readStackFile(path.join(dir, "dup.yaml"), "x").issues.map((i) => i.problem), ["is not valid YAML: Map keys must be unique (line 3)", "is not valid YAML: Map keys must be unique (line 5)"]);
    fs.writeFileSync(path.join(dir, "bin.yaml"), "config:\n  clusterra:kind: !!binary aGVsbG8=\n");
    assert.match(readStackFile(path.join(dir, "bin.yaml"), "x").issues[0].problem, /made into a Buffer at config.clusterra:kind/);
    assert.equal(issueAt(issuesOf(withValues(central(), { "clusterra:__proto__": { a: 1 } })), "clusterra:__proto__").problem, "is a reserved name");
    fs.writeFileSync(path.join(dir, "bad.yaml"), "config:\n  a: [1,\n");
    fs.writeFileSync(path.join(dir, "list.yaml"), "- 1\n- 2\n");
    assert.match(readStackFile(path.join(dir, "bad.yaml"), "x").issues[0].problem, /not valid YAML/);
    assert.match(readStackFile(path.join(dir, "list.yaml"), "x").issues[0].problem, /no `config:` mapping/);
    assert.match(readStackFile(path.join(dir, "missing.yaml"), "x").issues[0].problem, /does not exist/);
  });
});

describe("clusterra plan on bad configuration", () => {
  it("exits 2, lists every problem naming the file and key, prints no stack trace and writes nothing", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "clusterra-plan-"));
    const file = path.join(dir, "Pulumi.tenant-acme-dev.yaml");
    const text = fs.readFileSync(path.join(exampleRoot(), "stacks", "Pulumi.tenant-acme-dev.yaml"), "utf8");
    fs.writeFileSync(file, text.replace("vpcCidr: 10.16.0.0/20", "vpcCidr: 10.0.0.0/25").replace('accountId: "444455556666"', 'accountId: "4444"'));
    const out: string[] = [];
    const err: string[] = [];
    const outDir = path.join(dir, "out");
    const code = await main(["plan", "--stack", "tenant-acme-dev", "--config-file", file, "--out", outDir], (s) => out.push(s), (s) => err.push(s), exampleRoot());
    assert.equal(code, 2);
    const message = err.join("\n");
    assert.match(message, /clusterra:network\.vpcCidr = "10\.0\.0\.0\/25": smaller than \/24/);
    assert.match(message, /clusterra:tenant\.accountId = "4444"/);
    assert.match(message, /Pulumi\.tenant-acme-dev\.yaml/);
    assert.doesNotMatch(message, /\n\s+at /, "no stack trace");
    assert.equal(fs.existsSync(outDir), false);
  });

  it("says a key typed with no value has none, not `null`", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "clusterra-plan-"));
    const file = path.join(dir, "Pulumi.tenant-acme-dev.yaml");
    fs.writeFileSync(file, fs.readFileSync(path.join(exampleRoot(), "stacks", "Pulumi.tenant-acme-dev.yaml"), "utf8").replace("vpcCidr: 10.16.0.0/20", "vpcCidr:"));
    const err: string[] = [];
    assert.equal(await main(["plan", "--stack", "tenant-acme-dev", "--config-file", file, "--out", path.join(dir, "out")], () => undefined, (s) => err.push(s), exampleRoot()), 2);
    assert.match(err.join("\n"), /: clusterra:network\.vpcCidr = \(no value\): must be string; valid: a private IPv4 CIDR/);
    assert.doesNotMatch(err.join("\n"), /= null/);
  });

  it("exits 2 on a usage error", async () => {
    const err: string[] = [];
    assert.equal(await main(["plan"], () => undefined, (s) => err.push(s)), 2);
    assert.match(err.join("\n"), /--stack/);
  });
});

describe("configuration: what a central stack learns from its tenants' files", () => {
  it("central-dev knows its tenants (id, account, CIDR, server address, ports) from their stack files, and nothing of other centrals", async () => {
    const { resolveConfig, tenantsFromStackFiles, tenantAccountsFromStackFiles, tenantPortsFromStackFiles, tenantVpcCidrsFromStackFiles } = await import("../config");
    const { exampleFile, exampleRoot, withValues } = await import("./helpers");
    const central = resolveConfig(exampleFile("central-dev"), exampleRoot());
    assert.equal(central.kind, "central");
    if (central.kind === "central") {
      // Host 10 of each tenant's /28 NAT subnet: acme's 2 zones leave 10.16.12.0/28, globex's 3 leave 10.16.28.0/28.
      assert.deepEqual(central.tenants, [
        { id: "acme", accountId: "444455556666", vpcCidr: "10.16.0.0/20", serverPrivateIp: "10.16.12.10", ports: { slurmctld: 32191, srunBlock: { from: 32730, to: 32739 } } },
        { id: "globex", accountId: "777788889999", vpcCidr: "10.16.16.0/20", serverPrivateIp: "10.16.28.10", ports: { slurmctld: 30542, srunBlock: { from: 32000, to: 32009 } } },
      ]);
    }
    const { tenantsOf } = await import("../config/validate");
    assert.deepEqual(tenantsOf("central-prod", [exampleFile("tenant-acme-dev")]), []);
    // In an existing VPC central takes the configured address; a file without a usable one is left out (its own plan says why).
    const existing = { vpcCidr: "10.16.0.0/20", vpcId: "vpc-0a1b2c3d4e5f60718", subnetIds: ["subnet-0a1b2c3d4e5f60718"], serverPrivateIp: "10.16.1.20" };
    const adopted = (network: unknown) => tenantsOf("central-dev", [withValues(exampleFile("tenant-acme-dev"), { "clusterra:network": network })]).map((t) => t.serverPrivateIp);
    assert.deepEqual(adopted(existing), ["10.16.1.20"]);
    for (const serverPrivateIp of [undefined, "10.17.0.10", "10.16.1", "10.16.0.0"]) assert.deepEqual(adopted({ ...existing, serverPrivateIp }), [], String(serverPrivateIp));
    // The policy pack's isolation defaults come from config/, not from the CLI.
    assert.deepEqual(tenantsFromStackFiles(exampleRoot()), ["acme", "globex"]);
    assert.deepEqual(tenantAccountsFromStackFiles(exampleRoot()), { acme: "444455556666", globex: "777788889999" });
    assert.deepEqual(tenantVpcCidrsFromStackFiles(exampleRoot()), { acme: "10.16.0.0/20", globex: "10.16.16.0/20" });
    assert.deepEqual(tenantPortsFromStackFiles(exampleRoot()), { "dev/acme": { slurmctld: 32191, srun: 32730 }, "dev/globex": { slurmctld: 30542, srun: 32000 } });
  });
});
