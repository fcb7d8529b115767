/**
 * EventBridge rules that feed Karpenter's interruption queue (upstream v1.14.1
 * CloudFormation template): one rule per event, each delivering to the queue.
 */
export interface InterruptionRule {
  /** Suffix of the rule's name. */
  readonly id: string;
  readonly source: string;
  readonly detailType: string;
}

export const INTERRUPTION_RULES: readonly InterruptionRule[] = [
  { id: "health", source: "aws.health", detailType: "AWS Health Event" },
  { id: "spot-interruption", source: "aws.ec2", detailType: "EC2 Spot Instance Interruption Warning" },
  { id: "rebalance", source: "aws.ec2", detailType: "EC2 Instance Rebalance Recommendation" },
  { id: "state-change", source: "aws.ec2", detailType: "EC2 Instance State-change Notification" },
  { id: "capacity-reservation", source: "aws.ec2", detailType: "EC2 Capacity Reservation Instance Interruption Warning" },
];

/** Karpenter drops interruption messages older than this anyway. */
export const INTERRUPTION_QUEUE_RETENTION_SECONDS = 300;

/** A cluster's EventBridge rule for one interruption event. */
export function karpenterRuleName(clusterName: string, rule: Pick<InterruptionRule, "id">): string {
  return `${clusterName}-${rule.id}`;
}

/** A cluster's interruption queue, which Karpenter's settings name. */
export function karpenterQueueName(clusterName: string): string {
  return `${clusterName}-interruption`;
}
