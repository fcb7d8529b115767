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

/** Why a string is not a plain IPv4 address, or undefined when it is one. */
export function ipv4AddressProblem(address: string): string | undefined {
  return ipaddr.IPv4.isValidFourPartDecimal(address) ? undefined : "not an IPv4 address in dotted a.b.c.d form";
}

/** Addresses AWS keeps at the start of every subnet (network, router, DNS, future use); the last is kept too. */
const RESERVED_AT_START = 4;

/**
 * Why `address` cannot be an instance's fixed address in `cidr`, or undefined when it can:
 * a dotted IPv4 address inside the block and not one AWS reserves. For a VPC's CIDR the
 * check holds too: its first four and last addresses are reserved in whichever subnet holds them.
 */
export function hostAddressProblem(address: string, cidr: string): string | undefined {
  const malformed = ipv4AddressProblem(address);
  if (malformed) return malformed;
  const [base, prefix] = ipaddr.IPv4.parseCIDR(cidr);
  const addr = ipaddr.IPv4.parse(address);
  if (!addr.match(base, prefix)) return `outside ${cidr}`;
  const offset = toInt(addr) - toInt(ipaddr.IPv4.networkAddressFromCIDR(cidr));
  if (offset < RESERVED_AT_START || addr.toString() === ipaddr.IPv4.broadcastAddressFromCIDR(cidr).toString()) {
    return `one of the addresses AWS reserves in ${cidr} (its first ${RESERVED_AT_START} and its last)`;
  }
  return undefined;
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
