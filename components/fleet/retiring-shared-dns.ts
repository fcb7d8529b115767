/**
 * Retiring: the one DNS every tenant's pods asked in the release before each tenant had its own
 * (facts/control-plane.ts RETIRING_SHARED_DNS), and the admission policy that gave it to them.
 * Central's root Application syncs a release at once, but each tenant's pods are made again
 * from this release's templates only when the tenant's RollingSync wave rolls it out (canary,
 * early, general): until then they ask this DNS's address, and a pod of theirs made again from
 * that release's template (its annotation names this resolver) must still be given it. So it
 * stays, its objects as that release wrote them (ArgoCD changes nothing), until every tenant has
 * rolled this release out; the release after deletes this file's objects. Only that release's
 * egress reaches it: this release's pods reach their own tenant's DNS alone (their egress
 * selects its pods by a label this one's do not carry). Pure.
 */
import { RETIRING_SHARED_DNS } from "../../facts/control-plane";
import { SYNC_WAVES } from "../../facts/fleet";
import { LABEL_KEYS } from "../../facts/project";
import { podPolicy, podPolicyBinding, resolverCondition, resolverPatch, TENANT_NAMESPACES } from "./central-admission";
import { corefile, dnsEgressPolicy, dnsServerObjects } from "./tenant-dns";

/** The admission policy (and its binding) of the release before, by its name then. */
export const RETIRING_SHARED_DNS_POLICY = "clusterra-tenant-pods-dns";

/** The shared DNS's objects as the release before wrote them: every tenant namespace's records, asked by every tenant namespace. Pure. */
export function retiringSharedDnsObjects(apiServer: string): Record<string, unknown>[] {
  const annotations = { "argocd.argoproj.io/sync-wave": SYNC_WAVES.crds };
  const { name, labels } = RETIRING_SHARED_DNS;
  return [
    ...dnsServerObjects({
      name,
      labels,
      corefile: corefile(`namespace_labels ${LABEL_KEYS.tenant}`),
      replicas: RETIRING_SHARED_DNS.replicas,
      rollingUpdate: { maxUnavailable: 1, maxSurge: 0 },
      clusterIp: RETIRING_SHARED_DNS.clusterIp,
      askers: TENANT_NAMESPACES,
      labelConfigMap: false,
    }, annotations),
    dnsEgressPolicy(name, labels, apiServer, annotations),
  ];
}

/** The policy and binding that gave the shared DNS to the pods whose template names it (that release's). Pure. */
export function retiringSharedDnsPolicy(): Record<string, unknown>[] {
  return [
    podPolicy(
      RETIRING_SHARED_DNS_POLICY,
      { name: "made-for-the-tenants-dns", expression: resolverCondition(RETIRING_SHARED_DNS.resolver) },
      { patchType: "JSONPatch", jsonPatch: { expression: resolverPatch(`'${RETIRING_SHARED_DNS.clusterIp}'`) } },
    ),
    podPolicyBinding(RETIRING_SHARED_DNS_POLICY, RETIRING_SHARED_DNS_POLICY, TENANT_NAMESPACES),
  ];
}
