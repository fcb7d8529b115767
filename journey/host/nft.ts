/**
 * Security groups as nftables: the rules of the groups attached to one ENI become one
 * `inet` table in the namespace that stands for the instance (or the pod's node). Like AWS:
 * stateful (replies and related ICMP pass), default deny both ways, only the ENI filtered
 * (traffic between pods of one host never crosses a security group). Every drop is counted
 * and its flow recorded (source . destination . protocol . port) in a set, so a failed
 * journey step can name what was refused and where. Pure: text in, text out.
 */
import type { SecurityGroupRule } from "../../access/security-groups";

export const SG_TABLE = "sg";

/** The two directions, and the set and counter each records its drops in. */
export const DROPS = {
  ingress: { set: "dropped_ingress", counter: "dropped_ingress" },
  egress: { set: "dropped_egress", counter: "dropped_egress" },
} as const;

export interface EniFirewall {
  /** Who owns the ENI, for comments and drop reports ("central host", "acme node 1"). */
  readonly label: string;
  /** The interface in the namespace that stands for the ENI. */
  readonly device: string;
  /** The groups attached to the ENI. */
  readonly groupIds: readonly string[];
}

export interface TranslationInput {
  readonly eni: EniFirewall;
  /** Rules of the plans (any group: those of other groups are ignored). */
  readonly rules: readonly SecurityGroupRule[];
  /** Addresses of each group's members in the topology: what a rule naming a group admits. */
  readonly members: ReadonlyMap<string, readonly string[]>;
}

export interface Translation {
  readonly text: string;
  /** Rules of the ENI's groups that became an nftables rule. */
  readonly translated: number;
  /** Rules of the ENI's groups that cannot match here, each with why. */
  readonly skipped: readonly { readonly rule: string; readonly why: string }[];
}

/** nftables quotes a comment with "; keep it printable and short. */
function comment(text: string): string {
  return `comment "${text.replace(/["\\]/g, "'").slice(0, 120)}"`;
}

function anyPort(from: number | undefined, to: number | undefined): boolean {
  return from === undefined || to === undefined || from < 0 || (from <= 0 && to >= 65535);
}

/** The protocol (and port, type, code) part of a rule's match, as AWS reads fromPort/toPort. */
export function protocolMatch(rule: Pick<SecurityGroupRule, "protocol" | "fromPort" | "toPort">): string {
  const { protocol, fromPort, toPort } = rule;
  if (protocol === "all") return "";
  if (protocol === "tcp" || protocol === "udp") {
    if (anyPort(fromPort, toPort)) return `meta l4proto ${protocol}`;
    return `${protocol} dport ${fromPort === toPort ? fromPort : `${fromPort}-${toPort}`}`;
  }
  if (protocol === "icmp") {
    // For ICMP, AWS's fromPort is the type and toPort the code; -1 is any.
    const parts = ["meta l4proto icmp"];
    if (fromPort !== undefined && fromPort >= 0) parts.push(`icmp type ${fromPort}`);
    if (toPort !== undefined && toPort >= 0 && fromPort !== undefined && fromPort >= 0) parts.push(`icmp code ${toPort}`);
    return parts.join(" ");
  }
  return `meta l4proto ${protocol}`;
}

/** The peer part: `ip saddr` on ingress, `ip daddr` on egress; undefined when nothing here can match. */
export function peerMatch(rule: SecurityGroupRule, members: ReadonlyMap<string, readonly string[]>): { match: string } | { why: string } {
  const field = rule.direction === "ingress" ? "ip saddr" : "ip daddr";
  const peer = rule.peer;
  if (peer.kind === "unsupported") return { why: `${peer.what}: not modelled (IPv4 only)` };
  if (peer.kind === "cidr") return { match: peer.cidr === "0.0.0.0/0" ? "meta nfproto ipv4" : `${field} ${peer.cidr}` };
  const addresses = members.get(peer.groupId) ?? [];
  if (addresses.length === 0) return { why: `group ${peer.groupId} has no member in the topology` };
  return { match: `${field} ${addresses.length === 1 ? addresses[0] : `{ ${[...addresses].sort().join(", ")} }`}` };
}

function chain(direction: "ingress" | "egress", eni: EniFirewall, lines: readonly string[]): string[] {
  // Ingress is judged as the packet reaches the ENI, before any DNAT (a NodePort is admitted
  // by its own port); egress as it leaves, after SNAT. Conntrack runs first (priority -200).
  const hook = direction === "ingress" ? "prerouting priority -150" : "postrouting priority 300";
  const dev = direction === "ingress" ? "iifname" : "oifname";
  const drops = DROPS[direction];
  return [
    `  chain ${direction} {`,
    `    type filter hook ${hook}; policy accept;`,
    `    ${dev} != "${eni.device}" accept comment "only the ENI carries security groups"`,
    `    ct state established,related accept comment "security groups are stateful"`,
    ...lines.map((l) => `    ${l}`),
    `    meta l4proto { tcp, udp } add @${drops.set} { ip saddr . ip daddr . meta l4proto . th dport }`,
    `    counter name "${drops.counter}" drop comment "default deny (${eni.label})"`,
    "  }",
  ];
}

/** One ENI's groups as an nftables table. */
export function securityGroupRuleset(input: TranslationInput): Translation {
  const { eni, members } = input;
  const mine = input.rules.filter((r) => eni.groupIds.includes(r.groupId));
  const skipped: { rule: string; why: string }[] = [];
  const lines: Record<"ingress" | "egress", string[]> = { ingress: [], egress: [] };
  for (const rule of mine) {
    const peer = peerMatch(rule, members);
    if ("why" in peer) {
      skipped.push({ rule: rule.name, why: peer.why });
      continue;
    }
    const match = [peer.match, protocolMatch(rule)].filter((m) => m !== "").join(" ");
    lines[rule.direction].push(`${match} counter accept ${comment(rule.name)}`);
  }
  const set = (name: string) => `  set ${name} { type ipv4_addr . ipv4_addr . inet_proto . inet_service; flags dynamic; size 4096; }`;
  const text = [
    `# Security groups ${eni.groupIds.join(", ")} of ${eni.label}, on ${eni.device}.`,
    `table inet ${SG_TABLE} {`,
    `  counter ${DROPS.ingress.counter} { }`,
    `  counter ${DROPS.egress.counter} { }`,
    set(DROPS.ingress.set),
    set(DROPS.egress.set),
    ...chain("ingress", eni, lines.ingress),
    ...chain("egress", eni, lines.egress),
    "}",
    "",
  ].join("\n");
  return { text, translated: lines.ingress.length + lines.egress.length, skipped };
}

/** A flow a security group refused. */
export interface DroppedFlow {
  readonly direction: "ingress" | "egress";
  readonly source: string;
  readonly destination: string;
  readonly protocol: string;
  readonly port: number;
}

const PROTOCOL_NAMES: Readonly<Record<number, string>> = { 6: "tcp", 17: "udp" };

/** The flows in one drop set, from `nft -j list set inet sg <set>`. */
export function parseDroppedFlows(direction: "ingress" | "egress", nftJson: string): DroppedFlow[] {
  const doc = JSON.parse(nftJson) as { nftables?: Record<string, unknown>[] };
  const flows: DroppedFlow[] = [];
  for (const item of doc.nftables ?? []) {
    const set = item.set as { elem?: unknown[] } | undefined;
    for (const e of set?.elem ?? []) {
      // Elements are {"concat": [...]}, or wrapped as {"elem": {"val": {"concat": [...]}}} with counters/timeouts.
      const inner = (e as { elem?: { val?: unknown } }).elem?.val ?? e;
      const parts = (inner as { concat?: unknown[] }).concat;
      if (!parts || parts.length !== 4) continue;
      const [source, destination, proto, port] = parts;
      flows.push({ direction, source: String(source), destination: String(destination), protocol: typeof proto === "number" ? PROTOCOL_NAMES[proto] ?? String(proto) : String(proto), port: Number(port) });
    }
  }
  return flows;
}

/** The value of a named counter, from `nft -j list counter inet sg <name>`. */
export function parseCounter(nftJson: string): { packets: number; bytes: number } {
  const doc = JSON.parse(nftJson) as { nftables?: { counter?: { packets: number; bytes: number } }[] };
  const c = (doc.nftables ?? []).find((i) => i.counter)?.counter;
  return { packets: c?.packets ?? 0, bytes: c?.bytes ?? 0 };
}

/** Packets each rule accepted, by its comment, from `nft -j list table inet sg`. */
export function parseRuleHits(nftJson: string): Map<string, number> {
  const doc = JSON.parse(nftJson) as { nftables?: { rule?: { comment?: string; expr?: Record<string, unknown>[] } }[] };
  const hits = new Map<string, number>();
  for (const item of doc.nftables ?? []) {
    const rule = item.rule;
    if (!rule?.comment) continue;
    const counter = rule.expr?.find((x) => "counter" in x)?.counter as { packets?: number } | undefined;
    if (counter?.packets !== undefined) hits.set(rule.comment, (hits.get(rule.comment) ?? 0) + counter.packets);
  }
  return hits;
}
