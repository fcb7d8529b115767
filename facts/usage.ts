/**
 * What the cost estimate assumes about use, per month, where AWS bills by use rather than
 * by the hour. Idle figures (hours, provisioned storage, keys, secrets) need none of these;
 * every usage-priced line states which of these it used. Free tiers are not deducted: an
 * account's other workloads may already use them.
 */
export const USAGE_ASSUMPTIONS = {
  /** Image pulls, package and K3s updates through a NAT gateway, per gateway. */
  natGb: 20,
  /** Slurm RPCs, heartbeats and ArgoCD syncs that cross zones over each peering, each way. */
  peeringCrossAzGb: 10,
  /** Job scripts and output kept on each EFS file system. */
  efsGb: 20,
  /** Each files bucket's objects (user and shared prefixes, old versions for 30 days). */
  s3Gb: 50,
  /** Each DynamoDB table's size. */
  dynamoDbGbPerTable: 1,
  /** Writes and reads per table. */
  dynamoDbWritesPerTable: 1_000_000,
  dynamoDbReadsPerTable: 5_000_000,
  /** Scheduler and node events a connector ships (through SQS to its Lambda). */
  events: 100_000,
  /** One Lambda invocation per event (no batching at this volume), and its run time. */
  lambdaMsPerInvocation: 200,
  /** Receives, sends and deletes per message, plus the pollers' empty long polls. */
  sqsRequestsPerMessage: 3,
  /** Pollers: Lambda keeps 5 long polls open per event source; Karpenter one per queue. */
  lambdaPollers: 5,
  karpenterPollers: 1,
  /** Seconds each empty long poll waits (the maximum, what both use). */
  longPollSeconds: 20,
  /** VPC flow-log volume per flow log, and what a log group keeps. */
  flowLogGb: 1,
  logGroupStoredGb: 1,
  /** Changed blocks a month of daily snapshots keeps, per snapshotted volume (at most its size). */
  snapshotGb: 20,
} as const;
