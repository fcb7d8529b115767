/**
 * The event shipper: turns a batch of queued events (EventBridge's, and the Slurm job
 * hooks') into metadata-only platform events and POSTs them to the API, signed with the
 * cluster's token. It reports back exactly the records the API did not accept, so SQS
 * redelivers only those (after three receives they go to the dead-letter queue).
 *
 * Authentication: the cluster's token (32+ random bytes the API issued when the connector
 * was registered) lives in one Secrets Manager secret, read once per cold start. Each POST
 * carries `x-clusterra-timestamp: <unix seconds>` and `x-clusterra-signature:
 * v1=<hex HMAC-SHA256(token, "<timestamp>.<body>")>`: the token never travels, the API
 * refuses stale timestamps (replay), and a changed body fails the signature.
 */
import { createHmac } from "node:crypto";
import { GetSecretValueCommand, SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from "aws-lambda";
import {
  COMMON_EVENT_FIELDS, EVENT_FIELDS, EVENT_TYPES, EVENTS_API, HOOK_DETAIL_TYPE, HOOK_EVENT_SOURCE, HOOK_EVENT_TYPES, SHIPPER, SHIPPER_ENV,
  type PlatformEventType,
} from "../../../facts/connector-events";

export type PlatformEvent = { readonly id: string; readonly type: PlatformEventType; readonly cluster: string; readonly time: string } & Readonly<Record<string, string | number>>;

interface QueuedEvent {
  id?: unknown;
  source?: unknown;
  "detail-type"?: unknown;
  time?: unknown;
  region?: unknown;
  detail?: Record<string, unknown>;
}

export interface ShipperSettings {
  readonly cluster: string;
  readonly headNodeInstanceId: string;
}

const text = (v: unknown): string | undefined => (typeof v === "string" && v.length > 0 && v.length <= 256 ? v : typeof v === "number" && Number.isFinite(v) ? String(v) : undefined);

/** Keeps exactly the fields the type's schema lists, and only when present and scalar. */
function pick(type: PlatformEventType, values: Record<string, unknown>): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const field of [...COMMON_EVENT_FIELDS, ...EVENT_FIELDS[type]]) {
    const v = values[field];
    if (typeof v === "number" && Number.isFinite(v)) out[field] = v;
    else if (text(v) !== undefined) out[field] = text(v) as string;
  }
  return out;
}

/** Maps one queued event, or says why it cannot be mapped. */
export function toPlatformEvent(event: QueuedEvent, settings: ShipperSettings): PlatformEvent | { error: string } {
  const id = text(event.id);
  const time = text(event.time);
  const detailType = text(event["detail-type"]);
  const detail = event.detail && typeof event.detail === "object" ? event.detail : undefined;
  if (!id || !time || !detailType || !detail) return { error: "not an event: id, time, detail-type or detail missing" };
  const common = { id, cluster: settings.cluster, time, region: text(event.region) };

  if (event.source === HOOK_EVENT_SOURCE && detailType === HOOK_DETAIL_TYPE) {
    const type = detail.event as PlatformEventType;
    if (!HOOK_EVENT_TYPES.includes(type)) return { error: `unknown job event ${String(detail.event).slice(0, 40)}` };
    if (text(detail.jobId) === undefined) return { error: "job event without a job id" };
    const exitCode = Number(detail.exitCode);
    return pick(type, { ...detail, ...common, type, exitCode: detail.exitCode === undefined || !Number.isInteger(exitCode) ? undefined : exitCode }) as PlatformEvent;
  }

  const state = text(detail.state);
  const type = EVENT_TYPES[`${detailType}/${state ?? ""}`] ?? EVENT_TYPES[detailType];
  if (!type) return { error: `untracked event ${detailType.slice(0, 60)}${state ? `/${state}` : ""}` };
  const instanceId = text(detail["instance-id"]) ?? text(detail.EC2InstanceId);
  if (!instanceId) return { error: `${type} without an instance id` };
  // The state-change rule matches only the head node; anything else is not this cluster's state.
  if (type.startsWith("cluster.state.") && instanceId !== settings.headNodeInstanceId) return { error: `state change of ${instanceId}, not the head node` };
  return pick(type, { ...common, type, instanceId, state, autoScalingGroup: detail.AutoScalingGroupName, action: detail["instance-action"] }) as PlatformEvent;
}

function parse(record: SQSRecord): QueuedEvent | undefined {
  try {
    const value: unknown = JSON.parse(record.body);
    return value && typeof value === "object" && !Array.isArray(value) ? (value as QueuedEvent) : undefined;
  } catch {
    return undefined;
  }
}

function numberFromEnv(name: string, fallback: number): number {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 ? v : fallback;
}

/** Signature headers for one body (the API recomputes the same HMAC). */
export function signature(token: string, timestamp: number, body: string): string {
  return `v1=${createHmac("sha256", token).update(`${timestamp}.${body}`).digest("hex")}`;
}

let tokenPromise: Promise<string> | undefined;

/** The cluster's API token, read once per cold start (a failed read is retried next time). */
function apiToken(): Promise<string> {
  if (!tokenPromise) {
    const secretId = process.env[SHIPPER_ENV.tokenSecretArn];
    tokenPromise = (async () => {
      if (!secretId) throw new Error(`${SHIPPER_ENV.tokenSecretArn} is not set`);
      const client = new SecretsManagerClient({ maxAttempts: 2 });
      const out = await client.send(new GetSecretValueCommand({ SecretId: secretId }), { abortSignal: AbortSignal.timeout(5_000) });
      if (!out.SecretString) throw new Error("the API token secret has no value yet: put the token the API issued into it");
      return out.SecretString.trim();
    })();
    tokenPromise.catch(() => (tokenPromise = undefined));
  }
  return tokenPromise;
}

type Attempt = { accepted: Set<string>; retryAfterMs?: number; retryable: boolean; reason: string };

async function post(url: string, cluster: string, token: string, events: readonly PlatformEvent[], timeoutMs: number): Promise<Attempt> {
  const body = JSON.stringify({ events });
  const timestamp = Math.floor(Date.now() / 1000);
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        [EVENTS_API.clusterHeader]: cluster,
        [EVENTS_API.timestampHeader]: String(timestamp),
        [EVENTS_API.signatureHeader]: signature(token, timestamp, body),
      },
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    const reply = await response.text();
    if (response.ok) {
      // Only ids the API names as accepted are done: a bare 2xx proves nothing per event.
      let accepted: unknown;
      try {
        accepted = (JSON.parse(reply) as { accepted?: unknown }).accepted;
      } catch {
        accepted = undefined;
      }
      const ids = new Set(events.map((e) => e.id));
      return { accepted: new Set(Array.isArray(accepted) ? accepted.filter((a): a is string => typeof a === "string" && ids.has(a)) : []), retryable: false, reason: `HTTP ${response.status}` };
    }
    const retryAfter = Number(response.headers.get("retry-after"));
    return {
      accepted: new Set(),
      retryable: response.status === 429 || response.status >= 500,
      ...(Number.isFinite(retryAfter) && retryAfter >= 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
      reason: `HTTP ${response.status}`,
    };
  } catch (e) {
    return { accepted: new Set(), retryable: true, reason: (e as Error).name === "TimeoutError" ? `no answer within ${timeoutMs} ms` : `${(e as Error).message} ${String((e as { cause?: { code?: string } }).cause?.code ?? "")}`.trim() };
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Ships events until all are accepted, or attempts or time run out; returns the accepted ids. */
async function ship(url: string, cluster: string, token: string, events: PlatformEvent[], deadline: number): Promise<Set<string>> {
  const requestTimeoutMs = numberFromEnv(SHIPPER_ENV.requestTimeoutMs, SHIPPER.requestTimeoutMs);
  const maxAttempts = numberFromEnv(SHIPPER_ENV.maxAttempts, SHIPPER.maxAttempts);
  const retryBaseMs = numberFromEnv(SHIPPER_ENV.retryBaseMs, SHIPPER.retryBaseMs);
  const done = new Set<string>();
  for (let start = 0; start < events.length; start += EVENTS_API.maxEventsPerRequest) {
    let pending = events.slice(start, start + EVENTS_API.maxEventsPerRequest);
    for (let attempt = 1; attempt <= maxAttempts && pending.length > 0; attempt++) {
      const left = deadline - Date.now();
      if (left <= 0) return done;
      const result = await post(url, cluster, token, pending, Math.min(requestTimeoutMs, left));
      for (const id of result.accepted) done.add(id);
      pending = pending.filter((e) => !result.accepted.has(e.id));
      if (pending.length === 0 || !result.retryable) {
        if (pending.length > 0) log("API did not accept events", { reason: result.reason, count: pending.length });
        break;
      }
      const wait = result.retryAfterMs ?? retryBaseMs * 2 ** (attempt - 1);
      log("API attempt failed", { reason: result.reason, attempt, count: pending.length, retryInMs: wait });
      // Waiting past the deadline is pointless: SQS redelivers these after the visibility timeout.
      if (attempt === maxAttempts || Date.now() + wait >= deadline) break;
      await sleep(wait);
    }
  }
  return done;
}

function log(message: string, fields: Record<string, unknown>): void {
  console.error(JSON.stringify({ message, ...fields }));
}

export async function handler(event: SQSEvent, context?: Pick<Context, "getRemainingTimeInMillis">): Promise<SQSBatchResponse> {
  const cluster = process.env[SHIPPER_ENV.cluster] ?? "";
  const settings: ShipperSettings = { cluster, headNodeInstanceId: process.env[SHIPPER_ENV.headNodeInstanceId] ?? "" };
  const budget = numberFromEnv(SHIPPER_ENV.budgetMs, SHIPPER.timeoutSeconds * 1000 - SHIPPER.deadlineReserveMs);
  const remaining = context ? context.getRemainingTimeInMillis() - SHIPPER.deadlineReserveMs : budget;
  const deadline = Date.now() + Math.min(budget, remaining);

  const failures = new Set<string>();
  // One event per message id; a redelivered duplicate maps to the same idempotency key.
  const byMessage = new Map<string, PlatformEvent>();
  for (const record of event.Records) {
    const queued = parse(record);
    const mapped = queued ? toPlatformEvent(queued, settings) : { error: "body is not a JSON object" };
    if ("error" in mapped) {
      // Retrying cannot fix it, but failing it sends it to the dead-letter queue for a person to see.
      log("record cannot be shipped", { messageId: record.messageId, reason: mapped.error });
      failures.add(record.messageId);
    } else byMessage.set(record.messageId, mapped as PlatformEvent);
  }

  if (byMessage.size > 0) {
    let accepted = new Set<string>();
    try {
      const token = await apiToken();
      const url = `${process.env[SHIPPER_ENV.apiUrl]}${EVENTS_API.path(cluster)}`;
      const unique = [...new Map([...byMessage.values()].map((e) => [e.id, e])).values()];
      accepted = await ship(url, cluster, token, unique, deadline);
    } catch (e) {
      log("cannot ship", { reason: (e as Error).message });
    }
    for (const [messageId, mapped] of byMessage) if (!accepted.has(mapped.id)) failures.add(messageId);
  }
  return { batchItemFailures: event.Records.filter((r) => failures.has(r.messageId)).map((r) => ({ itemIdentifier: r.messageId })) };
}
