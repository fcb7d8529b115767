/**
 * Helm values for the argo-cd chart (version pinned in facts/versions.ts): only what differs
 * from the chart's defaults. Every key path exists in the chart's values.yaml, and none
 * restates its default; tests check both against the reference copy.
 */
export function argocdValues(environment: string): Record<string, unknown> {
  return {
    global: {
      logging: { format: "json" },
      securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
    },
    configs: {
      cm: { "timeout.reconciliation": "180s" },
    },
    // No SSO and no notification channels on this cluster: both controllers would idle.
    dex: { enabled: false },
    notifications: { enabled: false },
    controller: { podLabels: { "clusterra.io/environment": environment } },
  };
}
