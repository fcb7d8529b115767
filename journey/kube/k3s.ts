/**
 * What a K3s server's user data makes of its cluster, read back from the planned instance:
 * the K3s configuration file, the admission configuration it names, the node's labels and
 * kubelet pod capacity. The journey starts its control planes from these, so a flag the
 * user data gives (or omits) is what the journey runs with. Pure functions.
 */
import { parse } from "yaml";
import { SERVER_NODE_LABEL } from "../../facts/tenant-cluster";
import { FORGET_PREDECESSORS } from "../../components/host/tenant-cloud-init";
import type { HostFile } from "../../components/host/host-files";
import { VOLUME_LIMITS } from "../../components/host/volume-limits";
import { CENTRAL_DATA_MOUNT, CENTRAL_MOUNT_SCRIPT } from "../../components/host/central-cloud-init";

/** The parts of a `#cloud-config` the journey reads. */
interface CloudConfig {
  readonly write_files?: readonly { path: string; content?: string }[];
}

export interface K3sServer {
  /** /etc/rancher/k3s/config.yaml, parsed. */
  readonly config: Readonly<Record<string, unknown>>;
  /** The admission configuration file's text, when the config names one. */
  readonly admissionConfig?: string;
  /** Labels K3s gives the server's node: its own and the configured ones. */
  readonly nodeLabels: Readonly<Record<string, string>>;
  /** The kubelet's pod capacity (K3s's default 110 unless the user data sets max-pods). */
  readonly maxPods: number;
  /** Whether K3s deploys its packaged local-storage add-on (a default StorageClass, local-path), i.e. the config does not disable it. */
  readonly localStorage: boolean;
  /** The script a replaced server runs to remove its predecessor's Node and CiliumNode, when the server writes one. */
  readonly forgetPredecessors?: string;
  /** The script that holds each local volume to its size, and the data volume's mount options (its fstab line), when the server writes them (central). */
  readonly volumeLimits?: { readonly script: string; readonly library: string; readonly mountOptions: readonly string[] };
}

/** K3s's kubelet default when no max-pods is given. */
const K3S_DEFAULT_MAX_PODS = 110;

function file(doc: CloudConfig, path: string): string | undefined {
  return doc.write_files?.find((f) => f.path === path)?.content;
}

function list(v: unknown): string[] {
  return Array.isArray(v) ? v.map(String) : v === undefined ? [] : [String(v)];
}

/** `k=v` flags as a record. */
export function keyValues(items: readonly string[]): Record<string, string> {
  return Object.fromEntries(items.map((i) => [i.slice(0, i.indexOf("=")), i.slice(i.indexOf("=") + 1)]));
}

/**
 * Reads a server's user data, and the files its host-files sync writes (the plan's parameters,
 * components/host/host-files.ts). Labels are what K3s itself puts on a server node without a
 * cloud provider (control-plane role, os, arch, hostname, instance-type "k3s"), plus the
 * configured ones; no topology label, since nothing sets one.
 */
export function readK3sServer(userData: string, arch: string, hostname: string, delivered: readonly HostFile[] = []): K3sServer {
  const doc = parse(userData.replace(/^#cloud-config\n/, "")) as CloudConfig;
  const text = file(doc, "/etc/rancher/k3s/config.yaml");
  if (!text) throw new Error("the user data writes no /etc/rancher/k3s/config.yaml");
  const config = parse(text) as Record<string, unknown>;
  const apiArgs = keyValues(list(config["kube-apiserver-arg"]));
  const admissionPath = apiArgs["admission-control-config-file"];
  const admissionConfig = admissionPath ? file(doc, admissionPath) : undefined;
  if (admissionPath && admissionConfig === undefined) throw new Error(`the K3s config names ${admissionPath}, which the user data does not write`);
  // max-pods may come from config.yaml or from the boot script's node drop-in.
  const maxPods = /max-pods=(\d+)/.exec(userData)?.[1];
  const nodeLabels = {
    "kubernetes.io/arch": arch,
    "kubernetes.io/os": "linux",
    "kubernetes.io/hostname": hostname,
    ...SERVER_NODE_LABEL,
    "node.kubernetes.io/instance-type": "k3s",
    ...keyValues(list(config["node-label"])),
  };
  const localStorage = !list(config.disable).flatMap((d) => d.split(",")).map((d) => d.trim()).includes("local-storage");
  const forgetPredecessors = file(doc, FORGET_PREDECESSORS) ?? delivered.find((f) => f.path === FORGET_PREDECESSORS)?.content;
  const written = (p: string) => file(doc, p) ?? delivered.find((f) => f.path === p)?.content;
  const [limits, library] = [written(VOLUME_LIMITS.script), written(VOLUME_LIMITS.library)];
  const fstab = new RegExp(`^echo "LABEL=\\S+ ${CENTRAL_DATA_MOUNT.mountPoint} xfs (\\S+) 0 2"`, "m").exec(file(doc, CENTRAL_MOUNT_SCRIPT) ?? "");
  const volumeLimits = limits !== undefined && library !== undefined && fstab ? { script: limits, library, mountOptions: fstab[1].split(",") } : undefined;
  return { config, ...(admissionConfig !== undefined ? { admissionConfig } : {}), nodeLabels, maxPods: maxPods ? Number(maxPods) : K3S_DEFAULT_MAX_PODS, localStorage, ...(forgetPredecessors !== undefined ? { forgetPredecessors } : {}), ...(volumeLimits ? { volumeLimits } : {}) };
}

/** Paths the harness gives the API server in place of K3s's own files. */
export interface ApiServerPaths {
  readonly etcd: string;
  readonly port: number;
  readonly certDir: string;
  readonly admissionConfig?: string;
}

/**
 * kube-apiserver's flags as K3s v1.35 sets them for a server with this config (K3s's own
 * defaults from its control-plane setup, then `kube-apiserver-arg` last, as K3s applies them),
 * with the harness's certificates and datastore. Only what changes admission, authorization
 * or the API's shape is carried; K3s's tunnels and kubelet client settings have no
 * counterpart without kubelets. `overrides` are the harness's own (journey/kube/outbound.ts).
 */
export function apiServerArgs(server: K3sServer, p: ApiServerPaths, overrides: Readonly<Record<string, string>> = {}): string[] {
  const args: Record<string, string> = {
    "etcd-servers": p.etcd,
    "bind-address": "127.0.0.1",
    "secure-port": String(p.port),
    "tls-cert-file": `${p.certDir}/server.crt`,
    "tls-private-key-file": `${p.certDir}/server.key`,
    "client-ca-file": `${p.certDir}/ca.crt`,
    "token-auth-file": `${p.certDir}/tokens.csv`,
    "service-account-key-file": `${p.certDir}/sa.pub`,
    "service-account-signing-key-file": `${p.certDir}/sa.key`,
    // K3s's defaults.
    "service-account-issuer": "https://kubernetes.default.svc.cluster.local",
    "api-audiences": "https://kubernetes.default.svc.cluster.local,k3s",
    "allow-privileged": "true",
    "anonymous-auth": "false",
    "authorization-mode": "Node,RBAC",
    "enable-admission-plugins": "NodeRestriction",
    "service-cluster-ip-range": String(server.config["service-cidr"] ?? "10.43.0.0/16"),
    "service-node-port-range": "30000-32767",
    "enable-aggregator-routing": "true",
    // The configured arguments: they override K3s's.
    ...keyValues(list(server.config["kube-apiserver-arg"])),
    // The harness's own, last of all.
    ...overrides,
  };
  if (args["admission-control-config-file"] !== undefined) {
    if (!p.admissionConfig) throw new Error("the server has an admission configuration but the harness gave no path for it");
    args["admission-control-config-file"] = p.admissionConfig;
  }
  return Object.entries(args).map(([k, v]) => `--${k}=${v}`);
}

/** kube-controller-manager's flags as K3s sets them (no cloud provider: no service or route controllers). */
export function controllerManagerArgs(server: K3sServer, kubeconfig: string, certDir: string): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    "--bind-address=127.0.0.1",
    "--secure-port=0",
    "--leader-elect=false",
    "--controllers=*,tokencleaner,-service,-route,-cloud-node-lifecycle",
    "--allocate-node-cidrs=true",
    `--cluster-cidr=${String(server.config["cluster-cidr"] ?? "10.42.0.0/16")}`,
    `--service-cluster-ip-range=${String(server.config["service-cidr"] ?? "10.43.0.0/16")}`,
    "--configure-cloud-routes=false",
    `--service-account-private-key-file=${certDir}/sa.key`,
    `--root-ca-file=${certDir}/ca.crt`,
    `--cluster-signing-cert-file=${certDir}/ca.crt`,
    `--cluster-signing-key-file=${certDir}/ca.key`,
    "--use-service-account-credentials=true",
    "--terminated-pod-gc-threshold=1000",
  ];
}
