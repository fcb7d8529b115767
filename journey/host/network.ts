/**
 * Carrying out a planned topology on this machine, reading its drop records, and removing
 * it all again (processes left in its namespaces, the namespaces and with them every veth,
 * the per-namespace /etc files).
 */
import * as fs from "fs";
import * as path from "path";
import { DROPS, parseCounter, parseDroppedFlows, parseRuleHits, SG_TABLE, type DroppedFlow } from "./nft";
import { LOOPBACK_RESOLVER, must, NETNS_ETC, run, sleep } from "./processes";
import type { Namespace, Topology } from "./topology";

export async function buildTopology(topology: Topology): Promise<void> {
  for (const args of topology.commands) await must(["ip", ...args], { timeoutMs: 5000 });
  for (const [ns, text] of topology.hosts) {
    const dir = path.join(NETNS_ETC, ns);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "hosts"), text);
  }
  // Every namespace resolves only from its hosts file: a name missing there fails at once
  // on the namespace's own loopback instead of asking the machine's resolver.
  for (const n of topology.namespaces) {
    const dir = path.join(NETNS_ETC, n.name);
    fs.mkdirSync(dir, { recursive: true });
    if (!topology.hosts.has(n.name)) fs.writeFileSync(path.join(dir, "hosts"), "127.0.0.1 localhost\n");
    fs.writeFileSync(path.join(dir, "resolv.conf"), LOOPBACK_RESOLVER);
  }
  for (const [ns, texts] of topology.rulesets) await must(["ip", "netns", "exec", ns, "nft", "-f", "-"], { timeoutMs: 5000, input: texts.join("\n") });
}

/** Namespaces of earlier runs with this prefix stem, left by a crash: removed before a new run. */
export async function listNamespaces(stem: string): Promise<string[]> {
  const r = await run(["ip", "netns", "list"], { timeoutMs: 5000 });
  return r.stdout.split("\n").map((l) => l.split(" ")[0]).filter((n) => n.startsWith(stem));
}

/**
 * Namespaces named `<stem>...-<pid>` whose run has ended (no process `pid`): what a crashed
 * run left. Another run's live namespaces are never among them.
 */
export async function abandonedNamespaces(stem: string): Promise<string[]> {
  return (await listNamespaces(stem)).filter((n) => !runAlive(n));
}

/** Whether the process a namespace's name ends with (`-<pid>`) still runs. Names without one count as abandoned. */
export function runAlive(name: string): boolean {
  const pid = Number(/-(\d+)$/.exec(name)?.[1] ?? NaN);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Kills what still runs in the namespaces (by pid), deletes them and their /etc files. */
export async function teardown(namespaces: readonly string[]): Promise<string[]> {
  const problems: string[] = [];
  for (let round = 0; round < 3; round++) {
    let left = 0;
    for (const ns of namespaces) {
      const r = await run(["ip", "netns", "pids", ns], { timeoutMs: 5000 });
      for (const pid of r.stdout.split(/\s+/).filter(Boolean).map(Number)) {
        left++;
        try {
          process.kill(pid, round === 0 ? "SIGTERM" : "SIGKILL");
        } catch {
          // gone meanwhile
        }
      }
    }
    if (left === 0) break;
    await sleep(round === 0 ? 1000 : 300);
  }
  for (const ns of namespaces) {
    const r = await run(["ip", "netns", "del", ns], { timeoutMs: 5000 });
    if (r.code !== 0 && !/No such file/.test(r.stderr)) problems.push(`${ns}: ${r.stderr.trim()}`);
    fs.rmSync(path.join(NETNS_ETC, ns), { recursive: true, force: true });
  }
  return problems;
}

/** A refused flow, with where it was refused. */
export interface Drop extends DroppedFlow {
  readonly at: Namespace;
}

/** Every flow the security groups refused so far. */
export async function droppedFlows(topology: Topology): Promise<Drop[]> {
  const drops: Drop[] = [];
  for (const f of topology.firewalls) {
    for (const direction of ["ingress", "egress"] as const) {
      const r = await run(["ip", "netns", "exec", f.ns.name, "nft", "-j", "list", "set", "inet", SG_TABLE, DROPS[direction].set], { timeoutMs: 5000 });
      if (r.code === 0) drops.push(...parseDroppedFlows(direction, r.stdout).map((d) => ({ ...d, at: f.ns })));
    }
  }
  return drops;
}

/** Packets dropped per ENI and direction (the named counters). */
export async function dropCounts(topology: Topology): Promise<{ ns: Namespace; ingress: number; egress: number }[]> {
  const out: { ns: Namespace; ingress: number; egress: number }[] = [];
  for (const f of topology.firewalls) {
    const count = async (name: string) => parseCounter((await run(["ip", "netns", "exec", f.ns.name, "nft", "-j", "list", "counter", "inet", SG_TABLE, name], { timeoutMs: 5000 })).stdout || "{}").packets;
    out.push({ ns: f.ns, ingress: await count(DROPS.ingress.counter), egress: await count(DROPS.egress.counter) });
  }
  return out;
}

/** Packets each security-group rule of a namespace admitted, by rule name. */
export async function ruleHits(ns: Namespace): Promise<Map<string, number>> {
  const r = await run(["ip", "netns", "exec", ns.name, "nft", "-j", "list", "table", "inet", SG_TABLE], { timeoutMs: 5000 });
  return r.code === 0 ? parseRuleHits(r.stdout) : new Map();
}

/** A refused flow in words: "10.16.0.41 (acme slurmd pod cpu-4-0) -> 10.0.0.10:41234/tcp (central host), dropped by acme node 1's egress". */
export function describeDrop(d: Drop, names: ReadonlyMap<string, string>): string {
  const who = (a: string) => (names.has(a) ? `${a} (${names.get(a)})` : a);
  return `${who(d.source)} -> ${who(d.destination)}:${d.port}/${d.protocol} dropped at ${d.at.label} ${d.direction}`;
}

/** Opens a TCP connection from a namespace, bounded; true when it connected. */
export async function tcpProbe(ns: string, address: string, port: number, timeoutMs = 3000): Promise<boolean> {
  const r = await run(["ip", "netns", "exec", ns, "timeout", String(Math.ceil(timeoutMs / 1000)), "bash", "-c", `exec 3<>/dev/tcp/${address}/${port}`], { timeoutMs: timeoutMs + 2000 });
  return r.code === 0;
}
