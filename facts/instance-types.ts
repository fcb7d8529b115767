/**
 * EC2 instance types the project sizes hosts from: the central K3s host's capacity check,
 * the tenant server's pod density, the cost estimate's suggestions. Hardware facts only;
 * prices are in prices.ts. Source: the EC2 instance-type specifications and the ENI
 * limits table (docs.aws.amazon.com/ec2/latest/instancetypes/), recorded 2026-11-23.
 */
export interface InstanceTypeFacts {
  readonly vcpus: number;
  readonly memoryGiB: number;
  /** Network interfaces the type takes. */
  readonly enis: number;
  /** IPv4 addresses per interface. */
  readonly ipv4PerEni: number;
  readonly arch: "arm64" | "x86_64";
}

export const INSTANCE_TYPES = {
  "t4g.small": { vcpus: 2, memoryGiB: 2, enis: 3, ipv4PerEni: 4, arch: "arm64" },
  "t4g.medium": { vcpus: 2, memoryGiB: 4, enis: 3, ipv4PerEni: 6, arch: "arm64" },
  "t4g.large": { vcpus: 2, memoryGiB: 8, enis: 3, ipv4PerEni: 12, arch: "arm64" },
  "t4g.xlarge": { vcpus: 4, memoryGiB: 16, enis: 4, ipv4PerEni: 15, arch: "arm64" },
  "t4g.2xlarge": { vcpus: 8, memoryGiB: 32, enis: 4, ipv4PerEni: 15, arch: "arm64" },
  "m7g.large": { vcpus: 2, memoryGiB: 8, enis: 3, ipv4PerEni: 10, arch: "arm64" },
  "m7g.xlarge": { vcpus: 4, memoryGiB: 16, enis: 4, ipv4PerEni: 15, arch: "arm64" },
  "m7g.2xlarge": { vcpus: 8, memoryGiB: 32, enis: 4, ipv4PerEni: 15, arch: "arm64" },
  "r7g.large": { vcpus: 2, memoryGiB: 16, enis: 3, ipv4PerEni: 10, arch: "arm64" },
  "r7g.xlarge": { vcpus: 4, memoryGiB: 32, enis: 4, ipv4PerEni: 15, arch: "arm64" },
  "r7g.2xlarge": { vcpus: 8, memoryGiB: 64, enis: 4, ipv4PerEni: 15, arch: "arm64" },
  "c7g.2xlarge": { vcpus: 8, memoryGiB: 16, enis: 4, ipv4PerEni: 15, arch: "arm64" },
  "t3.medium": { vcpus: 2, memoryGiB: 4, enis: 3, ipv4PerEni: 6, arch: "x86_64" },
  "t3.large": { vcpus: 2, memoryGiB: 8, enis: 3, ipv4PerEni: 12, arch: "x86_64" },
} as const satisfies Record<string, InstanceTypeFacts>;

export type InstanceTypeName = keyof typeof INSTANCE_TYPES;

export function isKnownInstanceType(type: string): type is InstanceTypeName {
  return Object.prototype.hasOwnProperty.call(INSTANCE_TYPES, type);
}
