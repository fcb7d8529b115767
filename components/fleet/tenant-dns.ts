/**
 * Each tenant's own DNS on central (facts/control-plane.ts TENANT_DNS): CoreDNS that answers
 * the names of that tenant's namespace from the API server and refuses every other name. K3s's
 * packaged CoreDNS forwards what it does not hold to the VPC's resolver, so code run in a
 * tenant's pod (the tenant is SlurmUser of its slurmctld) could send data out of central one
 * query at a time, through every egress policy: the query leaves from CoreDNS, not from the
 * pod. This one has no `forward`: a name outside its zone is answered REFUSED by CoreDNS
 * itself and reaches no other server. Tenant pods are pointed at their own by central's
 * admission policy (central-admission.ts), and their NetworkPolicies let DNS reach it alone.
 *
 * One per tenant, in the platform's namespace (a pod in the tenant's namespace would be the
 * tenant's to run code in, with the API token CoreDNS needs): it answers one namespace
 * (`namespaces`), so a tenant can neither read nor confirm another tenant's names, and it
 * admits that namespace's queries alone, so a tenant flooding it spends its own DNS's CPU
 * limit, not another tenant's resolution. Port 53 without a capability: the pod lowers its own
 * network namespace's unprivileged port start (a safe sysctl), so it runs as the image's
 * non-root user with every capability dropped. Written into central's fleet folder for the
 * root Application, in the first sync wave, for every tenant central's stack serves: it
 * answers before any tenant's pod asks. Pure.
 */
import { createHash } from "crypto";
import { K3S_API_PORT } from "../../facts/contract";
import { TENANT_DNS, tenantDnsName } from "../../facts/control-plane";
import { MONITORING_NAMESPACE, NAMESPACE_NAME_LABEL, SYNC_WAVES, tenantNamespace } from "../../facts/fleet";
import { LABEL_KEYS } from "../../facts/project";

/** The central fleet file that holds it (not `tenant-*.yaml`: that is the earlier layout of tenant entries, which a write prunes). */
export const TENANT_DNS_FILE = "dns.yaml";

/** Where the pod reads its Corefile (the ConfigMap's key of that name). */
const COREFILE_DIR = "/etc/coredns";

/** CoreDNS's metrics port (its prometheus plugin's default), scraped from the monitoring namespace only. */
const METRICS_PORT = 9153;

/** The labels of one tenant's DNS pods: every tenant DNS's, the namespace it answers, its tenant. Pure. */
export function tenantDnsLabels(tenantId: string): Record<string, string> {
  return { ...TENANT_DNS.labels, [TENANT_DNS.answersLabel]: tenantNamespace(tenantId), [LABEL_KEYS.tenant]: tenantId };
}

/**
 * A tenant's Corefile: the cluster's zone, answered from the API server for the tenant's
 * namespace alone (any other namespace's name is NXDOMAIN), cached; no server block for any
 * other zone, so CoreDNS answers REFUSED and asks no one. No reverse zones: the kubernetes
 * plugin answers a PTR for any Service or endpoint address whatever `namespaces` says, so a
 * tenant scanning the service range would read every namespace's names; nothing a tenant's
 * pods run needs a PTR (sshd does not ask, MariaDB runs with skip-name-resolve). Pure.
 */
export function tenantDnsCorefile(tenantId: string): string {
  return corefile(`namespaces ${tenantNamespace(tenantId)}`);
}

/** A Corefile of the cluster's zone alone, its records limited by `exposed` (a kubernetes plugin setting). Pure. */
export function corefile(exposed: string): string {
  return [
    `${TENANT_DNS.domain}:${TENANT_DNS.port} {`,
    "    errors",
    "    health {",
    "        lameduck 5s",
    "    }",
    "    ready",
    `    kubernetes ${TENANT_DNS.domain} {`,
    `        ${exposed}`,
    "        ttl 30",
    "    }",
    `    prometheus :${METRICS_PORT}`,
    "    cache 30",
    "    loadbalance",
    "}",
    "",
  ].join("\n");
}

/** How one DNS server of the tenants' runs: its name, its pods' labels, its Corefile, and who may ask it. */
export interface DnsServer {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly corefile: string;
  readonly replicas: number;
  /** Its Deployment's rolling update. */
  readonly rollingUpdate: { readonly maxUnavailable: number; readonly maxSurge: number };
  /** Its container's CPU limit, millicores (none: it may take what the host has spare). */
  readonly cpuLimitMillis?: number;
  /** A Service address asked by name (none: the API server allocates one). */
  readonly clusterIp?: string;
  /** The namespaces whose pods may ask it. */
  readonly askers: Record<string, unknown>;
  /** Labels on its ConfigMap too. */
  readonly labelConfigMap: boolean;
}

/** A DNS server's ConfigMap, Deployment, Service and ingress policy in TENANT_DNS.namespace: CoreDNS as the image's non-root user, no capability, port 53 through its own sysctl. Pure. */
export function dnsServerObjects(d: DnsServer, annotations: Record<string, string>): Record<string, unknown>[] {
  const { namespace } = TENANT_DNS;
  const { name, labels } = d;
  const dnsPorts = [{ name: "dns", protocol: "UDP", port: TENANT_DNS.port }, { name: "dns-tcp", protocol: "TCP", port: TENANT_DNS.port }];
  return [
    { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace, ...(d.labelConfigMap ? { labels } : {}), annotations }, data: { Corefile: d.corefile } },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name, namespace, labels, annotations },
      spec: {
        replicas: d.replicas,
        selector: { matchLabels: labels },
        strategy: { type: "RollingUpdate", rollingUpdate: d.rollingUpdate },
        template: {
          // A changed Corefile rolls the pods (a mounted ConfigMap would change under a running CoreDNS unread).
          metadata: { labels, annotations: { "clusterra.io/corefile-sha256": createHash("sha256").update(d.corefile).digest("hex") } },
          spec: {
            serviceAccountName: TENANT_DNS.serviceAccount,
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
              resources: {
                requests: { cpu: `${TENANT_DNS.request.cpuMillis}m`, memory: `${TENANT_DNS.request.memoryMiB}Mi` },
                limits: { ...(d.cpuLimitMillis ? { cpu: `${d.cpuLimitMillis}m` } : {}), memory: `${TENANT_DNS.memoryLimitMiB}Mi` },
              },
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
      spec: { ...(d.clusterIp ? { clusterIP: d.clusterIp } : {}), selector: labels, ports: dnsPorts.map((p) => ({ ...p, targetPort: p.port })) },
    },
    {
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: { name: `${name}-ingress`, namespace, annotations },
      spec: {
        podSelector: { matchLabels: labels },
        policyTypes: ["Ingress"],
        ingress: [
          { from: [{ namespaceSelector: d.askers }], ports: dnsPorts.map((p) => ({ protocol: p.protocol, port: p.port })) },
          { from: [{ namespaceSelector: { matchLabels: { [NAMESPACE_NAME_LABEL]: MONITORING_NAMESPACE } } }], ports: [{ protocol: "TCP", port: METRICS_PORT }] },
        ],
      },
    },
  ];
}

/** The policy that lets a DNS server's pods (`labels`) out to central's API server at `apiServer` alone. Pure. */
export function dnsEgressPolicy(name: string, labels: Readonly<Record<string, string>>, apiServer: string, annotations: Record<string, string>): Record<string, unknown> {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name: `${name}-egress`, namespace: TENANT_DNS.namespace, annotations },
    spec: { podSelector: { matchLabels: labels }, policyTypes: ["Egress"], egress: [{ to: [{ ipBlock: { cidr: `${apiServer}/32` } }], ports: [{ protocol: "TCP", port: K3S_API_PORT }] }] },
  };
}

/**
 * Every object of the tenants' DNS: the namespace and its identity with read-only access to
 * the API (CoreDNS lists Services, EndpointSlices and namespaces cluster-wide, whatever it
 * answers), the policy that lets every tenant's DNS out only to central's API server at
 * `apiServer` (the host's address, where K3s's API server listens; a pod's dial to the
 * `kubernetes` Service arrives there), then each tenant's own DNS: queries from its tenant's
 * namespace alone (no other tenant may ask it, or take its CPU). A flaw in CoreDNS that a
 * tenant's query could reach would find no way out of central and no other pod. Pure.
 */
export function tenantDnsObjects(apiServer: string, tenantIds: readonly string[]): Record<string, unknown>[] {
  const { namespace, serviceAccount } = TENANT_DNS;
  const annotations = { "argocd.argoproj.io/sync-wave": SYNC_WAVES.crds };
  const clusterRole = `clusterra-${serviceAccount}`;
  return [
    // The strictest Pod Security level: its pods pass "restricted".
    { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace, annotations, labels: { "pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest" } } },
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: serviceAccount, namespace, annotations } },
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
      subjects: [{ kind: "ServiceAccount", name: serviceAccount, namespace }],
    },
    dnsEgressPolicy(TENANT_DNS.labels["app.kubernetes.io/name"], TENANT_DNS.labels, apiServer, annotations),
    ...[...tenantIds].sort().flatMap((id) => dnsServerObjects({
      name: tenantDnsName(id),
      labels: tenantDnsLabels(id),
      corefile: tenantDnsCorefile(id),
      replicas: TENANT_DNS.replicas,
      // The new pod answers before the old one goes.
      rollingUpdate: { maxUnavailable: 0, maxSurge: 1 },
      cpuLimitMillis: TENANT_DNS.cpuLimitMillis,
      askers: { matchLabels: { [NAMESPACE_NAME_LABEL]: tenantNamespace(id) } },
      labelConfigMap: true,
    }, annotations)),
  ];
}
