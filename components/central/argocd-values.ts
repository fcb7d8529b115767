/**
 * Helm values for the argo-cd chart (version pinned in facts/versions.ts). Every key path
 * here exists in the chart's values.yaml; a test checks that against the reference copy.
 */
export function argocdValues(environment: string): Record<string, unknown> {
  return {
    global: {
      logging: { format: "json" },
      // Single-node K3s: no spreading, and pods stay on the host's network rules.
      securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
    },
    crds: { keep: true },
    configs: {
      cm: {
        "exec.enabled": false,
        "statusbadge.enabled": false,
        "timeout.reconciliation": "180s",
        "application.instanceLabelKey": "argocd.argoproj.io/instance",
      },
      params: {
        // Reached only through kubectl port-forward from inside the VPC; TLS stays on.
        "server.insecure": false,
      },
    },
    dex: { enabled: false },
    notifications: { enabled: false },
    server: { service: { type: "ClusterIP" } },
    controller: { replicas: 1, podLabels: { "clusterra.io/environment": environment } },
  };
}
