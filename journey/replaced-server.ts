/**
 * A replaced tenant server, played on its cluster: a new instance boots on the kept state
 * volume, whose datastore still holds its predecessor's Node and CiliumNode. The script the
 * server's host files carry for it (components/host/tenant-cloud-init.ts, run by the publish
 * unit once K3s answers) runs here as the server would run it, `k3s kubectl` being kubectl with
 * the cluster's admin credential, against the tenant's real API server: the predecessor's
 * Node and CiliumNode must go, and nothing else.
 */
import * as fs from "fs";
import * as path from "path";
import { FORGET_PREDECESSORS } from "../components/host/tenant-cloud-init";
import { SERVER_NODE_LABEL } from "../facts/tenant-cluster";
import type { Kubectl } from "./kube/kubectl";
import { run } from "./host/processes";
import { waitFor } from "./kube/processes";
import { step, type JourneyStep } from "./host/step";

/** A predecessor's name: an instance id, as a server's node is named. */
const PREDECESSOR = "i-0a1b2c3d4e5f60789";
/** Cilium's per-node object, named after the node. */
const CILIUM_NODES = "ciliumnodes.cilium.io";

/**
 * Cilium's operator registers its CRDs when it starts, and it cannot start here (it manages
 * AWS ENIs): where the kind is missing, a stand-in CRD of the same group, version and name
 * lets the script's CiliumNode path run. Only what the script touches: a cluster-scoped object.
 */
const CILIUM_NODE_CRD_STAND_IN = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: CILIUM_NODES },
  spec: {
    group: "cilium.io",
    scope: "Cluster",
    names: { plural: "ciliumnodes", singular: "ciliumnode", kind: "CiliumNode", listKind: "CiliumNodeList" },
    versions: [{ name: "v2", served: true, storage: true, schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } } }],
  },
};

export interface ReplacedServerInput {
  readonly tenantId: string;
  readonly kc: Kubectl;
  /** The script from the server's planned host files (its SSM parameters). */
  readonly script: string | undefined;
  /** A scratch folder for the script and its `k3s` command. */
  readonly dir: string;
  readonly report: (s: JourneyStep) => void;
}

export async function replacedServerForgets(i: ReplacedServerInput): Promise<void> {
  const name = `tenant ${i.tenantId}: a replaced server removes its predecessor's Node and CiliumNode, and nothing else (${FORGET_PREDECESSORS} from its host-files parameter, on its API server)`;
  if (!i.script) return i.report(step(name, false, `the server's host files (its plan's parameters) hold no ${FORGET_PREDECESSORS}`));
  const [label, value] = Object.entries(SERVER_NODE_LABEL)[0];
  const servers = (await i.kc.get<{ items: { metadata: { name: string } }[] }>(["nodes", "-l", `${label}=${value}`]))?.items.map((n) => n.metadata.name) ?? [];
  if (servers.length !== 1) return i.report(step(name, false, `expected the server's Node alone with ${label}=${value}, found ${servers.join(", ") || "none"}`));
  const self = servers[0];
  // The predecessor registered as the server does: the same labels, its own name.
  const labels = (await i.kc.get<{ metadata: { labels?: Record<string, string> } }>(["node", self]))?.metadata.labels ?? {};
  const ciliumReal = (await i.kc.run(["get", "crd", CILIUM_NODES])).code === 0;
  const crd = ciliumReal ? { code: 0, stderr: "" } : await i.kc.run(["create", "-f", "-"], { input: JSON.stringify(CILIUM_NODE_CRD_STAND_IN) });
  if (crd.code !== 0) return i.report(step(name, false, `the CiliumNode kind's stand-in: ${crd.stderr.trim()}`));
  const established = await waitFor(async () => ((await i.kc.run(["get", CILIUM_NODES])).code === 0 ? true : undefined), 30_000, 500);
  if (!established) return i.report(step(name, false, `the CiliumNode kind is not served within 30 s`));
  const made = await i.kc.run(["create", "-f", "-"], {
    input: JSON.stringify({ apiVersion: "v1", kind: "List", items: [
      { apiVersion: "v1", kind: "Node", metadata: { name: PREDECESSOR, labels: Object.fromEntries(Object.entries(labels).filter(([k]) => k !== "kubernetes.io/hostname")) } },
      { apiVersion: "cilium.io/v2", kind: "CiliumNode", metadata: { name: PREDECESSOR }, spec: {} },
    ] }),
  });
  if (made.code !== 0) return i.report(step(name, false, `making the predecessor's objects: ${made.stderr.trim()}`));
  try {
    await forget(i, i.script, name, self, ciliumReal);
  } finally {
    // Whatever happened, nothing of the play stays for the steps after it.
    await i.kc.run(["delete", "node", PREDECESSOR, "--ignore-not-found", "--wait=false"]);
    await i.kc.run(["delete", CILIUM_NODES, PREDECESSOR, "--ignore-not-found", "--wait=false"]);
    if (!ciliumReal) await i.kc.run(["delete", "crd", CILIUM_NODES, "--ignore-not-found", "--wait=false"]);
  }
}

/** Runs the script as the new server would, and reports what it removed and kept. */
async function forget(i: ReplacedServerInput, script: string, name: string, self: string, ciliumReal: boolean): Promise<void> {
  const names = async (kind: string) => (await i.kc.get<{ items: { metadata: { name: string } }[] }>([kind]))?.items.map((n) => n.metadata.name).sort() ?? [];
  const state = async () => ({ nodes: await names("nodes"), cilium: await names(CILIUM_NODES) });
  const before = await state();
  // The server's `k3s kubectl` is kubectl with its admin kubeconfig.
  fs.mkdirSync(path.join(i.dir, "bin"), { recursive: true });
  fs.writeFileSync(path.join(i.dir, "bin", "k3s"), `#!/bin/sh\n[ "$1" = kubectl ] && shift\nexec '${i.kc.binary}' --kubeconfig '${i.kc.kubeconfig}' "$@"\n`, { mode: 0o755 });
  const file = path.join(i.dir, path.basename(FORGET_PREDECESSORS));
  fs.writeFileSync(file, script, { mode: 0o700 });
  const r = await run(["bash", file, self], { env: { ...process.env, PATH: `${path.join(i.dir, "bin")}:${process.env.PATH ?? ""}` }, timeoutMs: 60_000 });
  const expected = JSON.stringify({ nodes: before.nodes.filter((n) => n !== PREDECESSOR), cilium: before.cilium.filter((n) => n !== PREDECESSOR) });
  // Its deletions do not wait on finalizers: the objects go once the API server has let them.
  let after = await state();
  await waitFor(async () => ((after = await state()), JSON.stringify(after) === expected ? true : undefined), 10_000, 500);
  const ok = r.code === 0 && before.nodes.includes(PREDECESSOR) && before.cilium.includes(PREDECESSOR) && JSON.stringify(after) === expected;
  i.report(step(name, ok, ok
    ? `${PREDECESSOR}'s Node and CiliumNode${ciliumReal ? "" : " (the kind a stand-in CRD: Cilium's operator registers it, and does not run here)"} removed by ${self}; kept: ${after.nodes.join(", ")}; CiliumNodes: ${after.cilium.join(", ") || "none"}`
    : `exit ${r.code} ${(r.stderr || r.stdout).trim().slice(-300)}; Nodes before ${before.nodes.join(", ")}, after ${after.nodes.join(", ")}; CiliumNodes before ${before.cilium.join(", ")}, after ${after.cilium.join(", ")}`));
}
