/**
 * Where a journey API server would dial, read from its flags and the objects it is given.
 * The journey's control planes run sealed (journey/kube/sealed-network.ts), so such a dial
 * fails at once; this guard says which setting would make it, before anything runs, so that a
 * setting that reaches outside loopback is refused in the unit suite instead of being found
 * failing (or, unsealed, answered by something off the machine) at run time. Pure functions.
 */
import { isIP } from "net";
import { keyValues } from "./k3s";

/** The least a Kubernetes object has for the guard to read it. */
export interface GuardedObject {
  readonly apiVersion?: string;
  readonly kind: string;
  readonly metadata?: { readonly name?: string };
  readonly spec?: unknown;
  readonly webhooks?: unknown;
}

/** The admission plugins that call webhooks out of the API server. */
export const WEBHOOK_ADMISSION_PLUGINS = ["MutatingAdmissionWebhook", "ValidatingAdmissionWebhook"] as const;

/**
 * What the journey's API servers run with on top of the K3s server's own flags, and why:
 * kwok runs no pod, so no webhook server or aggregated API is behind any Service; every one
 * of them would be a dial to a cluster address, off this machine.
 */
export const SEALED_API_SERVER_FLAGS: Readonly<Record<string, string>> = {
  // Webhook configurations are stored as ArgoCD applies them, never called.
  "disable-admission-plugins": WEBHOOK_ADMISSION_PLUGINS.join(","),
  // K3s routes aggregated APIs to endpoint (pod) addresses; the journey serves none.
  "enable-aggregator-routing": "false",
  // The sealed namespace has loopback only: no interface for the API server to advertise.
  "advertise-address": "127.0.0.1",
};

/** kube-apiserver flags that make it call a server they name (a URL or a file of kubeconfigs). */
const DIALING_FLAGS: Readonly<Record<string, string>> = {
  "authentication-token-webhook-config-file": "token review webhook",
  "authorization-webhook-config-file": "authorization webhook",
  "audit-webhook-config-file": "audit webhook",
  "oidc-issuer-url": "OIDC issuer",
  "authentication-config": "structured authentication (JWT issuers)",
  "authorization-config": "structured authorization (may name webhooks)",
  "egress-selector-config-file": "egress selector (konnectivity)",
  "encryption-provider-config": "encryption providers (KMS plugins)",
};

/** Admission plugins configured in the admission configuration file that call a server. */
const DIALING_ADMISSION_PLUGINS = ["ImagePolicyWebhook"];

/** Whether a host (an IP or a name) is loopback: 127.0.0.0/8, ::1 or localhost. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, "");
  if (h === "localhost") return true;
  if (isIP(h) === 4) return h.startsWith("127.");
  if (isIP(h) === 6) return h === "::1" || h === "0:0:0:0:0:0:0:1";
  return false;
}

function urlHost(url: string): string | undefined {
  try {
    return new URL(url).hostname;
  } catch {
    return undefined;
  }
}

/** `--k=v` flags as a record (the last one wins, as kube-apiserver's flag parsing does). */
export function flagValues(args: readonly string[]): Record<string, string> {
  return keyValues(args.filter((a) => /^--[^=]+=/.test(a)).map((a) => a.slice(2)));
}

function list(v: string | undefined): string[] {
  return (v ?? "").split(",").map((s) => s.trim()).filter(Boolean);
}

interface WebhookClient {
  readonly name?: string;
  readonly clientConfig?: { readonly url?: string; readonly service?: { readonly namespace?: string; readonly name?: string } };
}

function clientTarget(c: WebhookClient["clientConfig"]): string | undefined {
  if (!c) return "no clientConfig";
  if (c.service) return `Service ${c.service.namespace ?? "?"}/${c.service.name ?? "?"}`;
  const host = c.url !== undefined ? urlHost(c.url) : undefined;
  if (host === undefined) return `URL ${JSON.stringify(c.url)}`;
  return isLoopback(host) ? undefined : `URL ${c.url}`;
}

/**
 * Every setting that would make an API server with these flags, this admission configuration
 * and these objects dial an address outside loopback: one line each, empty when none does.
 */
export function outboundDials(args: readonly string[], objects: readonly GuardedObject[], admissionConfig?: string): string[] {
  const flags = flagValues(args);
  const found: string[] = [];
  for (const server of list(flags["etcd-servers"])) {
    const host = urlHost(server);
    if (host === undefined || !isLoopback(host)) found.push(`--etcd-servers=${server}: the datastore is not on loopback`);
  }
  for (const [flag, what] of Object.entries(DIALING_FLAGS)) {
    if (flags[flag] !== undefined) found.push(`--${flag}=${flags[flag]}: the API server calls its ${what}`);
  }
  if (flags["enable-aggregator-routing"] === "true") found.push("--enable-aggregator-routing=true: aggregated APIs are dialed at their endpoints' pod addresses");
  if (admissionConfig !== undefined) {
    for (const plugin of DIALING_ADMISSION_PLUGINS) if (new RegExp(`\\bname:\\s*["']?${plugin}\\b`).test(admissionConfig)) found.push(`admission configuration: ${plugin} calls a backend`);
  }
  const disabled = new Set(list(flags["disable-admission-plugins"]));
  for (const o of objects) {
    const name = `${o.kind}/${o.metadata?.name ?? "?"}`;
    if (/^(Mutating|Validating)WebhookConfiguration$/.test(o.kind)) {
      const plugin = o.kind === "MutatingWebhookConfiguration" ? "MutatingAdmissionWebhook" : "ValidatingAdmissionWebhook";
      if (disabled.has(plugin)) continue;
      for (const w of (Array.isArray(o.webhooks) ? o.webhooks : []) as WebhookClient[]) {
        const target = clientTarget(w.clientConfig);
        if (target) found.push(`${name} webhook ${w.name ?? "?"}: ${plugin} is on and calls ${target}`);
      }
    }
    if (o.kind === "APIService") {
      const service = (o.spec as { service?: { namespace?: string; name?: string } } | undefined)?.service;
      if (service) found.push(`${name}: the aggregator proxies ${o.metadata?.name ?? "its group"} to Service ${service.namespace ?? "?"}/${service.name ?? "?"}`);
    }
    if (o.kind === "CustomResourceDefinition") {
      const conversion = (o.spec as { conversion?: { strategy?: string; webhook?: { clientConfig?: WebhookClient["clientConfig"] } } } | undefined)?.conversion;
      if (conversion?.strategy === "Webhook") {
        const target = clientTarget(conversion.webhook?.clientConfig);
        if (target) found.push(`${name}: its versions are converted by a webhook at ${target}`);
      }
    }
  }
  return found;
}
