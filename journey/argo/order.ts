/**
 * The order ArgoCD applies an Application's objects in: hook phase, then sync wave, then
 * kind (Namespaces and CRDs before what uses them), then name. Pure functions.
 */

/** ArgoCD's kind order (gitops-engine); kinds not listed, custom resources among them, come last. */
export const KIND_ORDER = [
  "Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy", "PodDisruptionBudget", "ServiceAccount",
  "Secret", "SecretList", "ConfigMap", "StorageClass", "PersistentVolume", "PersistentVolumeClaim", "CustomResourceDefinition",
  "ClusterRole", "ClusterRoleList", "ClusterRoleBinding", "ClusterRoleBindingList", "Role", "RoleList", "RoleBinding",
  "RoleBindingList", "Service", "DaemonSet", "Pod", "ReplicationController", "ReplicaSet", "Deployment",
  "HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob", "IngressClass", "Ingress", "APIService",
] as const;

export type Phase = "PreSync" | "Sync" | "PostSync" | "Skip";

export interface Annotated {
  readonly kind: string;
  readonly metadata?: { name?: string; annotations?: Record<string, string> };
}

/** The phase an object syncs in: ArgoCD's hook annotation, else Helm's hook mapped as ArgoCD maps it. */
export function phaseOf(o: Annotated): Phase {
  const a = o.metadata?.annotations ?? {};
  const argo = a["argocd.argoproj.io/hook"];
  if (argo) return argo.includes("PreSync") ? "PreSync" : argo.includes("PostSync") ? "PostSync" : argo.includes("Skip") ? "Skip" : "Sync";
  const helm = a["helm.sh/hook"];
  if (!helm) return "Sync";
  // ArgoCD ignores Helm test hooks; install hooks run as PreSync/PostSync.
  if (/\btest\b|test-success|test-failure/.test(helm)) return "Skip";
  if (/pre-install|pre-upgrade|crd-install/.test(helm)) return "PreSync";
  if (/post-install|post-upgrade/.test(helm)) return "PostSync";
  return "Skip";
}

export function waveOf(o: Annotated): number {
  const w = Number(o.metadata?.annotations?.["argocd.argoproj.io/sync-wave"] ?? o.metadata?.annotations?.["helm.sh/hook-weight"] ?? 0);
  return Number.isFinite(w) ? w : 0;
}

const PHASES: Phase[] = ["PreSync", "Sync", "PostSync"];

function kindRank(kind: string): number {
  const i = (KIND_ORDER as readonly string[]).indexOf(kind);
  return i < 0 ? KIND_ORDER.length : i;
}

/** Sorted into ArgoCD's order, grouped by (phase, wave); skipped hooks left out. */
export function syncSteps<T extends Annotated>(objects: readonly T[]): { phase: Phase; wave: number; objects: T[] }[] {
  const live = objects.filter((o) => phaseOf(o) !== "Skip");
  const key = (o: T) => [PHASES.indexOf(phaseOf(o)), waveOf(o)] as const;
  const sorted = [...live].sort((a, b) => {
    const [pa, wa] = key(a);
    const [pb, wb] = key(b);
    return pa - pb || wa - wb || kindRank(a.kind) - kindRank(b.kind) || String(a.metadata?.name).localeCompare(String(b.metadata?.name));
  });
  const steps: { phase: Phase; wave: number; objects: T[] }[] = [];
  for (const o of sorted) {
    const last = steps[steps.length - 1];
    if (last && last.phase === phaseOf(o) && last.wave === waveOf(o)) last.objects.push(o);
    else steps.push({ phase: phaseOf(o), wave: waveOf(o), objects: [o] });
  }
  return steps;
}
