/**
 * The tenants' ApplicationSet as ArgoCD's controller reads it: the goTemplate subset, the
 * matrix of cluster Secrets and add-ons, templatePatch (which may not change the project),
 * RollingSync's steps, and which Applications a rollout lets sync.
 */
import * as assert from "node:assert/strict";
import { ARGOCD_CONTROLLER_SHARDS } from "../facts/central-host";
import { argocdValues } from "../components/central/argocd-values";
import { clusterParams, expandApplicationSet, GUARDS_ADDON, rolloutSteps, TENANT_ADD_ONS, tenantAddOnValueFiles, tenantGuardsApplicationSet, tenantsApplicationSet } from "../components/fleet/application-set";
import { GoTemplateError, renderGoTemplate } from "../components/fleet/go-template";
import { ROLLOUT_STAGES, ROLLOUT_WAVES } from "../facts/fleet";
import { CHARTS } from "../facts/charts";
import { entryObjects, skipWithoutHelm } from "./helpers";

const REPO = { repoUrl: "https://github.com/clusterra/infra.git", revision: "main" };

/** A tenant's cluster Secret as its entry writes it: labels, and the facts its Applications read as annotations. */
function cluster(id: string, wave: string, environment = "dev") {
  return clusterParams({
    metadata: {
      labels: { "argocd.argoproj.io/secret-type": "cluster", "clusterra.io/tenant": id, "clusterra.io/environment": environment, "clusterra.io/wave": wave },
      annotations: { "clusterra.io/server-address": `10.16.${id.length}.10`, "clusterra.io/interruption-queue": `clusterra-${environment}-${id}-interruption` },
    },
    stringData: { name: `clusterra-${environment}-${id}`, server: `https://10.16.${id.length}.10:6443`, project: `tenant-${id}-cluster` },
  });
}

describe("goTemplate, as the ApplicationSet controller renders it", () => {
  it("reads fields, map entries by key, eq, if/else and toJson, and trims at - markers", () => {
    const data = { a: { b: "x" }, metadata: { labels: { "clusterra.io/tenant": "acme" } }, kind: "chart", list: ["p", "q"] };
    assert.equal(renderGoTemplate('{{ .a.b }}-{{ index .metadata.labels "clusterra.io/tenant" }}', data), "x-acme");
    assert.equal(renderGoTemplate('a\n  {{- if eq .kind "chart" }}\n  C{{ else }}D{{ end }}', data), "a\n  C");
    assert.equal(renderGoTemplate('{{ if eq .kind "dir" }}C{{ else }}D{{ end }}', data), "D");
    assert.equal(renderGoTemplate("l: {{ toJson .list }}", data), 'l: ["p","q"]');
    assert.equal(renderGoTemplate('t: {{ toJson (index .metadata.labels "clusterra.io/tenant") }}', data), 't: "acme"');
  });

  it("refuses a missing key (missingkey=error) and what the fleet never writes, by name", () => {
    assert.throws(() => renderGoTemplate("{{ .nope }}", {}), (e: Error) => e instanceof GoTemplateError && /no entry for key "nope"/.test(e.message));
    assert.throws(() => renderGoTemplate("{{ .a | upper }}", { a: "x" }), /unsupported action/);
    assert.throws(() => renderGoTemplate("{{ if .a }}x", { a: "x" }), /missing \{\{else\}\} or \{\{end\}\}/);
  });
});

describe("the tenants' ApplicationSet", () => {
  const appset = tenantsApplicationSet("dev", "dev", REPO);

  it("generates every add-on for each of the environment's clusters, and none for another environment's", () => {
    const apps = expandApplicationSet(appset, [cluster("acme", "canary"), cluster("globex", "general"), cluster("other", "canary", "prod")]);
    const rolled = TENANT_ADD_ONS.filter((a) => !a.selfHealed);
    assert.equal(apps.length, 2 * rolled.length);
    const names = apps.map((a) => a.application.metadata.name);
    for (const t of ["acme", "globex"]) for (const a of rolled) assert.ok(names.includes(`${t}-${a.addon}`), `${t}-${a.addon}`);
    // What contains a tenant is the guards' set's, never RollingSync's.
    assert.ok(!names.some((n) => n.endsWith(`-${GUARDS_ADDON}`)));
    assert.ok(!names.some((n) => n.startsWith("other-")));
  });

  it("takes each Application's project and destination from the cluster Secret's tenant, central's side in the tenant's namespace", () => {
    const apps = expandApplicationSet(appset, [cluster("acme", "canary")]);
    const get = (n: string) => apps.find((a) => a.application.metadata.name === n)?.application as unknown as { spec: { project: string; destination: { server: string; namespace: string }; sources: { chart?: string; targetRevision?: string; path?: string; helm?: { valueFiles: string[] } }[] } };
    const cp = get("acme-control-plane");
    assert.deepEqual([cp.spec.project, cp.spec.destination], ["tenant-acme", { server: "https://kubernetes.default.svc", namespace: "tenant-acme" }]);
    // The tenant's own values, then every tenant's shared values last: no tenant's file can change what all share.
    assert.deepEqual(cp.spec.sources[1].helm?.valueFiles, ["$values/fleet/tenants/dev/acme/control-plane/values/slurm.yaml", "$values/fleet/central/dev/tenants/values/control-plane.yaml"]);
    const slurm = get("acme-slurm");
    assert.deepEqual([slurm.spec.project, slurm.spec.destination], ["tenant-acme-cluster", { server: "https://10.16.4.10:6443", namespace: "slurm" }]);
    assert.deepEqual([slurm.spec.sources[1].chart, slurm.spec.sources[1].targetRevision], ["slurm", CHARTS.slurm.version]);
    // The cluster's own objects: a local chart that reads the tenant's own values, its users and facts files, central's facts, then the shared values.
    const manifests = get("acme-cluster-manifests");
    assert.deepEqual(manifests.spec.sources.map((s) => s.path), [undefined, "fleet/charts/tenant-cluster"]);
    assert.deepEqual(manifests.spec.sources[1].helm?.valueFiles, ["$values/fleet/tenants/dev/acme/cluster/values/cluster-manifests.yaml", "$values/fleet/tenants/dev/acme/users.yaml", "$values/fleet/tenants/dev/acme/facts.yaml", "$values/fleet/central/dev/values/facts.yaml", "$values/fleet/central/dev/tenants/values/cluster-manifests.yaml"]);
    // What no tenant changes is read from the shared folder, never copied into the tenant's.
    assert.deepEqual(get("acme-argocd-manager").spec.sources.map((s) => s.path), ["fleet/central/dev/tenants/argocd-manager"]);
    assert.deepEqual(get("acme-external-secrets").spec.sources[1].helm?.valueFiles, ["$values/fleet/central/dev/tenants/values/external-secrets.yaml"]);
  });

  it("names each Helm add-on's value files in the order renderers read them (tenantAddOnValueFiles)", () => {
    const apps = [appset, tenantGuardsApplicationSet("dev", "dev", REPO)].flatMap((set) => expandApplicationSet(set, [cluster("acme", "canary")]));
    for (const a of TENANT_ADD_ONS.filter((x) => x.source.kind === "chart" || x.source.kind === "local-chart")) {
      const app = apps.find((g) => g.application.metadata.name === `acme-${a.addon}`)?.application as any;
      assert.deepEqual(app.spec.sources[1].helm.valueFiles, tenantAddOnValueFiles("dev", "acme", a.addon).map((f) => `$values/${f}`), a.addon);
    }
  });

  it("keeps the template's project whatever the patch says, as ArgoCD does", () => {
    const patched = JSON.parse(JSON.stringify(appset));
    patched.spec.templatePatch = `spec:\n  project: platform\n${patched.spec.templatePatch.replace(/^spec:\n/, "")}`;
    const apps = expandApplicationSet(patched, [cluster("acme", "canary")]);
    assert.ok(apps.every((a) => /^tenant-acme(-cluster)?$/.test((a.application.spec as { project: string }).project)));
  });

  it("generates each tenant's guards in a set of their own that ArgoCD self-heals: no RollingSync, automated sync kept", () => {
    const guards = tenantGuardsApplicationSet("dev", "dev", REPO);
    assert.equal((guards.spec as { strategy?: unknown }).strategy, undefined);
    const apps = expandApplicationSet(guards, [cluster("acme", "canary"), cluster("globex", "general")]);
    assert.deepEqual(apps.map((a) => [a.application.metadata.name, a.rollingSync]), [["acme-guards", false], ["globex-guards", false]]);
    const acme = apps[0].application as unknown as { spec: { project: string; destination: unknown; syncPolicy: { automated: Record<string, unknown> } } };
    assert.deepEqual(acme.spec.syncPolicy.automated, { prune: true, selfHeal: true });
    assert.deepEqual([acme.spec.project, acme.spec.destination], ["tenant-acme", { server: "https://kubernetes.default.svc", namespace: "tenant-acme" }]);
  });

  it("prunes nothing with control-plane-manifests while the guards take its policies over, and prunes with every other add-on", () => {
    const apps = expandApplicationSet(appset, [cluster("acme", "canary")]);
    const prune = (n: string) => ((apps.find((a) => a.application.metadata.name === n)?.application.spec as { syncPolicy: { automated: { prune: boolean } } }).syncPolicy.automated.prune);
    assert.equal(prune("acme-control-plane-manifests"), false);
    assert.ok(apps.filter((a) => a.application.metadata.name !== "acme-control-plane-manifests").every((a) => prune(a.application.metadata.name) === true));
  });

  it("turns automation off under RollingSync and puts each Application in its wave's stage", () => {
    const apps = expandApplicationSet(appset, [cluster("acme", "canary"), cluster("globex", "general")]);
    assert.equal(rolloutSteps().length, ROLLOUT_WAVES.length * ROLLOUT_STAGES.length);
    assert.ok(apps.every((a) => (a.application.spec as { syncPolicy: { automated: { enabled: boolean } } }).syncPolicy.automated.enabled === false));
    const step = (n: string) => apps.find((a) => a.application.metadata.name === n)?.step ?? -1;
    assert.equal(step("acme-cilium"), 0);
    assert.equal(step("acme-slurm"), ROLLOUT_STAGES.indexOf("slurmd"));
    assert.ok(step("acme-slurm") > step("acme-control-plane"));
    assert.equal(step("globex-cilium"), 2 * ROLLOUT_STAGES.length);
    // A tenant in no known wave matches no step: fleet check names it.
    assert.equal(expandApplicationSet(appset, [cluster("odd", "sometime")])[0].step, -1);
  });

  it("keeps every tenant's objects when an ApplicationSet is deleted, and its Applications when a cluster Secret goes", () => {
    const { tenantEntriesApplicationSet } = require("../components/fleet/tenant-entry") as typeof import("../components/fleet/tenant-entry");
    for (const set of [appset, tenantEntriesApplicationSet("dev", REPO)]) {
      assert.deepEqual((set.spec as { syncPolicy: unknown }).syncPolicy, { applicationsSync: "create-update", preserveResourcesOnDeletion: true });
    }
  });

  it("passes the cluster Secret's facts to the upstream charts as one value each, whatever they hold", () => {
    const hostile = cluster("acme", "canary");
    const annotations = { ...(hostile.metadata.annotations ?? {}), "clusterra.io/server-address": "10.16.4.10'\n            - name: hostNetwork\n              value: \"true" };
    const apps = expandApplicationSet(appset, [{ ...hostile, metadata: { ...hostile.metadata, annotations } }]);
    const cilium = apps.find((a) => a.application.metadata.name === "acme-cilium")?.application as any;
    assert.deepEqual(cilium.spec.sources[1].helm.parameters, [
      { name: "cluster.name", value: "clusterra-dev-acme", forceString: true },
      { name: "k8sServiceHost", value: annotations["clusterra.io/server-address"], forceString: true },
    ]);
  });

  it("bumps a chart for every tenant through the table alone", () => {
    const bumped = tenantsApplicationSet("dev", "dev", REPO, { ...CHARTS, slurm: { ...CHARTS.slurm, version: "9.9.9" } });
    const apps = expandApplicationSet(bumped, [cluster("acme", "canary")]);
    const versions = apps.flatMap((a) => (a.application.spec as { sources: { chart?: string; targetRevision?: string }[] }).sources.filter((s) => s.chart === "slurm").map((s) => s.targetRevision));
    assert.deepEqual(versions, ["9.9.9", "9.9.9"]);
  });
});

/** Secrets Manager holding one published JSON secret, read by whoever asks (the store's role is not in question here). */
function published(name: string, value: Record<string, string>): (key: string) => { value: string } | { error: string } {
  return (key) => (key === name ? { value: JSON.stringify(value) } : { error: "ResourceNotFoundException: Secrets Manager can't find the specified secret." });
}

function targetOf(r: { secret: { stringData: Record<string, string> } } | { error: string }): { stringData: Record<string, string> } {
  if ("error" in r) throw new Error(r.error);
  return r.secret;
}

describe("a tenant's cluster Secret", () => {
  it("keeps what the tenant's server publishes inside its two fields: a token with quotes adds no field to ArgoCD's cluster config", async function () {
    const { externalSecretTarget } = await import("../journey/gitops/external-secrets");
    const docs = entryObjects("acme");
    if (!docs) return skipWithoutHelm(this);
    const es = docs.find((d) => (d as { kind?: string }).kind === "ExternalSecret") as Parameters<typeof externalSecretTarget>[0];
    const hostile = 'x", "execProviderConfig": {"command": "sh", "args": ["-c", "id"], "apiVersion": "client.authentication.k8s.io/v1beta1"}, "bearerToken": "x';
    const secret = targetOf(externalSecretTarget(es, published("clusterra/dev/acme/argocd-cluster", { bearerToken: hostile, caData: "Q0E=" })));
    const config = JSON.parse(secret.stringData.config) as Record<string, unknown>;
    assert.deepEqual(Object.keys(config).sort(), ["bearerToken", "tlsClientConfig"]);
    assert.equal(config.bearerToken, hostile);
    assert.deepEqual(config.tlsClientConfig, { caData: "Q0E=" });
  });

  it("puts the tenant's cluster on the tenants' controller shard, never central's, and the chart runs both shards", async function () {
    const { externalSecretTarget } = await import("../journey/gitops/external-secrets");
    const docs = entryObjects("acme");
    if (!docs) return skipWithoutHelm(this);
    const es = docs.find((d) => (d as { kind?: string }).kind === "ExternalSecret") as Parameters<typeof externalSecretTarget>[0];
    const secret = targetOf(externalSecretTarget(es, published("clusterra/dev/acme/argocd-cluster", { bearerToken: "t", caData: "Q0E=" })));
    assert.equal(secret.stringData.shard, String(ARGOCD_CONTROLLER_SHARDS.tenantClusters));
    assert.notEqual(ARGOCD_CONTROLLER_SHARDS.tenantClusters, ARGOCD_CONTROLLER_SHARDS.central);
    // ArgoCD puts a cluster with no Secret (in-cluster: central's own) on shard 0, and honours a Secret's shard only below the replicas.
    assert.equal(ARGOCD_CONTROLLER_SHARDS.central, 0);
    const replicas = (argocdValues("dev") as { controller: { replicas: number } }).controller.replicas;
    assert.ok(ARGOCD_CONTROLLER_SHARDS.tenantClusters < replicas && replicas === ARGOCD_CONTROLLER_SHARDS.replicas);
  });

  it("reads a missing label as Go does (empty), so fleet check sees the Application ArgoCD would make", () => {
    assert.equal(renderGoTemplate('[{{ index .metadata.labels "nope" }}]', { metadata: { labels: {} } }), "[]");
  });
});
