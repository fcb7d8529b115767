/**
 * The unit suite and the benchmarks keep every packet on this machine: from `keepToLoopback()`
 * on, a socket this process opens may dial only loopback (or a Unix socket), a server may
 * listen only on loopback, and no name but localhost is looked up. Anything else throws at the
 * call, naming what was dialed, so a test that would reach off the machine fails instead.
 * Programs a test starts (Helm, kubectl, shells) are its own processes: they dial nothing but
 * what the test hands them, all of it loopback or a file.
 */
import dns = require("dns");
import * as net from "net";
import { isLoopback } from "../journey/kube/outbound";

/** Refused: what was dialed, and the rule. */
export class OffMachineError extends Error {
  constructor(what: string) {
    super(`${what}: tests and benchmarks keep to loopback (127.0.0.1, ::1, localhost); start the server on 127.0.0.1 or in a network namespace of the test's own`);
    this.name = "OffMachineError";
  }
}

interface Endpoint {
  readonly port?: unknown;
  readonly host?: unknown;
  readonly path?: unknown;
}

/** The endpoint of a connect() or listen() call, however it was spelled. */
export function endpointOf(args: readonly unknown[]): Endpoint {
  // net.connect() hands Socket#connect its already normalized [options, callback].
  const first = Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0];
  if (first !== null && typeof first === "object") return first as Endpoint;
  if (typeof first === "string" && !/^\d+$/.test(first)) return { path: first };
  return { port: first, host: typeof args[1] === "string" ? args[1] : undefined };
}

/** Why a dial to this endpoint is refused, or undefined when it stays on the machine. */
export function offMachineDial(e: Endpoint): string | undefined {
  if (typeof e.path === "string") return undefined;
  const host = typeof e.host === "string" && e.host !== "" ? e.host : "localhost";
  return isLoopback(host) ? undefined : `a dial to ${host}:${String(e.port)}`;
}

/** Why listening on this endpoint is refused (every interface, or an outside one), or undefined. */
export function offMachineListen(e: Endpoint): string | undefined {
  if (typeof e.path === "string" || (e as { fd?: unknown }).fd !== undefined || (e as { handle?: unknown }).handle !== undefined) return undefined;
  const host = typeof e.host === "string" ? e.host : undefined;
  if (host === undefined || host === "") return `listening on every interface (port ${String(e.port ?? 0)}, no host)`;
  return isLoopback(host) ? undefined : `listening on ${host}:${String(e.port ?? 0)}`;
}

let installed = false;

/** Wraps `target[method]` so that a call `refuse` names a reason for throws instead. */
function guard(target: Record<string, unknown>, method: string, refuse: (e: Endpoint) => string | undefined): void {
  const original = target[method] as (...a: unknown[]) => unknown;
  target[method] = function (this: unknown, ...args: unknown[]) {
    const why = refuse(endpointOf(args));
    if (why) throw new OffMachineError(why);
    return original.apply(this, args);
  };
}

/** Installs the rule in this process (once). */
export function keepToLoopback(): void {
  if (installed) return;
  installed = true;
  guard(net.Socket.prototype as unknown as Record<string, unknown>, "connect", offMachineDial);
  guard(net.Server.prototype as unknown as Record<string, unknown>, "listen", offMachineListen);
  const names = (name: unknown) => {
    if (typeof name !== "string" || !isLoopback(name)) throw new OffMachineError(`a lookup of ${String(name)}`);
  };
  const lookup = dns.lookup;
  (dns as { lookup: unknown }).lookup = function (name: unknown, ...rest: unknown[]) {
    names(name);
    return (lookup as (...a: unknown[]) => unknown)(name, ...rest);
  };
  const promisesLookup = dns.promises.lookup;
  (dns.promises as { lookup: unknown }).lookup = function (name: unknown, ...rest: unknown[]) {
    names(name);
    return (promisesLookup as (...a: unknown[]) => unknown)(name, ...rest);
  };
  // A DNS query always goes to the machine's resolver, off loopback here: none is needed.
  for (const resolver of ["resolve", "resolve4", "resolve6", "resolveAny", "resolveCname", "resolveSrv", "resolveTxt"]) {
    (dns as unknown as Record<string, unknown>)[resolver] = (name: unknown) => {
      throw new OffMachineError(`a DNS query for ${String(name)}`);
    };
  }
}
