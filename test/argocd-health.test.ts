import * as assert from "node:assert/strict";
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { stringify } from "yaml";
import { argocdValues, EXTERNAL_SECRET_HEALTH_KEY } from "../components/central/argocd-values";
import { PROJECT_ROOT } from "../config";

/**
 * The health checks the central stack gives argocd-cm, run by real ArgoCD v3.4.4 (its own
 * `argocd admin settings resource-overrides health`, offline: local files only) beside its
 * built-in checks on the same objects.
 */
const ARGOCD = path.join(PROJECT_ROOT, ".tools", "bin", "argocd");

function health(object: Record<string, unknown>, cm: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "argocd-health-"));
  fs.writeFileSync(path.join(dir, "object.yaml"), stringify(object));
  fs.writeFileSync(path.join(dir, "argocd-cm.yaml"), stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "argocd-cm", namespace: "argocd" }, data: cm }));
  const out = execFileSync(ARGOCD, ["admin", "settings", "resource-overrides", "health", path.join(dir, "object.yaml"), "--argocd-cm-path", path.join(dir, "argocd-cm.yaml")], {
    encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], env: { PATH: process.env.PATH, HOME: dir, KUBECONFIG: path.join(dir, "none") },
  });
  return /^STATUS: (\S+)/m.exec(out)?.[1] ?? `no status in: ${out}`;
}

const backup = (schedule: boolean, complete?: { status: string; reason: string; message: string }) => ({
  apiVersion: "k8s.mariadb.com/v1alpha1",
  kind: "Backup",
  metadata: { name: "mariadb-daily", namespace: "tenant-acme" },
  spec: { mariaDbRef: { name: "mariadb" }, ...(schedule ? { schedule: { cron: "15 2 * * *" } } : {}) },
  ...(complete ? { status: { conditions: [{ type: "Complete", lastTransitionTime: "2026-11-26T01:54:24Z", ...complete }] } } : {}),
});

const externalSecret = (generation: number, synced: string | undefined, ready?: "True" | "False") => ({
  apiVersion: "external-secrets.io/v1",
  kind: "ExternalSecret",
  metadata: { name: "slurm-auth-jwt", namespace: "tenant-acme", generation },
  spec: {},
  ...(ready ? { status: { ...(synced ? { syncedResourceVersion: synced } : {}), conditions: [{ type: "Ready", status: ready, reason: ready === "True" ? "SecretSynced" : "SecretSyncedError", message: ready === "True" ? "secret synced" : "could not get secret data from provider" }] } } : {}),
});

describe("central's ArgoCD health checks, run by real ArgoCD #end-to-end", function () {
  this.timeout(60_000);
  before(function () {
    if (fs.existsSync(ARGOCD)) return;
    if (process.env.CI) assert.fail(`${ARGOCD} is missing: CI runs scripts/install-tools first`);
    this.skip(); // run `bash scripts/install-tools`
  });
  const cm = argocdValues("dev").configs as { cm: Record<string, string> };

  it("calls a scheduled mariadb-operator Backup Healthy once scheduled, where ArgoCD's built-in check holds it Progressing until its first nightly run", () => {
    const scheduled = backup(true, { status: "False", reason: "CronJobScheduled", message: "Scheduled" });
    assert.equal(health(scheduled, {}), "Progressing");
    assert.equal(health(scheduled, cm.cm), "Healthy");
    assert.equal(health(backup(true, { status: "False", reason: "CronJobRunning", message: "Running" }), cm.cm), "Healthy");
    assert.equal(health(backup(true, { status: "True", reason: "CronJobSuccess", message: "Success" }), cm.cm), "Healthy");
  });

  it("calls a failed backup Degraded, and a Backup without the operator's report, or a one-off still running, Progressing", () => {
    assert.equal(health(backup(true, { status: "False", reason: "CronJobScheduled", message: "Failed" }), cm.cm), "Degraded");
    assert.equal(health(backup(true, { status: "False", reason: "Failed", message: "Error creating CronJob" }), cm.cm), "Degraded");
    assert.equal(health(backup(true), cm.cm), "Progressing");
    assert.equal(health(backup(false, { status: "False", reason: "JobRunning", message: "Running" }), cm.cm), "Progressing");
  });

  it("calls an ExternalSecret Healthy only once External Secrets synced the generation ArgoCD applied, where ArgoCD's built-in check reads the last generation's Ready as this one's", () => {
    const stale = externalSecret(3, "2-0a1b", "True");
    assert.equal(health(stale, {}), "Healthy");
    assert.ok(cm.cm[EXTERNAL_SECRET_HEALTH_KEY]);
    assert.equal(health(stale, cm.cm), "Progressing");
    assert.equal(health(externalSecret(3, "3-0a1b", "True"), cm.cm), "Healthy");
    // The whole number before the dash: 13 is not 1, 3 is not 30.
    assert.equal(health(externalSecret(13, "1-0a1b", "True"), cm.cm), "Progressing");
    assert.equal(health(externalSecret(3, "30-0a1b", "True"), cm.cm), "Progressing");
    assert.equal(health(externalSecret(30, "3-0a1b", "True"), cm.cm), "Progressing");
    assert.equal(health(externalSecret(3, "2-0a1b", "False"), cm.cm), "Degraded");
    assert.equal(health(externalSecret(1, undefined), cm.cm), "Progressing");
  });
});
