import * as assert from "node:assert/strict";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parseAllDocuments, stringify } from "yaml";
import { PROJECT_ROOT } from "../config";
import { checkFleet, crdValidators, referenceDir, renderFleet, type FleetProblem, type RenderedFleet } from "../fleet-tools/check";
import { toolPath } from "../fleet-tools/files";
import { runFleetWrite } from "../fleet-tools/write";
import { hybridSlurmConf } from "../components/fleet/control-plane";
import { keptTenantIds, orphanedTenantPaths } from "../components/fleet/central-addons";
import { nodeSetPlans } from "../config/sizing";
import { CHARTS } from "../facts/charts";
import { clusterObjects, examplePorts, exampleRoot, skipWithoutHelm } from "./helpers";

/** A copy of the committed fleet/ and stacks/ to corrupt. */
function copyRepo(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-check-"));
  for (const dir of ["fleet", "stacks"]) fs.cpSync(path.join(exampleRoot(), dir), path.join(root, dir), { recursive: true });
  fs.copyFileSync(path.join(exampleRoot(), "Pulumi.yaml"), path.join(root, "Pulumi.yaml"));
  return root;
}

/** Rewrites one document of a committed file. */
function corrupt(root: string, rel: string, index: number, change: (doc: any) => unknown): void {
  const file = path.join(root, rel);
  const docs = parseAllDocuments(fs.readFileSync(file, "utf8")).map((d) => d.toJS());
  docs[index] = change(docs[index]) ?? docs[index];
  fs.writeFileSync(file, docs.map((d) => stringify(d)).join("---\n"));
}

/** The ApplicationSet's list row of one add-on. */
const addOn = (d: any, addon: string) => d.spec.generators[0].matrix.generators[1].list.elements.find((e: { addon: string }) => e.addon === addon);

/** Edits a file of the copy as text (a chart template, a shared values file). */
function replaceIn(root: string, rel: string, from: string | RegExp, to: string): void {
  const file = path.join(root, rel);
  const text = fs.readFileSync(file, "utf8");
  const next = text.replace(from, to);
  assert.notEqual(next, text, `${rel} has no ${String(from)}`);
  fs.writeFileSync(file, next);
}

/** Where central's entry for a tenant renders from: its folder's entry file (the chart and the shared values make the rest). */
const ENTRY = (id: string) => `fleet/tenants/dev/${id}/entry.yaml`;
const ENTRY_CHART = "fleet/charts/tenant-entry/templates";
const ENTRY_SHARED = "fleet/central/dev/tenants/values/entry.yaml";

const reasons = (problems: FleetProblem[], rel: string) => problems.filter((p) => p.file === rel).map((p) => `${p.at}: ${p.reason}`).join("\n");

/** The check renders each tenant's entry with Helm: without it, these skip (run `bash scripts/install-tools`; CI has it). */
function needsHelm(this: Mocha.Context): void {
  if (!toolPath(PROJECT_ROOT, "helm")) this.skip();
}

describe("clusterra fleet check", function () {
  this.timeout(60000);
  const reference = referenceDir();
  let root: string;
  let rendered: RenderedFleet;
  before(needsHelm);
  before(() => (rendered = renderFleet(exampleRoot())));
  beforeEach(() => (root = copyRepo()));
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it("passes the committed fleet, rendered fresh from every stack file #end-to-end", async () => {
    assert.deepEqual(await checkFleet(exampleRoot(), { reference, rendered }), []);
  });

  it("catches a misspelled field in an ExternalSecret against External Secrets' CRD", async function () {
    if (!reference) return this.skip(); // ../shared/reference is absent here (CI has it)
    replaceIn(root, `${ENTRY_CHART}/credential.yaml`, "  refreshInterval:", "  refreshIntervall:");
    assert.match(reasons(await checkFleet(root, { reference }), ENTRY("acme")), /ExternalSecret\/cluster-clusterra-dev-acme\/spec: must NOT have additional properties \(unknown field "refreshIntervall"\)/);
  });

  it("catches an ExternalSecret with an invalid value", async function () {
    if (!reference) return this.skip(); // ../shared/reference is absent here (CI has it)
    replaceIn(root, ENTRY_SHARED, "creationPolicy: Owner", "creationPolicy: Sometimes");
    assert.match(reasons(await checkFleet(root, { reference }), ENTRY("globex")), /spec\/target\/creationPolicy: must be equal to one of the allowed values/);
  });

  it("catches an unpinned chart", async () => {
    const rel = "fleet/central/dev/tenants.yaml";
    corrupt(root, rel, 0, (d) => { addOn(d, "slurm").version = "1.*"; });
    assert.match(reasons(await checkFleet(root, { reference }), rel), /Application\/acme-slurm\/spec\/sources\/1\/targetRevision: chart slurm must be pinned to 1\.2\.1 \(facts\/charts\.ts\), not "1\.\*"/);
  });

  it("catches a Secret and a secret value", async () => {
    const rel = "fleet/central/dev/tenant-entries.yaml";
    fs.appendFileSync(path.join(root, rel), "---\napiVersion: v1\nkind: Secret\nmetadata: {name: mariadb-password, namespace: tenant-acme}\nstringData:\n  password: Zm9vYmFyYmF6cXV4cXV1eDEyMzQ1Njc4\n");
    const found = reasons(await checkFleet(root, { reference }), rel);
    assert.match(found, /document 1 Secret\/mariadb-password: is a Secret/);
    assert.match(found, /looks like a secret value/);
  });

  it("catches a cross-tenant destination in a project", async () => {
    replaceIn(root, `${ENTRY_CHART}/projects.yaml`, "      namespace: {{ $ns | toJson }}\n", "      namespace: {{ $ns | toJson }}\n    - server: https://kubernetes.default.svc\n      namespace: tenant-globex\n");
    assert.match(reasons(await checkFleet(root, { reference }), ENTRY("acme")), /AppProject\/tenant-acme\/spec\/destinations\/1: reaches namespace "tenant-globex" on central; tenant acme may reach only tenant-acme there/);
  });

  it("catches a generated Application with a cross-tenant destination or project", async () => {
    const rel = "fleet/central/dev/tenants.yaml";
    corrupt(root, rel, 0, (d) => {
      d.spec.templatePatch = d.spec.templatePatch.replace(/namespace: tenant-\{\{[^}]+\}\}/, "namespace: tenant-globex");
      addOn(d, "slurm").projectSuffix = "x";
    });
    const found = reasons(await checkFleet(root, { reference }), rel);
    assert.match(found, /ApplicationSet\/tenants generates Application\/acme-control-plane\/spec\/destination: https:\/\/kubernetes.default.svc namespace tenant-globex is not a destination of project tenant-acme/);
    assert.match(found, /ApplicationSet\/tenants generates Application\/acme-slurm\/spec\/project: uses project tenant-acmex; tenant acme's Applications use tenant-acme or tenant-acme-cluster only/);
  });

  it("catches a tenant's entry that names another tenant's cluster, and an add-on no rollout step selects", async () => {
    replaceIn(root, `${ENTRY_CHART}/credential.yaml`, "{{- $own := dict .Values.labels.tenant $id ", '{{- $own := dict .Values.labels.tenant (ternary "globex" $id (eq $id "acme")) ');
    const rel = "fleet/central/dev/tenants.yaml";
    corrupt(root, rel, 0, (d) => { addOn(d, "edge-agent").stage = "later"; });
    const problems = await checkFleet(root, { reference });
    assert.match(reasons(problems, ENTRY("acme")), /ExternalSecret\/cluster-clusterra-dev-acme\/spec\/target\/template\/metadata\/labels: labels a cluster Secret clusterra.io\/tenant=globex; only tenant acme's entry may name its cluster/);
    assert.match(reasons(problems, rel), /Application\/globex-edge-agent: no RollingSync step selects it \(clusterra.io\/wave=general, clusterra.io\/stage=later\): it would never sync/);
  });

  it("names an ApplicationSet ArgoCD could not expand (a patch that is not YAML, no generators) instead of failing", async () => {
    const rel = "fleet/central/dev/tenants.yaml";
    corrupt(root, rel, 0, (d) => { d.spec.templatePatch = "spec:\n  sources: [unclosed\n"; });
    assert.match(reasons(await checkFleet(root, { reference }), rel), /document 0 ApplicationSet\/tenants: ArgoCD could not generate its Applications: /);
    corrupt(root, rel, 0, (d) => { delete d.spec.generators; });
    assert.match(reasons(await checkFleet(root, { reference }), rel), /ApplicationSet\/tenants: ArgoCD could not generate its Applications: /);
  });

  it("catches two tenants' entries defining one AppProject", async () => {
    // A name pattern that drops the id (%.0s): every tenant's cluster project would be acme's.
    replaceIn(root, ENTRY_SHARED, "clusterProject: tenant-%s-cluster", "clusterProject: tenant-acme-cluster%.0s");
    assert.match(reasons(await checkFleet(root, { reference }), ENTRY("globex")), /AppProject\/tenant-acme-cluster: is also defined in fleet\/tenants\/dev\/acme\/entry.yaml: two tenants would share one project/);
  });

  it("catches a facts file that points a tenant's cluster project at another tenant's server", async () => {
    const globex = /serverAddress: (\S+)/.exec(fs.readFileSync(path.join(root, "fleet/tenants/dev/globex/facts.yaml"), "utf8"))?.[1] as string;
    replaceIn(root, "fleet/tenants/dev/acme/facts.yaml", /serverAddress: \S+/, `serverAddress: ${globex}`);
    const problems = await checkFleet(root, { reference });
    assert.match([ENTRY("acme"), ENTRY("globex")].map((f) => reasons(problems, f)).join("\n"), new RegExp(`reaches https://${globex.replace(/\./g, "\\.")}:6443, tenant (acme|globex)'s cluster`));
  });

  it("refuses a tenant's entry that renders anything but its namespace, projects, store and cluster credential", async () => {
    fs.writeFileSync(path.join(root, `${ENTRY_CHART}/zz-admin.yaml`), "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: {{ .Values.tenantId }}-admin\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects: [{kind: ServiceAccount, name: default, namespace: argocd}]\n");
    assert.match(reasons(await checkFleet(root, { reference }), ENTRY("acme")), /Application\/acme-entry renders ClusterRoleBinding\/acme-admin: a tenant's entry makes only its namespace, its two AppProjects, its store and its cluster credential/);
  });

  it("refuses a tenant cluster Secret on central's controller shard, or on none", async () => {
    replaceIn(root, "fleet/central/dev/tenants/values/entry.yaml", /shard: '1'/, "shard: '0'");
    assert.match(reasons(await checkFleet(root, { reference }), ENTRY("acme")), /data\/shard: puts a tenant cluster on controller shard "0"; tenant clusters go on shard "1" only/);
  });

  it("names a file no stack writes whatever its extension (a directory source applies .yml and .json too)", async () => {
    const yml = "fleet/central/dev/zz.yml";
    const json = "fleet/central/dev/tenants/argocd-manager/zz.json";
    fs.writeFileSync(path.join(root, yml), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: argocd}\n");
    fs.writeFileSync(path.join(root, json), '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "y"}}\n');
    const problems = await checkFleet(root, { reference, rendered });
    for (const f of [yml, json]) assert.match(reasons(problems, f), /is committed but no stack file renders it/, f);
  });

  it("holds a tenant's entry to the entries project and the entry chart", async () => {
    const rel = "fleet/central/dev/tenant-entries.yaml";
    corrupt(root, rel, 0, (d) => { d.spec.template.spec.sources[1].path = "fleet/charts/cluster-api"; });
    assert.match(reasons(await checkFleet(root, { reference }), rel), /ApplicationSet\/tenant-entries generates Application\/acme-entry: a tenant's entry runs in project entries with fleet\/charts\/tenant-entry only/);
  });

  it("catches a tenant's store on central assuming another tenant's secrets role (from its facts file)", async () => {
    const rel = "fleet/tenants/dev/acme/facts.yaml";
    fs.writeFileSync(path.join(root, rel), fs.readFileSync(path.join(root, rel), "utf8").replace("clusterra-dev-acme-control-plane", "clusterra-dev-globex-control-plane"));
    assert.match(reasons(await checkFleet(root, { reference }), rel), /secretsRoleArn: \S+clusterra-dev-globex-control-plane is not tenant acme's secrets role/);
  });

  it("catches a facts file naming a role, key or server outside the tenant's own: another account, another tenant's secret, central's host", async () => {
    const rel = "fleet/tenants/dev/acme/facts.yaml";
    const text = fs.readFileSync(path.join(root, rel), "utf8");
    fs.writeFileSync(path.join(root, rel), text
      .replace(/secretsRoleArn: arn:aws:iam::[0-9]{12}:/, "secretsRoleArn: arn:aws:iam::999999999999:")
      .replace(/(slurm: arn:aws:secretsmanager:[a-z0-9-]+:[0-9]{12}:secret:clusterra\/dev\/)acme/, "$1globex")
      .replace(/serverAddress: \S+/, "serverAddress: 10.0.0.10"));
    const found = reasons(await checkFleet(root, { reference }), rel);
    assert.match(found, /secretsRoleArn: arn:aws:iam::999999999999:role\/clusterra-dev-acme-control-plane is not tenant acme's secrets role/);
    assert.match(found, /keySecretArns.slurm: \S+clusterra\/dev\/globex\/slurm-key-\S+ is not tenant acme's clusterra\/dev\/acme\/slurm-key/);
    assert.match(found, /serverAddress: 10.0.0.10 is not an address of tenant acme's VPC: outside 10.16.0.0\/20/);
  });

  it("catches a facts file giving a tenant another tenant's slurmctld NodePort on central", async () => {
    const rel = "fleet/tenants/dev/acme/facts.yaml";
    fs.writeFileSync(path.join(root, rel), fs.readFileSync(path.join(root, rel), "utf8").replace(`port: ${examplePorts("acme").slurmctld}`, `port: ${examplePorts("globex").slurmctld}`));
    assert.match(reasons(await checkFleet(root, { reference }), rel), new RegExp(`slurmctld.port: ${examplePorts("globex").slurmctld} is not tenant acme's slurmctld NodePort ${examplePorts("acme").slurmctld}`));
  });

  it("catches a live tenant's stack file moving its ports away from what central opened for it (its facts file)", async () => {
    const stack = "stacks/Pulumi.tenant-acme-dev.yaml";
    fs.writeFileSync(path.join(root, stack), fs.readFileSync(path.join(root, stack), "utf8").replace(`slurmctld: ${examplePorts("acme").slurmctld}`, "slurmctld: 30000"));
    assert.match(reasons(await checkFleet(root, { reference }), "fleet/tenants/dev/acme/facts.yaml"), new RegExp(`slurmctld.port: ${examplePorts("acme").slurmctld} is not tenant acme's slurmctld NodePort 30000 \\(its stack file's clusterra:ports\\): .*a live tenant's ports never change`));
  });

  it("catches a live tenant's stack file moving its srun block away from what it deployed (its facts file)", async () => {
    const stack = "stacks/Pulumi.tenant-acme-dev.yaml";
    const block = examplePorts("acme").srunBlock;
    fs.writeFileSync(path.join(root, stack), fs.readFileSync(path.join(root, stack), "utf8").replace(`srun: ${block.from}`, "srun: 30001"));
    assert.match(reasons(await checkFleet(root, { reference }), "fleet/tenants/dev/acme/facts.yaml"), new RegExp(`srun: ${block.from}-${block.to} is tenant acme's srun block as deployed, and stacks/Pulumi.tenant-acme-dev.yaml's clusterra:ports says 30001-30010: a live tenant's ports never change .*; put srun back to ${block.from} there`));
  });

  it("accepts a facts file written before the srun block was recorded (nothing to compare)", async () => {
    const rel = "fleet/tenants/dev/acme/facts.yaml";
    const text = fs.readFileSync(path.join(root, rel), "utf8");
    const older = text.replace(/^srun:\n  from: \d+\n  to: \d+\n/m, "");
    assert.notEqual(older, text);
    fs.writeFileSync(path.join(root, rel), older);
    assert.doesNotMatch(reasons(await checkFleet(root, { reference }), rel), /srun/);
  });

  it("catches a project that may deploy into the ArgoCD namespace or create cluster-wide kinds on central", async () => {
    replaceIn(root, `${ENTRY_CHART}/projects.yaml`, "      namespace: {{ $ns | toJson }}\n  clusterResourceWhitelist: []", '      namespace: argocd\n  clusterResourceWhitelist: [{group: "*", kind: "*"}]');
    const found = reasons(await checkFleet(root, { reference }), ENTRY("acme"));
    assert.match(found, /may deploy into the ArgoCD namespace/);
    assert.match(found, /allows every cluster-scoped kind/);
    assert.match(found, /cluster-scoped objects on central/);
  });

  it("catches a committed file that differs from a fresh render", async () => {
    const rel = "fleet/tenants/dev/globex/control-plane/values/slurm.yaml";
    fs.appendFileSync(path.join(root, rel), "# hand edit\n");
    const stale = "fleet/tenants/dev/initech/cluster/values/slurm.yaml";
    fs.mkdirSync(path.dirname(path.join(root, stale)), { recursive: true });
    fs.writeFileSync(path.join(root, stale), "{}\n");
    const problems = await checkFleet(root, { reference, rendered });
    assert.match(reasons(problems, rel), /differs from its render from the stack files and the facts files/);
    assert.match(reasons(problems, stale), /is committed but no stack file renders it/);
  });
});

describe("CRD validators (fleet check's schemas)", () => {
  const RESTAPI = "slinky-v1.2.1/slinky.slurm.net_restapis.yaml";
  const reference = referenceDir();
  /** A reference folder holding only the RestApi CRD, as given (a fresh folder: a fresh set of validators). */
  const referenceWith = (text: string) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "crd-reference-"));
    fs.mkdirSync(path.join(dir, path.dirname(RESTAPI)));
    fs.writeFileSync(path.join(dir, RESTAPI), text);
    return dir;
  };
  const restApi = (replicas: unknown) => ({ apiVersion: "slinky.slurm.net/v1beta1", kind: "RestApi", metadata: { name: "slurm" }, spec: { controllerRef: { name: "slurm" }, replicas } });

  it("keeps each compiled validator for the next run, and compiles again when the CRD changes", function () {
    if (!reference) return this.skip(); // ../shared/reference is absent here (CI has it)
    const text = fs.readFileSync(path.join(reference, RESTAPI), "utf8");
    const cache = path.join(PROJECT_ROOT, "node_modules", ".cache", "clusterra", "crd-validators");
    const kept = () => (fs.existsSync(cache) ? fs.readdirSync(cache).filter((f) => f.startsWith("RestApi-")) : []);
    const first = crdValidators(referenceWith(text)).get("slinky.slurm.net/v1beta1/RestApi")!;
    assert.equal(first(restApi(2)), true);
    assert.equal(first(restApi("two")), false);
    const files = kept();
    assert.ok(files.length >= 1, "the compiled validator is kept");
    // The same CRD elsewhere: the kept validator, with the same verdicts.
    const again = crdValidators(referenceWith(text)).get("slinky.slurm.net/v1beta1/RestApi")!;
    assert.deepEqual(kept(), files);
    assert.deepEqual([again(restApi(2)), again(restApi("two")), again.errors?.[0]?.instancePath], [true, false, "/spec/replicas"]);
    // A CRD whose replicas became a string: compiled afresh, never the kept one.
    const changed = crdValidators(referenceWith(text.replace(/(\n {14}replicas:\n(?: {16}.*\n)*? {16}type: )integer/, "$1string"))).get("slinky.slurm.net/v1beta1/RestApi")!;
    assert.deepEqual([changed(restApi("two")), changed(restApi(2))], [true, false]);
  });
});

describe("cloud facts apart from the derived fleet (clusterra fleet write)", function () {
  this.timeout(60000);
  before(needsHelm);
  const facts = "fleet/tenants/dev/acme/facts.yaml";
  let root: string;
  beforeEach(() => (root = copyRepo()));
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));
  const quiet = { out: (_: string) => undefined, err: (_: string) => undefined };
  const read = (rel: string) => fs.readFileSync(path.join(root, rel), "utf8");

  it("says a facts file an offline plan wrote is offline, and refuses it for a stack that is not an example as shipped", async () => {
    assert.match(read(facts), /^# tenant-acme-dev's cloud facts, written OFFLINE by clusterra plan --write-fleet: invented ids, no cloud holds them; pulumi up writes the real ones\.\n[\s\S]*\noffline: true\n$/);
    assert.deepEqual((await checkFleet(root)).filter((p) => p.at === "offline"), [], "the examples as shipped have no deployment: theirs pass");
    // acme's stack file is an operator's now: its invented ids would be merged as real.
    const stack = path.join(root, "stacks/Pulumi.tenant-acme-dev.yaml");
    fs.writeFileSync(stack, fs.readFileSync(stack, "utf8").replace("maxNodes: 20", "maxNodes: 21"));
    const offline = "fleet/tenants/dev/acme/facts.yaml: offline: was written offline (clusterra plan --write-fleet): invented ids no cloud holds (stacks/Pulumi.tenant-acme-dev.yaml differs from the example as shipped, test/fixtures/stacks/Pulumi.tenant-acme-dev.yaml, so it is an operator's stack now); `pulumi up -s tenant-acme-dev` writes the real facts (or pass --allow-offline-facts for a repository not deployed yet)";
    assert.deepEqual((await checkFleet(root)).filter((p) => p.at === "offline").map((p) => `${p.file}: ${p.at}: ${p.reason}`), [offline]);
    assert.deepEqual((await checkFleet(root, { allowOfflineFacts: true })).filter((p) => p.at === "offline"), []);
    const errors: string[] = [];
    assert.equal(runFleetWrite(root, quiet.out, (s) => errors.push(s)), 1);
    assert.deepEqual(errors, [offline, "fleet write: 1 problem(s); nothing written"]);
    // A real deployment's facts file carries no mark, and passes.
    fs.writeFileSync(path.join(root, facts), read(facts).replace(/^# .*\n/, "# tenant-acme-dev's cloud facts, written by pulumi up: the only fleet file the cloud resolves.\n").replace("offline: true\n", ""));
    assert.deepEqual((await checkFleet(root)).filter((p) => p.at === "offline"), []);
  });

  it("passes a real deployment's fleet: other ids in its facts files, and not one derived file differs", async function () {
    const text = read(facts).replace(/fileSystemId: fs-[0-9a-f]+/, "fileSystemId: fs-0a1b2c3d4e5f60718").replace(/serverAddress: [0-9.]+/, "serverAddress: 10.16.12.11");
    fs.writeFileSync(path.join(root, facts), text);
    // No derived file holds a fact: the fleet passes as it is, and fleet write changes nothing.
    assert.deepEqual(await checkFleet(root, { render: true }), []);
    const said: string[] = [];
    assert.equal(runFleetWrite(root, (s) => said.push(s), quiet.err), 0);
    assert.match(said.join("\n"), / 0 changed, 0 removed/);
    assert.equal(read(facts), text, "fleet write never touches a facts file");
    // A hand edit to a derived file still fails.
    fs.appendFileSync(path.join(root, "fleet/tenants/dev/acme/cluster/values/cilium.yaml"), "# hand edit\n");
    assert.match(reasons(await checkFleet(root, { render: true }), "fleet/tenants/dev/acme/cluster/values/cilium.yaml"), /differs from its render/);
    // The workers' user data takes the file system from the facts file at sync time: no derived file holds it.
    const objects = clusterObjects("acme", root);
    if (!objects) return skipWithoutHelm(this);
    assert.match(objects.find((o) => o.kind === "EC2NodeClass")?.spec.userData, /fs-0a1b2c3d4e5f60718 \/mnt\/efs efs/);
  });

  it("rolls a stack-file change out with fleet write alone: derived files change, no facts file", () => {
    const stack = path.join(root, "stacks/Pulumi.tenant-acme-dev.yaml");
    fs.writeFileSync(stack, fs.readFileSync(stack, "utf8").replace("    - name: bob\n      uid: 10002\n", "    - name: bob\n      uid: 10002\n    - name: carol\n      uid: 10003\n"));
    const before = Object.fromEntries(["fleet/tenants/dev/acme/facts.yaml", "fleet/tenants/dev/globex/facts.yaml", "fleet/central/dev/values/facts.yaml"].map((f) => [f, read(f)]));
    let said = "";
    // acme's stack file is no longer the example's, and this copy is not deployed: its facts are offline.
    assert.equal(runFleetWrite(root, (s) => (said += s), quiet.err, { allowOfflineFacts: true }), 0);
    for (const [f, text] of Object.entries(before)) assert.equal(read(f), text, f);
    assert.match(read("fleet/tenants/dev/acme/users.yaml"), /carol:\*:10003:10003:/);
    // The users file both sides read, and the digest that rolls the pods on both sides; nothing else.
    assert.match(said, /3 changed, 0 removed:\n {2}fleet\/tenants\/dev\/acme\/cluster\/values\/slurm.yaml\n {2}fleet\/tenants\/dev\/acme\/control-plane\/values\/slurm.yaml\n {2}fleet\/tenants\/dev\/acme\/users.yaml$/);
  });

  it("rolls a chart bump out with fleet write alone: only the ApplicationSet that pins it changes, no facts file, no tenant's folder", () => {
    const pin = CHARTS.slurm as { version: string };
    const version = pin.version;
    try {
      pin.version = "9.9.9";
      let said = "";
      assert.equal(runFleetWrite(root, (s) => (said += s), quiet.err), 0);
      assert.match(said, /1 changed, 0 removed:\n {2}fleet\/central\/dev\/tenants.yaml$/);
      assert.match(read("fleet/central/dev/tenants.yaml"), /chart: slurm\n\s+version: '?9\.9\.9/);
    } finally {
      pin.version = version;
    }
  });

  it("refuses a facts file off its schema, naming every key, and writes nothing", () => {
    fs.writeFileSync(path.join(root, facts), read(facts).replace(/fileSystemId: fs-[0-9a-f]+/, "fileSystemId: vol-123").replace(/^secretsRoleArn: .*\n/m, "").replace(/^kmsKeyArn: /m, "kmsKeyArm: "));
    const errors: string[] = [];
    const cilium = read("fleet/tenants/dev/acme/cluster/values/cilium.yaml");
    assert.equal(runFleetWrite(root, quiet.out, (s) => errors.push(s)), 1);
    const text = errors.join("\n");
    assert.match(text, /fleet\/tenants\/dev\/acme\/facts.yaml: fileSystemId: "vol-123" must be an EFS file system id \(fs-\.\.\.\)/);
    assert.match(text, /facts.yaml: secretsRoleArn: is missing: an ARN of iam/);
    assert.match(text, /facts.yaml: kmsKeyArm: is not a fact of this kind/);
    assert.match(text, /nothing written/);
    assert.equal(read("fleet/tenants/dev/acme/cluster/values/cilium.yaml"), cilium);
  });

  it("refuses, as fleet check does, a facts file that gives a tenant another tenant's server, and writes nothing", () => {
    const globexServer = /^serverAddress: (\S+)$/m.exec(read("fleet/tenants/dev/globex/facts.yaml"))?.[1];
    assert.ok(globexServer);
    fs.writeFileSync(path.join(root, facts), read(facts).replace(/^serverAddress: .*$/m, `serverAddress: ${globexServer}`));
    const cilium = read("fleet/tenants/dev/acme/cluster/values/cilium.yaml");
    const errors: string[] = [];
    assert.equal(runFleetWrite(root, quiet.out, (s) => errors.push(s)), 1);
    assert.match(errors.join("\n"), new RegExp(`fleet/tenants/dev/acme/facts.yaml: serverAddress: ${globexServer.replace(/\./g, "\\.")} is not an address of tenant acme's VPC`));
    assert.match(errors.join("\n"), /nothing written/);
    assert.equal(read("fleet/tenants/dev/acme/cluster/values/cilium.yaml"), cilium);
  });

  it("names a broken central stack file's keys instead of failing with a stack trace", () => {
    const stack = path.join(root, "stacks/Pulumi.central-dev.yaml");
    fs.writeFileSync(stack, fs.readFileSync(stack, "utf8").replace(/repoUrl: \S+/, "repoUrl: git@example.com:fleet.git"));
    const errors: string[] = [];
    assert.equal(runFleetWrite(root, quiet.out, (s) => errors.push(s)), 1);
    // The value as typed and what is valid, as plan says it.
    assert.ok(errors.join("\n").includes('stacks/Pulumi.central-dev.yaml: clusterra:fleet.repoUrl = "git@example.com:fleet.git": must match pattern'), errors.join("\n"));
    assert.ok(errors.join("\n").includes("; valid: an https:// git URL"));
    assert.match(errors.join("\n"), /nothing written/);
  });

  /** globex's facts file as `pulumi up` writes it (no offline mark): proof it was deployed. */
  const deployGlobex = () => {
    const rel = path.join(root, "fleet/tenants/dev/globex/facts.yaml");
    fs.writeFileSync(rel, fs.readFileSync(rel, "utf8").replace(/^# .*\n/, "# tenant-globex-dev's cloud facts, written by pulumi up: the only fleet file the cloud resolves.\n").replace("offline: true\n", ""));
  };

  it("keeps a deployed tenant whose stack file is missing and that central does not name for removal: nothing written, the way on named", async () => {
    deployGlobex();
    fs.rmSync(path.join(root, "stacks/Pulumi.tenant-globex-dev.yaml"));
    const errors: string[] = [];
    assert.equal(runFleetWrite(root, quiet.out, (s) => errors.push(s)), 1);
    assert.match(errors.join("\n"), /fleet\/tenants\/dev\/globex\/facts\.yaml: \(file\): tenant globex was deployed \(this facts file\), and no stack file joins it: .*name it in stacks\/Pulumi\.central-dev\.yaml: clusterra:removeTenants: \[globex\]/);
    assert.ok(fs.existsSync(path.join(root, "fleet/tenants/dev/globex/facts.yaml")), "globex's folder is kept");
    assert.match(reasons(await checkFleet(root, {}), "fleet/tenants/dev/globex/facts.yaml"), /tenant globex was deployed/);
    // Central's plan, which writes and prunes the fleet as `pulumi up` does, keeps its folder too.
    assert.deepEqual(orphanedTenantPaths(root, "dev", keptTenantIds("dev", root)), []);
    assert.deepEqual(orphanedTenantPaths(root, "dev", keptTenantIds("dev", root), ["globex"]), ["fleet/tenants/dev/globex"]);
    // A stack file that cannot be read may be globex's: nothing is called stack-less, its own error is named.
    fs.writeFileSync(path.join(root, "stacks/Pulumi.tenant-acme-dev.yaml"), "config: [unclosed\n");
    assert.doesNotMatch(reasons(await checkFleet(root, {}), "fleet/tenants/dev/globex/facts.yaml"), /was deployed/);
  });

  it("prunes a tenant planned offline and never deployed once its stack file is gone (no removal to name)", () => {
    fs.rmSync(path.join(root, "stacks/Pulumi.tenant-globex-dev.yaml"));
    let said = "";
    assert.equal(runFleetWrite(root, (s) => (said += s), quiet.err), 0);
    assert.match(said, /fleet\/tenants\/dev\/globex\/facts\.yaml \(removed: its stack file is gone\)/);
  });

  it("removes every file of a deployed tenant whose stack file is gone and whom central names for removal, its facts file and folders too, and the fleet then checks clean", async () => {
    deployGlobex();
    fs.rmSync(path.join(root, "stacks/Pulumi.tenant-globex-dev.yaml"));
    const central = path.join(root, "stacks/Pulumi.central-dev.yaml");
    fs.writeFileSync(central, fs.readFileSync(central, "utf8").replace(/^  clusterra:environment: dev$/m, "  clusterra:environment: dev\n  clusterra:removeTenants: [globex]"));
    let said = "";
    // Central's stack file is no longer the example's as shipped: its facts (offline) are allowed here.
    assert.equal(runFleetWrite(root, (s) => (said += s), quiet.err, { allowOfflineFacts: true }), 0);
    assert.match(said, /\n {2}fleet\/tenants\/dev\/globex\/facts\.yaml \(removed: its stack file is gone\)/);
    assert.equal(fs.existsSync(path.join(root, "fleet/tenants/dev/globex")), false, "no folder of globex is left");
    assert.deepEqual(await checkFleet(root, { render: true, allowOfflineFacts: true }), []);
  });

  it("says how to get a missing facts file", async () => {
    fs.rmSync(path.join(root, facts));
    assert.match(reasons(await checkFleet(root, { render: true }), facts), /is missing: tenant-acme-dev's cloud facts are written by `pulumi up -s tenant-acme-dev`/);
  });
});

describe("fleet rendering", () => {
  it("declares each remote NodeSet and one partition per shape in central's slurm.conf", () => {
    const conf = hybridSlurmConf(nodeSetPlans([
      { name: "cpu", memoryPerCpuGiB: 4, sizes: [4, 16], maxNodes: 2, capacityType: "spot" },
      { name: "gpu", memoryPerCpuGiB: 8, sizes: [8], maxNodes: 1, capacityType: "on-demand" },
    ]));
    assert.equal(conf, [
      "NodeSet=cpu-4 Feature=cpu-4", "NodeSet=cpu-16 Feature=cpu-16", "NodeSet=gpu-8 Feature=gpu-8",
      "PartitionName=cpu Nodes=cpu-4,cpu-16 State=UP MaxTime=UNLIMITED Default=YES",
      "PartitionName=gpu Nodes=gpu-8 State=UP MaxTime=UNLIMITED Default=NO", "",
    ].join("\n"));
  });

  it("prunes the folder of a tenant no stack file names, and central's entry files of the earlier layout", () => {
    assert.deepEqual(orphanedTenantPaths(exampleRoot(), "dev", ["acme"]), ["fleet/tenants/dev/globex"]);
    assert.deepEqual(orphanedTenantPaths(exampleRoot(), "dev", ["acme", "globex"]), []);
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "orphans-"));
    fs.mkdirSync(path.join(root, "fleet/central/dev"), { recursive: true });
    for (const f of ["tenant-acme.yaml", "tenant-entries.yaml", "tenants.yaml"]) fs.writeFileSync(path.join(root, "fleet/central/dev", f), "{}\n");
    assert.deepEqual(orphanedTenantPaths(root, "dev", ["acme"]), ["fleet/central/dev/tenant-acme.yaml"]);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("keeps every tenant's folder while a stack file cannot be read, and a tenant's whichever central it names", () => {
    const root = copyRepo();
    assert.deepEqual(keptTenantIds("dev", root), ["acme", "globex"]);
    // globex naming a central that is not there (a typo, a move): its folder stays.
    const globex = path.join(root, "stacks/Pulumi.tenant-globex-dev.yaml");
    fs.writeFileSync(globex, fs.readFileSync(globex, "utf8").replace("stack: central-dev", "stack: central-dve"));
    assert.deepEqual(orphanedTenantPaths(root, "dev", keptTenantIds("dev", root)), []);
    // A stack file that is not YAML may be any tenant's: no tenant's folder goes.
    fs.writeFileSync(path.join(root, "stacks/Pulumi.tenant-acme-dev.yaml"), "config: [unclosed\n");
    assert.equal(keptTenantIds("dev", root), undefined);
    assert.deepEqual(orphanedTenantPaths(root, "dev", undefined), []);
    fs.rmSync(root, { recursive: true, force: true });
  });
});

describe("facts files against the stacks' outputs (fleet check --outputs)", function () {
  this.timeout(120000);

  it("passes facts files equal to each stack's fleetFacts output, and names each key that differs or an output file that is missing", async () => {
    const { factsAgainstOutputs } = await import("../fleet-tools/write");
    const { EXAMPLE_STACKS, plan } = await import("./helpers");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "stack-outputs-"));
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-outputs-"));
    try {
      for (const stack of EXAMPLE_STACKS) fs.writeFileSync(path.join(dir, `${stack}.json`), JSON.stringify((await plan(stack)).outputs));
      assert.deepEqual(factsAgainstOutputs(exampleRoot(), dir), []);
      for (const d of ["fleet", "stacks"]) fs.cpSync(path.join(exampleRoot(), d), path.join(root, d), { recursive: true });
      fs.copyFileSync(path.join(exampleRoot(), "Pulumi.yaml"), path.join(root, "Pulumi.yaml"));
      const facts = path.join(root, "fleet/tenants/dev/acme/facts.yaml");
      fs.writeFileSync(facts, fs.readFileSync(facts, "utf8").replace(/^fileSystemId: .*$/m, "fileSystemId: fs-0123456789abcdef0"));
      fs.rmSync(path.join(dir, "connector-demo.json"));
      const found = factsAgainstOutputs(root, dir).map((p) => `${p.file}: ${p.at}: ${p.reason}`).join("\n");
      assert.match(found, /fleet\/tenants\/dev\/acme\/facts.yaml: fileSystemId: is "fs-0123456789abcdef0" here but "fs-[0-9a-f]+" in tenant-acme-dev's deployment/);
      assert.match(found, /connector-demo.json: \(file\): is missing: write it with `pulumi stack output --json -s connector-demo > /);
      assert.equal(found.split("\n").length, 2, found);
      // Central's deployment serves a tenant whose stack file this checkout lacks: named before anyone deploys central from it.
      const central = JSON.parse(fs.readFileSync(path.join(dir, "central-dev.json"), "utf8")) as { tenantRoleArns: Record<string, string> };
      fs.writeFileSync(path.join(dir, "central-dev.json"), JSON.stringify({ ...central, tenantRoleArns: { ...central.tenantRoleArns, initech: "arn:aws:iam::111122223333:role/clusterra-dev-tenant-initech" } }));
      assert.match(factsAgainstOutputs(root, dir).map((p) => `${p.file}: ${p.at}: ${p.reason}`).join("\n"), /^stacks\/Pulumi\.central-dev\.yaml: clusterra:removeTenants: central-dev serves tenant initech \(its last deployment's tenantRoleArns\), and no stack file in this checkout joins it to central-dev/m);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
