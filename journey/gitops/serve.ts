/**
 * The journey's HTTPS origin for the fleet's git repository and its Helm repositories, run
 * inside the sealed namespace (`node serve.js <config.json>`) on the address the namespace's
 * hosts file gives those names. Git is served by git's own smart-HTTP server, `git
 * http-backend`, as CGI; a Helm repository is its folder of packages and `index.yaml`, as
 * `helm package` and `helm repo index` made them. Requests are told apart by their Host.
 */
import { spawn } from "child_process";
import * as fs from "fs";
import * as https from "https";
import * as path from "path";

export interface ServeConfig {
  readonly address: string;
  readonly port: number;
  readonly cert: string;
  readonly key: string;
  /** The host the fleet's repository is on, and the folder holding its bare repositories by path. */
  readonly git: { readonly host: string; readonly root: string };
  /** Helm repositories: each host's folder (its paths below it). */
  readonly files: Readonly<Record<string, string>>;
}

/** A CGI response's header block and status, split from its body. Pure. */
export function cgiHead(raw: Buffer): { status: number; headers: [string, string][]; body: Buffer } | undefined {
  const crlf = raw.indexOf("\r\n\r\n");
  const lf = raw.indexOf("\n\n");
  const end = crlf >= 0 && (lf < 0 || crlf < lf) ? crlf : lf;
  if (end < 0) return undefined;
  const sep = end === crlf ? 4 : 2;
  let status = 200;
  const headers: [string, string][] = [];
  for (const line of raw.subarray(0, end).toString("latin1").split(/\r?\n/)) {
    const i = line.indexOf(":");
    if (i < 0) continue;
    const name = line.slice(0, i).trim();
    const value = line.slice(i + 1).trim();
    if (name.toLowerCase() === "status") status = Number(value.split(" ")[0]) || 500;
    else headers.push([name, value]);
  }
  return { status, headers, body: raw.subarray(end + sep) };
}

/** A file under `root` for a request path, never outside it; undefined when there is none. */
export function fileFor(root: string, urlPath: string): string | undefined {
  const decoded = decodeURIComponent(urlPath.split("?")[0]);
  const file = path.resolve(root, `.${path.posix.normalize(`/${decoded}`)}`);
  if (file !== root && !file.startsWith(`${root}${path.sep}`)) return undefined;
  return fs.existsSync(file) && fs.statSync(file).isFile() ? file : undefined;
}

function serveGit(config: ServeConfig, req: import("http").IncomingMessage, res: import("http").ServerResponse): void {
  const url = new URL(req.url ?? "/", "https://x");
  const child = spawn("git", ["http-backend"], {
    env: {
      PATH: process.env.PATH,
      GIT_PROJECT_ROOT: config.git.root,
      GIT_HTTP_EXPORT_ALL: "1",
      REQUEST_METHOD: req.method ?? "GET",
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.replace(/^\?/, ""),
      CONTENT_TYPE: req.headers["content-type"] ?? "",
      REMOTE_ADDR: req.socket.remoteAddress ?? "",
      ...(req.headers["git-protocol"] ? { GIT_PROTOCOL: String(req.headers["git-protocol"]) } : {}),
      ...(req.headers["content-encoding"] ? { HTTP_CONTENT_ENCODING: String(req.headers["content-encoding"]) } : {}),
    },
    stdio: ["pipe", "pipe", "inherit"],
  });
  req.pipe(child.stdin);
  let head: Buffer = Buffer.alloc(0);
  let started = false;
  child.stdout.on("data", (chunk: Buffer) => {
    if (started) return void res.write(chunk);
    head = Buffer.concat([head, chunk]);
    const h = cgiHead(head);
    if (!h) return;
    started = true;
    res.writeHead(h.status, Object.fromEntries(h.headers));
    if (h.body.length) res.write(h.body);
  });
  child.on("close", () => {
    if (!started) res.writeHead(502).end("git http-backend gave no response\n");
    else res.end();
  });
}

function main(configFile: string): void {
  const config = JSON.parse(fs.readFileSync(configFile, "utf8")) as ServeConfig;
  const server = https.createServer({ cert: fs.readFileSync(config.cert), key: fs.readFileSync(config.key) }, (req, res) => {
    const host = (req.headers.host ?? "").replace(/:\d+$/, "").toLowerCase();
    console.log(`${req.method} ${host}${req.url}`);
    if (host === config.git.host) return serveGit(config, req, res);
    const root = config.files[host];
    const file = root ? fileFor(root, req.url ?? "/") : undefined;
    if (!file || (req.method !== "GET" && req.method !== "HEAD")) return void res.writeHead(404).end("not found\n");
    res.writeHead(200, { "content-type": file.endsWith(".yaml") ? "application/x-yaml" : "application/gzip", "content-length": fs.statSync(file).size });
    if (req.method === "HEAD") return void res.end();
    fs.createReadStream(file).pipe(res);
  });
  server.listen(config.port, config.address, () => console.log(`serving ${[config.git.host, ...Object.keys(config.files)].join(", ")} on ${config.address}:${config.port}`));
}

if (require.main === module) main(process.argv[2] ?? "");
