/**
 * A replaced tenant server, played on its cluster: a new instance boots on the kept state
 * volume, whose datastore still holds its predecessor's Node and CiliumNode. The script the
 * server's user data carries for it (components/host/tenant-cloud-init.ts, run by the publish
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
import { step, type JourneyStep } from "./host/step";

/** A predecessor's name: an instance id, as a server's node is named. */
const PREDECESSOR = "i-0a1b2c3d4e5f60789";
/** Cilium's per-node object, named after the node. */
const CILIUM_NODES = "ciliumnodes.cilium.io";

export interface ReplacedServerInput {
  readonly tenantId: string;
  readonly kc: Kubectl;
  /** The script from the server's planned user data. */
  readonly script: string | undefined;
  /** A scratch folder for the script and its `k3s` command. */
  readonly dir: string;
  readonly report: (s: JourneyStep) => void;
}

export async function replacedServerForgets(i: ReplacedServerInput): Promise<void> {
  const name = `tenant ${i.tenantId}: a replaced server removes its predecessor's Node and CiliumNode, and nothing else (${FORGET_PREDECESSORS} from its user data, on its API server)`;
  if (!i.script) return i.report(step(name, false, `the server's user data writes no ${FORGET_PREDECESSORS}`));
  const [label, value] = Object.entries(SERVER_NODE_LABEL)[0];
  const servers = (await i.kc.get<{ items: { metadata: { name: string } }[] }>(["nodes", "-l", `${label}=${value}`]))?.items.map((n) => n.metadata.name) ?? [];
  if (servers.length !== 1) return i.report(step(name, false, `expected the server's Node alone with ${label}=${value}, found ${servers.join(", ") || "none"}`));
  const self = servers[0];
  const cilium = (await i.kc.run(["get", "crd", CILIUM_NODES])).code === 0;
  const made = await i.kc.run(["create", "-f", "-"], {
    input: JSON.stringify({ apiVersion: "v1", kind: "List", items: [
      { apiVersion: "v1", kind: "Node", metadata: { name: PREDECESSOR, labels: SERVER_NODE_LABEL } },
      ...(cilium ? [{ apiVersion: "cilium.io/v2", kind: "CiliumNode", metadata: { name: PREDECESSOR }, spec: {} }] : []),
    ] }),
  });
  if (made.code !== 0) return i.report(step(name, false, `making the predecessor's objects: ${made.stderr.trim()}`));
  const names = async (kind: string) => (await i.kc.get<{ items: { metadata: { name: string } }[] }>([kind]))?.items.map((n) => n.metadata.name).sort() ?? [];
  const before = { nodes: await names("nodes"), cilium: cilium ? await names(CILIUM_NODES) : [] };
  // The server's `k3s kubectl` is kubectl with its admin kubeconfig.
  fs.mkdirSync(path.join(i.dir, "bin"), { recursive: true });
  fs.writeFileSync(path.join(i.dir, "bin", "k3s"), `#!/bin/sh
[ "$1" = kubectl ] && shift
exec '${i.kc.binary}' --kubeconfig '${i.kc.kubeconfig}' "$@"
`, { mode: 0o755 });
  const script = path.join(i.dir, path.basename(FORGET_PREDECESSORS));
  fs.writeFileSync(script, i.script, { mode: 0o700 });
  const r = await run(["bash", script, self], { env: { ...process.env, PATH: `${path.join(i.dir, "bin")}:${process.env.PATH ?? ""}` }, timeoutMs: 60_000 });
  const after = { nodes: await names("nodes"), cilium: cilium ? await names(CILIUM_NODES) : [] };
  const expected = { nodes: before.nodes.filter((n) => n !== PREDECESSOR), cilium: before.cilium.filter((n) => n !== PREDECESSOR) };
  const ok = r.code === 0 && before.nodes.includes(PREDECESSOR) && JSON.stringify(after) === JSON.stringify(expected);
  i.report(step(name, ok, ok
    ? `${PREDECESSOR}'s Node${cilium ? " and CiliumNode" : ""} removed by ${self}; kept: ${after.nodes.join(", ")}${cilium ? ` (CiliumNodes: ${after.cilium.join(", ") || "none"})` : " (no CiliumNode kind: Cilium's CRDs are not there)"}`
    : `exit ${r.code} ${(r.stderr || r.stdout).trim().slice(-300)}; Nodes before ${before.nodes.join(", ")}, after ${after.nodes.join(", ")}${cilium ? `; CiliumNodes before ${before.cilium.join(", ")}, after ${after.cilium.join(", ")}` : ""}`));
}
