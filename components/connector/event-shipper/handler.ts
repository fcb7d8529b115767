/**
 * The event shipper: turns a batch of queued EventBridge events into metadata-only
 * platform events and POSTs them to the API. Failed records are reported back so SQS
 * retries only those (after three receives they go to the dead-letter queue).
 */
import type { SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import { EVENT_TYPES, type PlatformEventType } from "../../../facts/connector-events";

export interface PlatformEvent {
  readonly type: PlatformEventType;
  readonly cluster: string;
  readonly time: string;
  readonly region: string;
  readonly instanceId?: string;
  readonly sourceEventId: string;
}

interface BridgeEvent {
  id: string;
  "detail-type": string;
  time: string;
  region: string;
  detail?: { "instance-id"?: string; EC2InstanceId?: string; state?: string };
}

/** Maps one EventBridge event; undefined for events the platform does not track. */
export function toPlatformEvent(event: BridgeEvent, cluster: string): PlatformEvent | undefined {
  const detailType = event["detail-type"];
  const type = EVENT_TYPES[`${detailType}/${event.detail?.state ?? ""}`] ?? EVENT_TYPES[detailType];
  if (!type) return undefined;
  const instanceId = event.detail?.["instance-id"] ?? event.detail?.EC2InstanceId;
  return { type, cluster, time: event.time, region: event.region, ...(instanceId ? { instanceId } : {}), sourceEventId: event.id };
}

function parse(record: SQSRecord): BridgeEvent | undefined {
  try {
    return JSON.parse(record.body) as BridgeEvent;
  } catch {
    return undefined;
  }
}

export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const cluster = process.env.CLUSTER_NAME as string;
  const url = `${process.env.API_URL}/v1/connectors/${encodeURIComponent(cluster)}/events`;
  const shipped: { messageId: string; event: PlatformEvent }[] = [];
  for (const record of event.Records) {
    const bridge = parse(record);
    const mapped = bridge && toPlatformEvent(bridge, cluster);
    // Unparseable or untracked events are dropped, not retried: retrying cannot fix them.
    if (mapped) shipped.push({ messageId: record.messageId, event: mapped });
  }
  if (shipped.length === 0) return { batchItemFailures: [] };
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ events: shipped.map((s) => s.event) }),
      signal: AbortSignal.timeout(10_000),
    });
    if (response.ok) return { batchItemFailures: [] };
    console.error(JSON.stringify({ message: "API refused the batch", status: response.status, count: shipped.length }));
  } catch (e) {
    console.error(JSON.stringify({ message: "API unreachable", error: (e as Error).message, count: shipped.length }));
  }
  return { batchItemFailures: shipped.map((s) => ({ itemIdentifier: s.messageId })) };
}
