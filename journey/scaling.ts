/**
 * The scaling loop, played on a tenant cluster: the edge-agent's identity raises a NodeSet's
 * replicas through its scale subresource, ArgoCD's next sync must leave them, and the pod
 * Slinky's real operator then creates (once the tenant's slurmrestd answers it) must land on
 * a worker of the NodeSet's shape. Also
 * what the edge-agent is given to do it: a token in its pod, an AWS role its SDK can find,
 * and RBAC for exactly its NodeSets' scale.
 */
import type { KubeObject } from "./argo/manifests";
import type { Kubectl } from "./kube/kubectl";
import { waitFor } from "./kube/processes";
import { step, type JourneyStep } from "./host/step";
import type { OperatorPod } from "./slurm/slurmd-pod";
import { KARPENTER_RESOURCES, launchedFor } from "./kube/karpenter";
import { KARPENTER_LABELS, SERVER_NODE_LABEL } from "../facts/tenant-cluster";

export interface ScalingLoopInput {
  readonly tenantId: string;
  readonly kc: Kubectl;
  /** The tenant's Slurm Application's name (its NodeSets). */
  readonly slurmApp: string;
  /** Has ArgoCD refresh that Application and waits for what it then does; what went wrong. */
  readonly resync: () => Promise<string[]>;
  /** Where the edge-agent runs and the NodeSets live. */
  readonly agentNamespace: string;
  readonly nodeSetNamespace: string;
  readonly report: (s: JourneyStep) => void;
  /** The last lines of the tenant's slurm-operator log (why no pod came). */
  readonly operatorLog: () => string;
  /** The tenant's slurm-operator log, whole. */
  readonly operatorLogText: () => string;
  /** The tenant's slurmrestd, held down while the NodeSet is raised (absent: the pod is awaited at once). */
  readonly slurmrestd?: { readonly stop: () => Promise<void>; readonly start: () => Promise<string | undefined> };
}

/** How long slurmrestd stays down at least after the raise and ArgoCD's refresh: the NodeSet controller tries it more than once within it. */
const RESTAPI_DOWN_MS = 15_000;
/** How long the slurmd pod may take to run once slurmrestd is back: Karpenter batches pending pods (up to 10 s) and launches a node first. */
const POD_RUNNING_MS = 150_000;
/** How long slurmrestd stays down at most, waiting for the operator to log a failed call (its back-off grows on loaded cores). */
const RESTAPI_DOWN_MAX_MS = 90_000;

/** The errors in the operator's log (JSON lines, controller-runtime's) from calls to its slurmrestd, as it wrote them. Pure. */
export function restapiFailures(log: string): string[] {
  const errors: string[] = [];
  for (const line of log.split("\n")) {
    if (!line.includes("slurm-restapi")) continue;
    let entry: { msg?: unknown; error?: unknown };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      continue;
    }
    if (entry.msg === "Reconciler error" && typeof entry.error === "string" && entry.error.includes("slurm-restapi")) errors.push(entry.error);
  }
  return errors;
}

interface PodLike {
  metadata: { name: string };
  spec: {
    nodeName?: string;
    volumes?: { name: string; projected?: { sources?: { serviceAccountToken?: unknown }[] }; configMap?: { name: string } }[];
    containers: { env?: { name: string; value?: string }[]; volumeMounts?: { name: string; mountPath: string }[] }[];
  };
}

interface NodeSet extends KubeObject {
  spec: {
    replicas?: number;
    slurmd: { image: string; resources?: Record<string, unknown>; volumeMounts?: unknown[] };
    template?: { spec?: { nodeSelector?: Record<string, string>; tolerations?: unknown[]; volumes?: unknown[]; affinity?: unknown } };
  };
}

function awsRole(pod: PodLike, configMaps: Map<string, string>): string | undefined {
  const env = new Map(pod.spec.containers.flatMap((c) => c.env ?? []).map((e) => [e.name, e.value ?? ""]));
  if (env.get("AWS_ROLE_ARN")) {
    const file = env.get("AWS_WEB_IDENTITY_TOKEN_FILE");
    if (!file) return undefined;
    const projected = pod.spec.volumes?.some((v) => v.projected?.sources?.some((s) => s.serviceAccountToken));
    return projected ? `web identity ${env.get("AWS_ROLE_ARN")}` : undefined;
  }
  const configFile = env.get("AWS_CONFIG_FILE");
  if (!configFile) return undefined;
  const mount = pod.spec.containers.flatMap((c) => c.volumeMounts ?? []).find((m) => configFile.startsWith(`${m.mountPath}/`));
  const volume = pod.spec.volumes?.find((v) => v.name === mount?.name);
  const text = volume?.configMap ? configMaps.get(volume.configMap.name) ?? "" : "";
  const role = /^role_arn\s*=\s*(\S+)/m.exec(text)?.[1];
  const source = /^(credential_source\s*=\s*\S+|web_identity_token_file\s*=\s*\S+|source_profile\s*=\s*\S+)/m.exec(text)?.[1];
  return role && source ? `${role} (${source.replace(/\s+/g, "")})` : undefined;
}

/** What the loop placed: the slurmd pod, its NodeSet, and the node Karpenter launched for it (its NodeClaim). */
export interface Placed {
  readonly pod: OperatorPod;
  readonly nodeSet: string;
  readonly node: string;
  readonly nodePool: string;
  readonly claim: string;
}

/** Plays the loop; the slurmd pod the operator made and kwok runs on the node Karpenter launched, when it came to that. */
export async function playScalingLoop(i: ScalingLoopInput): Promise<Placed | undefined> {
  const { kc, report, tenantId: id } = i;
  const agent = "system:serviceaccount:" + i.agentNamespace + ":edge-agent";

  // What the agent's pod holds.
  const pods = await kc.get<{ items: PodLike[] }>(["pods", "-n", i.agentNamespace, "-l", "app.kubernetes.io/name=edge-agent"]);
  const pod = pods?.items[0];
  if (!pod) report(step(`tenant ${id}: the edge-agent's pod runs`, false, `no edge-agent pod in ${i.agentNamespace}`));
  else {
    const token = pod.spec.volumes?.some((v) => v.projected?.sources?.some((s) => s.serviceAccountToken));
    report(step(`tenant ${id}: the edge-agent's pod carries an API token`, !!token, token ? `projected service-account token mounted (${pod.metadata.name})` : "no service-account token in the pod (automountServiceAccountToken: false): it cannot call the API"));
    const cms = await kc.get<{ items: { metadata: { name: string }; data?: Record<string, string> }[] }>(["configmaps", "-n", i.agentNamespace]);
    const configMaps = new Map((cms?.items ?? []).map((c) => [c.metadata.name, Object.values(c.data ?? {}).join("\n")]));
    const env = new Map(pod.spec.containers.flatMap((c) => c.env ?? []).map((e) => [e.name, e.value ?? ""]));
    const caFile = env.get("HEARTBEAT_CA_FILE") ?? "";
    const caMount = pod.spec.containers.flatMap((c) => c.volumeMounts ?? []).find((m) => caFile.startsWith(`${m.mountPath}/`));
    const caMap = pod.spec.volumes?.find((v) => v.name === caMount?.name)?.configMap?.name;
    const caPem = caMap ? configMaps.get(caMap) ?? "" : "";
    const trusts = /-----BEGIN CERTIFICATE-----/.test(caPem) && env.get("HEARTBEAT_ENDPOINT")?.startsWith("https://");
    report(step(`tenant ${id}: the edge-agent verifies cluster-api with its environment's CA`, !!trusts, trusts ? `${env.get("HEARTBEAT_ENDPOINT")}, CA from ConfigMap ${caMap} at ${caFile}` : "no CA file mounted for HEARTBEAT_ENDPOINT: the agent cannot verify cluster-api's listener"));
    const role = awsRole(pod, configMaps);
    report(step(`tenant ${id}: the edge-agent's AWS SDK can find its role`, !!role, role ?? "AWS_ROLE_ARN without AWS_WEB_IDENTITY_TOKEN_FILE (or a config file naming the role and a credential source): the SDK uses the role for nothing"));
  }

  // RBAC: exactly its NodeSets' scale.
  const nodeSets = (await kc.get<{ items: NodeSet[] }>(["nodesets.slinky.slurm.net", "-n", i.nodeSetNamespace]))?.items ?? [];
  const must: [string, boolean][] = [];
  for (const n of nodeSets) must.push([`patch nodesets/scale ${n.metadata.name}`, await kc.can(agent, "patch", `nodesets.slinky.slurm.net/${n.metadata.name}`, i.nodeSetNamespace, "scale")]);
  const mustNot: [string, boolean][] = [
    ["patch nodesets (the whole object)", await kc.can(agent, "patch", "nodesets.slinky.slurm.net", i.nodeSetNamespace)],
    ["delete pods", await kc.can(agent, "delete", "pods", i.nodeSetNamespace)],
    ["get secrets", await kc.can(agent, "get", "secrets", i.nodeSetNamespace)],
    ["patch deployments/scale", await kc.can(agent, "patch", "deployments.apps", i.nodeSetNamespace, "scale")],
    ["patch nodesets/scale in kube-system", await kc.can(agent, "patch", "nodesets.slinky.slurm.net", "kube-system", "scale")],
    ["create pods", await kc.can(agent, "create", "pods", i.nodeSetNamespace)],
    ["list secrets cluster-wide", await kc.can(agent, "list", "secrets")],
  ];
  const missing = must.filter(([, ok]) => !ok).map(([what]) => what);
  const extra = mustNot.filter(([, ok]) => ok).map(([what]) => what);
  report(step(`tenant ${id}: the edge-agent may scale exactly its NodeSets (SubjectAccessReview)`, nodeSets.length > 0 && !missing.length && !extra.length,
    nodeSets.length === 0 ? `no NodeSet in ${i.nodeSetNamespace}` : [missing.length ? `denied: ${missing.join(", ")}` : `allowed: ${must.length} NodeSets' scale`, extra.length ? `also allowed (must not be): ${extra.join(", ")}` : `denied: ${mustNot.length} other verbs`].join("; ")));

  // The loop: raise one NodeSet as the agent, sync, and place its pod.
  // The smallest NodeSet: the journey's worker of each shape has the shape's smallest size.
  const cpus = (n: NodeSet) => Number((n.spec.template?.spec?.nodeSelector ?? {})["karpenter.k8s.aws/instance-cpu"] ?? Infinity);
  const target = [...nodeSets].sort((a, b) => cpus(a) - cpus(b))[0];
  if (!target) {
    report(step(`tenant ${id}: the scaling loop raises a NodeSet`, false, "no NodeSet or no Slurm Application to play it on"));
    return undefined;
  }
  // The joint: Slinky's NodeSet controller creates a slurmd pod only through the tenant's
  // slurmrestd (a reservation and its node cache). The raise is made while slurmrestd is down:
  // no pod may come, and the operator must say why; once slurmrestd is back the pod comes
  // with no second raise (the scaling loop raises once and waits; nothing is lost).
  const logFrom = i.operatorLogText().length;
  if (i.slurmrestd) await i.slurmrestd.stop();
  // Whatever happens while it is down, slurmrestd runs again for what follows.
  let restarted: string | undefined | null = null;
  const restart = async () => (restarted ??= (await i.slurmrestd?.start()) ?? undefined);
  let scaled: Awaited<ReturnType<Kubectl["run"]>>;
  let resync: string[] = [];
  let after: NodeSet | undefined;
  let early: PodLike | undefined;
  let why: string[] = [];
  const downSince = Date.now();
  let downMs = 0;
  try {
    scaled = await kc.run(["scale", `nodesets.slinky.slurm.net/${target.metadata.name}`, "-n", i.nodeSetNamespace, "--replicas=1"], { as: agent });
    if (scaled.code === 0) {
      resync = await i.resync();
      after = await kc.get<NodeSet>(["nodesets.slinky.slurm.net", target.metadata.name, "-n", i.nodeSetNamespace]);
      if (i.slurmrestd) {
        // Down for at least RESTAPI_DOWN_MS, and until the operator has said why (or a pod came).
        await waitFor(async () => {
          early = await kc.get<PodLike>(["pod", `${target.metadata.name}-0`, "-n", i.nodeSetNamespace]);
          why = restapiFailures(i.operatorLogText().slice(logFrom));
          return Date.now() - downSince >= RESTAPI_DOWN_MS && (why.length > 0 || !!early) ? true : undefined;
        }, RESTAPI_DOWN_MAX_MS, 1000);
      }
    }
  } finally {
    downMs = Date.now() - downSince;
    await restart();
  }
  report(step(`tenant ${id}: the edge-agent raises ${target.metadata.name} to 1`, scaled.code === 0, scaled.code === 0 ? "scaled through the scale subresource as the edge-agent" : scaled.stderr.trim()));
  if (scaled.code !== 0) return undefined;
  const replicas = after?.spec.replicas ?? 0;
  report(step(`tenant ${id}: the scale-up survives ArgoCD's next sync`, replicas === 1, `replicas ${replicas} after ArgoCD refreshed ${i.slurmApp}${replicas === 1 ? "" : " (git's 0 applied over the edge-agent's 1: no ignoreDifferences with RespectIgnoreDifferences on /spec/replicas)"}${resync.length ? `; ${resync[0]}` : ""}`));
  if (i.slurmrestd) {
    report(step(`tenant ${id}: while its slurmrestd is down the NodeSet controller makes no slurmd pod, and says why`, !early && why.length > 0 && !restarted,
      [early ? `${target.metadata.name}-0 was made with slurmrestd down: the operator does not wait on it` : `no ${target.metadata.name}-0 in ${(downMs / 1000).toFixed(0)} s down`,
        why.length ? `the operator: ${why.length} failed calls, last: ${why[why.length - 1].slice(0, 300)}` : `the operator's log names no failed call to slurm-restapi (last lines: ${i.operatorLog()})`,
        restarted ? `slurmrestd did not come back: ${restarted}` : "slurmrestd started again"].join("; ")));
    if (restarted) return undefined;
  }
  if (replicas < 1 || !after) return undefined;
  // Slinky's NodeSet controller makes the pod `<NodeSet>-<ordinal>` once the tenant's
  // slurmrestd has answered it (a reservation and its node cache), and kwok runs it.
  // The pod handed to the Slurm part is the one seen running: a second read could find it
  // being replaced (or the API busy) and hand over nothing after the step passed.
  let made = false;
  const running = await waitFor(async () => {
    const p = await kc.get<OperatorPod & { readonly status?: { readonly phase?: string } }>(["pod", `${after.metadata.name}-0`, "-n", i.nodeSetNamespace]);
    made ||= !!p;
    return p?.spec.nodeName && p.status?.phase === "Running" ? p : undefined;
  }, POD_RUNNING_MS, 1000);
  const placed = running?.spec.nodeName;
  const events = placed ? "" : ((await kc.run(["get", "events", "-n", i.nodeSetNamespace, "--field-selector", `involvedObject.name=${after.metadata.name}`, "-o", "custom-columns=R:.reason,M:.message", "--no-headers"])).stdout.trim().split("\n").slice(-2).join(" | "));
  const node = placed ? await kc.get<{ metadata: { labels?: Record<string, string> } }>(["node", placed]) : undefined;
  const shapeOk = !!node && Object.entries(after.spec.template?.spec?.nodeSelector ?? {}).every(([k, v]) => node.metadata.labels?.[k] === v) && !!node.metadata.labels?.[KARPENTER_LABELS.nodePool];
  // Karpenter launched the node for this pod: its NodeClaim, made after the raise, names it.
  const claim = placed ? await launchedFor(kc, placed) : undefined;
  // The control, in the run: the tenant's server node, which the journey made, has no NodeClaim.
  const server = (await kc.get<{ items: { metadata: { name: string } }[] }>(["nodes", "-l", Object.entries(SERVER_NODE_LABEL).map(([k, v]) => `${k}=${v}`).join(",")]))?.items[0]?.metadata.name;
  const serverClaim = server ? await launchedFor(kc, server) : undefined;
  const afterRaise = claim?.metadata.creationTimestamp ? (Date.parse(claim.metadata.creationTimestamp) - downSince) / 1000 : undefined;
  const launched = !!claim && afterRaise !== undefined && afterRaise > -1 && !!server && !serverClaim;
  report(step(`tenant ${id}: the slurmd pod of ${after.metadata.name} runs on a worker of its shape that Karpenter launched for it${i.slurmrestd ? ", once slurmrestd is back, with no second raise" : ""}`, shapeOk && launched,
    placed ? [`slurm-operator made ${after.metadata.name}-0, scheduled onto ${placed} (NodePool ${node?.metadata.labels?.[KARPENTER_LABELS.nodePool]}, ${node?.metadata.labels?.["node.kubernetes.io/instance-type"]})`,
      claim ? `launched for NodeClaim ${claim.metadata.name} ${afterRaise?.toFixed(0)} s after the raise` : "no NodeClaim names the node: Karpenter did not launch it",
      !server ? "no server node to hold the control to" : serverClaim ? `the control fails: the server's node ${server}, made by the journey, is named by NodeClaim ${serverClaim.metadata.name}` : `the control: the server's node ${server} (made by the journey) has no NodeClaim`].join("; ")
      : made ? `${after.metadata.name}-0 made but not running on a node within ${POD_RUNNING_MS / 1000} s; events: ${events || "none"}` : `slurm-operator made no pod for ${after.metadata.name} within ${POD_RUNNING_MS / 1000} s; events: ${events || "none"}; operator: ${i.operatorLog()}`));
  const pool = node?.metadata.labels?.[KARPENTER_LABELS.nodePool];
  return running && claim && pool ? { pod: running, nodeSet: after.metadata.name, node: placed as string, nodePool: pool, claim: claim.metadata.name } : undefined;
}

/** The scale-down the loop ends with: the edge-agent lowers the NodeSet to 0 again; when it did. */
export async function lowerNodeSet(kc: Kubectl, agentNamespace: string, nodeSetNamespace: string, placed: Placed): Promise<{ readonly at: number; readonly problem?: string }> {
  const r = await kc.run(["scale", `nodesets.slinky.slurm.net/${placed.nodeSet}`, "-n", nodeSetNamespace, "--replicas=0"], { as: `system:serviceaccount:${agentNamespace}:edge-agent` });
  return { at: Date.now(), ...(r.code === 0 ? {} : { problem: r.stderr.trim() }) };
}

/** A Go duration as the NodePool writes consolidateAfter ("10m", "30s", "1h30m"), in ms; undefined for "Never" or nonsense. Pure. */
export function durationMs(text: string | undefined): number | undefined {
  if (!text || !/^(\d+(h|m|s))+$/.test(text)) return undefined;
  const unit: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000 };
  return [...text.matchAll(/(\d+)(h|m|s)/g)].reduce((ms, [, n, u]) => ms + Number(n) * unit[u], 0);
}

/** How long past consolidateAfter Karpenter may take to disrupt an empty node and terminate it (its disruption loop polls every 10 s; a validation TTL of 15 s). */
const CONSOLIDATION_SLACK_MS = 120_000;

/** How often the removal of a launched node is looked for while the rest of the journey runs. */
const REMOVAL_POLL_MS = 10_000;

/**
 * Karpenter's consolidation, watched from the moment the pod went (the NodeSet lowered at
 * `since`) while the journey goes on: when the node it launched and its NodeClaim were first
 * seen gone, or undefined once its NodePool's consolidateAfter and the slack have passed.
 */
export function watchRemoval(kc: Kubectl, placed: Placed, since: number): { readonly policy: Promise<Disruption | undefined>; readonly gone: Promise<number | undefined>; readonly stop: () => void } {
  let stopped = false;
  const policy = kc.get<{ spec: { disruption?: Disruption } }>([KARPENTER_RESOURCES.nodePools, placed.nodePool]).then((p) => p?.spec.disruption);
  const gone = policy.then(async (d) => {
    const after = durationMs(d?.consolidateAfter);
    if (after === undefined) return undefined;
    // Stopped (the part ending early): no more looking, nothing seen.
    // Gone means the API server says NotFound: a kubectl that fails otherwise (the server busy, a token expired) is not a removal.
    const notFound = async (args: string[]) => {
      const r = await kc.run(["get", ...args, "-o", "name"]);
      return r.code !== 0 && /\bNotFound\b|not found/.test(r.stderr);
    };
    const seen = await waitFor(async () => (stopped ? null : (await notFound(["node", placed.node])) && (await notFound([KARPENTER_RESOURCES.nodeClaims, placed.claim])) ? Date.now() : undefined), Math.max(0, since + after + CONSOLIDATION_SLACK_MS - Date.now()), REMOVAL_POLL_MS);
    return seen ?? undefined;
  });
  return { policy, gone, stop: () => void (stopped = true) };
}

interface Disruption {
  readonly consolidationPolicy?: string;
  readonly consolidateAfter?: string;
}

/**
 * Karpenter's consolidation, judged: the node it launched, and its NodeClaim, removed after
 * the pod went, within its NodePool's consolidateAfter and the slack; not before
 * consolidateAfter (an empty node kept that long is the fleet's choice, WhenEmpty).
 */
/** Karpenter's own word that its disruption took the node: a "disrupting node(s)" line of its log naming it, with its command (Empty/...). Pure. */
export function disruptionOf(log: string, node: string): string | undefined {
  for (const line of log.split("\n")) {
    if (!line.includes("disrupting node(s)") || !line.includes(node)) continue;
    try {
      return String((JSON.parse(line) as { command?: unknown }).command ?? "").split("/")[0] || "a disruption";
    } catch {
      continue;
    }
  }
  return undefined;
}

export async function nodeRemovedStep(tenantId: string, placed: Placed, since: number, removal: ReturnType<typeof watchRemoval>, karpenterLog: string): Promise<JourneyStep> {
  const [policy, gone] = [await removal.policy, await removal.gone];
  const after = durationMs(policy?.consolidateAfter);
  const name = `tenant ${tenantId}: Karpenter removes the node it launched once the slurmd pod is gone (its NodePool's consolidation${policy ? `, ${policy.consolidationPolicy} after ${policy.consolidateAfter}` : ""})`;
  if (after === undefined) return step(name, false, `node ${placed.node}: its NodePool ${placed.nodePool} gives no consolidateAfter to wait on`);
  const took = gone === undefined ? undefined : (gone - since) / 1000;
  const early = took !== undefined && took * 1000 < after;
  const by = disruptionOf(karpenterLog, placed.node);
  if (took !== undefined && !by) return step(name, false, `node ${placed.node} gone ${took.toFixed(0)} s after the NodeSet went to 0, but Karpenter's log names no disruption of it: something else removed it`);
  return step(name, took !== undefined && !early && by === "Empty",
    took === undefined ? `node ${placed.node} (NodeClaim ${placed.claim}) still there ${((Date.now() - since) / 1000).toFixed(0)} s after the NodeSet went to 0 (consolidateAfter ${policy?.consolidateAfter})`
      : `node ${placed.node} and NodeClaim ${placed.claim} seen gone ${took.toFixed(0)} s after the NodeSet went to 0 (looked for every ${REMOVAL_POLL_MS / 1000} s), by Karpenter's ${by} disruption${early ? `: before consolidateAfter ${policy?.consolidateAfter}` : ""}${by === "Empty" ? "" : " (not emptiness)"}`);
}
