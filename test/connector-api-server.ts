/**
 * A stand-in for the Clusterra events API and Secrets Manager, on 127.0.0.1 only: the
 * shipper's tests and benchmark run the bundled handler against it. Each request to the
 * events path takes the next fault from a script (then `ok`); the server checks every
 * signature and keeps what it accepted.
 */
import * as http from "http";
import type { AddressInfo } from "net";
import { createHmac, timingSafeEqual } from "crypto";
import { EVENTS_API, SHIPPER_ENV } from "../facts/connector-events";

/** What the server does with one events request. */
export type Fault =
  | "ok" | "5xx" | "hang" | "reset" | "bare-2xx" | "garbage-2xx"
  /** Accepts every other event. */
  | "partial"
  /** 429 with this Retry-After (seconds). */
  | { status: 429; retryAfter: number };

export interface FakeApi {
  readonly url: string;
  /** Events accepted, by id, with how often each arrived. */
  readonly accepted: Map<string, Record<string, unknown>>;
  readonly deliveries: Map<string, number>;
  readonly requests: { count: number; badSignatures: number; secretReads: number };
  /** Faults for the next requests, in order. */
  script: Fault[];
  /** Fault for a request when the script is empty. */
  fallback: Fault;
  close(): Promise<void>;
}

export const TEST_TOKEN = "test-token-0123456789abcdef0123456789abcdef";

function validSignature(req: http.IncomingMessage, body: string): boolean {
  const timestamp = String(req.headers[EVENTS_API.timestampHeader] ?? "");
  const given = Buffer.from(String(req.headers[EVENTS_API.signatureHeader] ?? ""));
  const expected = Buffer.from(`v1=${createHmac("sha256", TEST_TOKEN).update(`${timestamp}.${body}`).digest("hex")}`);
  return given.length === expected.length && timingSafeEqual(given, expected) && Math.abs(Date.now() / 1000 - Number(timestamp)) < 300;
}

export async function startFakeApi(cluster: string): Promise<FakeApi> {
  const hanging = new Set<http.ServerResponse>();
  const api: Omit<FakeApi, "url" | "close"> = { accepted: new Map(), deliveries: new Map(), requests: { count: 0, badSignatures: 0, secretReads: 0 }, script: [], fallback: "ok" };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      // Secrets Manager's JSON protocol: the SDK posts to / with an X-Amz-Target header.
      if (req.headers["x-amz-target"] === "secretsmanager.GetSecretValue") {
        api.requests.secretReads++;
        const { SecretId } = JSON.parse(body) as { SecretId: string };
        res.writeHead(200, { "content-type": "application/x-amz-json-1.1" });
        res.end(JSON.stringify({ ARN: SecretId, Name: "token", SecretString: TEST_TOKEN, VersionId: "v1" }));
        return;
      }
      if (req.method !== "POST" || req.url !== EVENTS_API.path(cluster)) {
        res.writeHead(404).end();
        return;
      }
      api.requests.count++;
      const fault = api.script.shift() ?? api.fallback;
      if (!validSignature(req, body)) {
        api.requests.badSignatures++;
        res.writeHead(401).end();
        return;
      }
      if (fault === "hang") {
        hanging.add(res);
        return;
      }
      if (fault === "reset") {
        req.socket.destroy();
        return;
      }
      if (fault === "5xx") {
        res.writeHead(503).end("busy");
        return;
      }
      if (typeof fault === "object") {
        res.writeHead(429, { "retry-after": String(fault.retryAfter) }).end();
        return;
      }
      const events = (JSON.parse(body) as { events: Record<string, unknown>[] }).events;
      const taken = fault === "partial" ? events.filter((_, i) => i % 2 === 0) : events;
      for (const e of events) api.deliveries.set(String(e.id), (api.deliveries.get(String(e.id)) ?? 0) + 1);
      // The API stores events by idempotency key: a second delivery changes nothing.
      for (const e of taken) if (!api.accepted.has(String(e.id))) api.accepted.set(String(e.id), e);
      res.writeHead(fault === "ok" || fault === "partial" ? 202 : 200, { "content-type": "application/json" });
      res.end(fault === "bare-2xx" ? "" : fault === "garbage-2xx" ? "{not json" : JSON.stringify({ accepted: taken.map((e) => e.id) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(api, {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}

/** Points the AWS SDK (Secrets Manager) and the shipper at the fake; returns a restore function. */
export function shipperEnvironment(api: FakeApi, cluster: string, headNode: string, settings: Record<string, string> = {}): () => void {
  const values: Record<string, string> = {
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "AKIDOFFLINETEST",
    AWS_SECRET_ACCESS_KEY: "offline-test-secret",
    AWS_ENDPOINT_URL_SECRETS_MANAGER: api.url,
    AWS_EC2_METADATA_DISABLED: "true",
    [SHIPPER_ENV.apiUrl]: api.url,
    [SHIPPER_ENV.cluster]: cluster,
    [SHIPPER_ENV.headNodeInstanceId]: headNode,
    [SHIPPER_ENV.tokenSecretArn]: "arn:aws:secretsmanager:us-east-1:444455556666:secret:clusterra/test/api-token-AbCdEf",
    ...settings,
  };
  const before = Object.fromEntries(Object.keys(values).map((k) => [k, process.env[k]]));
  Object.assign(process.env, values);
  return () => {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  };
}
