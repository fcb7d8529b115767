/**
 * The journey's server nodes, shaped like the real ones so that the real scheduler decides
 * where each pod lands: a K3s server as its user data labels it (no zone label: nothing sets
 * one without a cloud provider), with the capacity of its instance type and its kubelet's
 * max-pods. Workers are Karpenter's (kube/karpenter.ts). Pure functions.
 */
import { INSTANCE_TYPES, type InstanceTypeFacts } from "../facts/instance-types";

export interface Taint {
  readonly key: string;
  readonly value?: string;
  readonly effect: string;
}

export interface NodeShape {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly Taint[];
  readonly cpu: number;
  readonly memoryGiB: number;
  readonly pods: number;
}

/** The Node object kwok manages (selected by its annotation), Ready once kwok takes it. */
export function nodeObject(n: NodeShape): Record<string, unknown> {
  const capacity = { cpu: String(n.cpu), memory: `${n.memoryGiB}Gi`, pods: String(n.pods), "ephemeral-storage": "20Gi" };
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name: n.name, labels: n.labels, annotations: { "kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0" } },
    spec: { taints: n.taints },
    status: { capacity, allocatable: capacity, nodeInfo: { architecture: n.labels["kubernetes.io/arch"] ?? "arm64", operatingSystem: "linux", kubeletVersion: "v1.35.3+k3s1" } },
  };
}

/** A server node: the instance type's capacity, K3s's labels and the configured ones. */
export function serverNode(name: string, instanceType: string, labels: Readonly<Record<string, string>>, pods: number): NodeShape {
  const t = (INSTANCE_TYPES as Record<string, InstanceTypeFacts>)[instanceType];
  if (!t) throw new Error(`instance type ${instanceType} is not in facts/instance-types.ts`);
  return { name, labels, taints: [], cpu: t.vcpus, memoryGiB: t.memoryGiB, pods };
}
