/**
 * TCP between two of the journey's network namespaces that do not route to each other,
 * over a Unix socket: nothing leaves either namespace.
 */
import * as fs from "fs";
import { tcpProbe } from "../host/network";
import { tail, waitFor, type Daemon, type Supervisor } from "../host/processes";

/** One end of a forward: an address and port in a network namespace, and how a command runs there. */
export interface ForwardEnd {
  readonly side: { readonly ns: string; readonly argv: (argv: string[]) => string[] };
  readonly address: string;
  readonly port: number;
}

/**
 * A TCP forward between two network namespaces that do not route to each other (as a
 * Service forwards): socat listens at `from`, hands each connection over a Unix socket (a
 * file of the run's) to socat in the other namespace, which dials `to`. Started once the
 * socket exists and `from` accepts; what went wrong otherwise.
 */
export async function forward(supervisor: Supervisor, name: string, socket: string, from: ForwardEnd, to: ForwardEnd): Promise<{ daemons: Daemon[]; problem?: string }> {
  const target = supervisor.startCommand(`${name}-to`, to.side.argv(["socat", `UNIX-LISTEN:${socket},fork,reuseaddr`, `TCP:${to.address}:${to.port}`]));
  if (!(await waitFor(async () => fs.existsSync(socket) || undefined, 10_000, 200))) return { daemons: [target], problem: `its far end did not start: ${tail(target.log, 2)}` };
  const listener = supervisor.startCommand(`${name}-from`, from.side.argv(["socat", `TCP-LISTEN:${from.port},bind=${from.address},fork,reuseaddr`, `UNIX-CONNECT:${socket}`]));
  const up = await waitFor(async () => (await tcpProbe(from.side.ns, from.address, from.port, 1000)) || undefined, 10_000, 200);
  return up ? { daemons: [target, listener] } : { daemons: [target, listener], problem: `it does not accept at ${from.address}:${from.port}: ${tail(listener.log, 2)}` };
}

