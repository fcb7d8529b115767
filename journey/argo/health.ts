/**
 * ArgoCD's built-in health of the workload kinds, waited for within a time limit, with the
 * reason a real cluster gives when it does not come: a ReplicaSet's FailedCreate (Pod
 * Security refusing the pod), a pod's FailedScheduling (no node fits). Server-side apply of
 * a refused Deployment succeeds: only its availability shows the refusal.
 */
import { waitFor } from "../kube/processes";
import type { Kubectl } from "../kube/kubectl";

export interface Health {
  readonly status: "Healthy" | "Progressing" | "Degraded" | "Missing";
  readonly reason: string;
}

const WORKLOADS = new Set(["Deployment", "StatefulSet", "DaemonSet", "Job"]);

interface Workload {
  metadata: { generation?: number; uid?: string };
  spec?: { replicas?: number; selector?: { matchLabels?: Record<string, string> } };
  status?: Record<string, number | unknown>;
}

function verdict(kind: string, w: Workload): Health | undefined {
  const s = (w.status ?? {}) as Record<string, number>;
  const want = w.spec?.replicas ?? 1;
  switch (kind) {
    case "Deployment":
      return (s.availableReplicas ?? 0) >= want && (s.updatedReplicas ?? 0) >= want ? { status: "Healthy", reason: "" } : undefined;
    case "StatefulSet":
      return (s.readyReplicas ?? 0) >= want ? { status: "Healthy", reason: "" } : undefined;
    case "DaemonSet":
      return (s.desiredNumberScheduled ?? 0) > 0 && s.numberAvailable === s.desiredNumberScheduled ? { status: "Healthy", reason: "" } : undefined;
    case "Job":
      return (s.succeeded ?? 0) > 0 ? { status: "Healthy", reason: "" } : undefined;
    default:
      return { status: "Healthy", reason: "" };
  }
}

/** Why a workload has no ready pods: the newest warning among its ReplicaSets' and pods' events. */
export async function whyNotReady(kubectl: Kubectl, kind: string, name: string, ns: string | undefined): Promise<string> {
  const events = await kubectl.get<{ items: { type: string; reason: string; message: string; involvedObject: { kind: string; name: string }; lastTimestamp?: string; eventTime?: string }[] }>(["events", ...(ns ? ["-n", ns] : ["-A"])]);
  const related = (events?.items ?? []).filter((e) => e.type === "Warning" && (e.involvedObject.name === name || e.involvedObject.name.startsWith(`${name}-`)));
  const pick = related.find((e) => e.reason === "FailedCreate") ?? related.find((e) => e.reason === "FailedScheduling") ?? related[0];
  if (pick) return `${pick.reason} (${pick.involvedObject.kind} ${pick.involvedObject.name}): ${pick.message.replace(/\s+/g, " ").slice(0, 400)}`;
  return `no ready pods for ${kind}/${name} and no warning event`;
}

/** Waits for a workload's health; a FailedCreate or FailedScheduling ends the wait early. */
export async function health(kubectl: Kubectl, kind: string, ref: string, ns: string | undefined, timeoutMs: number): Promise<Health> {
  if (!WORKLOADS.has(kind)) return { status: "Healthy", reason: "" };
  const name = ref.split("/")[1];
  let last: Workload | undefined;
  let early: string | undefined;
  const started = Date.now();
  const ok = await waitFor(async () => {
    last = await kubectl.get<Workload>([ref, ...(ns ? ["-n", ns] : [])]);
    if (!last) return undefined;
    const v = verdict(kind, last);
    if (v) return v;
    // Give the controllers a moment, then stop at the first hard refusal.
    if (Date.now() - started > 4000) {
      const why = await whyNotReady(kubectl, kind, name, ns);
      if (/^(FailedCreate|FailedScheduling)/.test(why)) {
        early = why;
        return { status: "Degraded", reason: why } as Health;
      }
    }
    return undefined;
  }, timeoutMs, 1000);
  if (ok) return ok;
  if (!last) return { status: "Missing", reason: `${ref} does not exist` };
  return { status: "Progressing", reason: early ?? (await whyNotReady(kubectl, kind, name, ns)) };
}
