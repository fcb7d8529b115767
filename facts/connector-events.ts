/**
 * Connector events: which EventBridge events the connector forwards, and the metadata-only
 * platform event each becomes. Rules, the queue policy and the shipper Lambda derive from
 * this table.
 */
export type PlatformEventType =
  | "job.started" | "job.completed" | "job.failed"
  | "node.launched" | "node.terminated" | "node.spot_interrupted"
  | "cluster.state.started" | "cluster.state.stopped";

export interface EventRule {
  /** Rule name suffix. */
  readonly id: string;
  readonly description: string;
  /** The EventBridge event pattern. */
  readonly pattern: { readonly source: readonly string[]; readonly "detail-type": readonly string[]; readonly detail?: Record<string, unknown> };
}

export const EVENT_RULES: readonly EventRule[] = [
  {
    id: "instance-state",
    description: "EC2 instances start and stop",
    pattern: { source: ["aws.ec2"], "detail-type": ["EC2 Instance State-change Notification"], detail: { state: ["running", "stopped", "terminated"] } },
  },
  {
    id: "asg-lifecycle",
    description: "compute fleet instances launch and terminate",
    pattern: { source: ["aws.autoscaling"], "detail-type": ["EC2 Instance Launch Successful", "EC2 Instance Terminate Successful"] },
  },
  {
    id: "spot-interruption",
    description: "two-minute Spot interruption warnings",
    pattern: { source: ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"] },
  },
];

/** detail-type (and, for state changes, the state) -> platform event type. */
export const EVENT_TYPES: Readonly<Record<string, PlatformEventType>> = {
  "EC2 Instance State-change Notification/running": "node.launched",
  "EC2 Instance State-change Notification/stopped": "node.terminated",
  "EC2 Instance State-change Notification/terminated": "node.terminated",
  "EC2 Instance Launch Successful": "node.launched",
  "EC2 Instance Terminate Successful": "node.terminated",
  "EC2 Spot Instance Interruption Warning": "node.spot_interrupted",
};

/** Queue settings from the connector inventory. */
export const EVENT_QUEUE = {
  visibilityTimeoutSeconds: 60,
  messageRetentionSeconds: 86_400,
  receiveWaitTimeSeconds: 20,
  deadLetterRetentionSeconds: 604_800,
  maxReceiveCount: 3,
} as const;
