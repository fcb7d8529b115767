/** CIDR arithmetic on top of ipaddr.js: parsing, privacy, overlap, subnet carving. */
import * as ipaddr from "ipaddr.js";

export const MIN_VPC_PREFIX = 16; // AWS's largest VPC
export const MAX_VPC_PREFIX = 24; // smallest we accept: room for subnets in several zones

/** Why a VPC CIDR is unusable, or undefined when it is fine. */
export function vpcCidrProblem(cidr: string): string | undefined {
  let addr: ipaddr.IPv4;
  let prefix: number;
  try {
    [addr, prefix] = ipaddr.IPv4.parseCIDR(cidr);
  } catch {
    return "not an IPv4 CIDR";
  }
  if (!/^\d+\.\d+\.\d+\.\d+\/\d+$/.test(cidr)) return "not in dotted a.b.c.d/n form";
  if (ipaddr.IPv4.networkAddressFromCIDR(cidr).toString() !== addr.toString()) {
    return `host bits set (the network address is ${ipaddr.IPv4.networkAddressFromCIDR(cidr).toString()}/${prefix})`;
  }
  if (addr.range() !== "private") return "not a private (RFC 1918) range";
  if (prefix < MIN_VPC_PREFIX) return `larger than /${MIN_VPC_PREFIX}, the largest VPC AWS allows`;
  if (prefix > MAX_VPC_PREFIX) return `smaller than /${MAX_VPC_PREFIX}`;
  return undefined;
}

/** True when two CIDRs share any address. */
export function cidrsOverlap(a: string, b: string): boolean {
  const [na, pa] = ipaddr.IPv4.parseCIDR(a);
  const [nb, pb] = ipaddr.IPv4.parseCIDR(b);
  return na.match(nb, Math.min(pa, pb));
}

/**
 * Splits a VPC CIDR into `count` equal subnets, `extraBits` longer than the VPC's prefix,
 * starting at block `offset`. Each zone gets one subnet per tier: offset picks the tier.
 */
export function carveSubnets(vpcCidr: string, extraBits: number, offset: number, count: number): string[] {
  const [base, prefix] = ipaddr.IPv4.parseCIDR(vpcCidr);
  const newPrefix = prefix + extraBits;
  if (newPrefix > 28) throw new Error(`${vpcCidr} cannot hold /${newPrefix} subnets (AWS's smallest subnet is /28)`);
  if (offset + count > 2 ** extraBits) throw new Error(`${vpcCidr} has room for ${2 ** extraBits} /${newPrefix} subnets, not ${offset + count}`);
  const start = toInt(base);
  const size = 2 ** (32 - newPrefix);
  return Array.from({ length: count }, (_, i) => `${fromInt(start + (offset + i) * size)}/${newPrefix}`);
}

/** The n-th host address of a CIDR (AWS reserves the first four and the last). */
export function hostAddress(cidr: string, n: number): string {
  const [base] = ipaddr.IPv4.parseCIDR(cidr);
  return fromInt(toInt(base) + n);
}

function toInt(a: ipaddr.IPv4): number {
  return a.octets.reduce((acc, o) => acc * 256 + o, 0);
}

function fromInt(n: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join(".");
}

/** The smallest CIDR that contains every given one (Cilium's native-routing range over a peering). */
export function coveringCidr(cidrs: readonly string[]): string {
  const parsed = cidrs.map((c) => ipaddr.IPv4.parseCIDR(c));
  let prefix = Math.min(...parsed.map(([, p]) => p));
  while (prefix > 0 && !parsed.every(([addr]) => addr.match(parsed[0][0], prefix))) prefix--;
  return `${ipaddr.IPv4.networkAddressFromCIDR(`${parsed[0][0].toString()}/${prefix}`).toString()}/${prefix}`;
}
