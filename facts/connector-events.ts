/**
 * Connector events: which events the connector forwards, and the metadata-only platform
 * event each becomes. The EventBridge rules, the queue policy, the shipper Lambda and the
 * Slurm job hooks derive from these tables.
 */
export type PlatformEventType =
  | "job.started" | "job.completed" | "job.failed"
  | "node.launched" | "node.terminated" | "node.spot_interrupted"
  | "cluster.state.started" | "cluster.state.stopped";

/** Fields every platform event carries: which event, which cluster, when, and its idempotency key. */
export const COMMON_EVENT_FIELDS = ["id", "type", "cluster", "time"] as const;

/**
 * The only fields each event type may carry besides the common ones: metadata, never a
 * job's content (no script, command line, environment, working directory or output).
 */
export const EVENT_FIELDS: Readonly<Record<PlatformEventType, readonly string[]>> = {
  "job.started": ["jobId", "user", "partition", "nodes", "state"],
  "job.completed": ["jobId", "user", "partition", "nodes", "exitCode", "state"],
  "job.failed": ["jobId", "user", "partition", "nodes", "exitCode", "state"],
  "node.launched": ["instanceId", "region", "autoScalingGroup"],
  "node.terminated": ["instanceId", "region", "autoScalingGroup"],
  "node.spot_interrupted": ["instanceId", "region", "action"],
  "cluster.state.started": ["instanceId", "region", "state"],
  "cluster.state.stopped": ["instanceId", "region", "state"],
};

/** `source` of the messages the Slurm job hooks send (shaped like EventBridge events). */
export const HOOK_EVENT_SOURCE = "clusterra.slurm-hook";
/** `detail-type` of those messages. */
export const HOOK_DETAIL_TYPE = "Slurm Job State Change";

/** What the rules filter on, per cluster: the pattern narrows to this cluster where EventBridge can. */
export interface ClusterIdentity {
  readonly clusterName: string;
  readonly headNodeInstanceId: string;
}

export interface EventRule {
  /** Rule name suffix. */
  readonly id: string;
  readonly description: string;
  /** The EventBridge event pattern for one cluster. */
  readonly pattern: (cluster: ClusterIdentity) => { readonly source: readonly string[]; readonly "detail-type": readonly string[]; readonly detail?: Record<string, unknown> };
}

/**
 * EC2 state-change and Spot events carry no tags, so a pattern can narrow them only by
 * instance id: the head node's state is the cluster's state. Auto Scaling events carry the
 * group name, which CloudFormation prefixes with the cluster's stack name.
 */
export const EVENT_RULES: readonly EventRule[] = [
  {
    id: "instance-state",
    description: "the head node starts and stops",
    pattern: (c) => ({ source: ["aws.ec2"], "detail-type": ["EC2 Instance State-change Notification"], detail: { "instance-id": [c.headNodeInstanceId], state: ["running", "stopped", "terminated"] } }),
  },
  {
    id: "asg-lifecycle",
    description: "compute fleet instances launch and terminate",
    pattern: (c) => ({
      source: ["aws.autoscaling"],
      "detail-type": ["EC2 Instance Launch Successful", "EC2 Instance Terminate Successful"],
      detail: { AutoScalingGroupName: [{ prefix: `${c.clusterName}-` }] },
    }),
  },
  {
    id: "spot-interruption",
    description: "two-minute Spot interruption warnings",
    pattern: () => ({ source: ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"] }),
  },
];

/** detail-type (and, for state changes, the state) -> platform event type. */
export const EVENT_TYPES: Readonly<Record<string, PlatformEventType>> = {
  "EC2 Instance State-change Notification/running": "cluster.state.started",
  "EC2 Instance State-change Notification/stopped": "cluster.state.stopped",
  "EC2 Instance State-change Notification/terminated": "cluster.state.stopped",
  "EC2 Instance Launch Successful": "node.launched",
  "EC2 Instance Terminate Successful": "node.terminated",
  "EC2 Spot Instance Interruption Warning": "node.spot_interrupted",
};

/** Job event types the hooks may send. */
export const HOOK_EVENT_TYPES: readonly PlatformEventType[] = ["job.started", "job.completed", "job.failed"];

/** Queue settings from the connector inventory. */
export const EVENT_QUEUE = {
  visibilityTimeoutSeconds: 60,
  messageRetentionSeconds: 86_400,
  receiveWaitTimeSeconds: 20,
  deadLetterRetentionSeconds: 604_800,
  maxReceiveCount: 3,
} as const;

/** The shipper Lambda: sizes from the inventory, and the settings its handler reads. */
export const SHIPPER = {
  memoryMb: 128,
  timeoutSeconds: 30,
  /** At most this many shipper instances run at once: the API sees a bounded request rate. */
  reservedConcurrency: 2,
  batchSize: 100,
  batchingWindowSeconds: 5,
  /** Per-request timeout: three attempts and their backoff fit inside the Lambda timeout. */
  requestTimeoutMs: 7_000,
  /** Time kept back from the Lambda deadline to answer SQS with the failures. */
  deadlineReserveMs: 2_000,
  maxAttempts: 3,
  retryBaseMs: 250,
} as const;

/** Environment variables the shipper reads; the component sets them from the same names. */
export const SHIPPER_ENV = {
  apiUrl: "CLUSTERRA_API_URL",
  cluster: "CLUSTERRA_CLUSTER",
  headNodeInstanceId: "CLUSTERRA_HEAD_NODE",
  tokenSecretArn: "CLUSTERRA_TOKEN_SECRET",
  requestTimeoutMs: "CLUSTERRA_REQUEST_TIMEOUT_MS",
  budgetMs: "CLUSTERRA_BUDGET_MS",
  maxAttempts: "CLUSTERRA_MAX_ATTEMPTS",
  retryBaseMs: "CLUSTERRA_RETRY_BASE_MS",
} as const;

/** The API's event intake, and the headers of the signature scheme (see the shipper). */
export const EVENTS_API = {
  path: (cluster: string) => `/v1/connectors/${encodeURIComponent(cluster)}/events`,
  clusterHeader: "x-clusterra-cluster",
  timestampHeader: "x-clusterra-timestamp",
  signatureHeader: "x-clusterra-signature",
  /** Largest batch one POST carries. */
  maxEventsPerRequest: 100,
} as const;
