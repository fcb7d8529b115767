/**
 * AWS regions the program accepts, with the partition each belongs to. The partition
 * decides ARN prefixes and endpoint service names (China prefixes some with `cn.`).
 */
export const REGIONS: Readonly<Record<string, "aws" | "aws-cn" | "aws-us-gov">> = {
  "us-east-1": "aws", "us-east-2": "aws", "us-west-1": "aws", "us-west-2": "aws",
  "af-south-1": "aws", "ap-east-1": "aws", "ap-east-2": "aws", "ap-south-1": "aws", "ap-south-2": "aws",
  "ap-southeast-1": "aws", "ap-southeast-2": "aws", "ap-southeast-3": "aws", "ap-southeast-4": "aws",
  "ap-southeast-5": "aws", "ap-southeast-7": "aws", "ap-northeast-1": "aws", "ap-northeast-2": "aws",
  "ap-northeast-3": "aws", "ca-central-1": "aws", "ca-west-1": "aws", "eu-central-1": "aws",
  "eu-central-2": "aws", "eu-west-1": "aws", "eu-west-2": "aws", "eu-west-3": "aws", "eu-north-1": "aws",
  "eu-south-1": "aws", "eu-south-2": "aws", "il-central-1": "aws", "me-central-1": "aws",
  "me-south-1": "aws", "mx-central-1": "aws", "sa-east-1": "aws",
  "cn-north-1": "aws-cn", "cn-northwest-1": "aws-cn",
  "us-gov-east-1": "aws-us-gov", "us-gov-west-1": "aws-us-gov",
};

export type Partition = (typeof REGIONS)[string];

/** Availability-zone suffixes assumed offline; a real `pulumi up` gets the same names from EC2. */
export const ZONE_SUFFIXES = ["a", "b", "c", "d", "e", "f"] as const;

/** Reverse DNS prefix of AWS service endpoint names in a partition. */
export function servicePrefix(partition: Partition): string {
  return partition === "aws-cn" ? "cn.com.amazonaws" : "com.amazonaws";
}

/** A regional AWS service endpoint (HTTPS) in a partition. */
export function serviceEndpoint(service: string, region: string, partition: Partition): string {
  return `https://${service}.${region}.${partition === "aws-cn" ? "amazonaws.com.cn" : "amazonaws.com"}`;
}
