/**
 * The health checks the central stack gives ArgoCD, evaluated by ArgoCD itself (`argocd admin
 * settings resource-overrides health`, the binary install-tools builds: its Lua engine and
 * built-in checks, offline against a ConfigMap file).
 */
import * as assert from "node:assert/strict";
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { stringify } from "yaml";
import { argocdValues, EXTERNAL_SECRET_HEALTH_KEY, EXTERNAL_SECRET_OPEN_LIBS_KEY } from "../components/central/argocd-values";
import { PROJECT_ROOT } from "../config";

/** ArgoCD's verdict on `object` with argocd-cm holding `cm`. */
function health(argocd: string, dir: string, cm: Record<string, string>, object: Record<string, unknown>): { status: string; message: string } {
  fs.writeFileSync(path.join(dir, "cm.yaml"), stringify({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "argocd-cm", namespace: "argocd" }, data: cm }));
  fs.writeFileSync(path.join(dir, "object.yaml"), stringify(object));
  const out = execFileSync(argocd, ["admin", "settings", "resource-overrides", "health", path.join(dir, "object.yaml"), "--argocd-cm-path", path.join(dir, "cm.yaml")], { encoding: "utf8", timeout: 60_000, stdio: ["ignore", "pipe", "ignore"] });
  return { status: /^STATUS: (.*)$/m.exec(out)?.[1] ?? "", message: /^MESSAGE: (.*)$/m.exec(out)?.[1] ?? "" };
}

const externalSecret = (generation: number, synced: string | undefined, ready: "True" | "False" | undefined) => ({
  apiVersion: "external-secrets.io/v1", kind: "ExternalSecret", metadata: { name: "slurm-auth-jwt", namespace: "tenant-acme", generation }, spec: {},
  ...(ready ? { status: { ...(synced ? { syncedResourceVersion: synced } : {}), conditions: [{ type: "Ready", status: ready, reason: ready === "True" ? "SecretSynced" : "SecretSyncedError", message: ready === "True" ? "secret synced" : "could not get secret data from provider" }] } } : {}),
});

describe("ArgoCD's health of what the fleet deploys, as ArgoCD evaluates it", function () {
  this.timeout(120_000);
  let argocd: string | undefined;
  let dir = "";
  before(function () {
    // install-tools' build, never one from PATH.
    argocd = path.join(PROJECT_ROOT, ".tools", "bin", "argocd");
    if (!fs.existsSync(argocd)) {
      if (process.env.CI) throw new Error("argocd is not installed: CI runs `bash scripts/install-tools` before the tests");
      this.skip();
    }
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "argocd-health-"));
  });
  after(() => dir && fs.rmSync(dir, { recursive: true, force: true }));

  it("calls an ExternalSecret Healthy only once External Secrets synced the generation applied; its built-in check (the control) calls the stale one Healthy", () => {
    const cm = (argocdValues("dev").configs as { cm: Record<string, string> }).cm;
    const lua = { [EXTERNAL_SECRET_HEALTH_KEY]: cm[EXTERNAL_SECRET_HEALTH_KEY], [EXTERNAL_SECRET_OPEN_LIBS_KEY]: cm[EXTERNAL_SECRET_OPEN_LIBS_KEY] };
    const stale = externalSecret(3, "2-0a1b", "True");
    // The control: ArgoCD's own check reads the previous generation's Ready as this one's.
    assert.equal(health(argocd as string, dir, {}, stale).status, "Healthy");
    assert.deepEqual(health(argocd as string, dir, lua, stale), { status: "Progressing", message: "External Secrets has not synced generation 3 yet" });
    assert.equal(health(argocd as string, dir, lua, externalSecret(3, "3-0a1b", "True")).status, "Healthy");
    // Generation 13 is not 1's: the whole number before the dash.
    assert.equal(health(argocd as string, dir, lua, externalSecret(13, "1-0a1b", "True")).status, "Progressing");
    assert.deepEqual(health(argocd as string, dir, lua, externalSecret(3, "2-0a1b", "False")), { status: "Degraded", message: "could not get secret data from provider" });
    assert.equal(health(argocd as string, dir, lua, externalSecret(1, undefined, undefined)).status, "Progressing");
  });
});
