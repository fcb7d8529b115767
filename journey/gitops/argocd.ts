/**
 * ArgoCD v3.4.4 on central, for real: the pods of the chart the central stack installs (its
 * Redis, repo-server, application controller, ApplicationSet controller and API server), each run from its
 * live Deployment or StatefulSet as the kubelet would run it, in the ArgoCD image install-tools
 * makes (ArgoCD's binary and Helm bound in, git, GnuPG, Debian's Redis), inside the sealed
 * namespace, as its own ServiceAccount. The chart's Redis password Job runs first, for real.
 *
 * Each pod gets an address of its own on the namespace's loopback, its Service's name resolves
 * to it (the namespace's hosts file), and where the chart leaves a listener on every address
 * (the repo-server's and the ApplicationSet controller's probe share port 8081) it listens on
 * that address alone. Nothing else of the chart's pods changes. The API server is reached as
 * in a pod: KUBERNETES_SERVICE_HOST and PORT, and the token projected where client-go reads it.
 */
import * as fs from "fs";
import * as path from "path";
import type { Cluster } from "../kube/cluster";
import type { Kubectl } from "../kube/kubectl";
import { asContainer, containerArgv, initSteps, prepareContainer, type PodTemplate, type PreparedContainer } from "../kube/pods";
import type { Processes } from "../kube/processes";
import { waitFor } from "../kube/processes";
import type { SealedNetwork } from "../kube/sealed-network";
import { inPod, NETNS_ETC, run, type Pod } from "../host/processes";
import { loopbackAddress } from "../host/loopback";

/** ArgoCD's image: its user, environment and entrypoint (its Dockerfile's USER, ENV and ENTRYPOINT; HOME from its passwd, as the runtime sets it). */
const ARGOCD_IMAGE = { uid: 999, gid: 999, env: { HOME: "/home/argocd", USER: "argocd", GRPC_ENABLE_TXT_SERVICE_CONFIG: "false" } } as const;
const TINI = ["/usr/bin/tini", "--"] as const;
/** Where the image has the binaries the journey binds in. */
const IMAGE_BINARIES = { argocd: "/usr/local/bin/argocd", helm: "/usr/local/bin/helm" } as const;

/**
 * The chart's pods the journey runs, in start order: the workload, its container, the image's
 * entrypoint (Redis's image runs redis-server; ArgoCD's containers name their binary), the
 * pod's loopback address, the Service that names it, and the listeners it is pinned to that
 * address by (environment variables the chart reads from argocd-cmd-params-cm, or flags).
 */
export const ARGOCD_PODS = [
  { kind: "deployment", name: "argocd-redis", container: "redis", entrypoint: ["redis-server"], address: loopbackAddress("argocd", 0), service: "argocd-redis", listenEnv: [], listenFlags: [] },
  { kind: "deployment", name: "argocd-repo-server", container: "repo-server", entrypoint: TINI, address: loopbackAddress("argocd", 1), service: "argocd-repo-server", listenEnv: ["ARGOCD_REPO_SERVER_LISTEN_ADDRESS", "ARGOCD_REPO_SERVER_LISTEN_METRICS_ADDRESS"], listenFlags: [] },
  // One pod per replica (the shards): ordinal 0 at this address, the others at statefulSetAddress's.
  { kind: "statefulset", name: "argocd-application-controller", container: "application-controller", entrypoint: TINI, address: loopbackAddress("argocd", 2), service: undefined, listenEnv: [], listenFlags: [] },
  { kind: "deployment", name: "argocd-applicationset-controller", container: "applicationset-controller", entrypoint: TINI, address: loopbackAddress("argocd", 3), service: "argocd-applicationset-controller", listenEnv: [], listenFlags: ["--metrics-addr", "--probe-addr", "--webhook-addr"] },
  // The API server: nothing of the journey calls it, but it makes argocd-secret's server key at its first start, as in a real install.
  { kind: "deployment", name: "argocd-server", container: "server", entrypoint: TINI, address: loopbackAddress("argocd", 4), service: "argocd-server", listenEnv: ["ARGOCD_SERVER_LISTEN_ADDRESS", "ARGOCD_SERVER_METRICS_LISTEN_ADDRESS"], listenFlags: [] },
] as const;

/** The flags of a StatefulSet's container whose port every replica binds on every address (the application controller's metrics). */
const ALL_ADDRESS_PORT_FLAGS = ["--metrics-port"] as const;
/**
 * Where a replica past 0 moves such a port: 20000 above it, 100 more per further ordinal (28082
 * for the controller's second shard). Clear of every port the chart's pods take (6379,
 * 7000, 8080-8084), of the journey's own listeners on the sealed loopback (the API servers
 * from 17443, the operators' probes and metrics from 18081 and 18091) and of the ephemeral range.
 */
export function ordinalPort(port: number, ordinal: number): number {
  return ordinal === 0 ? port : port + 20_000 + 100 * (ordinal - 1);
}

/** A StatefulSet pod's address: ordinal 0 its workload's, the n-th another of ArgoCD's block. Pure. */
export function statefulSetAddress(first: string, ordinal: number): string {
  return ordinal === 0 ? first : loopbackAddress("argocd", 9 + ordinal);
}

/**
 * A StatefulSet pod's arguments where its replicas share the sealed namespace: a port the
 * container binds on every address (`--metrics-port=8082`: ArgoCD's controller has no address
 * for it) moves (ordinalPort) for each ordinal past 0, since in a cluster each pod has its own
 * network namespace and here they share one. Nothing else changes. Pure.
 */
export function ordinalArgs(args: readonly string[], ordinal: number): string[] {
  if (ordinal === 0) return [...args];
  return args.map((a) => {
    const flag = ALL_ADDRESS_PORT_FLAGS.find((f) => a.startsWith(`${f}=`));
    return flag ? `${flag}=${ordinalPort(Number(a.slice(flag.length + 1)), ordinal)}` : a;
  });
}

/** The chart's Job that makes Redis's password (Secret argocd-redis), run before Redis, and its pod's address. */
const REDIS_SECRET_JOB = "argocd-redis-secret-init";
const REDIS_SECRET_JOB_ADDRESS = loopbackAddress("argocd", 8);

/** `--flag=:port` (or `--flag=host:port`) rewritten to `--flag=<address>:port` for the flags given. Pure. */
export function pinListeners(args: readonly string[], flags: readonly string[], address: string): string[] {
  return args.map((a) => {
    const flag = flags.find((f) => a.startsWith(`${f}=`));
    if (!flag) return a;
    const port = a.slice(flag.length + 1).split(":").pop();
    return `${flag}=${address}:${port}`;
  });
}

/** The hosts-file lines that give each pod's Service its address. Pure. */
export function serviceHostLines(): string {
  return ARGOCD_PODS.filter((p) => p.service).map((p) => `${p.address} ${p.service}\n`).join("");
}

export interface ArgoCdInput {
  /** Central's admin kubectl, and the cluster (its URL and CA). */
  readonly kc: Kubectl;
  readonly cluster: Cluster;
  readonly namespace: string;
  /** The ArgoCD image (a root file system). */
  readonly image: string;
  /** The argocd and helm binaries bound into it (unsealed: they run inside the pod's namespaces). */
  readonly binaries: { readonly argocd: string; readonly helm: string };
  readonly sealed: SealedNetwork;
  readonly dir: string;
  readonly processes: Processes;
}

export interface ArgoCd {
  /** What runs: `<pod> (<process>)` per pod. */
  readonly started: readonly string[];
  /** Why it could not start, when it could not. */
  readonly problem?: string;
}

interface Workload {
  metadata: { name: string };
  spec: { replicas?: number; template: PodTemplate & { spec: { hostname?: string } } };
}

/** Runs the chart's pods; returns what runs, or why not. */
export async function startArgoCd(o: ArgoCdInput): Promise<ArgoCd> {
  fs.appendFileSync(path.join(NETNS_ETC, o.sealed.name, "hosts"), serviceHostLines());
  const url = new URL(o.cluster.url);
  const caPem = Buffer.from(o.cluster.caData, "base64").toString();
  const kubeEnv = { KUBERNETES_SERVICE_HOST: url.hostname, KUBERNETES_SERVICE_PORT: url.port, KUBERNETES_SERVICE_PORT_HTTPS: url.port };
  const tokens = new Map<string, string>();
  const tokenFor = async (account: string): Promise<string | undefined> => {
    if (tokens.has(account)) return tokens.get(account);
    const t = await o.kc.run(["-n", o.namespace, "create", "token", account, "--duration=24h"]);
    if (t.code !== 0) return undefined;
    tokens.set(account, t.stdout.trim());
    return t.stdout.trim();
  };
  const prepare = async (template: PodTemplate, podName: string, container: string, address: string): Promise<PreparedContainer | string> => {
    const account = template.spec.serviceAccountName ?? "default";
    const token = await tokenFor(account);
    if (!token) return `no token for ServiceAccount ${o.namespace}/${account}`;
    const c = await prepareContainer(o.kc, o.namespace, template, container, path.join(o.dir, podName), [], {
      fields: { name: podName, namespace: o.namespace, ip: address, serviceAccountName: account },
      serviceAccount: { token, caPem },
      image: ARGOCD_IMAGE,
      env: kubeEnv,
    });
    return c.missing.length ? `${podName} ${container}: ${c.missing.join("; ")}` : c;
  };
  const pod = (name: string, hostname: string, c: PreparedContainer): Pod => ({
    netns: o.sealed.name, hostname, image: o.image, shared: [], root: path.join(o.dir, name), slurmDirs: false,
    binds: [{ from: o.binaries.argocd, to: IMAGE_BINARIES.argocd, readOnly: true }, { from: o.binaries.helm, to: IMAGE_BINARIES.helm, readOnly: true }, ...c.binds],
  });

  // The Redis password, as the chart's Job makes it (`argocd admin redis-initial-password`).
  const job = await o.kc.get<Workload>(["job", REDIS_SECRET_JOB, "-n", o.namespace]);
  if (!job) return { started: [], problem: `no Job ${o.namespace}/${REDIS_SECRET_JOB}` };
  const init = await prepare(job.spec.template, REDIS_SECRET_JOB, job.spec.template.spec.containers[0].name, REDIS_SECRET_JOB_ADDRESS);
  if (typeof init === "string") return { started: [], problem: init };
  const made = await run(inPod(pod(REDIS_SECRET_JOB, REDIS_SECRET_JOB, init), asContainer(init, containerArgv(init, []))), { timeoutMs: 60_000 });
  if (made.code !== 0) return { started: [], problem: `${REDIS_SECRET_JOB}: exit ${made.code}: ${(made.stderr || made.stdout).trim().slice(-400)}` };

  const started: string[] = [];
  for (const p of ARGOCD_PODS) {
    const w = await o.kc.get<Workload>([p.kind, p.name, "-n", o.namespace]);
    if (!w) return { started, problem: `no ${p.kind} ${o.namespace}/${p.name}` };
    // A StatefulSet's every replica (the controller's shards: a pod's shard is its hostname's ordinal), a Deployment's one pod.
    const ordinals = p.kind === "statefulset" ? Array.from({ length: w.spec.replicas ?? 1 }, (_, i) => i) : [0];
    for (const ordinal of ordinals) {
      const podName = p.kind === "statefulset" ? `${p.name}-${ordinal}` : p.name;
      const address = statefulSetAddress(p.address, ordinal);
      for (const step of initSteps(w.spec.template)) {
        const c = await prepare(w.spec.template, podName, step.name, address);
        if (typeof c === "string") return { started, problem: c };
        const r = await run(inPod(pod(podName, podName, c), asContainer(c, containerArgv(c, []))), { timeoutMs: 60_000 });
        if (r.code !== 0) return { started, problem: `${podName} init ${step.name}: exit ${r.code}: ${(r.stderr || r.stdout).trim().slice(-300)}` };
      }
      const prepared = await prepare(w.spec.template, podName, p.container, address);
      if (typeof prepared === "string") return { started, problem: prepared };
      const c: PreparedContainer = {
        ...prepared,
        env: { ...prepared.env, ...Object.fromEntries(p.listenEnv.map((e) => [e, address])) },
        args: ordinalArgs(pinListeners(prepared.args, p.listenFlags, address), ordinal),
      };
      const argv = inPod(pod(podName, podName, c), asContainer(c, containerArgv(c, p.entrypoint)));
      o.processes.start(podName, argv[0], argv.slice(1));
      started.push(podName);
    }
  }
  const up = await waitFor(async () => {
    for (const name of started) if (!o.processes.alive(name)) return false;
    const r = await run(o.sealed.argv(["bash", "-c", `exec 3<>/dev/tcp/${ARGOCD_PODS[1].address}/8081`]), { timeoutMs: 3000 });
    return r.code === 0 ? true : undefined;
  }, 60_000, 1000);
  if (!up) return { started, problem: `ArgoCD's pods did not come up in 60 s: ${started.map((n) => `${n}: ${o.processes.tail(n, 2)}`).join(" / ")}` };
  return { started };
}

/** The servers of the clusters a metrics page says its controller caches (`argocd_cluster_info`'s server label). Pure. */
export function cachedClusters(metrics: string): string[] {
  return [...new Set(metrics.split("\n").filter((l) => l.startsWith("argocd_cluster_info{")).map((l) => /[{,]server="([^"]*)"/.exec(l)?.[1]).filter((s): s is string => s !== undefined))].sort();
}

/**
 * Which clusters each of the application controller's pods caches (its shards), read from
 * each pod's metrics as Prometheus would scrape them; the pods and their ports as
 * startArgoCd runs them from the live StatefulSet.
 */
export async function controllerShards(o: Pick<ArgoCdInput, "kc" | "namespace" | "sealed">): Promise<{ pod: string; clusters: string[] | undefined }[]> {
  const p = ARGOCD_PODS.find((x) => x.kind === "statefulset");
  const w = p && (await o.kc.get<Workload & { spec: { template: { spec: { containers: { name: string; args?: string[] }[] } } } }>(["statefulset", p.name, "-n", o.namespace]));
  if (!p || !w) return [];
  const args = w.spec.template.spec.containers.find((c) => c.name === p.container)?.args ?? [];
  return Promise.all(
    Array.from({ length: w.spec.replicas ?? 1 }, async (_, ordinal) => {
      const port = ordinalArgs(args, ordinal).find((a) => a.startsWith(`${ALL_ADDRESS_PORT_FLAGS[0]}=`))?.split("=")[1];
      const r = port ? await run(o.sealed.argv(["curl", "-sf", "--max-time", "10", `http://${statefulSetAddress(p.address, ordinal)}:${port}/metrics`]), { timeoutMs: 15_000 }) : undefined;
      return { pod: `${p.name}-${ordinal}`, clusters: r?.code === 0 ? cachedClusters(r.stdout) : undefined };
    }),
  );
}
