/**
 * One Kubernetes control plane on 127.0.0.1 (of the journey's sealed namespace), started as the cluster's K3s server would run
 * it: kine as the datastore (K3s's own), kube-apiserver with the flags and admission
 * configuration the server's user data gives, the controller manager and the scheduler as
 * K3s runs them, and kwok for the nodes' kubelets. Certificates and the admin token are
 * made per run and never leave the run's folder.
 */
import { execFile } from "child_process";
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { promisify } from "util";
import { apiServerArgs, controllerManagerArgs, type K3sServer } from "./k3s";
import { SEALED_API_SERVER_FLAGS } from "./outbound";
import { issueCertificate, makeCa } from "./pki";
import { Processes, waitFor } from "./processes";
import type { Kubectl } from "./kubectl";
import type { Tools } from "./tools";

const run = promisify(execFile);

export interface ClusterOptions {
  /** Short name: central, acme, globex. */
  readonly name: string;
  readonly server: K3sServer;
  /** API server port on 127.0.0.1. */
  readonly port: number;
  readonly dir: string;
  readonly tools: Tools;
  readonly processes: Processes;
  /** Further addresses its serving certificate names (a tenant server's private address, as K3s names its node's). */
  readonly addresses?: readonly string[];
}

export interface Cluster {
  readonly name: string;
  readonly url: string;
  /** Admin kubeconfig (system:masters through a static token). */
  readonly kubeconfig: string;
  /** The cluster CA, as a kubeconfig's certificate-authority-data carries it. */
  readonly caData: string;
  readonly dir: string;
  /** The API server's flags: the K3s server's, then the journey's sealing ones (outbound.ts). */
  readonly apiServerArgs: readonly string[];
}

/** A CA, a serving certificate for 127.0.0.1 (and `ips`: the address the server's clients dial) and the service-account key pair. */
async function makeCertificates(dir: string, name: string, ips: readonly string[]): Promise<void> {
  const ca = await makeCa(dir, "ca", `journey-${name}-ca`);
  await issueCertificate(dir, ca, "server", "kube-apiserver", ["localhost", "kubernetes.default.svc"], ["127.0.0.1", ...ips]);
  const o = (args: string[]) => run("openssl", args, { cwd: dir });
  await o(["genrsa", "-out", "sa.key", "2048"]);
  await o(["rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub"]);
}

export function kubeconfigText(url: string, caData: string, token: string): string {
  return JSON.stringify({
    apiVersion: "v1", kind: "Config",
    clusters: [{ name: "c", cluster: { server: url, "certificate-authority-data": caData } }],
    users: [{ name: "u", user: { token } }],
    contexts: [{ name: "c", context: { cluster: "c", user: "u" } }],
    "current-context": "c",
  });
}

/** Starts the control plane and waits until the API answers /readyz. */
export async function startCluster(o: ClusterOptions): Promise<Cluster> {
  const certs = path.join(o.dir, "pki");
  await makeCertificates(certs, o.name, o.addresses ?? []);
  const token = crypto.randomBytes(24).toString("hex");
  fs.writeFileSync(path.join(certs, "tokens.csv"), `${token},journey-admin,journey-admin,system:masters\n`, { mode: 0o600 });
  const url = `https://127.0.0.1:${o.port}`;
  const caData = fs.readFileSync(path.join(certs, "ca.crt")).toString("base64");
  const kubeconfig = path.join(o.dir, "admin.kubeconfig");
  fs.writeFileSync(kubeconfig, kubeconfigText(url, caData, token), { mode: 0o600 });

  const kinePort = o.port + 1000;
  o.processes.start(`${o.name}-kine`, o.tools.kine, ["--endpoint", `sqlite://${path.join(o.dir, "state.db")}?_journal=WAL&cache=shared`, "--listen-address", `127.0.0.1:${kinePort}`, "--metrics-bind-address", "0"]);
  let admission: string | undefined;
  if (o.server.admissionConfig !== undefined) {
    admission = path.join(o.dir, "admission.yaml");
    fs.writeFileSync(admission, o.server.admissionConfig);
  }
  const args = apiServerArgs(o.server, { etcd: `http://127.0.0.1:${kinePort}`, port: o.port, certDir: certs, ...(admission ? { admissionConfig: admission } : {}) }, SEALED_API_SERVER_FLAGS);
  o.processes.start(`${o.name}-apiserver`, o.tools["kube-apiserver"], args);
  const ready = await waitFor(async () => {
    if (!o.processes.alive(`${o.name}-apiserver`) || !o.processes.alive(`${o.name}-kine`)) return false;
    const { stdout } = await run(o.tools.kubectl, ["--kubeconfig", kubeconfig, "get", "--raw", "/readyz"], { timeout: 5000 });
    return stdout.trim() === "ok" ? true : undefined;
  }, 90_000, 1000);
  if (!ready) throw new Error(`the ${o.name} API server did not become ready in 90 s: ${o.processes.tail(`${o.name}-apiserver`)}`);
  o.processes.start(`${o.name}-controller-manager`, o.tools["kube-controller-manager"], controllerManagerArgs(o.server, kubeconfig, certs));
  o.processes.start(`${o.name}-scheduler`, o.tools["kube-scheduler"], [`--kubeconfig=${kubeconfig}`, `--authentication-kubeconfig=${kubeconfig}`, `--authorization-kubeconfig=${kubeconfig}`, "--leader-elect=false", "--secure-port=0"]);
  o.processes.start(`${o.name}-kwok`, o.tools.kwok, [
    `--kubeconfig=${kubeconfig}`,
    "--manage-all-nodes=false",
    "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
    "--server-address=127.0.0.1:0",
    // Nodes renew their Lease as kubelets do; without it the node controller marks them NotReady after 40 s.
    "--node-lease-duration-seconds=40",
    ...o.tools.kwokStages.flatMap((s) => ["--config", s]),
  ]);
  return { name: o.name, url, kubeconfig, caData, dir: o.dir, apiServerArgs: args };
}

/** What a controller the journey runs on a cluster, as that cluster's Deployment, is started with. */
export interface ControllerOnCluster {
  readonly cluster: Cluster;
  readonly kc: Kubectl;
  /** The namespace of its Deployment. */
  readonly namespace: string;
  readonly tools: Tools;
  readonly processes: Processes;
  /** The first of its two loopback ports (health probes and metrics: every cluster's share the sealed namespace). */
  readonly port: number;
}

/**
 * A kubeconfig at `<cluster dir>/<file>` holding a 24 h token of the ServiceAccount
 * `namespace/account`, what its pod would hold (the chart's RBAC is all it has); its path, or why not.
 */
export async function serviceAccountKubeconfig(kc: Kubectl, cluster: Cluster, namespace: string, account: string, file: string): Promise<{ kubeconfig?: string; problem?: string }> {
  const token = await kc.run(["-n", namespace, "create", "token", account, "--duration=24h"]);
  if (token.code !== 0) return { problem: `no token for ${namespace}/${account}: ${token.stderr.trim()}` };
  const kubeconfig = path.join(cluster.dir, file);
  fs.writeFileSync(kubeconfig, kubeconfigText(cluster.url, cluster.caData, token.stdout.trim()), { mode: 0o600 });
  return { kubeconfig };
}
