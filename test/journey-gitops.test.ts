import * as assert from "node:assert/strict";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { CHARTS } from "../facts/charts";
import { applicationDetail, liveApplication, rolloutOf, rolloutStart, type ApplicationObject } from "../journey/gitops/applications";
import { ARGOCD_PODS, cachedClusters, ordinalArgs, ordinalPort, pinListeners, serviceHostLines, statefulSetAddress } from "../journey/gitops/argocd";
import { chartOrigins, fleetOrigins, gitOrigin } from "../journey/gitops/origins";
import { cgiHead, fileFor } from "../journey/gitops/serve";
import { externalSecretsPackaging, originHostLines, registryConfig } from "../journey/gitops/servers";
import { subjectAltName } from "../journey/kube/pki";
import { containerEnv, expandVars } from "../journey/kube/pods";
import { inImagePath } from "../journey/host/processes";
import { readyStatus } from "../journey/stand-ins";

describe("the journey's GitOps origins (pure parts)", () => {
  it("serves each source under the name the fleet gives it: the repository's host and path, charts grouped by repository", () => {
    assert.deepEqual(gitOrigin("https://github.com/clusterra/infra.git"), { host: "github.com", path: "/clusterra/infra.git" });
    assert.throws(() => gitOrigin("git@github.com:clusterra/infra.git"), /fleet repoUrl "git@github.com:clusterra\/infra.git": the journey serves an https:\/\/<host>\/<path> repository only/);
    const o = chartOrigins(Object.values(CHARTS));
    const slinky = o.oci.find((r) => r.host === "ghcr.io");
    assert.equal(slinky?.path, "slinkyproject/charts");
    assert.deepEqual(slinky?.charts.map((c) => c.chart), ["slurm-operator-crds", "slurm-operator", "slurm"]);
    assert.deepEqual(o.helm.find((r) => r.host === "helm.mariadb.com")?.path, "/mariadb-operator");
    assert.throws(() => chartOrigins([{ chart: "x", repo: "file:///charts", version: "1" }]), /chart x: repo "file:\/\/\/charts" is neither https:\/\/ nor oci:\/\//);
  });

  it("sends the HTTPS names to one address and the registries' to another, each once", () => {
    const lines = originHostLines(fleetOrigins("https://github.com/clusterra/infra.git", Object.values(CHARTS)));
    assert.equal(lines, "127.0.2.1 github.com helm.cilium.io charts.external-secrets.io charts.jetstack.io helm.mariadb.com\n127.0.2.2 public.ecr.aws ghcr.io\n");
  });

  it("configures the registry for TLS on its address and no other listener", () => {
    assert.match(registryConfig("/r", "/c.crt", "/c.key"), /http:\n {2}addr: 127\.0\.2\.2:443\n {2}tls:\n {4}certificate: \/c\.crt\n {4}key: \/c\.key\n/);
    assert.doesNotMatch(registryConfig("/r", "/c.crt", "/c.key"), /debug|prometheus/);
  });

  it("names IP addresses and DNS names in a certificate's subjectAltName", () => {
    assert.equal(subjectAltName(["github.com", "ghcr.io"], ["127.0.2.1"]), "subjectAltName=IP:127.0.2.1,DNS:github.com,DNS:ghcr.io");
  });

  it("splits a CGI response's head from its body (CRLF or LF), with its Status", () => {
    const h = cgiHead(Buffer.from("Status: 404 Not Found\r\nContent-Type: text/plain\r\n\r\nnope"));
    assert.deepEqual([h?.status, h?.headers, h?.body.toString()], [404, [["Content-Type", "text/plain"]], "nope"]);
    assert.equal(cgiHead(Buffer.from("Content-Type: x\n\n0008NAK\n"))?.body.toString(), "0008NAK\n");
    assert.equal(cgiHead(Buffer.from("Content-Type: x\r\n")), undefined);
  });

  it("serves files under a Helm repository's folder and nothing outside it", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "origin-"));
    try {
      fs.mkdirSync(path.join(root, "mariadb-operator"));
      fs.writeFileSync(path.join(root, "mariadb-operator", "index.yaml"), "apiVersion: v1\n");
      assert.equal(fileFor(root, "/mariadb-operator/index.yaml?x=1"), path.join(root, "mariadb-operator", "index.yaml"));
      assert.equal(fileFor(root, "/../../etc/passwd"), undefined);
      assert.equal(fileFor(root, "/%2e%2e/%2e%2e/etc/passwd"), undefined);
      assert.equal(fileFor(root, "/mariadb-operator"), undefined);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it("packages External Secrets with its release's CRD templates behind installCRDs, and every other chart from its source", () => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "pack-"));
    try {
      const reference = path.join(work, "reference");
      const source = path.join(work, "external-secrets-2.9.0");
      fs.mkdirSync(path.join(source, "templates", "crds"), { recursive: true });
      fs.mkdirSync(path.join(reference, "external-secrets-chart-2.9.0"), { recursive: true });
      fs.writeFileSync(path.join(reference, "external-secrets-chart-2.9.0", "external-secrets.io_externalsecrets.yaml"), "kind: CustomResourceDefinition\n");
      const pack = externalSecretsPackaging(reference);
      const out = pack({ chart: "external-secrets", repo: "https://charts.external-secrets.io", version: "2.9.0" }, source, path.join(work, "out"));
      assert.equal(fs.readFileSync(path.join(out, "templates", "crds", "external-secrets.io_externalsecrets.yaml"), "utf8"), "{{- if .Values.installCRDs }}\nkind: CustomResourceDefinition\n{{- end }}\n");
      assert.deepEqual(fs.readdirSync(path.join(source, "templates", "crds")), []);
      assert.equal(pack({ chart: "slurm", repo: "oci://ghcr.io/slinkyproject/charts", version: "1.2.1" }, "/src/slurm", work), "/src/slurm");
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  });
});

describe("real ArgoCD's pods in the journey (pure parts)", () => {
  it("pins a listener flag to the pod's own address, keeping its port", () => {
    assert.deepEqual(pinListeners(["/usr/local/bin/argocd-applicationset-controller", "--metrics-addr=:8080", "--probe-addr=:8081", "--webhook-addr=0.0.0.0:7000", "--debug"], ["--metrics-addr", "--probe-addr", "--webhook-addr"], "127.0.3.4"),
      ["/usr/local/bin/argocd-applicationset-controller", "--metrics-addr=127.0.3.4:8080", "--probe-addr=127.0.3.4:8081", "--webhook-addr=127.0.3.4:7000", "--debug"]);
  });

  it("runs a StatefulSet's replicas side by side: each its own address, a port bound on every address moved by the ordinal, nothing else", () => {
    const args = ["/usr/local/bin/argocd-application-controller", "--metrics-port=8082", "--status-processors", "20"];
    assert.deepEqual(ordinalArgs(args, 0), args);
    // Clear of every port the chart's pods bind (argocd-server's metrics is 8083) and of the journey's
    // own (slurm-operators' metrics from 18082: a gate once saw 18082 taken by the moved port).
    assert.deepEqual(ordinalArgs(args, 1), ["/usr/local/bin/argocd-application-controller", "--metrics-port=28082", "--status-processors", "20"]);
    assert.deepEqual([1, 2, 3].map((i) => ordinalPort(8082, i)), [28082, 28182, 28282]);
    const addresses = [0, 1, 2].map((i) => statefulSetAddress(ARGOCD_PODS[2].address, i));
    assert.equal(addresses[0], ARGOCD_PODS[2].address);
    assert.equal(new Set([...addresses, ...ARGOCD_PODS.map((p) => p.address)]).size, ARGOCD_PODS.length + 2);
  });

  it("reads which clusters a controller pod caches from its metrics", () => {
    const metrics = [
      "# TYPE argocd_cluster_info gauge",
      'argocd_cluster_info{k8s_version="v1.35.4",name="in-cluster",server="https://kubernetes.default.svc"} 1',
      'argocd_cluster_info{k8s_version="v1.35.4",name="clusterra-dev-acme",server="https://10.16.12.10:6443"} 1',
      'argocd_cluster_api_resource_objects{name="in-cluster",server="https://other"} 3',
    ].join("\n");
    assert.deepEqual(cachedClusters(metrics), ["https://10.16.12.10:6443", "https://kubernetes.default.svc"]);
    assert.deepEqual(cachedClusters("# nothing cached yet\n"), []);
  });

  it("gives each Service its pod's address, every pod an address of its own", () => {
    assert.equal(serviceHostLines(), "127.0.3.1 argocd-redis\n127.0.3.2 argocd-repo-server\n127.0.3.4 argocd-applicationset-controller\n127.0.3.5 argocd-server\n");
    assert.equal(new Set(ARGOCD_PODS.map((p) => p.address)).size, ARGOCD_PODS.length);
  });

  it("resolves a container's environment as the kubelet does: values, optional and required keys, the pod's fields, $(VAR)", () => {
    const objects = { configMaps: new Map([["argocd-cmd-params-cm", { "repo.server": "argocd-repo-server:8081" }]]), secrets: new Map([["argocd-redis", { auth: Buffer.from("s3cret").toString("base64") }]]) };
    const r = containerEnv([
      { name: "NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
      { name: "REPO", valueFrom: { configMapKeyRef: { name: "argocd-cmd-params-cm", key: "repo.server", optional: true } } },
      { name: "OTLP", valueFrom: { configMapKeyRef: { name: "argocd-cmd-params-cm", key: "otlp.address", optional: true } } },
      { name: "REDIS_PASSWORD", valueFrom: { secretKeyRef: { name: "argocd-redis", key: "auth" } } },
      { name: "URL", value: "redis://:$(REDIS_PASSWORD)@$(REPO)/$$(NOT)" },
      { name: "GONE", valueFrom: { secretKeyRef: { name: "argocd-redis", key: "missing" } } },
      { name: "CPU", valueFrom: { resourceFieldRef: { resource: "limits.cpu" } } as never },
    ], objects, { name: "argocd-repo-server", namespace: "argocd", ip: "127.0.3.2" });
    assert.deepEqual(r.env, { NAMESPACE: "argocd", REPO: "argocd-repo-server:8081", REDIS_PASSWORD: "s3cret", URL: "redis://:s3cret@argocd-repo-server:8081/$(NOT)" });
    assert.deepEqual(r.missing, ["env GONE: Secret argocd-redis key missing", "env CPU: resourceFieldRef (a source the journey's pods do not resolve)"]);
    assert.equal(expandVars("--requirepass $(REDIS_PASSWORD) $(UNSET)", { REDIS_PASSWORD: "p" }), "--requirepass p $(UNSET)");
  });

  it("follows an image's links inside the image: its /var/run names its own /run, never the machine's", () => {
    const image = fs.mkdtempSync(path.join(os.tmpdir(), "image-"));
    try {
      fs.mkdirSync(path.join(image, "run"));
      fs.mkdirSync(path.join(image, "var"));
      fs.symlinkSync("/run", path.join(image, "var", "run"));
      fs.mkdirSync(path.join(image, "usr", "bin"), { recursive: true });
      fs.symlinkSync("../bin/real", path.join(image, "usr", "bin", "alias"));
      assert.equal(inImagePath(image, "/var/run/secrets/kubernetes.io/serviceaccount"), path.join(image, "run", "secrets", "kubernetes.io", "serviceaccount"));
      assert.equal(inImagePath(image, "/usr/bin/alias"), path.join(image, "usr", "bin", "real"));
      assert.equal(inImagePath(image, "/../../etc"), path.join(image, "etc"));
      fs.symlinkSync("/loop", path.join(image, "loop"));
      assert.throws(() => inImagePath(image, "/loop/x"), /too many symbolic links/);
    } finally {
      fs.rmSync(image, { recursive: true, force: true });
    }
  });
});

describe("what real ArgoCD did, as the journey reads it (pure parts)", () => {
  const app = (name: string, step: string | undefined, startedAt: string | undefined, health: string, owner = "tenants"): ApplicationObject => ({
    metadata: { name, ownerReferences: [{ kind: "ApplicationSet", name: owner }] },
    spec: { syncPolicy: { retry: {} } },
    status: { sync: { status: "Synced" }, health: { status: health }, ...(startedAt ? { operationState: { phase: health === "Healthy" ? "Succeeded" : "Failed", startedAt, message: "one or more objects failed to apply" } } : {}) },
    ...(step ? {} : {}),
  });

  it("orders a rollout by when each sync started, with RollingSync's steps, and stops at the first unhealthy step", () => {
    const set = { status: { applicationStatus: [{ application: "acme-slurm", step: "1" }, { application: "globex-slurm", step: "2" }] } };
    const r = rolloutOf(set, [app("globex-slurm", "2", undefined, "Healthy"), app("acme-slurm", "1", "2026-11-25T10:00:00Z", "Degraded"), app("other", "1", "2026-11-25T09:00:00Z", "Healthy", "entries")], "tenants", true, "2026-11-25T09:30:00Z");
    assert.deepEqual(r.entries.map((e) => [e.name, e.step, e.synced, e.healthy]), [["globex-slurm", 1, false, true], ["acme-slurm", 0, true, false]]);
    assert.equal(r.stoppedAt, 0);
    assert.equal(rolloutOf(set, [app("acme-slurm", "1", "2026-11-25T08:00:00Z", "Healthy")], "tenants", true, "2026-11-25T09:30:00Z").entries[0].synced, false);
  });

  it("places an Application at its rollout's first sync, not at a later self-heal", () => {
    const healed = { ...app("acme-cilium", "1", "2026-11-25T10:09:00Z", "Healthy"), status: { ...app("acme-cilium", "1", "2026-11-25T10:09:00Z", "Healthy").status, history: [{ deployStartedAt: "2026-11-25T10:01:00Z" }, { deployStartedAt: "2026-11-25T10:09:00Z" }] } };
    const later = app("globex-cilium", "2", "2026-11-25T10:05:00Z", "Healthy");
    const set = { status: { applicationStatus: [{ application: "acme-cilium", step: "1" }, { application: "globex-cilium", step: "2" }] } };
    assert.deepEqual(rolloutOf(set, [later, healed], "tenants", true).entries.map((e) => e.name), ["acme-cilium", "globex-cilium"]);
    assert.equal(rolloutStart(healed, "2026-11-25T10:05:00Z"), "2026-11-25T10:09:00Z");
  });

  it("reports an Application's objects, last operation and what is not healthy", () => {
    const a: ApplicationObject = {
      metadata: { name: "acme-slurm" }, spec: {},
      status: { sync: { status: "OutOfSync" }, health: { status: "Progressing" }, operationState: { phase: "Failed", message: "ConfigMap \"Not_A_Valid_Name\" is invalid", retryCount: 2 }, resources: [{ kind: "ExternalSecret", name: "slurm-key", namespace: "slurm", status: "Synced", health: { status: "Progressing", message: "Waiting for ExternalSecret" } }] },
    };
    assert.equal(applicationDetail(a), "1 objects; sync OutOfSync, health Progressing; last operation Failed after 2 retries: ConfigMap \"Not_A_Valid_Name\" is invalid; not healthy: ExternalSecret/slurm/slurm-key Progressing (Waiting for ExternalSecret)");
    assert.equal(liveApplication(a).retry, false);
  });

  it("writes the Ready condition ArgoCD's health checks read", () => {
    assert.deepEqual(readyStatus(new Date("2026-11-25T22:00:00.123Z"), "m").status.conditions, [{ type: "Ready", status: "True", reason: "Ready", message: "m", lastTransitionTime: "2026-11-25T22:00:00Z" }]);
  });
});

describe("what real ArgoCD showed of the fleet, kept", () => {
  it("keeps the tenant's slurm-operator webhook CA of the first sync in every webhook, not only the first (the chart draws a new one at each render)", async () => {
    const { TENANT_ADD_ONS } = await import("../components/fleet/application-set");
    const ignored = TENANT_ADD_ONS.find((a) => a.addon === "slurm-operator")?.ignoreDifferences ?? [];
    for (const kind of ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]) {
      const d = ignored.find((x) => x.kind === kind);
      assert.deepEqual(d?.jqPathExpressions, [".webhooks[]?.clientConfig.caBundle"], kind);
      assert.equal(d?.jsonPointers, undefined, kind);
    }
  });

  it("retries every sync on what the Application says now, so a revert heals a failing sync", async () => {
    const { syncRetry } = await import("../components/fleet/argo");
    assert.equal(syncRetry().refresh, true);
  });

  it("lets the root wait on an ApplicationSet's generation, never on its rollout; and on a CRD's acceptance, not on a stale cache's Established", async () => {
    const { argocdValues } = await import("../components/central/argocd-values");
    const cm = (argocdValues("dev").configs as { cm: Record<string, string> }).cm;
    const appset = cm["resource.customizations.health.argoproj.io_ApplicationSet"];
    assert.match(appset, /ResourcesUpToDate/);
    assert.doesNotMatch(appset, /RolloutProgressing/);
    assert.match(cm["resource.customizations.health.apiextensions.k8s.io_CustomResourceDefinition"], /NamesAccepted[\s\S]*NonStructuralSchema/);
  });

  it("has Cilium's Hubble certificates made in the cluster, not drawn anew at every render", async () => {
    const { ciliumSharedValues } = await import("../components/fleet/tenant-cluster");
    assert.deepEqual(ciliumSharedValues().hubble, { tls: { auto: { method: "cronJob" } } });
  });
});

describe("RollingSync waits on each step's ExternalSecrets (pure part)", () => {
  it("names a later step that started before an earlier step's ExternalSecret was Ready, or without it", async () => {
    const { secretsGateViolations } = await import("../journey/gitops/applications");
    const steps = new Map([["acme-control-plane-manifests", 0], ["acme-slurm", 1], ["globex-control-plane-manifests", 2]]);
    const starts = new Map([["acme-control-plane-manifests", "2026-11-25T10:00:00Z"], ["acme-slurm", "2026-11-25T10:01:00Z"], ["globex-control-plane-manifests", "2026-11-25T10:03:00Z"]]);
    const ok = [{ app: "acme-control-plane-manifests", secrets: [{ name: "tenant-acme/slurm-key", readyAt: "2026-11-25T10:00:30Z" }] }];
    assert.deepEqual(secretsGateViolations(steps, starts, ok), []);
    const late = [{ app: "acme-control-plane-manifests", secrets: [{ name: "tenant-acme/slurm-key", readyAt: "2026-11-25T10:02:00Z" }] }];
    assert.deepEqual(secretsGateViolations(steps, starts, late), ["acme-slurm (step 2) started 2026-11-25T10:01:00Z, before acme-control-plane-manifests's ExternalSecret tenant-acme/slurm-key was Ready (2026-11-25T10:02:00Z)"]);
    const never = [{ app: "acme-slurm", secrets: [{ name: "slurm/jwt", readyAt: "" }] }];
    assert.match(secretsGateViolations(steps, starts, never).join(), /globex-control-plane-manifests \(step 3\) started .*, before acme-slurm's ExternalSecret slurm\/jwt was Ready \(never\)/);
  });
});
