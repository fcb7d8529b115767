/**
 * What controllers the journey cannot run write (they call AWS, or are not run here yet):
 * written by the journey once the controller that owns them is available (its Deployment,
 * by kwok), and listed in the report. Nothing else is stood in: a Secret no running
 * controller would write stays missing, and an object no available controller would make
 * Ready stays Progressing in ArgoCD's eyes, and the journey says so.
 *
 * - cert-manager: each Certificate's spec.secretName, once cert-manager is available;
 * - a controller told by flag where to keep its certificates (`--*-secret-name=<name>`,
 *   mariadb-operator's cert-controller), once its Deployment is available;
 * - mariadb-operator's kinds only where the journey has no image to run MariaDB in;
 * - the Ready condition ArgoCD's health checks wait for, on the kinds in READY_STAND_INS
 *   (EC2NodeClasses' from the tenant's plan: kube/karpenter.ts);
 * - Cilium's operator removing a node's agent-not-ready startup taint once the cilium agent's
 *   pod on it is Ready (the agent pods are kwok's on the tenant clusters).
 */
import * as crypto from "crypto";
import type { Kubectl } from "./kube/kubectl";
import { K3S_LOCAL_PATH } from "../facts/central-host";
import { TAINTS, TENANT_NAMESPACES } from "../facts/tenant-cluster";

/** The label of Cilium's agent pods (its DaemonSet's selector in the cilium chart). */
const CILIUM_AGENT_LABEL = "k8s-app=cilium";

/**
 * Cilium's operator's part: removes the agent-not-ready taint from each node whose Cilium agent
 * pod is Ready, as it does (--remove-cilium-node-taints, on by default); returns the nodes.
 */
export async function standInCiliumTaint(kc: Kubectl): Promise<string[]> {
  const key = TAINTS.ciliumNotReady.key;
  const nodes = (await kc.get<{ items: { metadata: { name: string }; spec?: { taints?: { key: string }[] } }[] }>(["nodes"]))?.items ?? [];
  const tainted = nodes.filter((n) => n.spec?.taints?.some((t) => t.key === key));
  if (!tainted.length) return [];
  const agents = (await kc.get<{ items: { spec: { nodeName?: string }; status?: { conditions?: { type: string; status: string }[] } }[] }>(["pods", "-n", TENANT_NAMESPACES.cilium, "-l", CILIUM_AGENT_LABEL]))?.items ?? [];
  const ready = new Set(agents.filter((p) => p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")).map((p) => p.spec.nodeName));
  const out: string[] = [];
  for (const n of tainted.filter((x) => ready.has(x.metadata.name))) {
    const r = await kc.run(["taint", "node", n.metadata.name, `${key}-`]);
    if (r.code === 0) out.push(`node/${n.metadata.name}`);
  }
  return out;
}

/**
 * Kinds whose controller writes a Ready condition that ArgoCD's health check (its built-in
 * Lua) waits for, and which the journey cannot run: the resource, the Deployment of the
 * controller that would write it, and why it does not run here. An ExternalSecret is made
 * Ready only once its target Secret was written (the fleet journey's External Secrets part).
 */
export interface StandIn {
  readonly resource: string;
  readonly controller: string;
  readonly why: string;
  readonly clusterScoped?: boolean;
}

export const READY_STAND_INS: readonly StandIn[] = [
  { resource: "secretstores.external-secrets.io", controller: "external-secrets", why: "External Secrets reads AWS Secrets Manager" },
  { resource: "clustersecretstores.external-secrets.io", controller: "external-secrets", why: "External Secrets reads AWS Secrets Manager", clusterScoped: true },
  { resource: "certificates.cert-manager.io", controller: "cert-manager", why: "cert-manager is not run here" },
  { resource: "issuers.cert-manager.io", controller: "cert-manager", why: "cert-manager is not run here" },
  { resource: "clusterissuers.cert-manager.io", controller: "cert-manager", why: "cert-manager is not run here", clusterScoped: true },
];

/**
 * mariadb-operator's kinds, stood in only where the journey cannot run the operator's MariaDB
 * pods (no Slurm image, by hand): with the image, the real operator writes their conditions.
 */
export const MARIADB_STAND_INS: readonly StandIn[] = ["mariadbs", "databases", "users", "grants", "backups"].map((kind) => ({
  resource: `${kind}.k8s.mariadb.com`, controller: "mariadb-operator", why: "no Slurm image to run the MariaDB pods in (scripts/install-tools makes it)",
}));

/** The status a controller writes when an object is Ready (the condition ArgoCD's health reads). Pure. */
export function readyStatus(now: Date, message: string): { status: { conditions: { type: string; status: string; reason: string; message: string; lastTransitionTime: string }[] } } {
  return { status: { conditions: [{ type: "Ready", status: "True", reason: "Ready", message, lastTransitionTime: now.toISOString().replace(/\.\d+Z$/, "Z") }] } };
}

/** Marks Ready each object of `resource` that has no Ready condition yet; returns `<kind>/<namespace>/<name>` of those it marked. */
export async function markReady(kc: Kubectl, resource: string, message: string, only?: (o: Meta) => boolean): Promise<string[]> {
  const list = (await kc.get<Listed<Meta & { status?: { conditions?: { type: string; status: string }[] } }>>([resource, "-A"]))?.items ?? [];
  const out: string[] = [];
  for (const o of list) {
    if (o.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")) continue;
    if (only && !only(o)) continue;
    const where = o.metadata.namespace ? ["-n", o.metadata.namespace] : [];
    const r = await kc.run(["patch", resource, o.metadata.name, ...where, "--subresource=status", "--type=merge", "-p", JSON.stringify(readyStatus(new Date(), message))]);
    if (r.code === 0) out.push(`${resource.split(".")[0]}/${o.metadata.namespace ?? ""}/${o.metadata.name}`);
  }
  return out;
}

/** Marks Ready what the available stood-in controllers would; returns what it marked. */
export async function standInReady(kc: Kubectl, rows: readonly StandIn[] = READY_STAND_INS): Promise<string[]> {
  const deployments = (await kc.get<Listed<Meta & { status?: { availableReplicas?: number } }>>(["deployments", "-A"]))?.items ?? [];
  const available = new Set(deployments.filter((d) => (d.status?.availableReplicas ?? 0) > 0).map((d) => d.metadata.name));
  const out: string[] = [];
  for (const s of rows.filter((x) => available.has(x.controller))) out.push(...(await markReady(kc, s.resource, `journey stand-in: ${s.why}`)));
  return out;
}

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
  return out;
}

/**
 * K3s's packaged local-storage add-on: its StorageClass (default, local-path) as K3s's
 * manifest gives it. Its provisioner is stood in (`standInLocalPath`): on a server it makes a
 * folder under /var/lib/rancher/k3s/storage per claim, here a volume object bound the same way.
 */

/** The StorageClass K3s's local-storage manifest applies. Pure. */
export function localPathStorageClass(): Record<string, unknown> {
  return {
    apiVersion: "storage.k8s.io/v1",
    kind: "StorageClass",
    metadata: { name: K3S_LOCAL_PATH.storageClass, annotations: { "storageclass.kubernetes.io/is-default-class": "true" } },
    provisioner: K3S_LOCAL_PATH.provisioner,
    volumeBindingMode: "WaitForFirstConsumer",
    reclaimPolicy: "Delete",
  };
}

interface Claim {
  metadata: { name: string; namespace: string; uid: string; annotations?: Record<string, string> };
  spec: { storageClassName?: string; accessModes?: string[]; resources?: { requests?: { storage?: string } }; volumeName?: string };
  status?: { phase?: string };
}

/**
 * The volume local-path-provisioner makes for a claim the scheduler placed on a node (its
 * `selected-node` annotation): a hostPath folder on that node, bound to the claim; undefined
 * for a claim that is not local-path's to provision yet. Pure.
 */
export function localPathVolume(claim: Claim): Record<string, unknown> | undefined {
  const node = claim.metadata.annotations?.["volume.kubernetes.io/selected-node"];
  if (claim.spec.storageClassName !== K3S_LOCAL_PATH.storageClass || !node || claim.spec.volumeName || claim.status?.phase !== "Pending") return undefined;
  const name = `pvc-${claim.metadata.uid}`;
  return {
    apiVersion: "v1",
    kind: "PersistentVolume",
    metadata: { name, annotations: { "pv.kubernetes.io/provisioned-by": K3S_LOCAL_PATH.provisioner } },
    spec: {
      capacity: { storage: claim.spec.resources?.requests?.storage ?? "1Gi" },
      accessModes: claim.spec.accessModes ?? ["ReadWriteOnce"],
      persistentVolumeReclaimPolicy: "Delete",
      storageClassName: K3S_LOCAL_PATH.storageClass,
      claimRef: { apiVersion: "v1", kind: "PersistentVolumeClaim", namespace: claim.metadata.namespace, name: claim.metadata.name, uid: claim.metadata.uid },
      hostPath: { path: `${K3S_LOCAL_PATH.hostRoot}/${name}_${claim.metadata.namespace}_${claim.metadata.name}`, type: "DirectoryOrCreate" },
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: "kubernetes.io/hostname", operator: "In", values: [node] }] }] } },
    },
  };
}

/** Provisions what K3s's local-path provisioner would; returns the claims it provisioned. */
export async function standInLocalPath(kc: Kubectl): Promise<string[]> {
  const out: string[] = [];
  for (const claim of (await kc.get<Listed<Claim>>(["persistentvolumeclaims", "-A"]))?.items ?? []) {
    const pv = localPathVolume(claim);
    if (!pv) continue;
    const r = await kc.run(["create", "-f", "-"], { input: JSON.stringify(pv) });
    if (r.code === 0) out.push(`persistentvolumeclaim/${claim.metadata.namespace}/${claim.metadata.name}`);
  }
  return out;
}
