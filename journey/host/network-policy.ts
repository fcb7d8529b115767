/**
 * A namespace's NetworkPolicies as nftables, the way K3s's network policy controller
 * (kube-router's, in the K3s binary) enforces them on the node: pods are known by address; a
 * pod some Egress policy selects opens only what an egress rule of those policies allows, a pod
 * some Ingress policy selects accepts only what an ingress rule allows; replies pass
 * (stateful). Judged where the node handles pod traffic: routed or bridged between pods
 * (`forward`, bridged frames reach it through br_netfilter, as on K3s's flannel bridge) and to
 * the node itself (`input`: its API server, the instance metadata service). Every drop is
 * counted and its flow recorded, so the journey names what was refused. Pure: objects in, text out.
 */
import { NAMESPACE_NAME_LABEL } from "../../facts/fleet";
import { DROPS } from "./nft";

export const POLICY_TABLE = "netpol";

/** Label selector as Kubernetes reads it (matchLabels and matchExpressions, ANDed). */
export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly { readonly key: string; readonly operator: string; readonly values?: readonly string[] }[];
}

interface PolicyPeer {
  readonly podSelector?: LabelSelector;
  readonly namespaceSelector?: LabelSelector;
  readonly ipBlock?: { readonly cidr: string; readonly except?: readonly string[] };
}

interface PolicyPort {
  readonly protocol?: string;
  readonly port?: number | string;
  readonly endPort?: number;
}

interface PolicyRule {
  readonly to?: readonly PolicyPeer[];
  readonly from?: readonly PolicyPeer[];
  readonly ports?: readonly PolicyPort[];
}

/** A NetworkPolicy as rendered (the fields enforcement reads). */
export interface NetworkPolicyObject {
  readonly metadata: { readonly name: string; readonly namespace?: string };
  readonly spec: {
    readonly podSelector: LabelSelector;
    readonly policyTypes?: readonly string[];
    readonly ingress?: readonly PolicyRule[];
    readonly egress?: readonly PolicyRule[];
  };
}

/** A pod on the node: its name, namespace, address and labels, and its namespace's labels (beyond its name's, which every namespace has). */
export interface PolicyPod {
  readonly name: string;
  readonly namespace: string;
  readonly address: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly namespaceLabels?: Readonly<Record<string, string>>;
}

export interface PolicyTranslation {
  readonly text: string;
  /** Pods isolated in each direction, by name. */
  readonly isolated: { readonly ingress: readonly string[]; readonly egress: readonly string[] };
  /** Parts of a policy that match nothing here, each with why. */
  readonly skipped: readonly { readonly policy: string; readonly why: string }[];
}

/** Whether a selector selects these labels (an empty selector selects everything). Pure. */
export function selects(selector: LabelSelector | undefined, labels: Readonly<Record<string, string>>): boolean {
  if (!selector) return true;
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    const inValues = has && (e.values ?? []).includes(labels[e.key]);
    const ok = e.operator === "In" ? inValues : e.operator === "NotIn" ? !inValues : e.operator === "Exists" ? has : e.operator === "DoesNotExist" ? !has : false;
    if (!ok) return false;
  }
  return true;
}

/** The policy types a policy has: as written, or as the API server defaults them (Ingress, plus Egress when it has egress rules). */
export function policyTypes(p: NetworkPolicyObject): string[] {
  if (p.spec.policyTypes && p.spec.policyTypes.length > 0) return [...p.spec.policyTypes];
  return ["Ingress", ...(p.spec.egress && p.spec.egress.length > 0 ? ["Egress"] : [])];
}


/** The addresses one peer admits: a set of pods, or a CIDR (less its exceptions). */
function peerMatch(peer: PolicyPeer, namespace: string, pods: readonly PolicyPod[], field: string): { match: string } | { why: string } {
  if (peer.ipBlock) {
    const except = peer.ipBlock.except ?? [];
    return { match: [`${field} ${peer.ipBlock.cidr}`, ...(except.length ? [`${field} != { ${except.join(", ")} }`] : [])].join(" ") };
  }
  const matched = pods.filter((p) =>
    (peer.namespaceSelector ? selects(peer.namespaceSelector, { ...p.namespaceLabels, [NAMESPACE_NAME_LABEL]: p.namespace }) : p.namespace === namespace) && selects(peer.podSelector, p.labels));
  if (matched.length === 0) return { why: `no pod on the node matches ${JSON.stringify(peer)}` };
  const addresses = [...new Set(matched.map((p) => p.address))].sort();
  return { match: `${field} ${addresses.length === 1 ? addresses[0] : `{ ${addresses.join(", ")} }`}` };
}

/** The port part of a rule's match, one per entry ("" for any port). */
function portMatches(ports: readonly PolicyPort[] | undefined): { matches: string[]; skipped: string[] } {
  if (!ports || ports.length === 0) return { matches: [""], skipped: [] };
  const matches: string[] = [];
  const skipped: string[] = [];
  for (const p of ports) {
    const proto = (p.protocol ?? "TCP").toLowerCase();
    if (p.port === undefined) matches.push(`meta l4proto ${proto}`);
    else if (typeof p.port === "string") skipped.push(`named port ${p.port}: the node's pods declare no container ports here`);
    else matches.push(`${proto} dport ${p.endPort !== undefined ? `${p.port}-${p.endPort}` : p.port}`);
  }
  return { matches, skipped };
}

/** A pod's chain name (nftables names: letters, digits, underscores). */
function chainName(direction: "ingress" | "egress", pod: PolicyPod): string {
  return `${direction}_${pod.name.replace(/[^A-Za-z0-9_]/g, "_")}`;
}

/**
 * The policies of the pods' namespaces as one `inet` table for the node the pods run on.
 * Only pods listed are known: a peer selecting pods the node does not hold admits nothing.
 */
export function networkPolicyRuleset(policies: readonly NetworkPolicyObject[], pods: readonly PolicyPod[]): PolicyTranslation {
  const skipped: { policy: string; why: string }[] = [];
  const chains: string[] = [];
  const dispatch = { forward: [] as string[], input: [] as string[] };
  const isolated = { ingress: [] as string[], egress: [] as string[] };
  for (const direction of ["egress", "ingress"] as const) {
    const type = direction === "egress" ? "Egress" : "Ingress";
    const field = direction === "egress" ? "ip daddr" : "ip saddr";
    for (const pod of pods) {
      const mine = policies.filter((p) => (p.metadata.namespace ?? pod.namespace) === pod.namespace && policyTypes(p).includes(type) && selects(p.spec.podSelector, pod.labels));
      if (mine.length === 0) continue;
      isolated[direction].push(pod.name);
      const lines: string[] = [];
      for (const policy of mine) {
        for (const rule of (direction === "egress" ? policy.spec.egress : policy.spec.ingress) ?? []) {
          const peersOf = direction === "egress" ? rule.to : rule.from;
          const peers = !peersOf || peersOf.length === 0 ? [{ match: "" }] : peersOf.map((peer) => peerMatch(peer, pod.namespace, pods, field));
          const ports = portMatches(rule.ports);
          for (const why of ports.skipped) skipped.push({ policy: policy.metadata.name, why });
          for (const peer of peers) {
            if ("why" in peer) {
              skipped.push({ policy: policy.metadata.name, why: peer.why });
              continue;
            }
            for (const port of ports.matches) lines.push(`    ${[peer.match, port].filter((m) => m !== "").join(" ")} counter return comment "${policy.metadata.name}"`);
          }
        }
      }
      const self = direction === "egress" ? "ip saddr" : "ip daddr";
      const chain = chainName(direction, pod);
      dispatch.forward.push(`    ${self} ${pod.address} jump ${chain}`);
      // What a pod sends to the node itself is its egress too; what the node sends it is never filtered (probes).
      if (direction === "egress") dispatch.input.push(`    ${self} ${pod.address} jump ${chain}`);
      chains.push(
        `  chain ${chain} {`,
        ...lines,
        `    meta l4proto { tcp, udp } add @${DROPS[direction].set} { ip saddr . ip daddr . meta l4proto . th dport }`,
        `    counter name "${DROPS[direction].counter}" drop comment "${pod.name}: ${direction} no policy allows (${mine.map((p) => p.metadata.name).join(", ")})"`,
        "  }",
      );
    }
  }
  const set = (name: string) => `  set ${name} { type ipv4_addr . ipv4_addr . inet_proto . inet_service; flags dynamic; size 4096; }`;
  const base = (hook: "forward" | "input") => [
    `  chain ${hook} {`,
    `    type filter hook ${hook} priority filter; policy accept;`,
    "    ct state established,related accept comment \"NetworkPolicies are stateful\"",
    ...dispatch[hook],
    "  }",
  ];
  const text = [
    `# NetworkPolicies of ${[...new Set(pods.map((p) => p.namespace))].join(", ")}, as K3s's network policy controller enforces them on the node.`,
    `table inet ${POLICY_TABLE} {`,
    `  counter ${DROPS.ingress.counter} { }`,
    `  counter ${DROPS.egress.counter} { }`,
    set(DROPS.ingress.set),
    set(DROPS.egress.set),
    ...base("forward"),
    ...base("input"),
    ...chains,
    "}",
    "",
  ].join("\n");
  return { text, isolated, skipped };
}
