/**
 * NetworkPolicies of ArgoCD's namespace on central, in place of the chart's (chart 10.1.1
 * admits every component's metrics from every namespace and argocd-server from anywhere; a
 * tenant's pod could read every tenant's Application names and cluster addresses there).
 * Ingress is denied by default; each component admits its peers on its own port, and its
 * metrics from the monitoring namespace only. argocd-server admits nothing but that: operators
 * reach it through a port forward (the kubelet's, inside the pod), never over the network.
 * Rendered by the chart itself (`extraObjects`), so every install of the release carries them.
 */
import { ARGOCD_CHART } from "../../facts/versions";
import { MONITORING_NAMESPACE, NAMESPACE_NAME_LABEL } from "../../facts/fleet";

/** ArgoCD's components that run on central, by the chart's component name, with the container ports (by name) others may open. */
const COMPONENTS = {
  "application-controller": { peersOn: {} },
  "repo-server": { peersOn: { "repo-server": ["server", "application-controller", "applicationset-controller"] } },
  server: { peersOn: {} },
  redis: { peersOn: { redis: ["server", "repo-server", "application-controller"] } },
  "applicationset-controller": { peersOn: {} },
} as const satisfies Record<string, { peersOn: Record<string, readonly string[]> }>;

export type ArgoCdComponent = keyof typeof COMPONENTS;
type Component = ArgoCdComponent;

/** The chart's selector labels of a component's pods. Pure. */
export function argocdPodLabels(component: Component): Record<string, string> {
  return { "app.kubernetes.io/name": `${ARGOCD_CHART.name}-${component}`, "app.kubernetes.io/instance": ARGOCD_CHART.release };
}

/** The components whose metrics endpoint the chart exposes (redis runs no exporter). */
const WITH_METRICS: readonly Component[] = ["application-controller", "repo-server", "server", "applicationset-controller"];

/** The policies, as the chart's extraObjects. Pure. */
export function argocdNetworkPolicies(): Record<string, unknown>[] {
  const policy = (name: string, spec: Record<string, unknown>) => ({ apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", metadata: { name, namespace: ARGOCD_CHART.namespace }, spec });
  const monitoring = { namespaceSelector: { matchLabels: { [NAMESPACE_NAME_LABEL]: MONITORING_NAMESPACE } } };
  return [
    policy("default-deny-ingress", { podSelector: {}, policyTypes: ["Ingress"] }),
    ...(Object.keys(COMPONENTS) as Component[]).map((c) => {
      const peers = Object.entries(COMPONENTS[c].peersOn as Record<string, readonly Component[]>).map(([port, from]) => ({
        from: from.map((p) => ({ podSelector: { matchLabels: argocdPodLabels(p) } })),
        ports: [{ protocol: "TCP", port }],
      }));
      const metrics = WITH_METRICS.includes(c) ? [{ from: [monitoring], ports: [{ protocol: "TCP", port: "metrics" }] }] : [];
      return policy(`argocd-${c}`, { podSelector: { matchLabels: argocdPodLabels(c) }, policyTypes: ["Ingress"], ingress: [...peers, ...metrics] });
    }),
  ];
}
