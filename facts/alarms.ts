import { platformName } from "./project";

/**
 * When the platform pages its operator (components/observability/alarms.ts): EC2's status
 * checks, reported each minute, and dead-letter queues, which SQS reports every five.
 */
export const ALARMS = {
  statusCheck: {
    /** The host's hardware or AWS's network: two failed minutes, then recover. */
    system: { metric: "StatusCheckFailed_System", periodSeconds: 60, periods: 2 },
    /** The operating system (kernel, memory, file system): three failed minutes. */
    instance: { metric: "StatusCheckFailed_Instance", periodSeconds: 60, periods: 3 },
  },
  deadLetters: { periodSeconds: 300 },
} as const;

/**
 * Hosts' disk use (components/observability/host-metrics.ts): published every five minutes,
 * an alarm past 85 % for two periods in a row, so a file system fills no further unseen;
 * a host that stops publishing alarms too (missing data breaches: the status checks say
 * whether the host is down).
 */
export const HOST_DISK = { metric: "DiskUsedPercent", periodSeconds: 300, periods: 2, thresholdPercent: 85 } as const;

/**
 * A host whose first boot has not completed (components/host/boot.ts: its unit retries every
 * 30 s, for good): 1 while the boot's mark is missing, in the same call as its disk use. Six
 * periods (half an hour, where a boot takes minutes) before it pages, so a slow mirror does
 * not; five of them reporting it, since a timer's run can slip past a period's end. Missing
 * data is the disk alarms' to report: a boot stuck before its host files are written (SSM,
 * its route) publishes nothing, and those alarms page for it.
 */
export const HOST_BOOT = { metric: "BootIncomplete", periods: 6, datapoints: 5 } as const;

/**
 * Counts a host publishes from a file one of its scripts writes at each run (in the same call
 * as its disk use), each paging at 1 or more for `periods` in a row. Missing data does not
 * breach: a host that stops publishing is the disk alarms' to report.
 */
export const HOST_COUNTS = {
  /** Central: local volumes not held to their sizes (components/host/volume-limits.ts; every one when the file system does not enforce project quotas). */
  VolumesUnlimited: { file: "/run/clusterra/volumes-unlimited", periods: 2, what: "local volumes not held to their sizes", look: "journalctl -u clusterra-volume-limits names each" },
} as const;
export type HostCount = keyof typeof HOST_COUNTS;

/** The CloudWatch namespace of a host's disk metrics in central's account: central's host, or one tenant's server. */
export function hostMetricsNamespace(environment: string, host: { readonly tenantId: string } | "central"): string {
  return host === "central" ? `Clusterra/${environment}/central` : `Clusterra/${environment}/tenants/${host.tenantId}`;
}

/** The alarm topic of a stack: `<prefix>-alarms`. */
export function alarmTopicName(prefix: string): string {
  return `${prefix}-alarms`;
}

/** What a tenant account shares with central's monitoring sink: the EC2 metrics its server's alarms read, nothing else. */
export const SHARED_METRICS = { resourceType: "AWS::CloudWatch::Metric", filter: "Namespace IN ('AWS/EC2')" } as const;

/** Names of the alarms central keeps on one tenant's server: the tenant's access role may manage these only. */
export function tenantAlarmPrefix(environment: string, tenantId: string): string {
  return `${platformName(environment, tenantId)}-server-`;
}
