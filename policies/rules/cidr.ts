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

/** `0.0.0.0/0`, `::/0` and other spellings of "every address". */
export function isAnyAddress(cidr: string): boolean {
  const t = cidr.trim();
  if (/\/0$/.test(t)) return true;
  return false;
}
