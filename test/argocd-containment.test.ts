/**
 * ArgoCD's NetworkPolicies on central: ingress denied by default, each component admitting its
 * peers on its port and its metrics from the monitoring namespace only; rendered by the chart
 * in place of its own (which admit metrics from every namespace), selecting the pods it makes.
 */
import * as assert from "node:assert/strict";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parse, stringify } from "yaml";
import { argocdNetworkPolicies } from "../components/central/argocd-network-policies";
import { argocdValues, resourceInclusions } from "../components/central/argocd-values";
import { tenantClusterKinds, tenantClusterServer } from "../components/fleet/tenant-entry";
import { tenantClusterKindProblems } from "../fleet-tools/validate";
import { argoCdRender, defaultChartsDir, kubernetesVersion, renderCharts, toolPath } from "../fleet-tools/render";
import { exampleFile } from "./helpers";
import { PROJECT_ROOT } from "../config";
import { MONITORING_NAMESPACE } from "../facts/fleet";
import { ARGOCD_CHART, ARGOCD_IN_CLUSTER } from "../facts/versions";
import { ARGOCD_PRIORITY } from "../facts/central-host";
import { selects } from "../journey/host/network-policy";

type Policy = { metadata: { name: string; namespace: string }; spec: { podSelector: { matchLabels?: Record<string, string> }; policyTypes: string[]; ingress?: { from?: { podSelector?: { matchLabels: Record<string, string> }; namespaceSelector?: { matchLabels: Record<string, string> } }[]; ports?: { port: string }[] }[] } };

describe("ArgoCD on central: its NetworkPolicies and priority", function () {
  this.timeout(60_000);
  const policies = argocdNetworkPolicies() as Policy[];

  it("deny ingress by default, admit metrics from the monitoring namespace only and nothing from any other namespace", () => {
    assert.ok(policies.every((p) => p.metadata.namespace === ARGOCD_CHART.namespace));
    assert.ok(policies.some((p) => Object.keys(p.spec.podSelector).length === 0 && p.spec.policyTypes.includes("Ingress") && !p.spec.ingress), "a default deny");
    const rules = policies.flatMap((p) => (p.spec.ingress ?? []).map((r) => ({ policy: p.metadata.name, ...r })));
    assert.deepEqual(rules.filter((r) => !r.from || r.from.length === 0).map((r) => r.policy), [], "no rule admits every source");
    for (const r of rules) for (const peer of r.from ?? []) {
      if (peer.namespaceSelector) {
        assert.deepEqual(peer.namespaceSelector.matchLabels, { "kubernetes.io/metadata.name": MONITORING_NAMESPACE }, r.policy);
        assert.deepEqual(r.ports?.map((p) => p.port), ["metrics"], `${r.policy}: only metrics from ${MONITORING_NAMESPACE}`);
      }
    }
    // argocd-server admits nothing but its metrics (operators port-forward to it).
    const server = policies.find((p) => p.metadata.name === "argocd-server");
    assert.deepEqual(server?.spec.ingress?.map((r) => r.ports?.map((p) => p.port)), [["metrics"]]);
  });

  it("replace the chart's own in the release, and each selects the pods the chart makes", async function () {
    const helm = toolPath(PROJECT_ROOT, "helm");
    const chart = path.join(defaultChartsDir(PROJECT_ROOT), `${ARGOCD_CHART.chart}-${ARGOCD_CHART.version}`);
    if (!helm || !fs.existsSync(chart)) {
      if (process.env.CI) assert.fail(`helm or ${chart} missing: CI runs scripts/install-tools with ../shared beside the checkout`);
      return this.skip(); // bash scripts/install-tools; the reference charts beside the checkout
    }
    // Rendered as the central stack and the journey install it: the pinned chart, these values, central's Kubernetes.
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "argocd-render-"));
    const render = { ...argoCdRender(defaultChartsDir(PROJECT_ROOT), kubernetesVersion((exampleFile("central-dev").values["clusterra:controlPlane"] as { k3sVersion: string }).k3sVersion)), inlineValues: argocdValues("dev") };
    const { objects: files, problems } = await renderCharts(helm, [render], out);
    assert.deepEqual(problems, []);
    const objects = files.map((f) => parse(fs.readFileSync(path.join(out, f.out), "utf8")) as { kind?: string; metadata?: { name?: string }; spec?: { template?: { metadata?: { labels?: Record<string, string> } } } });
    const rendered = objects.filter((o) => o.kind === "NetworkPolicy").map((o) => o.metadata?.name).sort();
    assert.deepEqual(rendered, policies.map((p) => p.metadata.name).sort(), "only the project's policies");
    const workloads = objects.filter((o) => o.kind === "Deployment" || o.kind === "StatefulSet" || o.kind === "Job") as { kind: string; metadata?: { name?: string; annotations?: Record<string, string> }; spec?: { template?: { metadata?: { labels?: Record<string, string> }; spec?: { priorityClassName?: string } } } }[];
    const pods = workloads.map((o) => o.spec?.template?.metadata?.labels ?? {});
    // Every long-running ArgoCD pod below the tenants' control planes, in a class the release itself
    // makes; not the pre-install hook Job, which Helm runs before the release's own objects exist.
    const hooks = (w: { metadata?: { annotations?: Record<string, string> } }) => !!w.metadata?.annotations?.["helm.sh/hook"];
    assert.deepEqual(workloads.filter((w) => !hooks(w) && w.spec?.template?.spec?.priorityClassName !== ARGOCD_PRIORITY.name).map((w) => `${w.kind}/${w.metadata?.name}`), []);
    assert.deepEqual(workloads.filter((w) => hooks(w) && w.spec?.template?.spec?.priorityClassName).map((w) => `${w.kind}/${w.metadata?.name}`), [], "a hook names no class the release has not made yet");
    assert.ok(workloads.some(hooks), "the chart's hook Job is among the workloads");
    const priority = objects.find((o) => o.kind === "PriorityClass" && o.metadata?.name === ARGOCD_PRIORITY.name) as { value?: number; preemptionPolicy?: string } | undefined;
    assert.ok(priority && (priority.value ?? 0) < 0 && priority.preemptionPolicy === "Never", "below the default priority every tenant pod has, never preempting");
    for (const p of policies) {
      if (Object.keys(p.spec.podSelector).length) assert.ok(pods.some((l) => selects(p.spec.podSelector, l)), `${p.metadata.name} selects a pod`);
      for (const rule of p.spec.ingress ?? []) for (const peer of rule.from ?? []) if (peer.podSelector) assert.ok(pods.some((l) => selects(peer.podSelector, l)), `${p.metadata.name}: peer ${JSON.stringify(peer.podSelector)}`);
    }
  });
});

describe("ArgoCD on central: what it caches of a tenant cluster", () => {
  // ArgoCD's glob for a rule's clusters: `*` matches any run of characters.
  const glob = (pattern: string, s: string) => new RegExp(`^${pattern.split("*").map((p) => p.replace(/[.+?^${}()|[\]\\/]/g, "\\$&")).join(".*")}$`).test(s);
  const rules = resourceInclusions();
  const included = (group: string, kind: string, cluster: string) => rules.some((r) => r.apiGroups.includes(group) && r.kinds.includes(kind) && r.clusters.some((c) => glob(c, cluster)));
  const tenant = tenantClusterServer("10.16.12.10");

  it("holds only the kinds the fleet deploys there, and no rule touches central's own cluster", () => {
    for (const k of tenantClusterKinds()) {
      const [group, kind] = k.split("/");
      assert.ok(included(group, kind, tenant), k);
    }
    for (const [group, kind] of [["", "Pod"], ["", "Event"], ["apps", "ReplicaSet"], ["coordination.k8s.io", "Lease"], ["", "Endpoints"]]) assert.ok(!included(group, kind, tenant), `${group}/${kind} is not cached`);
    // No inclusion rule names central: ArgoCD caches everything there (its rule: none for the cluster, all allowed).
    assert.ok(rules.every((r) => !r.clusters.some((c) => glob(c, ARGOCD_IN_CLUSTER))));
    assert.equal((argocdValues("dev").configs as { cm: Record<string, string> }).cm["resource.inclusions"], stringify(rules));
  });

  it("fleet check refuses an object for a tenant cluster of a kind outside them, and lets central's pass", () => {
    const render = (server: string) => ({ file: "fleet/central/dev/tenants.yaml", application: "acme-slurm", server });
    const problems = tenantClusterKindProblems([
      { kind: "Lease", name: "x", apiVersion: "coordination.k8s.io/v1", render: render(tenant) },
      { kind: "Deployment", name: "ok", apiVersion: "apps/v1", render: render(tenant) },
      { kind: "Lease", name: "central", apiVersion: "coordination.k8s.io/v1", render: render(ARGOCD_IN_CLUSTER) },
    ]);
    assert.deepEqual(problems.map((p) => p.at), ["Application/acme-slurm renders Lease/x"]);
  });
});
