/**
 * Secrets that running controllers write, which the journey's fake kubelets cannot run:
 * written by the journey once the controller that owns them is available, and listed in
 * the report. Nothing else is stood in: a Secret no running controller would write stays
 * missing, and the journey says so.
 *
 * - cert-manager: each Certificate's spec.secretName, once cert-manager is available;
 * - a controller told by flag where to keep its certificates (`--*-secret-name=<name>`,
 *   mariadb-operator's cert-controller), once its Deployment is available;
 * - Helm hook Jobs that create a Secret (argo-cd's redis-secret-init writes argocd-redis,
 *   key auth), once the Job has succeeded.
 */
import * as crypto from "crypto";
import type { Kubectl } from "./kube/kubectl";

/** Hook Jobs that write a Secret, by the Job's name suffix: the Secret and its keys. */
export const HOOK_SECRETS: readonly { jobSuffix: string; secret: string; keys: readonly string[] }[] = [
  { jobSuffix: "redis-secret-init", secret: "argocd-redis", keys: ["auth"] },
];

interface Listed<T> {
  items: T[];
}
interface Meta {
  metadata: { name: string; namespace: string };
}

async function writeSecret(kc: Kubectl, namespace: string, name: string, keys: readonly string[], out: string[]): Promise<void> {
  if (await kc.get(["secret", name, "-n", namespace])) return;
  const stringData = Object.fromEntries(keys.map((k) => [k, crypto.randomBytes(24).toString("base64")]));
  const r = await kc.run(["apply", "--server-side", "--field-manager=journey-stand-in", "-f", "-"], { input: JSON.stringify({ apiVersion: "v1", kind: "Secret", metadata: { name, namespace }, stringData }) });
  if (r.code === 0) out.push(`${namespace}/${name}`);
}

/** Writes what the available controllers would have written; returns what it wrote. */
export async function standInControllerSecrets(kc: Kubectl): Promise<string[]> {
  const out: string[] = [];
  const deployments = (await kc.get<Listed<Meta & { spec: { template: { spec: { containers: { args?: string[] }[] } } }; status?: { availableReplicas?: number } }>>(["deployments", "-A"]))?.items ?? [];
  const available = (d: { status?: { availableReplicas?: number } }) => (d.status?.availableReplicas ?? 0) > 0;
  if (deployments.some((d) => d.metadata.name === "cert-manager" && available(d))) {
    const certs = (await kc.get<Listed<Meta & { spec: { secretName: string } }>>(["certificates.cert-manager.io", "-A"]))?.items ?? [];
    for (const c of certs) await writeSecret(kc, c.metadata.namespace, c.spec.secretName, ["tls.crt", "tls.key", "ca.crt"], out);
  }
  for (const d of deployments.filter(available)) {
    for (const arg of d.spec.template.spec.containers.flatMap((c) => c.args ?? [])) {
      const m = /^--[a-z-]*secret-name=([a-z0-9.-]+)$/.exec(arg);
      if (m) await writeSecret(kc, d.metadata.namespace, m[1], ["tls.crt", "tls.key", "ca.crt"], out);
    }
  }
  const jobs = (await kc.get<Listed<Meta & { status?: { succeeded?: number } }>>(["jobs", "-A"]))?.items ?? [];
  for (const h of HOOK_SECRETS) {
    for (const j of jobs.filter((x) => x.metadata.name.endsWith(h.jobSuffix) && (x.status?.succeeded ?? 0) > 0)) await writeSecret(kc, j.metadata.namespace, h.secret, h.keys, out);
  }
  return out;
}
