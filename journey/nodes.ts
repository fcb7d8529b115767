/**
 * The journey's nodes, shaped like the real ones so that the real scheduler decides where
 * each pod lands: a K3s server as its user data labels it (no zone label: nothing sets one
 * without a cloud provider), with the capacity of its instance type and its kubelet's
 * max-pods; and one worker per NodePool as Karpenter would launch it (the NodePool's labels
 * and taints, the well-known labels Karpenter sets from the chosen instance type, startup
 * taints already removed as Cilium does once its agent is ready). Pure functions.
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

interface Requirement {
  readonly key: string;
  readonly operator: string;
  readonly values?: readonly string[];
}

export interface NodePoolDoc {
  readonly metadata: { name: string };
  readonly spec: { template: { metadata?: { labels?: Record<string, string> }; spec: { requirements?: Requirement[]; taints?: Taint[] } } };
}

/**
 * A worker Karpenter would launch for a NodePool, for pods that need `cpus` vCPUs: the
 * first instance type of the facts table that the NodePool's requirements admit.
 */
export function workerNode(pool: NodePoolDoc, cpus: number, zone: string, pods: number): NodeShape {
  const req = (key: string) => pool.spec.template.spec.requirements?.find((r) => r.key === key);
  const admits = (key: string, value: string) => {
    const r = req(key);
    if (!r) return true;
    if (r.operator === "In") return (r.values ?? []).includes(value);
    if (r.operator === "NotIn") return !(r.values ?? []).includes(value);
    if (r.operator === "Gt") return Number(value) > Number(r.values?.[0]);
    if (r.operator === "Lt") return Number(value) < Number(r.values?.[0]);
    return true;
  };
  const archOf = (t: InstanceTypeFacts) => (t.arch === "x86_64" ? "amd64" : "arm64");
  const match = Object.entries(INSTANCE_TYPES as Record<string, InstanceTypeFacts>).find(([name, t]) => {
    const [family, size] = name.split(".");
    const category = family.replace(/\d.*$/, "");
    const generation = family.replace(/^[a-z]+/, "").replace(/\D.*$/, "");
    return t.vcpus === cpus && size !== undefined && admits("karpenter.k8s.aws/instance-category", category) && admits("karpenter.k8s.aws/instance-generation", generation) && admits("kubernetes.io/arch", archOf(t));
  });
  if (!match) throw new Error(`no instance type in facts/instance-types.ts fits NodePool ${pool.metadata.name} with ${cpus} vCPUs`);
  const [type, t] = match;
  const family = type.split(".")[0];
  const capacityType = req("karpenter.sh/capacity-type")?.values?.[0] ?? "on-demand";
  return {
    name: `${pool.metadata.name}-${type.replace(".", "-")}`,
    labels: {
      ...(pool.spec.template.metadata?.labels ?? {}),
      "karpenter.sh/nodepool": pool.metadata.name,
      "karpenter.sh/capacity-type": capacityType,
      "karpenter.sh/registered": "true",
      "karpenter.sh/initialized": "true",
      "karpenter.k8s.aws/instance-category": family.replace(/\d.*$/, ""),
      "karpenter.k8s.aws/instance-family": family,
      "karpenter.k8s.aws/instance-generation": family.replace(/^[a-z]+/, "").replace(/\D.*$/, ""),
      "karpenter.k8s.aws/instance-cpu": String(t.vcpus),
      "karpenter.k8s.aws/instance-memory": String(t.memoryGiB * 1024),
      "node.kubernetes.io/instance-type": type,
      "topology.kubernetes.io/zone": zone,
      "topology.kubernetes.io/region": zone.replace(/[a-z]$/, ""),
      "kubernetes.io/arch": archOf(t),
      "kubernetes.io/os": "linux",
      "kubernetes.io/hostname": `${pool.metadata.name}-${type.replace(".", "-")}`,
    },
    taints: pool.spec.template.spec.taints ?? [],
    cpu: t.vcpus,
    memoryGiB: t.memoryGiB,
    pods,
  };
}
