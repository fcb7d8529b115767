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

/** The alarm topic of a stack: `<prefix>-alarms`. */
export function alarmTopicName(prefix: string): string {
  return `${prefix}-alarms`;
}
