/** Just enough CIDR arithmetic for the network policies (no dependency in the pack). */

export interface Ipv4Cidr {
  readonly base: number;
  readonly prefix: number;
}

/** Parses `a.b.c.d/n` (or a bare address, as /32); undefined when malformed. */
export function parseIpv4Cidr(text: string): Ipv4Cidr | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?:\/(\d{1,2}))?$/.exec(text.trim());
  if (!m) return undefined;
  const octets = m.slice(1, 5).map(Number);
  if (octets.some((o) => o > 255)) return undefined;
  const prefix = m[5] === undefined ? 32 : Number(m[5]);
  if (prefix > 32) return undefined;
  const addr = ((octets[0] << 24) | (octets[1] << 16) | (octets[2] << 8) | octets[3]) >>> 0;
  return { base: (addr & mask(prefix)) >>> 0, prefix };
}

function mask(prefix: number): number {
  return prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
}

/** Whether `inner` lies entirely inside `outer`. */
export function ipv4Contains(outer: Ipv4Cidr, inner: Ipv4Cidr): boolean {
  return inner.prefix >= outer.prefix && ((inner.base & mask(outer.prefix)) >>> 0) === outer.base;
}

/** Whether two ranges share at least one address (one contains the other, for CIDRs). */
export function ipv4Overlaps(a: Ipv4Cidr, b: Ipv4Cidr): boolean {
  return ipv4Contains(a, b) || ipv4Contains(b, a);
}

export function ipv4Equal(a: Ipv4Cidr, b: Ipv4Cidr): boolean {
  return a.base === b.base && a.prefix === b.prefix;
}

export interface Ipv6Cidr {
  readonly base: bigint;
  readonly prefix: number;
}

const V6_BITS = 128n;
const V6_ALL = (1n << V6_BITS) - 1n;

function mask6(prefix: number): bigint {
  return prefix === 0 ? 0n : (V6_ALL << BigInt(128 - prefix)) & V6_ALL;
}

/** Parses an IPv6 CIDR (`2001:db8::/32`, `::/0`, a bare address as /128); undefined when malformed. */
export function parseIpv6Cidr(text: string): Ipv6Cidr | undefined {
  const m = /^([0-9a-fA-F:.]+)(?:\/(\d{1,3}))?$/.exec(text.trim());
  if (!m || !m[1].includes(":")) return undefined;
  const prefix = m[2] === undefined ? 128 : Number(m[2]);
  if (prefix > 128) return undefined;
  let addr = m[1];
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two hextets.
  const v4 = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(addr);
  if (v4) {
    const o = v4.slice(1, 5).map(Number);
    if (o.some((x) => x > 255)) return undefined;
    addr = addr.slice(0, v4.index) + `${((o[0] << 8) | o[1]).toString(16)}:${((o[2] << 8) | o[3]).toString(16)}`;
  }
  const halves = addr.split("::");
  if (halves.length > 2) return undefined;
  const head = halves[0] === "" ? [] : halves[0].split(":");
  const tail = halves.length === 2 ? (halves[1] === "" ? [] : halves[1].split(":")) : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  let value = 0n;
  for (const g of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
    value = (value << 16n) | BigInt(parseInt(g, 16));
  }
  return { base: value & mask6(prefix), prefix };
}

export function ipv6Contains(outer: Ipv6Cidr, inner: Ipv6Cidr): boolean {
  return inner.prefix >= outer.prefix && (inner.base & mask6(outer.prefix)) === outer.base;
}

/** `0.0.0.0/0`, `::/0` and other spellings of "every address". */
export function isAnyAddress(cidr: string): boolean {
  const t = cidr.trim();
  if (/\/0$/.test(t)) return true;
  return false;
}

/** Private IPv4 space: RFC 1918 and the shared address space of RFC 6598. */
const PRIVATE_V4 = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10"].map((c) => parseIpv4Cidr(c)!);
/** Private IPv6 space: unique local addresses (RFC 4193). */
const PRIVATE_V6 = [parseIpv6Cidr("fc00::/7")!];

/**
 * Whether a source CIDR reaches beyond private space: anything not inside RFC 1918 /
 * RFC 6598 (IPv4) or ULA (IPv6) space or one of `vpcCidrs` (the stack's own VPC blocks,
 * either family), and any block wider than /8 (IPv4) or /16 (IPv6) whatever it covers.
 * So `0.0.0.0/1` + `128.0.0.0/1` are as public as `0.0.0.0/0`. undefined when malformed.
 */
export function isPublicSource(cidr: string, vpcCidrs: readonly string[] = []): boolean | undefined {
  const v4 = parseIpv4Cidr(cidr);
  if (v4) {
    if (v4.prefix < 8) return true;
    const allowed = [...PRIVATE_V4, ...vpcCidrs.flatMap((c) => parseIpv4Cidr(c) ?? [])];
    return !allowed.some((p) => ipv4Contains(p, v4));
  }
  const v6 = parseIpv6Cidr(cidr);
  if (v6) {
    if (v6.prefix < 16) return true;
    const allowed = [...PRIVATE_V6, ...vpcCidrs.flatMap((c) => parseIpv6Cidr(c) ?? [])];
    return !allowed.some((p) => ipv6Contains(p, v6));
  }
  return undefined;
}
