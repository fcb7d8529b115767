/**
 * The network namespace the journey's Kubernetes part runs in: loopback only, no route out.
 * kine, the API servers, controller managers, schedulers, kwok, and every kubectl and helm the
 * journey runs enter it (`ip netns exec`), so a dial to any address outside it fails at once
 * (network unreachable) instead of leaving the machine. Names resolve from its own hosts file
 * and a resolver on its own loopback, so no lookup leaves it either. An nftables table in it
 * counts (and drops) any packet addressed outside loopback; the journey's last step reads it.
 */
import * as fs from "fs";
import * as path from "path";
import { parseCounter } from "../host/nft";
import { abandonedNamespaces, teardown } from "../host/network";
import { LOOPBACK_RESOLVER, must, NETNS_ETC, run } from "../host/processes";
import { BINARIES, type Tools } from "./tools";

/** The namespace's name stem: a crashed run's namespace is found by it and removed. */
export const SEALED_STEM = "clusterra-k8s-";
const TABLE = "clusterra_sealed";
const COUNTER = "outside";
/** The set of the namespace's own further addresses (on its loopback): a tenant server's private address, which ArgoCD dials. */
const OWN = "own";

/** The namespace's firewall: counts and drops whatever is addressed outside loopback and the namespace's own addresses. */
export function sealedRuleset(): string {
  return [
    `table inet ${TABLE} {`,
    `  counter ${COUNTER} { }`,
    `  set ${OWN} { type ipv4_addr; }`,
    "  chain output {",
    "    type filter hook output priority 0; policy accept;",
    `    meta nfproto ipv4 ip daddr != 127.0.0.0/8 ip daddr != @${OWN} counter name ${COUNTER} drop`,
    `    meta nfproto ipv6 ip6 daddr != ::1 counter name ${COUNTER} drop`,
    "  }",
    "}",
    "",
  ].join("\n");
}

export interface SealedNetwork {
  readonly name: string;
  /** `argv` run inside the namespace. */
  readonly argv: (argv: readonly string[]) => string[];
}

/** Makes the namespace (removing any a crashed run left), loopback up, resolver and firewall set. */
export async function sealNetwork(name = `${SEALED_STEM}${process.pid}`): Promise<SealedNetwork> {
  const left = await abandonedNamespaces(SEALED_STEM);
  if (left.length) await teardown(left);
  await must(["ip", "netns", "add", name], { timeoutMs: 5000 });
  await must(["ip", "-n", name, "link", "set", "lo", "up"], { timeoutMs: 5000 });
  const etc = path.join(NETNS_ETC, name);
  fs.mkdirSync(etc, { recursive: true });
  fs.writeFileSync(path.join(etc, "hosts"), "127.0.0.1 localhost\n::1 localhost\n");
  fs.writeFileSync(path.join(etc, "resolv.conf"), LOOPBACK_RESOLVER);
  await must(["ip", "netns", "exec", name, "nft", "-f", "-"], { timeoutMs: 5000, input: sealedRuleset() });
  return { name, argv: (argv) => ["ip", "netns", "exec", name, ...argv] };
}

/**
 * Gives the namespace `address` on its loopback (a tenant server's private address, as ArgoCD's
 * cluster Secret names it), so a dial to it stays inside the namespace, and lets the firewall
 * pass it. Packets to it never leave: the address is the namespace's own.
 */
export async function addOwnAddress(net: SealedNetwork, address: string): Promise<void> {
  await must(["ip", "-n", net.name, "addr", "add", `${address}/32`, "dev", "lo"], { timeoutMs: 5000 });
  await must(net.argv(["nft", "add", "element", "inet", TABLE, OWN, `{ ${address} }`]), { timeoutMs: 5000 });
}

/** Removes the namespace and its /etc files, ending whatever still runs in it. */
export async function unsealNetwork(net: SealedNetwork): Promise<string[]> {
  return teardown([net.name]);
}

/**
 * The tools, each behind a script that runs it inside the namespace: the journey and the
 * project code it calls (renders, kubectl, processes) take a binary's path, so every one of
 * them runs sealed without knowing it. `ip netns exec` execs in place, so a process's pid and
 * process group stay the tool's own.
 */
export function sealedTools(tools: Tools, net: SealedNetwork, dir: string): Tools {
  fs.mkdirSync(dir, { recursive: true });
  const wrapped: Record<string, string> = {};
  for (const name of BINARIES) {
    const binary = tools[name];
    const script = path.join(dir, name);
    fs.writeFileSync(script, `#!/bin/sh\nexec ${net.argv([binary]).map(shellWord).join(" ")} "$@"\n`, { mode: 0o755 });
    wrapped[name] = script;
  }
  return { ...tools, ...wrapped };
}

function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, "'\\''")}'`;
}

/** What left, or tried to leave, the namespace. */
export interface Leaks {
  /** Packets addressed outside loopback (counted by the namespace's firewall, then dropped). */
  readonly packetsOutside: number;
  /** Dials refused at once for want of a route (IPv4 and IPv6 OutNoRoutes). */
  readonly noRoute: number;
  /** Packets sent in all (IPv4 and IPv6 OutRequests): every one of them on loopback. */
  readonly sent: number;
}

/** The `Ip:` (or `Ip6`) counters of /proc/net/snmp or /proc/net/snmp6 as numbers by name. */
export function snmpCounters(snmp: string, snmp6: string): Record<string, number> {
  const out: Record<string, number> = {};
  const lines = snmp.split("\n");
  for (let i = 0; i + 1 < lines.length; i++) {
    const [head, values] = [lines[i].split(/\s+/), lines[i + 1].split(/\s+/)];
    if (head[0] !== "Ip:" || values[0] !== "Ip:") continue;
    head.slice(1).forEach((k, j) => (out[`Ip${k}`] = Number(values[j + 1])));
    break;
  }
  for (const line of snmp6.split("\n")) {
    const [k, v] = line.trim().split(/\s+/);
    if (k?.startsWith("Ip6") && v !== undefined) out[k] = Number(v);
  }
  return out;
}

/** Reads the namespace's counters. */
export async function readLeaks(net: SealedNetwork): Promise<Leaks> {
  const counter = await must(net.argv(["nft", "-j", "list", "counter", "inet", TABLE, COUNTER]), { timeoutMs: 5000 });
  const snmp = await run(net.argv(["cat", "/proc/net/snmp"]), { timeoutMs: 5000 });
  const snmp6 = await run(net.argv(["cat", "/proc/net/snmp6"]), { timeoutMs: 5000 });
  const c = snmpCounters(snmp.stdout, snmp6.stdout);
  return {
    packetsOutside: parseCounter(counter).packets,
    noRoute: (c.IpOutNoRoutes ?? 0) + (c.Ip6OutNoRoutes ?? 0),
    sent: (c.IpOutRequests ?? 0) + (c.Ip6OutRequests ?? 0),
  };
}

/**
 * An address outside the machine's networks (TEST-NET-1, RFC 5737) for the counters' control:
 * routed for a moment to a veth pair whose both ends stay inside the namespace (the VM's kernel
 * has no dummy devices), and the firewall drops its packets before they reach the link.
 */
const SEEDED_OUTSIDE = "192.0.2.1";
const SEEDED_DEVICE = "seeded0";
const SEEDED_PEER = "seeded1";

/** What the control saw: the counters before, after a dial with a route out, and after one with none. */
export interface SeededLeaks {
  readonly before: Leaks;
  readonly routed: Leaks;
  readonly unrouted: Leaks;
}

/**
 * The counters' control, run before anything else in the namespace: a route out seeded (to a
 * veth pair inside it), a dial along it, which the firewall must count; the route removed, a dial
 * again, which must count as refused for want of a route. Neither packet leaves the namespace.
 */
export async function seededLeaks(net: SealedNetwork): Promise<SeededLeaks> {
  const dial = () => run(net.argv(["timeout", "2", "bash", "-c", `exec 3<>/dev/tcp/${SEEDED_OUTSIDE}/443`]), { timeoutMs: 5000 });
  const before = await readLeaks(net);
  await must(["ip", "-n", net.name, "link", "add", SEEDED_DEVICE, "type", "veth", "peer", "name", SEEDED_PEER], { timeoutMs: 5000 });
  try {
    // IPv6 off on the pair first: its neighbour discovery would be counted outside too, and the dial must be what is counted.
    for (const device of [SEEDED_PEER, SEEDED_DEVICE]) await must(net.argv(["sysctl", "-q", "-w", `net.ipv6.conf.${device}.disable_ipv6=1`]), { timeoutMs: 5000 });
    for (const device of [SEEDED_PEER, SEEDED_DEVICE]) await must(["ip", "-n", net.name, "link", "set", device, "up"], { timeoutMs: 5000 });
    await must(["ip", "-n", net.name, "route", "add", `${SEEDED_OUTSIDE}/32`, "dev", SEEDED_DEVICE], { timeoutMs: 5000 });
    await dial();
  } finally {
    await run(["ip", "-n", net.name, "link", "del", SEEDED_DEVICE], { timeoutMs: 5000 });
  }
  const routed = await readLeaks(net);
  await dial();
  return { before, routed, unrouted: await readLeaks(net) };
}

/** What a Leaks reading adds to an earlier one. Pure. */
export function leaksSince(now: Leaks, earlier: Leaks): Leaks {
  return { packetsOutside: now.packetsOutside - earlier.packetsOutside, noRoute: now.noRoute - earlier.noRoute, sent: now.sent - earlier.sent };
}
