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
import { HARDENED_CONTAINER, TENANT_DNS, tenantDnsName } from "../../facts/control-plane";
import { LABEL_KEYS } from "../../facts/project";
import { NAMESPACE_NAME_LABEL, slinkyPodLabels, SYNC_WAVES, tenantNamespace } from "../../facts/fleet";

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

/** Every tenant's namespace (the entry chart labels each with its tenant), none of the platform's. */
export const TENANT_NAMESPACES = { matchExpressions: [{ key: LABEL_KEYS.tenant, operator: "Exists" }] } as const;

/**
 * A MutatingAdmissionPolicy on pod creation, applied in the first sync wave
 * (admissionregistration.k8s.io/v1beta1, Kubernetes 1.35); `paramKind`: the kind of object
 * each binding names for it to read. Pure.
 */
export function podPolicy(name: string, matchCondition: { name: string; expression: string }, mutation: Record<string, unknown>, paramKind?: { apiVersion: string; kind: string }): Record<string, unknown> {
  return {
    apiVersion: "admissionregistration.k8s.io/v1beta1",
    kind: "MutatingAdmissionPolicy",
    metadata: { name, annotations: { "argocd.argoproj.io/sync-wave": SYNC_WAVES.crds } },
    spec: {
      failurePolicy: "Fail",
      reinvocationPolicy: "IfNeeded",
      ...(paramKind ? { paramKind } : {}),
      matchConstraints: { resourceRules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] }] },
      matchConditions: [matchCondition],
      mutations: [mutation],
    },
  };
}

/** A binding of `policyName` to the namespaces `namespaceSelector` selects, with the object it reads (`paramRef`). Pure. */
export function podPolicyBinding(name: string, policyName: string, namespaceSelector: Record<string, unknown>, paramRef?: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: "admissionregistration.k8s.io/v1beta1",
    kind: "MutatingAdmissionPolicyBinding",
    metadata: { name, annotations: { "argocd.argoproj.io/sync-wave": SYNC_WAVES.crds } },
    spec: { policyName, ...(paramRef ? { paramRef } : {}), matchResources: { namespaceSelector } },
  };
}

/** The policy and its binding that set no privilege gain on a tenant's slurmctld and slurmdbd pods. Pure. */
export function slurmDaemonPrivilegePolicy(): Record<string, unknown>[] {
  const name = slinkyPodLabels("slurmctld");
  const [nameKey, instanceKey] = Object.keys(name);
  const components = PRIVILEGE_RESTORED_COMPONENTS.map((c) => `'${c}'`).join(", ");
  return [podPolicy(
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
  ), podPolicyBinding(SLURM_DAEMON_PRIVILEGE_POLICY, SLURM_DAEMON_PRIVILEGE_POLICY, TENANT_NAMESPACES)];
}

/** The policy that points every tenant pod's DNS at its tenant's DNS (and the stem of its bindings' names). */
export const TENANT_POD_DNS_POLICY = "clusterra-tenant-pods-own-dns";

/** The binding of TENANT_POD_DNS_POLICY to one tenant's namespace. */
export function tenantPodDnsBindingName(tenantId: string): string {
  return `${TENANT_POD_DNS_POLICY}-${tenantId}`;
}

/**
 * The resolver a tenant's pod is given (dnsPolicy None): its tenant's DNS alone, and the
 * search path and ndots the kubelet gives a ClusterFirst pod, so short names resolve as before.
 */
export const TENANT_POD_DNS = { ndots: "5" } as const;

/** Whether a pod's template names the resolver `value` (TENANT_DNS.resolverAnnotation), as CEL. Pure. */
export function resolverCondition(value: string): string {
  return `has(object.metadata.annotations) && object.metadata.annotations.exists(k, k == '${TENANT_DNS.resolverAnnotation}') && object.metadata.annotations['${TENANT_DNS.resolverAnnotation}'] == '${value}'`;
}

/** The JSON patch (CEL) that gives a pod the one nameserver `nameserver` (a CEL expression) and ClusterFirst's search path and ndots. Pure. */
export function resolverPatch(nameserver: string): string {
  const searches = `[request.namespace + '.svc.${TENANT_DNS.domain}', 'svc.${TENANT_DNS.domain}', '${TENANT_DNS.domain}']`;
  return `[JSONPatch{op: 'add', path: '/spec/dnsPolicy', value: 'None'}, JSONPatch{op: 'add', path: '/spec/dnsConfig', value: Object.spec.dnsConfig{nameservers: [${nameserver}], searches: ${searches}, options: [Object.spec.dnsConfig.options{name: 'ndots', value: '${TENANT_POD_DNS.ndots}'}]}}]`;
}

/**
 * The MutatingAdmissionPolicy that gives a tenant's pods their tenant's DNS as their only
 * resolver (components/fleet/tenant-dns.ts), whatever made the pod and whatever it asked: a
 * ClusterFirst pod would ask K3s's CoreDNS, which forwards every other name out of central
 * (and which the tenant's egress refuses). The address is the tenant's DNS Service's, read
 * from the Service itself by one binding per tenant (its namespace alone): the API server
 * allocates it, and a pod created while that Service is missing is refused (its maker
 * retries), never admitted with another resolver. Every pod template of a tenant's namespace
 * names the resolver it is made for (TENANT_DNS.resolverAnnotation); the policy takes those.
 * Pure.
 */
export function tenantPodDnsPolicy(tenantIds: readonly string[]): Record<string, unknown>[] {
  const policy = podPolicy(
    TENANT_POD_DNS_POLICY,
    // The pods whose template names this resolver: they come with the tenant's rollout of the
    // egress that reaches it. The egress is the boundary; this is the pods' configuration.
    {
      name: "made-for-its-tenants-dns",
      expression: resolverCondition(TENANT_DNS.resolver),
    },
    {
      // A JSON patch: an apply configuration may not set atomic lists (nameservers, searches, options).
      // `add` replaces what the pod asked, or adds it.
      patchType: "JSONPatch",
      jsonPatch: {
        expression: resolverPatch("params.spec.clusterIP"),
      },
    },
    { apiVersion: "v1", kind: "Service" },
  );
  return [
    policy,
    ...[...tenantIds].sort().map((id) => podPolicyBinding(tenantPodDnsBindingName(id), TENANT_POD_DNS_POLICY, { matchLabels: { [NAMESPACE_NAME_LABEL]: tenantNamespace(id) } }, { name: tenantDnsName(id), namespace: TENANT_DNS.namespace, parameterNotFoundAction: "Deny" })),
  ];
}

/** The policy that refuses a tenant's pod left with another resolver than the one its DNS policy gave it. */
export const TENANT_POD_RESOLVER_REQUIRED = "clusterra-tenant-pods-resolver-required";

/**
 * A ValidatingAdmissionPolicy (after every mutation) and its binding to every tenant's
 * namespace: a pod is admitted only with dnsPolicy None and one nameserver, what the DNS
 * policies give the pods made for a resolver. A pod made for none (a template without the
 * annotation), or in a tenant namespace central's stack has no binding for yet, is refused
 * rather than left asking K3s's CoreDNS (which its egress refuses). Pure.
 */
export function tenantPodResolverRequired(): Record<string, unknown>[] {
  const metadata = { name: TENANT_POD_RESOLVER_REQUIRED, annotations: { "argocd.argoproj.io/sync-wave": SYNC_WAVES.crds } };
  return [
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicy",
      metadata,
      spec: {
        failurePolicy: "Fail",
        matchConstraints: { resourceRules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] }] },
        validations: [{
          expression: "object.spec.dnsPolicy == 'None' && has(object.spec.dnsConfig) && has(object.spec.dnsConfig.nameservers) && size(object.spec.dnsConfig.nameservers) == 1",
          messageExpression: `"a tenant's pod asks its tenant's DNS alone: pod " + (has(object.metadata.name) && object.metadata.name != "" ? object.metadata.name : object.metadata.generateName) + " names no resolver its namespace's DNS policy gives (annotation ${TENANT_DNS.resolverAnnotation}: ${TENANT_DNS.resolver})"`,
          reason: "Forbidden",
        }],
      },
    },
    {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingAdmissionPolicyBinding",
      metadata,
      spec: { policyName: TENANT_POD_RESOLVER_REQUIRED, validationActions: ["Deny"], matchResources: { namespaceSelector: TENANT_NAMESPACES } },
    },
  ];
}
