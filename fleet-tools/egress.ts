/**
 * `fleet check`'s egress rule for tenant namespaces on central: a tenant's pods there run code
 * the tenant controls, so each namespace must deny egress by default, and every egress its
 * NetworkPolicies allow must be one CONTROL_PLANE_EGRESS lists for that pod (its peers in the
 * namespace on their ports, the tenant's own VPC on slurmd's port, the namespace's own DNS). A
 * policy that allows more, or a pod the fleet does not know, is a problem. Pure.
 */
import { NAMESPACE_NAME_LABEL } from "../facts/fleet";
import { TENANT_DNS, CONTROL_PLANE_EGRESS, controlPlanePodLabels, type ControlPlanePod } from "../facts/control-plane";
import { SLURM_PORTS } from "../facts/contract";
import type { FleetProblem } from "./files";

interface Selector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly unknown[];
}
interface Peer {
  readonly podSelector?: Selector;
  readonly namespaceSelector?: Selector;
  readonly ipBlock?: { readonly cidr?: string; readonly except?: readonly string[] };
}
interface Port {
  readonly protocol?: string;
  readonly port?: number | string;
  readonly endPort?: number;
}
interface Policy {
  readonly metadata?: { readonly name?: string };
  readonly spec?: { readonly podSelector?: Selector; readonly policyTypes?: readonly string[]; readonly egress?: readonly { readonly to?: readonly Peer[]; readonly ports?: readonly Port[] }[] };
}

/** An object rendered into a tenant's namespace on central, with what its Application says of the tenant. */
export interface RenderedPolicy {
  readonly file: string;
  readonly application: string;
  readonly namespace: string;
  readonly kind: string;
  readonly object: Policy;
  /** The tenant VPC's CIDR, as its stack file plans it (not as the rendered values say). */
  readonly tenantCidr: string | undefined;
  /** The tenant's srun block (facts/contract.ts). */
  readonly srunBlock: { readonly from: number; readonly to: number } | undefined;
}

/** The policy types Kubernetes gives a NetworkPolicy: as listed, or Ingress plus Egress when it has an egress rule (an empty list adds none). */
function policyTypes(spec: Policy["spec"]): readonly string[] {
  return spec?.policyTypes ?? ["Ingress", ...(spec?.egress?.length ? ["Egress"] : [])];
}

const isEmpty = (s: Selector | undefined) => !s || (Object.keys(s.matchLabels ?? {}).length === 0 && (s.matchExpressions ?? []).length === 0);
const sameLabels = (a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>>) =>
  !!a && Object.keys(a).length === Object.keys(b).length && Object.entries(b).every(([k, v]) => a[k] === v);
const podOf = (s: Selector | undefined): ControlPlanePod | undefined =>
  s && !(s.matchExpressions ?? []).length ? (Object.keys(CONTROL_PLANE_EGRESS) as ControlPlanePod[]).find((p) => sameLabels(s.matchLabels, controlPlanePodLabels(p))) : undefined;
const tcp = (p: Port) => (p.protocol ?? "TCP") === "TCP";
const portLabel = (p: Port) => `${p.protocol ?? "TCP"}/${p.port}${p.endPort ? `-${p.endPort}` : ""}`;

/** Why one egress rule's peer and ports are more than `pod` (in `namespace`) may reach; empty when they are not. */
function peerProblems(pod: ControlPlanePod, namespace: string, peer: Peer, ports: readonly Port[], cidr: string | undefined, block: RenderedPolicy["srunBlock"]): string[] {
  const allowed = CONTROL_PLANE_EGRESS[pod];
  const portText = ports.map(portLabel).join(",");
  if (peer.ipBlock) {
    if (!allowed.slurmd) return [`to ${peer.ipBlock.cidr}: ${pod} may reach no address block`];
    if (!cidr || peer.ipBlock.cidr !== cidr || (peer.ipBlock.except ?? []).length) return [`to ${peer.ipBlock.cidr}${peer.ipBlock.except?.length ? ` except ${peer.ipBlock.except.join(",")}` : ""}: only the tenant's own VPC (${cidr ?? "unknown"}) is allowed`];
    return ports.every((p) => tcp(p) && Number(p.port) === SLURM_PORTS.slurmd && !p.endPort) ? [] : [`to ${cidr} on ${portText}: only TCP/${SLURM_PORTS.slurmd} (slurmd)`];
  }
  if (peer.namespaceSelector) {
    // The namespace's own DNS alone: the pods that answer this namespace (another tenant's would answer its names, and share its CPU).
    const own = { ...TENANT_DNS.labels, [TENANT_DNS.answersLabel]: namespace };
    const dns = allowed.dns && sameLabels(peer.namespaceSelector.matchLabels, { [NAMESPACE_NAME_LABEL]: TENANT_DNS.namespace }) && sameLabels(peer.podSelector?.matchLabels, own);
    if (!dns) return [`to another namespace (${JSON.stringify(peer.namespaceSelector.matchLabels ?? {})}${peer.podSelector ? ` pods ${JSON.stringify(peer.podSelector.matchLabels ?? {})}` : ""}): only ${allowed.dns ? `the namespace's own DNS (${TENANT_DNS.namespace} pods ${JSON.stringify(own)}, which forwards nothing)` : "nothing"} outside the namespace`];
    return ports.every((p) => Number(p.port) === TENANT_DNS.port && !p.endPort) ? [] : [`to its DNS on ${portText}: only port ${TENANT_DNS.port}`];
  }
  const to = podOf(peer.podSelector);
  const peers = allowed.peers.filter((p) => p.pod === to);
  if (!to || !peers.length) return [`to pods ${JSON.stringify(peer.podSelector?.matchLabels ?? {})}: not a peer of ${pod} (${allowed.peers.map((p) => p.pod).join(", ") || "none"})`];
  const fits = (p: Port) => tcp(p) && peers.some((x) => (x.port === "srun-block" ? !!block && Number(p.port) === block.from && p.endPort === block.to : Number(p.port) === x.port && !p.endPort));
  const extra = ports.filter((p) => !fits(p));
  const allowedPorts = peers.map((x) => (x.port === "srun-block" ? (block ? `${block.from}-${block.to} (the tenant's srun block)` : "the tenant's srun block") : String(x.port)));
  return extra.length ? [`to ${to} on ${extra.map(portLabel).join(",")}: ${to} is reached by ${pod} on ${allowedPorts.join(", ")} only`] : [];
}

/** Every tenant namespace's egress (from every object rendered into it) against CONTROL_PLANE_EGRESS: isolated by default, and nothing more allowed. */
export function tenantEgressProblems(objects: readonly RenderedPolicy[]): FleetProblem[] {
  const problems: FleetProblem[] = [];
  const namespaces = new Map<string, { first: RenderedPolicy; list: RenderedPolicy[] }>();
  for (const o of objects) {
    const entry = namespaces.get(o.namespace) ?? { first: o, list: [] };
    if (o.kind === "NetworkPolicy") entry.list.push(o);
    namespaces.set(o.namespace, entry);
  }
  for (const [namespace, { first, list }] of namespaces) {
    const isolated = list.some((p) => isEmpty(p.object.spec?.podSelector) && policyTypes(p.object.spec).includes("Egress") && !(p.object.spec?.egress ?? []).length);
    if (!isolated) problems.push({ file: first.file, at: `namespace ${namespace}`, reason: "its pods are not egress-isolated: no NetworkPolicy selects every pod with policyTypes Egress and no egress rule (tenant code could reach anything)" });
    for (const p of list) {
      const spec = p.object.spec ?? {};
      const rules = spec.egress ?? [];
      if (!policyTypes(spec).includes("Egress") || !rules.length) continue;
      const at = `Application/${p.application} NetworkPolicy ${namespace}/${p.object.metadata?.name ?? "?"}`;
      const pod = podOf(spec.podSelector);
      if (!pod) {
        problems.push({ file: p.file, at, reason: `allows egress to pods ${JSON.stringify(spec.podSelector?.matchLabels ?? spec.podSelector ?? {})} the fleet lists no egress for` });
        continue;
      }
      for (const [i, rule] of rules.entries()) {
        const reasons = !(rule.to ?? []).length ? ["allows every destination (no `to`)"] : !(rule.ports ?? []).length ? ["allows every port (no `ports`)"] : (rule.to ?? []).flatMap((peer) => peerProblems(pod, namespace, peer, rule.ports ?? [], p.tenantCidr, p.srunBlock));
        for (const reason of reasons) problems.push({ file: p.file, at: `${at} egress[${i}]`, reason: `${pod} ${reason}` });
      }
    }
  }
  return problems;
}
