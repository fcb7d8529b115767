/**
 * Prices that decide idle cost (us-east-1, on-demand), from the field brief's table.
 * Cost estimates derive from here and nowhere else.
 */
export const HOURS_PER_MONTH = 730;

export const PRICES = {
  /** USD per instance-hour. */
  instanceHour: { "t4g.small": 0.0168, "t4g.medium": 0.0336, "t3.medium": 0.0416, "m7g.large": 0.0816 } as Record<string, number>,
  natGatewayHour: 0.045,
  natGatewayPerGb: 0.045,
  interfaceEndpointAzHour: 0.01,
  publicIpv4Hour: 0.005,
  latticeServiceHour: 0.025,
  efsGbMonth: 0.3,
  s3GbMonth: 0.023,
  dynamoDbGbMonth: 0.25,
  ebsGp3GbMonth: 0.08,
  /** Network Load Balancer hour (us-east-1 list price; not in the brief's table). */
  nlbHour: 0.0225,
  kmsKeyMonth: 1,
  secretMonth: 0.4,
  /** CloudWatch Logs ingestion per GB. */
  logsIngestPerGb: 0.5,
} as const;

/** Monthly cost of something billed by the hour. */
export function monthly(hourly: number): number {
  return Math.round(hourly * HOURS_PER_MONTH * 100) / 100;
}
