/**
 * The DNS of every tenant's pods on central (facts/control-plane.ts TENANT_DNS): CoreDNS that
 * answers the cluster's own names from the API server and refuses every other name. K3s's
 * packaged CoreDNS forwards what it does not hold to the VPC's resolver, so code run in a
 * tenant's pod (the tenant is SlurmUser of its slurmctld) could send data out of central one
 * query at a time, through every egress policy: the query leaves from CoreDNS, not from the
 * pod. This one has no `forward`: a name outside its zones is answered REFUSED by CoreDNS
 * itself and reaches no other server. Tenant pods are pointed at it by central's admission
 * policy (central-admission.ts), and their NetworkPolicies let DNS reach it alone.
 *
 * Its records are those of tenant namespaces only (`namespace_labels`): a tenant's pods
 * resolve their own Services; the platform's Services are no names of theirs. Port 53 without
 * a capability: the pod lowers its own network namespace's unprivileged port start (a safe
 * sysctl), so it runs as the image's non-root user with every capability dropped. Written into
 * central's fleet folder for the root Application, in the first sync wave: it serves before
 * any tenant's pod asks. Pure.
 */
import { createHash } from "crypto";
import { K3S_API_PORT } from "../../facts/contract";
import { TENANT_DNS } from "../../facts/control-plane";
import { MONITORING_NAMESPACE, NAMESPACE_NAME_LABEL, SYNC_WAVES } from "../../facts/fleet";
import { LABEL_KEYS } from "../../facts/project";

/** The central fleet file that holds it (not `tenant-*.yaml`: that is the earlier layout of tenant entries, which a write prunes). */
export const TENANT_DNS_FILE = "dns.yaml";

/** Where the pod reads its Corefile (the ConfigMap's key of that name). */
const COREFILE_DIR = "/etc/coredns";

/** CoreDNS's metrics port (its prometheus plugin's default), scraped from the monitoring namespace only. */
const METRICS_PORT = 9153;

/**
 * The Corefile: the cluster's zone, answered from the API server for tenant namespaces,
 * cached; no server block for any other zone, so CoreDNS answers REFUSED and asks no one. No
 * reverse zones: the kubernetes plugin answers a PTR for any Service or endpoint address
 * whatever `namespace_labels` says, so a tenant scanning the service range would read every
 * namespace's names; nothing a tenant's pods run needs a PTR (sshd does not ask, MariaDB runs
 * with skip-name-resolve). Pure.
 */
export function tenantDnsCorefile(): string {
  return [
    `${TENANT_DNS.domain}:${TENANT_DNS.port} {`,
    "    errors",
    "    health {",
    "        lameduck 5s",
    "    }",
    "    ready",
    `    kubernetes ${TENANT_DNS.domain} {`,
    `        namespace_labels ${LABEL_KEYS.tenant}`,
    "        ttl 30",
    "    }",
    `    prometheus :${METRICS_PORT}`,
    "    cache 30",
    "    loadbalance",
    "}",
    "",
  ].join("\n");
}

/**
 * Every object of the tenants' DNS: its namespace, identity and read-only access to the API,
 * configuration, pods, Service, and its policies: queries in from tenant namespaces, and out
 * only to central's API server at `apiServer` (the host's address, where K3s's API server
 * listens; a pod's dial to the `kubernetes` Service arrives there). A flaw in CoreDNS that a
 * tenant's query could reach would find no way out of central and no other pod. Pure.
 */
export function tenantDnsObjects(apiServer: string): Record<string, unknown>[] {
  const { namespace, name, labels } = TENANT_DNS;
  const annotations = { "argocd.argoproj.io/sync-wave": SYNC_WAVES.crds };
  const corefile = tenantDnsCorefile();
  const dnsPorts = [{ name: "dns", protocol: "UDP", port: TENANT_DNS.port }, { name: "dns-tcp", protocol: "TCP", port: TENANT_DNS.port }];
  const clusterRole = `clusterra-${name}`;
  /** One of its pods' NetworkPolicies, `<name>-<direction>`, of that direction only. */
  const policy = (direction: "ingress" | "egress", rules: Record<string, unknown>) => ({
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name: `${name}-${direction}`, namespace, annotations },
    spec: { podSelector: { matchLabels: labels }, policyTypes: [direction === "ingress" ? "Ingress" : "Egress"], ...rules },
  });
  return [
    // The strictest Pod Security level: its pod passes "restricted".
    { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace, annotations, labels: { "pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest" } } },
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace, annotations } },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: clusterRole, annotations },
      // What CoreDNS's kubernetes plugin watches without pod records: Services, EndpointSlices, namespaces.
      rules: [
        { apiGroups: [""], resources: ["services", "namespaces"], verbs: ["list", "watch"] },
        { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list", "watch"] },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: clusterRole, annotations },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: clusterRole },
      subjects: [{ kind: "ServiceAccount", name, namespace }],
    },
    { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace, annotations }, data: { Corefile: corefile } },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name, namespace, labels, annotations },
      spec: {
        replicas: TENANT_DNS.replicas,
        selector: { matchLabels: labels },
        // One replica at a time: the other answers meanwhile.
        strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
        template: {
          // A changed Corefile rolls the pods (a mounted ConfigMap would change under a running CoreDNS unread).
          metadata: { labels, annotations: { "clusterra.io/corefile-sha256": createHash("sha256").update(corefile).digest("hex") } },
          spec: {
            serviceAccountName: name,
            securityContext: {
              runAsNonRoot: true,
              runAsUser: TENANT_DNS.user,
              runAsGroup: TENANT_DNS.user,
              seccompProfile: { type: "RuntimeDefault" },
              sysctls: [{ name: "net.ipv4.ip_unprivileged_port_start", value: String(TENANT_DNS.port) }],
            },
            containers: [{
              name: "coredns",
              image: `${TENANT_DNS.image.repository}:${TENANT_DNS.image.tag}`,
              args: ["-conf", `${COREFILE_DIR}/Corefile`],
              ports: [...dnsPorts.map((p) => ({ name: p.name, protocol: p.protocol, containerPort: p.port })), { name: "metrics", protocol: "TCP", containerPort: METRICS_PORT }],
              resources: { requests: { cpu: `${TENANT_DNS.request.cpuMillis}m`, memory: `${TENANT_DNS.request.memoryMiB}Mi` }, limits: { memory: `${TENANT_DNS.memoryLimitMiB}Mi` } },
              securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] }, readOnlyRootFilesystem: true },
              livenessProbe: { httpGet: { path: "/health", port: TENANT_DNS.probes.health }, initialDelaySeconds: 60, timeoutSeconds: 5, failureThreshold: 5 },
              readinessProbe: { httpGet: { path: "/ready", port: TENANT_DNS.probes.ready } },
              volumeMounts: [{ name: "config", mountPath: COREFILE_DIR, readOnly: true }],
            }],
            volumes: [{ name: "config", configMap: { name, items: [{ key: "Corefile", path: "Corefile" }] } }],
          },
        },
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace, labels, annotations },
      spec: { clusterIP: TENANT_DNS.clusterIp, selector: labels, ports: dnsPorts.map((p) => ({ ...p, targetPort: p.port })) },
    },
    policy("ingress", {
      ingress: [
        // Queries from the tenants' namespaces only (the entry chart labels each with its tenant).
        { from: [{ namespaceSelector: { matchExpressions: [{ key: LABEL_KEYS.tenant, operator: "Exists" }] } }], ports: dnsPorts.map((p) => ({ protocol: p.protocol, port: p.port })) },
        { from: [{ namespaceSelector: { matchLabels: { [NAMESPACE_NAME_LABEL]: MONITORING_NAMESPACE } } }], ports: [{ protocol: "TCP", port: METRICS_PORT }] },
      ],
    }),
    policy("egress", { egress: [{ to: [{ ipBlock: { cidr: `${apiServer}/32` } }], ports: [{ protocol: "TCP", port: K3S_API_PORT }] }] }),
  ];
}
