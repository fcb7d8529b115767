/**
 * A host's first boot (components/host/boot.ts): its script, its unit, how often the unit
 * starts it again, and the mark it leaves once complete, which later boots and the host's
 * metrics (components/observability/host-metrics.ts) read.
 */
export const BOOT = { script: "/usr/local/sbin/clusterra-boot", unit: "clusterra-boot.service", done: "/var/lib/clusterra/booted", retrySeconds: 30 } as const;
