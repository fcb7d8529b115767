import * as assert from "node:assert/strict";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parse, parseAllDocuments, stringify } from "yaml";
import { PROJECT_ROOT } from "../config";
import { chartModel, ignoredValues } from "../fleet-tools/chart-values";
import { checkWithCharts, referenceDir } from "../fleet-tools/check";
import { helmRenders, renderCharts, runFleetRender, servedApis, toolPath } from "../fleet-tools/render";
import { admissionPolicyProblems, checkAgainstCharts, ignoredValueProblems, missingPinnedCharts, refusal, selfHealed, selfHealProblems } from "../fleet-tools/validate";
import { CHARTS } from "../facts/charts";
import { slurmctldServiceAddress } from "../facts/fleet";
import { TENANT_K3S_VERSION } from "../facts/tenant-cluster";
import { clusterObjects, entryObjects, exampleRoot, needHelm } from "./helpers";

const APPSET = "fleet/central/dev/tenants.yaml";
const SLURM_VALUES = "fleet/tenants/dev/acme/cluster/values/slurm.yaml";
/** Every tenant's shared values of an add-on, beside the ApplicationSet. */
const shared = (addon: string) => `fleet/central/dev/tenants/values/${addon}.yaml`;

/** A repository with the stack files and only the given fleet files: one small Application renders fast. */
function smallRepo(files: readonly string[]): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-charts-"));
  fs.cpSync(path.join(exampleRoot(), "stacks"), path.join(root, "stacks"), { recursive: true });
  for (const f of files) {
    fs.mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
    fs.copyFileSync(path.join(exampleRoot(), f), path.join(root, f));
  }
  return root;
}

/**
 * A small repository whose ApplicationSet makes only these add-ons of acme, with these files;
 * acme's entry as the committed fleet renders it (so its cluster Secret), as a plain file.
 */
function appsRepo(addons: readonly string[], files: readonly string[]): string {
  const root = smallRepo([APPSET, ...files]);
  fs.writeFileSync(path.join(root, "fleet/central/dev/acme-entry.yaml"), (entryObjects("acme") ?? []).map((o) => stringify(o)).join("---\n"));
  edit(root, APPSET, (d) => {
    const list = d.spec.generators[0].matrix.generators[1].list;
    list.elements = list.elements.filter((e: { addon: string }) => addons.includes(e.addon));
  });
  return root;
}

/** The list generator's row of one add-on. */
const row = (d: any, addon: string) => d.spec.generators[0].matrix.generators[1].list.elements.find((e: { addon: string }) => e.addon === addon);

function edit(root: string, rel: string, change: (doc: any) => void): void {
  const doc = parse(fs.readFileSync(path.join(root, rel), "utf8"));
  change(doc);
  fs.writeFileSync(path.join(root, rel), stringify(doc));
}

describe("mutating admission policies in the rendered fleet", () => {
  it("lets only cluster-manifests render one, and only the Controller's cluster-name policy and its binding", () => {
    const o = (application: string, kind: string, name: string) => ({ kind, name, render: { file: "fleet/central/dev/tenants.yaml", application } });
    const problems = admissionPolicyProblems([
      o("acme-cluster-manifests", "MutatingAdmissionPolicy", "clusterra-slurm-cluster-name"),
      o("acme-cluster-manifests", "MutatingAdmissionPolicyBinding", "clusterra-slurm-cluster-name"),
      o("acme-cluster-manifests", "MutatingAdmissionPolicy", "rewrite-secrets"),
      o("acme-edge-agent", "MutatingAdmissionPolicy", "clusterra-slurm-cluster-name"),
      o("acme-slurm", "MutatingAdmissionPolicyBinding", "clusterra-slurm-cluster-name"),
      o("acme-slurm", "ValidatingAdmissionPolicy", "anything"),
    ]);
    assert.deepEqual(problems.map((p) => p.at), [
      "Application/acme-cluster-manifests renders MutatingAdmissionPolicy/rewrite-secrets",
      "Application/acme-edge-agent renders MutatingAdmissionPolicy/clusterra-slurm-cluster-name",
      "Application/acme-slurm renders MutatingAdmissionPolicyBinding/clusterra-slurm-cluster-name",
    ]);
    assert.match(problems[0].reason, /only cluster-manifests may render a mutating admission policy/);
  });
});

describe("what contains a tenant on central, in Applications ArgoCD self-heals", () => {
  const central = "https://kubernetes.default.svc";
  const o = (application: string, kind: string, server = central) => ({ kind, name: "x", namespace: "tenant-acme", render: { file: "fleet/central/dev/guards.yaml", application, server } });
  it("reads self-heal as ArgoCD does: automated on, selfHeal set; RollingSync's enabled: false is off", () => {
    assert.equal(selfHealed({ spec: { syncPolicy: { automated: { prune: true, selfHeal: true } } } }), true);
    assert.equal(selfHealed({ spec: { syncPolicy: { automated: { prune: true, selfHeal: true, enabled: false } } } }), false);
    assert.equal(selfHealed({ spec: { syncPolicy: { automated: { prune: true } } } }), false);
    assert.equal(selfHealed({ spec: { syncPolicy: {} } }), false);
  });
  it("names a NetworkPolicy or a quota on central that a RollingSync Application renders, and nothing a self-healed one or a tenant cluster's renders", () => {
    const apps = new Map([["acme-guards", true], ["acme-control-plane-manifests", false], ["acme-cluster-manifests", false]]);
    const problems = selfHealProblems([
      o("acme-guards", "NetworkPolicy"), o("acme-guards", "ResourceQuota"),
      o("acme-control-plane-manifests", "NetworkPolicy"), o("acme-control-plane-manifests", "LimitRange"), o("acme-control-plane-manifests", "MariaDB"),
      o("acme-cluster-manifests", "MutatingAdmissionPolicyBinding", "https://10.16.4.10:6443"),
      o("acme-unknown", "ResourceQuota"),
    ], apps);
    assert.deepEqual(problems.map((p) => p.at), [
      "Application/acme-control-plane-manifests renders NetworkPolicy/tenant-acme/x",
      "Application/acme-control-plane-manifests renders LimitRange/tenant-acme/x",
      "Application/acme-unknown renders ResourceQuota/tenant-acme/x",
    ]);
    assert.match(problems[0].reason, /ArgoCD does not self-heal this Application \(a RollingSync set turns its automated sync off\)/);
    assert.match(problems[2].reason, /no Application of the fleet self-heals it/);
  });
});

describe("the fleet against the real charts", function () {
  this.timeout(120000);
  const reference = referenceDir();
  const charts = reference && path.join(reference, "charts");
  let root: string;
  beforeEach(function () {
    if (!charts) return this.skip(); // ../shared/reference/charts is absent here (CI has it)
    root = appsRepo(["slurm"], [shared("slurm"), SLURM_VALUES]);
  });
  afterEach(() => root && fs.rmSync(root, { recursive: true, force: true }));

  it("resolves an Application as ArgoCD would: release, namespace, $values file, the tenant cluster's Kubernetes", function () {
    needHelm(this); // Applications are read through the fleet's documents, ApplicationSets expanded with Helm
    const { renders, problems } = helmRenders(root, charts as string);
    assert.deepEqual(problems, []);
    assert.equal(renders.length, 1);
    const [r] = renders;
    assert.deepEqual(
      { application: r.application, source: r.source, chart: r.chartLabel, release: r.release, namespace: r.namespace, kubeVersion: r.kubeVersion, valueFiles: r.valueFiles },
      { application: "acme-slurm", source: 1, chart: `slurm-${CHARTS.slurm.version}`, release: "slurm", namespace: "slurm", kubeVersion: TENANT_K3S_VERSION.replace(/\+.*/, ""), valueFiles: [path.join(root, SLURM_VALUES), path.join(root, shared("slurm"))] },
    );
  });

  it("renders a generated Application for its tenant cluster's own Kubernetes (clusterra:k3sVersion)", function () {
    needHelm(this);
    const stack = path.join(root, "stacks", "Pulumi.tenant-acme-dev.yaml");
    const doc = parse(fs.readFileSync(stack, "utf8"));
    doc.config["clusterra:k3sVersion"] = "v1.34.6+k3s1";
    fs.writeFileSync(stack, stringify(doc));
    const { renders, problems } = helmRenders(root, charts as string);
    assert.deepEqual(problems, []);
    assert.deepEqual(renders.map((r) => [r.application, r.kubeVersion]), [["acme-slurm", "v1.34.6"]]);
  });

  it("names the Application whose chart version has no chart", function () {
    needHelm(this); // Applications are read through the fleet's documents, ApplicationSets expanded with Helm
    edit(root, APPSET, (d) => { row(d, "slurm").version = "1.2.2"; });
    const { renders, problems } = helmRenders(root, charts as string);
    assert.equal(renders.length, 0);
    assert.deepEqual(problems.map((p) => `${p.file}: ${p.at}: ${p.reason.split(";")[0]}`), [`${APPSET}: document 0 Application/acme-slurm/spec/sources/1: chart slurm 1.2.2 is not in ${charts} (no slurm-1.2.2/Chart.yaml)`]);
  });

  it("finds a folder for every chart pinned in facts/charts.ts, and names the pin without one", () => {
    assert.deepEqual(missingPinnedCharts(charts as string), []);
    const partial = path.join(root, "charts");
    fs.mkdirSync(partial);
    for (const pin of Object.values(CHARTS)) if (pin !== CHARTS.karpenterCrd) fs.symlinkSync(path.join(charts as string, `${pin.chart}-${pin.version}`), path.join(partial, `${pin.chart}-${pin.version}`));
    assert.deepEqual(missingPinnedCharts(partial).map((p) => `${p.file}: ${p.at}: ${p.reason}`), [`facts/charts.ts: CHARTS.karpenterCrd: karpenter-crd ${CHARTS.karpenterCrd.version} has no chart in ${partial} (no karpenter-crd-${CHARTS.karpenterCrd.version}/Chart.yaml)`]);
  });

  it("passes every committed values file: each key is in the chart's values.yaml or read by its templates", function () {
    needHelm(this); // Applications are read through the fleet's documents, ApplicationSets expanded with Helm
    const { renders } = helmRenders(exampleRoot(), charts as string);
    assert.ok(renders.length > 20, `${renders.length} Helm sources`);
    assert.deepEqual(ignoredValueProblems(exampleRoot(), renders), []);
  });

  it("catches a misspelled values key at the top, in a chart's section and in a NodeSet entry", function () {
    needHelm(this); // Applications are read through the fleet's documents, ApplicationSets expanded with Helm
    const values = parse(fs.readFileSync(path.join(exampleRoot(), SLURM_VALUES), "utf8"));
    const nodeSet = Object.keys(values.nodesets)[0];
    values.controler = { external: true };
    values.controller.extraConff = "NodeSet=x";
    values.nodesets[nodeSet].replicaz = 1;
    values.nodesets[nodeSet].slurmd.resourcez = {};
    assert.deepEqual(ignoredValues(chartModel(path.join(charts as string, `slurm-${CHARTS.slurm.version}`)), values).sort(), [
      "controler", "controller.extraConff", `nodesets.${nodeSet}.replicaz`, `nodesets.${nodeSet}.slurmd.resourcez`,
    ]);
    fs.writeFileSync(path.join(root, SLURM_VALUES), stringify(values));
    const { renders } = helmRenders(root, charts as string);
    assert.match(ignoredValueProblems(root, renders).map((p) => `${p.at}: ${p.reason}`).join("\n"), /Application\/acme-slurm\/spec\/sources\/1 \(slurm-1\.2\.1\): values key controller\.extraConff \(fleet\/tenants\/dev\/acme\/cluster\/values\/slurm\.yaml\) is neither in slurm-1\.2\.1's values\.yaml nor read by its templates/);
  });

  it("renders the Application with Helm: one NodeSet per entry, in the release's namespace, one file per object", async function () {
    const helm = needHelm(this);
    const out = path.join(root, "rendered");
    const { renders } = helmRenders(root, charts as string);
    const { objects, problems } = await renderCharts(helm, renders, out);
    assert.deepEqual(problems, []);
    const values = parse(fs.readFileSync(path.join(root, SLURM_VALUES), "utf8"));
    const nodeSets = objects.filter((o) => o.kind === "NodeSet");
    assert.deepEqual(nodeSets.map((o) => o.name).sort(), Object.keys(values.nodesets).map((n) => `slurm-worker-${n}`).sort());
    for (const o of objects) {
      assert.ok(o.out.startsWith("central/dev/acme-slurm/1/"), o.out);
      const [doc] = parseAllDocuments(fs.readFileSync(path.join(out, o.out), "utf8")).map((d) => d.toJS());
      assert.equal(doc.kind, o.kind);
    }
    assert.ok(nodeSets.every((o) => o.namespace === "slurm"));
  });

  it("names central's slurmctld as the customer cluster's Service does: <Controller>-controller.<namespace>", async function () {
    const helm = needHelm(this);
    const small = appsRepo(["control-plane"], [shared("control-plane"), "fleet/tenants/dev/acme/control-plane/values/slurm.yaml"]);
    try {
      const { renders } = helmRenders(small, charts as string);
      const { objects, problems } = await renderCharts(helm, renders, path.join(small, "rendered"));
      assert.deepEqual(problems, []);
      // Slinky's operator names the controller's Service `<Controller CR name>-controller` in the CR's
      // namespace, and central's slurm.conf names slurmctld by it: the name the customer's slurmd dial.
      const controllers = objects.filter((o) => o.kind === "Controller");
      assert.deepEqual(controllers.map((o) => `${o.name}-controller.${o.namespace}`), [slurmctldServiceAddress("acme").host]);
      const mirror = (clusterObjects("acme") ?? []).find((o) => o.kind === "Service");
      assert.equal(`${mirror.metadata.name}.${mirror.metadata.namespace}`, slurmctldServiceAddress("acme").host);
    } finally {
      fs.rmSync(small, { recursive: true, force: true });
    }
  });

  it("knows the APIs a cluster serves from the CRDs the fleet installs there, to pass them to Helm as ArgoCD does", async function () {
    const helm = needHelm(this);
    const small = appsRepo(["slurm-operator-crds"], [shared("slurm-operator-crds")]);
    try {
      const { renders } = helmRenders(small, charts as string);
      const { objects } = await renderCharts(helm, renders, path.join(small, "rendered"));
      const apis = servedApis(objects, path.join(small, "rendered"));
      assert.deepEqual([...apis.keys()], [renders[0].server]);
      assert.ok(apis.get(renders[0].server)?.includes("slinky.slurm.net/v1beta1/NodeSet"), String(apis.get(renders[0].server)));
      assert.ok(apis.get(renders[0].server)?.includes("slinky.slurm.net/v1beta1"));
    } finally {
      fs.rmSync(small, { recursive: true, force: true });
    }
  });

  it("refuses values against a chart's values.schema.json (Helm's own check)", async function () {
    const helm = needHelm(this);
    const valuesFile = shared("external-secrets");
    const small = appsRepo(["external-secrets"], [valuesFile]);
    try {
      edit(small, valuesFile, (v) => { v.replicaCount = "two"; });
      const { problems } = await renderCharts(helm, helmRenders(small, charts as string).renders, path.join(small, "rendered"));
      assert.match(problems.map((p) => `${p.file}: ${p.at}: ${p.reason}`).join("\n"), /tenants\.yaml: Application\/acme-external-secrets\/spec\/sources\/1 \(external-secrets-2\.9\.0\): helm template failed: [\s\S]*replicaCount/);
    } finally {
      fs.rmSync(small, { recursive: true, force: true });
    }
  });

  it("validates rendered and plain objects like an API server: a wrong type in a CRD field names the Application, the object and the field #end-to-end", async function () {
    const helm = toolPath(PROJECT_ROOT, "helm");
    const kubectlValidate = toolPath(PROJECT_ROOT, "kubectl-validate");
    if (!helm || !kubectlValidate) return this.skip(); // run `bash scripts/install-tools` (CI does)
    // The tenant cluster's own objects, from its local chart: a wrong type in what every NodeClass has, an unknown field in what every NodePool has.
    const local = appsRepo(["slurm", "cluster-manifests"], [shared("slurm"), SLURM_VALUES, shared("cluster-manifests"), "fleet/tenants/dev/acme/facts.yaml", "fleet/tenants/dev/acme/users.yaml", "fleet/central/dev/values/facts.yaml", "fleet/tenants/dev/acme/cluster/values/cluster-manifests.yaml"]);
    fs.rmSync(root, { recursive: true, force: true });
    root = local;
    fs.cpSync(path.join(PROJECT_ROOT, "fleet/charts"), path.join(root, "fleet/charts"), { recursive: true });
    edit(root, shared("cluster-manifests"), (v) => {
      v.nodeClass.spec.metadataOptions.httpPutResponseHopLimit = "one"; // an integer in the CRD
      v.nodePool.template.expireAfterr = "720h";
    });
    const values = parse(fs.readFileSync(path.join(root, SLURM_VALUES), "utf8"));
    const nodeSet = Object.keys(values.nodesets)[0];
    values.nodesets[nodeSet].replicas = "many"; // the chart writes it into NodeSet spec.replicas, an integer
    fs.writeFileSync(path.join(root, SLURM_VALUES), stringify(values));
    const result = await checkAgainstCharts(root, { helm, kubectlValidate }, charts as string, reference);
    const found = result.problems.map((p) => `${p.file}: ${p.at}: ${p.reason}`).join("\n");
    assert.match(found, new RegExp(`${APPSET}: Application/acme-slurm NodeSet/slurm/slurm-worker-${nodeSet} \\(slurm-1\\.2\\.1, rendered [^)]+\\): kubectl-validate \\(Kubernetes 1\\.35\\): spec\\.replicas: Invalid value`));
    assert.match(found, new RegExp(`${APPSET}: Application/acme-cluster-manifests EC2NodeClass/slurm-workers \\(fleet/charts/tenant-cluster, rendered [^)]+\\): kubectl-validate \\(Kubernetes 1\\.35\\): .*spec\\.metadataOptions\\.httpPutResponseHopLimit: Invalid value: "string"`));
    assert.match(found, new RegExp(`${APPSET}: Application/acme-cluster-manifests NodePool/cpu \\(fleet/charts/tenant-cluster, rendered [^)]+\\): kubectl-validate \\(Kubernetes 1\\.35\\): .*spec\\.template\\.spec\\.expireAfterr: Invalid value: value provided for unknown field`));
  });
});

describe("kubectl-validate's verdicts, as the API server would give them", () => {
  const nameCause = { reason: "FieldValueInvalid", field: "metadata.name", message: "Invalid value: \"x:y\": a lowercase RFC 1123 subdomain must consist of ..." };
  it("accepts an RBAC name with a colon (a path segment), and nothing else with one", () => {
    const status = { status: "Failure", details: { causes: [nameCause] } };
    assert.equal(refusal(status, "ClusterRole", "cert-manager-webhook:subjectaccessreviews"), "");
    assert.match(refusal(status, "ClusterRole", "a/b"), /metadata\.name: Invalid value/);
    assert.match(refusal(status, "ConfigMap", "x:y"), /metadata\.name: Invalid value/);
  });
  it("keeps the other causes of an RBAC object, without the note that CEL rules were skipped", () => {
    const status = { status: "Failure", details: { causes: [nameCause, { field: "rules[0].verbs", message: "Required value" }, { message: "some validation rules were not checked because the object was invalid" }] } };
    assert.equal(refusal(status, "Role", "a:b"), "rules[0].verbs: Required value");
  });
});

describe("clusterra fleet render's output folder", () => {
  it("is never a folder of something else: a non-empty folder without a render's marker is refused and kept", async function () {
    needHelm(this);
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-render-out-"));
    fs.writeFileSync(path.join(out, "notes.txt"), "mine\n");
    const errors: string[] = [];
    try {
      assert.equal(await runFleetRender(exampleRoot(), { charts: out, out }, () => undefined, (s) => errors.push(s)), 2);
      assert.match(errors.join("\n"), /--out \S+ is not empty and not an earlier render/);
      assert.equal(fs.readFileSync(path.join(out, "notes.txt"), "utf8"), "mine\n");
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });
});

describe("fleet check --render without the tools", () => {
  const saved = { PATH: process.env.PATH, CI: process.env.CI };
  let root: string;
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-tools-"));
    process.env.PATH = "";
  });
  afterEach(() => {
    process.env.PATH = saved.PATH;
    if (saved.CI === undefined) delete process.env.CI;
    else process.env.CI = saved.CI;
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("skips the Helm part on a developer's machine, saying how to install them", async () => {
    delete process.env.CI;
    const errors: string[] = [];
    assert.deepEqual(await checkWithCharts(root, root, undefined, () => undefined, (s) => errors.push(s)), []);
    assert.deepEqual(errors, ["clusterra fleet check: helm and kubectl-validate missing: Applications are not rendered with Helm nor validated with kubectl-validate (run `bash scripts/install-tools`; pass --charts <dir>); skipped"]);
  });

  it("fails in CI", async () => {
    process.env.CI = "true";
    const problems = await checkWithCharts(root, root, undefined, () => undefined, () => undefined);
    assert.deepEqual(problems.map((p) => p.reason.split(":")[0]), ["helm and kubectl-validate missing"]);
  });
});

describe("clusterra fleet render without Helm", () => {
  it("exits 2 and says how to install it, writing nothing", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "fleet-render-"));
    const saved = process.env.PATH;
    const errors: string[] = [];
    try {
      process.env.PATH = "";
      const code = await runFleetRender(root, { charts: root, out: path.join(root, "out") }, () => undefined, (s) => errors.push(s));
      assert.equal(code, 2);
      assert.deepEqual(errors, ["clusterra fleet render: helm is not installed; run `bash scripts/install-tools` (it builds the pinned Helm into .tools/bin)"]);
      assert.equal(fs.existsSync(path.join(root, "out")), false);
    } finally {
      process.env.PATH = saved;
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
