/**
 * What central's API server sets on the pods of every tenant's namespace, whatever made them:
 * mutating admission policies (evaluated in process; no webhook to call). Slinky's
 * slurm-operator v1.2.1 drops `allowPrivilegeEscalation: false` from the containers of the
 * Controller and Accounting when it builds their StatefulSets; the policy sets it back on
 * each pod as it is created, so a tenant's slurmctld and slurmdbd run with no_new_privs as the
 * fleet asks (HARDENED_CONTAINER). Pods, not the StatefulSets: the operator would fight a
 * changed StatefulSet on every reconcile, while a pod's containers never change after create.
 * Written into central's fleet folder, where the root Application applies it before any
 * operator (the first sync wave).
 */
import { HARDENED_CONTAINER, TENANT_DNS } from "../../facts/control-plane";
import { LABEL_KEYS } from "../../facts/project";
import { slinkyPodLabels, SYNC_WAVES } from "../../facts/fleet";

/** The policy (and its binding) that sets no privilege gain on a tenant's Slurm daemons. */
export const SLURM_DAEMON_PRIVILEGE_POLICY = "clusterra-slurm-daemons-no-privilege-gain";

/** The Slinky pods whose containers the operator builds without the fleet's allowPrivilegeEscalation. */
export const PRIVILEGE_RESTORED_COMPONENTS = ["slurmctld", "slurmdbd"] as const;

/** The central fleet file that holds the policies. */
export const CENTRAL_ADMISSION_FILE = "admission-policies.yaml";

/** `containers` or `initContainers` of the pod, each with allowPrivilegeEscalation as the fleet asks (CEL). Pure. */
function containersExpression(field: "containers" | "initContainers"): string {
  const value = String(HARDENED_CONTAINER.allowPrivilegeEscalation);
  return `object.spec.${field}.map(c, Object.spec.${field}{name: c.name, securityContext: Object.spec.${field}.securityContext{allowPrivilegeEscalation: ${value}}})`;
}

/**
 * A MutatingAdmissionPolicy on pod creation and its binding to every tenant's namespace (the
 * entry chart labels each with its tenant), none of the platform's, applied in the first sync
 * wave (admissionregistration.k8s.io/v1beta1, Kubernetes 1.35). Pure.
 */
function tenantPodPolicy(name: string, matchCondition: { name: string; expression: string }, mutation: Record<string, unknown>): Record<string, unknown>[] {
  const metadata = { name, annotations: { "argocd.argoproj.io/sync-wave": SYNC_WAVES.crds } };
  return [
    {
      apiVersion: "admissionregistration.k8s.io/v1beta1",
      kind: "MutatingAdmissionPolicy",
      metadata,
      spec: {
        failurePolicy: "Fail",
        reinvocationPolicy: "IfNeeded",
        matchConstraints: { resourceRules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] }] },
        matchConditions: [matchCondition],
        mutations: [mutation],
      },
    },
    {
      apiVersion: "admissionregistration.k8s.io/v1beta1",
      kind: "MutatingAdmissionPolicyBinding",
      metadata,
      spec: { policyName: name, matchResources: { namespaceSelector: { matchExpressions: [{ key: LABEL_KEYS.tenant, operator: "Exists" }] } } },
    },
  ];
}

/** The policy and its binding that set no privilege gain on a tenant's slurmctld and slurmdbd pods. Pure. */
export function slurmDaemonPrivilegePolicy(): Record<string, unknown>[] {
  const name = slinkyPodLabels("slurmctld");
  const [nameKey, instanceKey] = Object.keys(name);
  const components = PRIVILEGE_RESTORED_COMPONENTS.map((c) => `'${c}'`).join(", ");
  return tenantPodPolicy(
    SLURM_DAEMON_PRIVILEGE_POLICY,
    {
      name: "slinky-daemon",
      expression: `has(object.metadata.labels) && object.metadata.labels.exists(k, k == '${nameKey}') && object.metadata.labels['${nameKey}'] in [${components}] && object.metadata.labels.exists(k, k == '${instanceKey}') && object.metadata.labels['${instanceKey}'] == '${name[instanceKey]}'`,
    },
    {
      patchType: "ApplyConfiguration",
      applyConfiguration: {
        // Every container and init container (Slinky's sidecars are init containers); merged by name, the rest of each securityContext kept.
        expression: `Object{spec: Object.spec{containers: ${containersExpression("containers")}, ?initContainers: has(object.spec.initContainers) ? optional.of(${containersExpression("initContainers")}) : optional.none()}}`,
      },
    },
  );
}

/** The policy (and its binding) that points every tenant pod's DNS at the tenants' DNS. */
export const TENANT_POD_DNS_POLICY = "clusterra-tenant-pods-dns";

/**
 * The resolver a tenant's pod is given (dnsPolicy None): the tenants' DNS alone, and the
 * search path and ndots the kubelet gives a ClusterFirst pod, so short names resolve as before.
 */
export const TENANT_POD_DNS = { ndots: "5" } as const;

/**
 * The MutatingAdmissionPolicy and its binding that give a tenant's pods the tenants' DNS as
 * their only resolver (components/fleet/tenant-dns.ts), whatever made the pod and whatever it
 * asked: a ClusterFirst pod would ask K3s's CoreDNS, which forwards every other name out of
 * central (and which the tenant's egress refuses). Every pod template of a tenant's namespace
 * names the resolver it is made for (TENANT_DNS.resolverAnnotation); the policy takes those.
 * Pure.
 */
export function tenantPodDnsPolicy(): Record<string, unknown>[] {
  const searches = `[request.namespace + '.svc.${TENANT_DNS.domain}', 'svc.${TENANT_DNS.domain}', '${TENANT_DNS.domain}']`;
  return tenantPodPolicy(
    TENANT_POD_DNS_POLICY,
    // The pods whose template names this resolver: they come with the tenant's rollout of the
    // egress that reaches it. A pod made again from an earlier template before that rollout
    // keeps the resolver its earlier egress reaches; after it, such a pod's DNS is refused by
    // that egress, never let out. The egress is the boundary; this is the pods' configuration.
    {
      name: "made-for-the-tenants-dns",
      expression: `has(object.metadata.annotations) && object.metadata.annotations.exists(k, k == '${TENANT_DNS.resolverAnnotation}') && object.metadata.annotations['${TENANT_DNS.resolverAnnotation}'] == '${TENANT_DNS.clusterIp}'`,
    },
    {
      // A JSON patch: an apply configuration may not set atomic lists (nameservers, searches, options).
      // `add` replaces what the pod asked, or adds it.
      patchType: "JSONPatch",
      jsonPatch: {
        expression: `[JSONPatch{op: 'add', path: '/spec/dnsPolicy', value: 'None'}, JSONPatch{op: 'add', path: '/spec/dnsConfig', value: Object.spec.dnsConfig{nameservers: ['${TENANT_DNS.clusterIp}'], searches: ${searches}, options: [Object.spec.dnsConfig.options{name: 'ndots', value: '${TENANT_POD_DNS.ndots}'}]}}]`,
      },
    },
  );
}
