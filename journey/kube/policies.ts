/**
 * What the operators made of the fleet's pod settings. NetworkPolicies against the pods they are meant for: a policy whose selector matches no pod
 * the operators made protects nothing (and an egress peer that matches none leaves its flow
 * closed). The journey reads the live pods and CronJob templates of each tenant namespace on
 * central, as Slinky's and mariadb-operator's real controllers labelled them.
 */

import { selects, type LabelSelector as Selector } from "../host/network-policy";

/** The parts of a NetworkPolicy the check reads. */
export interface PolicyLike {
  readonly metadata: { readonly name: string };
  readonly spec: {
    readonly podSelector?: Selector;
    readonly ingress?: readonly { readonly from?: readonly { readonly podSelector?: Selector; readonly namespaceSelector?: Selector }[] }[];
    readonly egress?: readonly { readonly to?: readonly { readonly podSelector?: Selector; readonly namespaceSelector?: Selector }[] }[];
  };
}

/** A selector as the API server keeps it: its labels and its expressions (an empty one selects every pod). */
const shown = (s: Selector) => JSON.stringify({ ...(s.matchLabels ? { matchLabels: s.matchLabels } : {}), ...(s.matchExpressions?.length ? { matchExpressions: s.matchExpressions } : {}) });

/**
 * Each selector of the policies (the policy's own pods, and peers in this namespace: a peer
 * with a namespaceSelector names pods of other namespaces, which these are not) that matches
 * none of the pods' label sets, named: labels and expressions alike, and an empty selector
 * over a namespace with no pod. Pure.
 */
export function unmatchedSelectors(policies: readonly PolicyLike[], pods: readonly Readonly<Record<string, string>>[]): string[] {
  const none = (s: Selector) => !pods.some((labels) => selects(s, labels));
  const out: string[] = [];
  for (const p of policies) {
    if (p.spec.podSelector && none(p.spec.podSelector)) out.push(`${p.metadata.name} selects no pod (${shown(p.spec.podSelector)})`);
    const peers = [...(p.spec.ingress ?? []).flatMap((r) => r.from ?? []), ...(p.spec.egress ?? []).flatMap((r) => r.to ?? [])];
    for (const peer of peers) if (!peer.namespaceSelector && peer.podSelector && none(peer.podSelector)) out.push(`${p.metadata.name}: its peer ${shown(peer.podSelector)} is no pod`);
  }
  return [...new Set(out)];
}

/**
 * The pods another part of the journey knows by labels (its name and the labels it gives it)
 * that no live pod carries: that part would enforce the namespace's policies on pods that do
 * not exist as it draws them. Pure.
 */
export function labelsNoPodCarries(known: Readonly<Record<string, Readonly<Record<string, string>>>>, pods: readonly Readonly<Record<string, string>>[]): string[] {
  return Object.entries(known)
    .filter(([, labels]) => !pods.some((p) => Object.entries(labels).every(([k, v]) => p[k] === v)))
    .map(([name, labels]) => `${name} (${Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(",")}): no live pod carries these labels`);
}

/**
 * The keys of a securityContext the fleet asked for (on the operator's custom resource) that
 * the pod template the operator made does not carry with the same value: what a container
 * runs without, though the fleet says otherwise. Pure.
 */
export function droppedSecurity(asked: Readonly<Record<string, unknown>> | undefined, made: Readonly<Record<string, unknown>> | undefined): string[] {
  return Object.entries(asked ?? {}).filter(([k, v]) => JSON.stringify(made?.[k]) !== JSON.stringify(v)).map(([k, v]) => `${k}: ${JSON.stringify(v)} asked, ${made?.[k] === undefined ? "absent" : JSON.stringify(made[k])} made`);
}
