/**
 * Karpenter on each tenant cluster, deciding the nodes: Karpenter v1.14.1's own controllers
 * (provisioning, bin-packing, registration, consolidation) over its kwok cloud provider, built
 * by scripts/install-tools through tools/karpenter, run as the Deployment ArgoCD synced there:
 * its environment, as its ServiceAccount (the chart's RBAC), inside the sealed namespace.
 *
 * What stands in for AWS, and only that:
 * - the instance-type catalogue: facts/instance-types.ts with its on-demand prices, offered in
 *   the zones of the tenant's subnets, each type carrying the labels the AWS provider sets;
 * - the launch: kwok's provider registers the Node itself (there is no EC2 and no kubelet),
 *   under a KWOKNodeClass of the EC2NodeClass's name, which the journey makes (the mapping);
 *   the rights that takes (create Nodes, read KWOKNodeClasses) are granted beside the chart's;
 * - the EC2NodeClass's Ready condition (stand-ins.ts: the AWS provider resolves subnets,
 *   security groups and AMIs).
 * Everything else, NodePools' readiness, which pool and type a pending pod gets, the
 * NodeClaim, registration, startup taints and removing an empty node, is Karpenter's own.
 */
import * as fs from "fs";
import * as path from "path";
import { INSTANCE_TYPES, type InstanceTypeFacts } from "../../facts/instance-types";
import { INSTANCE_HOUR } from "../../facts/prices";
import { KARPENTER_LABELS, WORKER_NODE } from "../../facts/tenant-cluster";
import { serviceAccountKubeconfig, type ControllerOnCluster } from "./cluster";
import type { Kubectl } from "./kubectl";

/** The controller's Deployment and container, as the karpenter chart names them. */
export const KARPENTER_DEPLOYMENT = "karpenter";
const CONTROLLER_CONTAINER = "controller";
/** Karpenter's resources the journey reads and writes, as kubectl names them. */
export const KARPENTER_RESOURCES = { nodePools: "nodepools.karpenter.sh", nodeClaims: "nodeclaims.karpenter.sh", ec2NodeClasses: "ec2nodeclasses.karpenter.k8s.aws" } as const;
/** What the journey applies in place of AWS, by server-side apply under its own field manager. */
const APPLY = ["apply", "--server-side", "--field-manager=clusterra-journey", "-f"] as const;
/** The group and kind of the kwok provider's NodeClass. */
const KWOK_NODE_CLASS = { resource: "kwoknodeclasses.karpenter.kwok.sh", apiVersion: "karpenter.kwok.sh/v1alpha1", kind: "KWOKNodeClass" } as const;
/** The ClusterRole (and its binding) for what the kwok provider does in place of EC2 and the kubelet. */
const KWOK_LAUNCH_ROLE = "journey-karpenter-kwok-launch";

/** One instance type as Karpenter's kwok provider reads its catalogue file (kwok/cloudprovider/helpers.go). */
export interface KwokInstanceType {
  readonly name: string;
  readonly architecture: "amd64" | "arm64";
  readonly operatingSystems: readonly string[];
  readonly resources: Readonly<Record<string, string>>;
  readonly offerings: readonly { readonly Price: number; readonly Available: boolean; readonly Requirements: readonly { key: string; operator: "In"; values: string[] }[] }[];
}

/** The labels the AWS provider gives an instance type (category, family, generation, vCPUs, MiB), read off its name and facts. Pure. */
export function awsInstanceLabels(name: string, t: InstanceTypeFacts): Record<string, string> {
  const family = name.split(".")[0];
  return {
    [KARPENTER_LABELS.category]: family.replace(/\d.*$/, ""),
    [KARPENTER_LABELS.family]: family,
    [KARPENTER_LABELS.generation]: family.replace(/^[a-z]+/, "").replace(/\D.*$/, ""),
    [KARPENTER_LABELS.cpu]: String(t.vcpus),
    [KARPENTER_LABELS.memory]: String(t.memoryGiB * 1024),
  };
}

/**
 * The catalogue Karpenter chooses from: every type of facts/instance-types.ts, on-demand at its
 * listed price in each of `zones`, with the AWS provider's labels as offering requirements (so
 * NodePool requirements on them select, and the node carries them), its memory less the
 * hypervisor share the AWS provider assumes, and the EC2NodeClass's pods and root volume. Pure.
 */
export function instanceTypeCatalogue(zones: readonly string[]): KwokInstanceType[] {
  return Object.entries(INSTANCE_TYPES as Record<string, InstanceTypeFacts>).map(([name, t]) => {
    const labels = Object.entries(awsInstanceLabels(name, t)).map(([key, value]) => ({ key, operator: "In" as const, values: [value] }));
    const price = (INSTANCE_HOUR as Record<string, { usd: number }>)[name].usd;
    return {
      name,
      architecture: t.arch === "x86_64" ? "amd64" : "arm64",
      operatingSystems: ["linux"],
      resources: {
        cpu: String(t.vcpus),
        memory: `${Math.floor(t.memoryGiB * 1024 * (1 - WORKER_NODE.vmMemoryOverheadPercent))}Mi`,
        pods: String(WORKER_NODE.maxPods),
        "ephemeral-storage": `${WORKER_NODE.rootVolumeGiB}Gi`,
      },
      offerings: zones.map((zone) => ({
        Price: price,
        Available: true,
        Requirements: [{ key: KARPENTER_LABELS.capacityType, operator: "In" as const, values: ["on-demand"] }, { key: "topology.kubernetes.io/zone", operator: "In" as const, values: [zone] }, ...labels],
      })),
    };
  });
}

interface EnvVar {
  readonly name: string;
  readonly value?: string;
  readonly valueFrom?: { fieldRef?: { fieldPath: string }; resourceFieldRef?: { resource: string; divisor?: string } };
}

/** A quantity in units of `divisor` ("1m", "1", "0" meaning 1), rounded up as the kubelet rounds a resourceFieldRef. Pure. */
export function quantityIn(quantity: string, divisor = "1"): number {
  const unit = (q: string): number => {
    const m = /^(\d+(?:\.\d+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/.exec(q);
    if (!m) throw new Error(`not a quantity: ${q}`);
    const scale: Record<string, number> = { "": 1, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4 };
    return Number(m[1]) * scale[m[2] ?? ""];
  };
  return Math.ceil(unit(quantity) / (divisor === "0" ? 1 : unit(divisor)));
}

/**
 * The controller's environment as the kubelet would give it from the Deployment: literal
 * values, its namespace, its own requests and limits; what the journey cannot resolve is
 * named. Pure.
 */
export function controllerEnv(env: readonly EnvVar[], namespace: string, resources: { requests?: Record<string, string>; limits?: Record<string, string> }): { env: Record<string, string>; unresolved: string[] } {
  const out: Record<string, string> = {};
  const unresolved: string[] = [];
  for (const e of env) {
    if (e.value !== undefined) out[e.name] = e.value;
    else if (e.valueFrom?.fieldRef?.fieldPath === "metadata.namespace") out[e.name] = namespace;
    else if (e.valueFrom?.resourceFieldRef) {
      const [kind, resource] = e.valueFrom.resourceFieldRef.resource.split(".");
      const q = (kind === "limits" ? resources.limits : resources.requests)?.[resource];
      if (q) out[e.name] = String(quantityIn(q, e.valueFrom.resourceFieldRef.divisor));
      else unresolved.push(`${e.name} (${e.valueFrom.resourceFieldRef.resource} not set)`);
    } else unresolved.push(e.name);
  }
  return { env: out, unresolved };
}

interface Deployment {
  spec: { template: { spec: { serviceAccountName?: string; containers: { name: string; env?: EnvVar[]; resources?: { requests?: Record<string, string>; limits?: Record<string, string> } }[] } } };
}

/** An EC2NodeClass's kubelet settings, as far as they reserve a node's resources. */
export interface KubeletSettings {
  readonly kubeReserved?: Readonly<Record<string, string>>;
  readonly systemReserved?: Readonly<Record<string, string>>;
  readonly evictionHard?: Readonly<Record<string, string>>;
}

/**
 * What the AWS provider keeps off a node's allocatable from an EC2NodeClass's kubelet settings,
 * as tools/karpenter reads it (cloudprovider.InstanceTypeOverhead): the reservations, and each
 * hard eviction threshold given as a quantity (`memory.available` -> memory); a percentage or a
 * signal it cannot map is named. Pure.
 */
export function kubeletOverhead(kubelet: KubeletSettings | undefined): { overhead: Record<string, Record<string, string>>; problems: string[] } {
  const signals: Record<string, string> = { "memory.available": "memory", "nodefs.available": "ephemeral-storage" };
  const problems: string[] = [];
  const eviction: Record<string, string> = {};
  for (const [signal, value] of Object.entries(kubelet?.evictionHard ?? {})) {
    if (!signals[signal] || value.endsWith("%")) problems.push(`evictionHard ${signal}: ${value} (only a quantity of ${Object.keys(signals).join(" or ")} is mapped)`);
    else eviction[signals[signal]] = value;
  }
  return { overhead: { KubeReserved: { ...(kubelet?.kubeReserved ?? {}) }, SystemReserved: { ...(kubelet?.systemReserved ?? {}) }, EvictionThreshold: eviction }, problems };
}

/** The rights the kwok provider needs beyond the chart's: it makes the Node (no kubelet) and reads its NodeClass. Pure. */
export function kwokLaunchRbac(namespace: string, account: string): Record<string, unknown>[] {
  const meta = { name: KWOK_LAUNCH_ROLE, labels: { "app.kubernetes.io/managed-by": "clusterra-journey" } };
  return [
    { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: meta, rules: [{ apiGroups: [""], resources: ["nodes"], verbs: ["create"] }, { apiGroups: ["karpenter.kwok.sh"], resources: ["kwoknodeclasses"], verbs: ["get", "list", "watch"] }] },
    { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding", metadata: meta, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: KWOK_LAUNCH_ROLE }, subjects: [{ kind: "ServiceAccount", name: account, namespace }] },
  ];
}

/** Starts Karpenter where ArgoCD synced its Deployment; a reason when it cannot. */
export async function startKarpenter(o: ControllerOnCluster & {
  /** The zones of the tenant's subnets (the offerings). */
  readonly zones: readonly string[];
}): Promise<{ process?: string; problem?: string; detail?: string; wait?: string }> {
  const d = await o.kc.get<Deployment>(["deployment", KARPENTER_DEPLOYMENT, "-n", o.namespace]);
  const container = d?.spec.template.spec.containers.find((c) => c.name === CONTROLLER_CONTAINER);
  if (!d || !container) return { problem: `no Deployment ${o.namespace}/${KARPENTER_DEPLOYMENT} with a container ${CONTROLLER_CONTAINER} on ${o.cluster.name}` };
  const { env, unresolved } = controllerEnv(container.env ?? [], o.namespace, container.resources ?? {});
  if (unresolved.length) return { problem: `the controller's environment names what the journey cannot resolve: ${unresolved.join(", ")}` };
  // The nodes' reservations, from the fleet's EC2NodeClass (one kubelet setting for every type).
  const classes = (await o.kc.get<{ items: { metadata: { name: string }; spec: { kubelet?: KubeletSettings } }[] }>([KARPENTER_RESOURCES.ec2NodeClasses]))?.items ?? [];
  if (!classes.length) return { wait: "no EC2NodeClass synced yet" };
  const settings = [...new Set(classes.map((c) => JSON.stringify(c.spec.kubelet ?? {})))];
  if (settings.length > 1) return { problem: `EC2NodeClasses ${classes.map((c) => c.metadata.name).join(", ")} differ in their kubelet settings; the journey's provider reserves one set for every node` };
  const { overhead, problems } = kubeletOverhead(classes[0].spec.kubelet);
  if (problems.length) return { problem: `EC2NodeClass ${classes[0].metadata.name}: ${problems.join("; ")}` };
  const account = d.spec.template.spec.serviceAccountName ?? "default";
  const crd = await o.kc.run([...APPLY, o.tools.karpenterKwokCrd]);
  const rbac = await o.kc.run([...APPLY, "-"], { input: JSON.stringify({ apiVersion: "v1", kind: "List", items: kwokLaunchRbac(o.namespace, account) }) });
  if (crd.code !== 0 || rbac.code !== 0) return { problem: `the kwok provider's NodeClass or rights not applied: ${crd.stderr.trim()} ${rbac.stderr.trim()}`.trim() };
  const { kubeconfig, problem } = await serviceAccountKubeconfig(o.kc, o.cluster, o.namespace, account, "karpenter.kubeconfig");
  if (!kubeconfig) return { problem };
  const catalogue = instanceTypeCatalogue(o.zones);
  const file = path.join(o.cluster.dir, "karpenter-instance-types.json");
  fs.writeFileSync(file, JSON.stringify(catalogue, null, 2));
  const name = `${o.cluster.name}-karpenter`;
  // The Deployment's environment, its ports moved to the journey's, the catalogue and the
  // ServiceAccount's kubeconfig added; nothing else of the machine's environment but PATH. In
  // its pod the leader-election Lease's namespace is read from the ServiceAccount's mounted
  // namespace file: outside one it is given, the same namespace.
  o.processes.start(name, o.tools.karpenter, [], {
    PATH: process.env.PATH, ...env, CLUSTERRA_KUBELET_OVERHEAD: JSON.stringify(overhead), LEADER_ELECTION_NAMESPACE: o.namespace, METRICS_PORT: String(o.port), HEALTH_PROBE_PORT: String(o.port + 1), INSTANCE_TYPES_FILE_PATH: file, KUBECONFIG: kubeconfig,
  });
  return { process: name, detail: `${catalogue.length} instance types in ${o.zones.join(", ")}, each node keeping ${Object.entries(overhead).map(([k, v]) => `${k} ${Object.entries(v).map(([r, q]) => `${r} ${q}`).join(" ") || "none"}`).join(", ")} (EC2NodeClass ${classes[0].metadata.name}); as ${o.namespace}/${account}` };
}

/**
 * The mapping: a KWOKNodeClass for each EC2NodeClass the fleet synced (kwok's provider launches
 * under it); returns those made.
 */
export async function mapNodeClasses(kc: Kubectl): Promise<string[]> {
  const ec2 = (await kc.get<{ items: { metadata: { name: string } }[] }>([KARPENTER_RESOURCES.ec2NodeClasses]))?.items ?? [];
  const kwok = new Set(((await kc.get<{ items: { metadata: { name: string } }[] }>([KWOK_NODE_CLASS.resource]))?.items ?? []).map((x) => x.metadata.name));
  const made: string[] = [];
  for (const c of ec2.filter((x) => !kwok.has(x.metadata.name))) {
    const r = await kc.run([...APPLY, "-"], { input: JSON.stringify({ apiVersion: KWOK_NODE_CLASS.apiVersion, kind: KWOK_NODE_CLASS.kind, metadata: { name: c.metadata.name }, spec: {} }) });
    if (r.code === 0) made.push(c.metadata.name);
  }
  return made;
}

/** A NodeClaim as the step reads it. */
export interface NodeClaim {
  readonly metadata: { readonly name: string; readonly creationTimestamp?: string; readonly labels?: Readonly<Record<string, string>> };
  readonly status?: { readonly nodeName?: string; readonly conditions?: readonly { type: string; status: string }[] };
}

/** The NodeClaim that names `node` as the node launched for it, if one does. Pure. */
export function claimFor(claims: readonly NodeClaim[], node: string): NodeClaim | undefined {
  return claims.find((c) => c.status?.nodeName === node);
}

/** The NodeClaim Karpenter launched the node `node` for, if it did. */
export async function launchedFor(kc: Kubectl, node: string): Promise<NodeClaim | undefined> {
  return claimFor((await kc.get<{ items: NodeClaim[] }>([KARPENTER_RESOURCES.nodeClaims]))?.items ?? [], node);
}

/** A planned resource as the journey reads it. */
interface Planned {
  readonly type: string;
  readonly inputs: Record<string, unknown>;
}

interface Ec2NodeClassSpec {
  readonly subnetSelectorTerms?: readonly { tags?: Record<string, string> }[];
  readonly securityGroupSelectorTerms?: readonly { tags?: Record<string, string> }[];
  readonly instanceProfile?: string;
}

const tagged = (r: Planned, terms: readonly { tags?: Record<string, string> }[] | undefined) =>
  (terms ?? []).some((t) => t.tags && Object.entries(t.tags).every(([k, v]) => (r.inputs.tags as Record<string, string> | undefined)?.[k] === v || (v === "*" && (r.inputs.tags as Record<string, string> | undefined)?.[k] !== undefined)));

/**
 * What the AWS provider's EC2NodeClass controller would find for a node class in the tenant's
 * account, as its plan makes it: the subnets and security groups its selector terms match by
 * tag, and its instance profile. Ready only when each is found (its conditions' reasons); the
 * zones are the matched subnets'. AMIs (public SSM parameters) are not the plan's to hold. Pure.
 */
export function ec2NodeClassFindings(spec: Ec2NodeClassSpec, planned: readonly Planned[]): { ready: boolean; reason: string; message: string; zones: string[] } {
  const subnets = planned.filter((r) => r.type === "aws:ec2/subnet:Subnet" && tagged(r, spec.subnetSelectorTerms));
  const groups = planned.filter((r) => r.type === "aws:ec2/securityGroup:SecurityGroup" && tagged(r, spec.securityGroupSelectorTerms));
  const profile = planned.some((r) => r.type === "aws:iam/instanceProfile:InstanceProfile" && r.inputs.name === spec.instanceProfile);
  const zones = [...new Set(subnets.map((s) => String(s.inputs.availabilityZone)))].sort();
  if (!subnets.length) return { ready: false, reason: "SubnetsNotFound", message: "SubnetSelector did not match any Subnets", zones };
  if (!groups.length) return { ready: false, reason: "SecurityGroupsNotFound", message: "SecurityGroupSelector did not match any SecurityGroups", zones };
  if (!profile) return { ready: false, reason: "InstanceProfileNotFound", message: `instance profile ${spec.instanceProfile ?? "(none)"} not found`, zones };
  return { ready: true, reason: "Ready", message: `${subnets.length} subnets (${zones.join(", ")}), ${groups.length} security groups, instance profile ${spec.instanceProfile}`, zones };
}

/** Writes each EC2NodeClass's Ready condition from what the plan holds (the AWS provider's part); returns `<name>: <reason>` of those it wrote. */
export async function resolveNodeClasses(kc: Kubectl, planned: readonly Planned[]): Promise<string[]> {
  const classes = (await kc.get<{ items: { metadata: { name: string }; spec: Ec2NodeClassSpec; status?: { conditions?: { type: string; status: string; reason?: string }[] } }[] }>([KARPENTER_RESOURCES.ec2NodeClasses]))?.items ?? [];
  const out: string[] = [];
  for (const c of classes) {
    const f = ec2NodeClassFindings(c.spec, planned);
    const now = c.status?.conditions?.find((x) => x.type === "Ready");
    if (now && now.status === (f.ready ? "True" : "False") && now.reason === f.reason) continue;
    const condition = { type: "Ready", status: f.ready ? "True" : "False", reason: f.reason, message: f.message, lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, "Z") };
    const r = await kc.run(["patch", KARPENTER_RESOURCES.ec2NodeClasses, c.metadata.name, "--subresource=status", "--type=merge", "-p", JSON.stringify({ status: { conditions: [condition] } })]);
    if (r.code === 0) out.push(`${c.metadata.name}: ${f.reason}`);
  }
  return out;
}

/** The zones of the subnets a tenant's plan tags for Karpenter's discovery (`tag`: `value`). Pure. */
export function discoveryZones(planned: readonly Planned[], tag: string, value: string): string[] {
  return [...new Set(planned.filter((r) => r.type === "aws:ec2/subnet:Subnet" && (r.inputs.tags as Record<string, string> | undefined)?.[tag] === value).map((r) => String(r.inputs.availabilityZone)))].sort();
}
