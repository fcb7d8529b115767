/**
 * External Secrets, stood in (its controller calls AWS): each ExternalSecret read from the
 * journey's Secrets Manager (secrets-manager.ts) with its SecretStore's role and region, its
 * target Secret written as the controller writes it, and its status as the controller sets
 * it: Ready with SecretSynced, or not Ready with SecretSyncedError and the provider's error in
 * a Warning event, the Secret it wrote before left as it was. An ExternalSecret is read again
 * when its spec changes (a new generation) and, while it fails, on every pass.
 */
import * as crypto from "crypto";
import type { Kubectl } from "../kube/kubectl";
import { remoteValue, type SecretAnswer, type SecretsManager } from "./secrets-manager";

/** The resource `kubectl` names ExternalSecrets by, and their API version (the fleet's: components/fleet/external-secrets.ts). */
export const EXTERNAL_SECRET_RESOURCE = "externalsecrets.external-secrets.io";
const EXTERNAL_SECRET_API = "external-secrets.io/v1";

export interface ExternalSecret {
  metadata: { name: string; namespace?: string; generation?: number; uid?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    secretStoreRef: { name: string; kind?: string };
    target?: { name?: string; creationPolicy?: string; template?: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; data?: Record<string, string> } };
    data?: { secretKey: string; remoteRef: { key: string; property?: string } }[];
  };
  status?: { conditions?: { type: string; status: string; reason?: string; lastTransitionTime?: string }[] };
}

export interface TargetSecret {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: Record<string, unknown>;
  readonly stringData: Record<string, string>;
}

/** What External Secrets makes of one ExternalSecret: the Secret it writes, or why it cannot. */
export type ExternalSecretResult = { readonly secret: TargetSecret } | { readonly error: string };

/** External Secrets' reason and message when it cannot read the provider (its condition; the provider's error goes to an event). */
export const SECRET_SYNCED_ERROR = { reason: "SecretSyncedError", message: "could not get secret data from provider" } as const;
const SECRET_SYNCED = { reason: "SecretSynced", message: "secret synced" } as const;

/**
 * The Secret External Secrets would write: the template's keys (rendered: `{{ .key }}` as is,
 * `{{ .key | toJson }}` as a JSON string) or each data key; or the first provider error, as
 * the controller stops at it. `read` answers a remote key as the store's provider does. Pure
 * given `read`.
 */
export function externalSecretTarget(es: ExternalSecret, read: (key: string) => SecretAnswer): ExternalSecretResult {
  const values: Record<string, string> = {};
  for (const d of es.spec.data ?? []) {
    const answer = remoteValue(read(d.remoteRef.key), d.remoteRef.key, d.remoteRef.property);
    if ("error" in answer) return { error: `key "${d.remoteRef.key}" from ExternalSecret "${es.metadata.name}": ${answer.error}` };
    values[d.secretKey] = answer.value;
  }
  const template = es.spec.target?.template;
  const stringData = template?.data
    ? Object.fromEntries(Object.entries(template.data).map(([key, text]) => [key, text.replace(/\{\{\s*\.(\w+)\s*(\|\s*toJson\s*)?\}\}/g, (_, v: string, json?: string) => (json ? JSON.stringify(values[v] ?? "") : values[v] ?? ""))]))
    : values;
  return {
    secret: {
      apiVersion: "v1", kind: "Secret",
      metadata: {
        name: es.spec.target?.name ?? es.metadata.name, namespace: es.metadata.namespace, labels: template?.metadata?.labels ?? {}, annotations: template?.metadata?.annotations ?? {},
        // creationPolicy Owner (the default): the ExternalSecret owns its Secret, which goes with it.
        ...((es.spec.target?.creationPolicy ?? "Owner") === "Owner" && es.metadata.uid ? { ownerReferences: [{ apiVersion: EXTERNAL_SECRET_API, kind: "ExternalSecret", name: es.metadata.name, uid: es.metadata.uid, controller: true, blockOwnerDeletion: true }] } : {}),
      },
      stringData,
    },
  };
}

/** What External Secrets records as synced: `<generation>-<hash of annotations and labels>` (a change to either is read again). Pure. */
export function syncedResourceVersion(es: ExternalSecret): string {
  const hash = crypto.createHash("md5").update(JSON.stringify([es.metadata.annotations ?? {}, es.metadata.labels ?? {}])).digest("hex");
  return `${es.metadata.generation ?? 1}-${hash}`;
}

/**
 * The status External Secrets writes after a pass: its Ready condition, and once synced the
 * refresh time and the resource version it synced (`<generation>-<hash of labels and annotations>`). Pure.
 */
export function externalSecretStatus(es: ExternalSecret, result: ExternalSecretResult, now: Date): { status: Record<string, unknown> } {
  const at = now.toISOString().replace(/\.\d+Z$/, "Z");
  const ok = "secret" in result;
  // A condition keeps its transition time while its status stays.
  const was = es.status?.conditions?.find((x) => x.type === "Ready");
  const since = was && was.status === (ok ? "True" : "False") && was.lastTransitionTime ? was.lastTransitionTime : at;
  const condition = { type: "Ready", status: ok ? "True" : "False", ...(ok ? SECRET_SYNCED : SECRET_SYNCED_ERROR), lastTransitionTime: since };
  if (!ok) return { status: { conditions: [condition] } };
  return { status: { conditions: [condition], refreshTime: at, syncedResourceVersion: syncedResourceVersion(es), binding: { name: String(result.secret.metadata.name) } } };
}

/** One answer the stand-in gave: the ExternalSecret, its generation, and its error if it failed. */
export interface Answered {
  readonly generation: number;
  readonly error?: string;
  /** Nothing written yet (its store not Ready): the status is left as it was. */
  readonly unanswered?: boolean;
}

/**
 * One pass of External Secrets over a cluster: every ExternalSecret whose store is Ready and
 * that has not been synced as it is now (a new one, a new generation, changed labels or
 * annotations: its `syncedResourceVersion` behind), or whose last answer failed, is read, its
 * Secret written or its failure recorded. `answered` keeps, per ExternalSecret (its uid), what
 * it last gave; returns the `<namespace>/<name>` it answered this pass.
 */
export async function externalSecretsPass(kc: Kubectl, secretsManager: SecretsManager, answered: Map<string, Answered>): Promise<string[]> {
  const list = await kc.get<{ items: (ExternalSecret & { status?: { syncedResourceVersion?: string } })[] }>([EXTERNAL_SECRET_RESOURCE, "-A"]);
  const out: string[] = [];
  for (const es of list?.items ?? []) {
    const key = answerKey(es);
    const generation = es.metadata.generation ?? 1;
    const last = answered.get(key);
    if (last && !last.error && es.status?.syncedResourceVersion === syncedResourceVersion(es)) continue;
    const failed = (error: string) => answered.set(key, { generation, error, unanswered: true });
    type Store = { spec?: { provider?: { aws?: { region?: string; role?: string } } }; status?: { conditions?: { type: string; status: string }[] } };
    const store = await kc.get<Store>([es.spec.secretStoreRef.kind === "ClusterSecretStore" ? "clustersecretstores.external-secrets.io" : "secretstores.external-secrets.io", es.spec.secretStoreRef.name, ...(es.spec.secretStoreRef.kind === "ClusterSecretStore" ? [] : ["-n", String(es.metadata.namespace)])]);
    // A store not Ready yet: read again on the next pass that retries (its becoming Ready changes no ExternalSecret).
    if (!store?.status?.conditions?.some((x) => x.type === "Ready" && x.status === "True")) {
      failed(`SecretStore ${es.spec.secretStoreRef.name} is not ready`);
      continue;
    }
    const aws = store.spec?.provider?.aws ?? {};
    const result = externalSecretTarget(es, (id) => secretsManager.get(id, aws.region ?? "", aws.role ?? ""));
    if ("secret" in result) {
      const r = await kc.run(["apply", "--server-side", "--field-manager=external-secrets", "-f", "-"], { input: JSON.stringify(result.secret) });
      if (r.code !== 0) {
        failed(`could not write Secret ${String(result.secret.metadata.name)}: ${r.stderr.trim()}`);
        continue;
      }
    } else {
      // The same failure again: nothing new to say (the controller retries with back-off).
      if (last?.error === result.error && last.generation === generation && !last.unanswered) continue;
      await kc.run(["create", "-f", "-"], { input: JSON.stringify(failureEvent(es, result.error)) });
    }
    const patched = await kc.run(["patch", EXTERNAL_SECRET_RESOURCE, es.metadata.name, "-n", String(es.metadata.namespace), "--subresource=status", "--type=merge", "-p", JSON.stringify(externalSecretStatus(es, result, new Date()))]);
    if (patched.code !== 0) {
      failed(`could not write its status: ${patched.stderr.trim()}`);
      continue;
    }
    answered.set(key, { generation, ...("error" in result ? { error: result.error } : {}) });
    out.push(`${es.metadata.namespace}/${es.metadata.name}`);
  }
  return out;
}

/** The key `answered` keeps an ExternalSecret's answer under: its uid (one deleted and made again is a new one). Pure. */
export function answerKey(es: ExternalSecret): string {
  return es.metadata.uid ?? `${es.metadata.namespace}/${es.metadata.name}`;
}

/** The Warning event External Secrets records with the provider's error. Pure. */
export function failureEvent(es: ExternalSecret, error: string): Record<string, unknown> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  return {
    apiVersion: "v1", kind: "Event",
    metadata: { generateName: `${es.metadata.name}.`, namespace: es.metadata.namespace },
    involvedObject: { apiVersion: EXTERNAL_SECRET_API, kind: "ExternalSecret", name: es.metadata.name, namespace: es.metadata.namespace, uid: es.metadata.uid },
    type: "Warning", reason: "UpdateFailed", message: `${SECRET_SYNCED_ERROR.message}: ${error}`,
    source: { component: "external-secrets" }, firstTimestamp: now, lastTimestamp: now, count: 1,
  };
}
