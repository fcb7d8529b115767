/**
 * The fleet's sources, served inside the journey's sealed namespace under the names ArgoCD
 * dials: the fleet's git repository as committed (a bare clone of the example repository's HEAD, over
 * git's smart HTTP), each pinned chart from a Helm repository made by `helm package` and
 * `helm repo index`, and each OCI chart from a real registry (distribution, built by
 * install-tools) it was pushed to with `helm push`. One CA per run signs both servers'
 * certificates; ArgoCD is told of it the way an operator tells it of a private CA
 * (argocd-tls-certs-cm). The names resolve through the namespace's hosts file to addresses
 * on its loopback, so nothing is dialled outside it.
 */
import * as fs from "fs";
import * as path from "path";
import { stringify } from "yaml";
import type { ChartPin } from "../../facts/charts";
import { issueCertificate, makeCa } from "../kube/pki";
import type { Processes } from "../kube/processes";
import { waitFor } from "../kube/processes";
import type { SealedNetwork } from "../kube/sealed-network";
import { must, NETNS_ETC, run } from "../host/processes";
import { fleetOrigins, type ChartOrigin, type Origins } from "./origins";
import { loopbackAddress } from "../host/loopback";
import type { ServeConfig } from "./serve";

/** The loopback addresses of the sealed namespace the two servers answer on (port 443, as the names' URLs say). */
export const ORIGIN_ADDRESSES = { https: loopbackAddress("origin", 0), registry: loopbackAddress("origin", 1) } as const;
const HTTPS_PORT = 443;

export interface GitopsServersInput {
  /** The example repository (journey/example/repository.ts, committed): its HEAD is what the fleet's repository serves. */
  readonly root: string;
  /** The pinned charts' sources (`<chart>-<version>` folders). */
  readonly chartsDir: string;
  readonly repoUrl: string;
  readonly revision: string;
  readonly charts: readonly ChartPin[];
  readonly dir: string;
  readonly sealed: SealedNetwork;
  readonly processes: Processes;
  /** Helm (the sealed wrapper) and the registry binary. */
  readonly helm: string;
  readonly registry: string;
  /**
   * A chart's folder as its publisher packages it, when the source beside the project lacks
   * what packaging adds (External Secrets' CRD templates); the source folder otherwise.
   */
  readonly packagingSource?: (pin: ChartPin, source: string, work: string) => string;
}

export interface GitopsServers {
  readonly origins: Origins;
  /** The run's CA (PEM), which signed both servers' certificates, and its file. */
  readonly caPem: string;
  readonly caFile: string;
  /** Every host the servers answer for. */
  readonly hosts: readonly string[];
  /** The bare repository the fleet is served from (a commit pushed here is what ArgoCD sees next). */
  readonly bare: string;
  /** What was published: `<host>/<path>/<chart>:<version>` per chart. */
  readonly published: readonly string[];
}

/** The hosts-file lines that send each origin's names to its server's address. Pure. */
export function originHostLines(origins: Origins): string {
  const https = [origins.git.host, ...origins.helm.map((h) => h.host)];
  const oci = origins.oci.map((o) => o.host);
  return `${ORIGIN_ADDRESSES.https} ${[...new Set(https)].join(" ")}\n${ORIGIN_ADDRESSES.registry} ${[...new Set(oci)].join(" ")}\n`;
}

/** distribution's configuration: TLS on the registry address, blobs in `storage`, no debug or metrics listener. Pure. */
export function registryConfig(storage: string, cert: string, key: string): string {
  return stringify({
    version: 0.1,
    log: { level: "info", accesslog: { disabled: false } },
    storage: { filesystem: { rootdirectory: storage }, delete: { enabled: false } },
    http: { addr: `${ORIGIN_ADDRESSES.registry}:${HTTPS_PORT}`, tls: { certificate: cert, key } },
  });
}

async function packageCharts(o: GitopsServersInput, origin: ChartOrigin, out: string): Promise<string[]> {
  fs.mkdirSync(out, { recursive: true });
  const packages: string[] = [];
  for (const pin of origin.charts) {
    const source = path.join(o.chartsDir, `${pin.chart}-${pin.version}`);
    if (!fs.existsSync(source)) throw new Error(`chart ${pin.chart} ${pin.version}: no source folder ${source}`);
    const folder = o.packagingSource ? o.packagingSource(pin, source, path.join(o.dir, "packaging")) : source;
    await must([o.helm, "package", folder, "--destination", out], { timeoutMs: 60_000 });
    packages.push(path.join(out, `${pin.chart}-${pin.version}.tgz`));
  }
  return packages;
}

/** Makes the content, starts both servers, publishes the OCI charts; throws with what failed. */
export async function startGitopsServers(o: GitopsServersInput): Promise<GitopsServers> {
  const origins = fleetOrigins(o.repoUrl, o.charts);
  const hosts = [...new Set([origins.git.host, ...origins.helm.map((h) => h.host), ...origins.oci.map((h) => h.host)])];
  const pki = path.join(o.dir, "pki");
  const ca = await makeCa(pki, "ca", "journey-origins-ca");
  const httpsCert = await issueCertificate(pki, ca, "https", "journey-origin", [origins.git.host, ...origins.helm.map((h) => h.host)], [ORIGIN_ADDRESSES.https]);
  const registryCert = await issueCertificate(pki, ca, "registry", "journey-registry", origins.oci.map((h) => h.host), [ORIGIN_ADDRESSES.registry]);
  fs.appendFileSync(path.join(NETNS_ETC, o.sealed.name, "hosts"), originHostLines(origins));

  // The fleet's repository: the example repository's HEAD as the branch the fleet names.
  const bare = path.join(o.dir, "git", origins.git.path);
  fs.mkdirSync(path.dirname(bare), { recursive: true });
  const head = (await must(["git", "-C", o.root, "rev-parse", "HEAD"])).trim();
  await must(["git", "init", "--quiet", "--bare", bare]);
  await must(["git", "-C", bare, "fetch", "--quiet", "--no-tags", o.root, `${head}:refs/heads/${o.revision}`], { timeoutMs: 120_000 });
  await must(["git", "-C", bare, "symbolic-ref", "HEAD", `refs/heads/${o.revision}`]);

  // Helm repositories: packages and their index, per host and path.
  const files: Record<string, string> = {};
  for (const h of origins.helm) {
    const root = path.join(o.dir, "helm", h.host);
    files[h.host] = root;
    const folder = path.join(root, h.path);
    await packageCharts(o, h, folder);
    await must([o.helm, "repo", "index", folder, "--url", `https://${h.host}${h.path}`], { timeoutMs: 60_000 });
  }
  const config: ServeConfig = { address: ORIGIN_ADDRESSES.https, port: HTTPS_PORT, cert: httpsCert.cert, key: httpsCert.key, git: { host: origins.git.host, root: path.join(o.dir, "git") }, files };
  const configFile = path.join(o.dir, "serve.json");
  fs.writeFileSync(configFile, JSON.stringify(config));
  o.processes.start("origin-https", "ip", ["netns", "exec", o.sealed.name, process.execPath, path.join(__dirname, "serve.js"), configFile]);

  const registryFile = path.join(o.dir, "registry.yaml");
  fs.writeFileSync(registryFile, registryConfig(path.join(o.dir, "registry"), registryCert.cert, registryCert.key));
  o.processes.start("origin-registry", "ip", ["netns", "exec", o.sealed.name, o.registry, "serve", registryFile]);

  const up = await waitFor(async () => {
    const a = await run(o.sealed.argv(["env", `GIT_SSL_CAINFO=${ca.cert}`, "git", "ls-remote", o.repoUrl, o.revision]), { timeoutMs: 10_000 });
    const b = await run(o.sealed.argv(["bash", "-c", `exec 3<>/dev/tcp/${ORIGIN_ADDRESSES.registry}/${HTTPS_PORT}`]), { timeoutMs: 5000 });
    return a.code === 0 && a.stdout.includes(head) && b.code === 0 ? true : undefined;
  }, 30_000, 500);
  if (!up) throw new Error(`the origins did not answer in 30 s: ${o.processes.tail("origin-https")} / ${o.processes.tail("origin-registry")}`);

  const published: string[] = [];
  for (const r of origins.oci) {
    for (const pkg of await packageCharts(o, r, path.join(o.dir, "oci", r.host, r.path))) {
      await must([o.helm, "push", pkg, `oci://${r.host}/${r.path}`, "--ca-file", ca.cert], { timeoutMs: 60_000 });
    }
    published.push(...r.charts.map((c) => `${r.host}/${r.path}/${c.chart}:${c.version}`));
  }
  published.push(...origins.helm.flatMap((h) => h.charts.map((c) => `${h.host}${h.path}/${c.chart}:${c.version}`)));
  return { origins, caPem: fs.readFileSync(ca.cert, "utf8"), caFile: ca.cert, hosts, bare, published };
}

/** Packages a chart folder and pushes it to an OCI origin (as a chart's publisher releases a version). */
export async function publishChart(servers: GitopsServers, helm: string, folder: string, origin: ChartOrigin, out: string): Promise<void> {
  fs.mkdirSync(out, { recursive: true });
  const packaged = await must([helm, "package", folder, "--destination", out], { timeoutMs: 60_000 });
  const pkg = /saved it to: (\S+)/.exec(packaged)?.[1];
  if (!pkg) throw new Error(`helm package ${folder}: ${packaged.trim()}`);
  await must([helm, "push", pkg, `oci://${origin.host}/${origin.path}`, "--ca-file", servers.caFile], { timeoutMs: 60_000 });
}

/** Who the journey's commits are by (git's options). */
const JOURNEY_AUTHOR = ["-c", "user.name=clusterra journey", "-c", "user.email=journey@clusterra.invalid"] as const;

/** Makes a folder a git repository of one commit holding `paths` (the example repository, before it is served). */
export async function commitFolder(dir: string, paths: readonly string[], message: string): Promise<void> {
  await must(["git", "init", "--quiet", dir]);
  await must(["git", "-C", dir, "add", "--", ...paths]);
  await must(["git", "-C", dir, ...JOURNEY_AUTHOR, "commit", "--quiet", "-m", message]);
}

/**
 * Commits files to the fleet's repository on `branch` (a pull request merged): a clone of
 * the served repository, the files written, one commit, pushed back. Returns the commit.
 */
export async function commitToFleet(servers: GitopsServers, branch: string, files: Readonly<Record<string, string>>, message: string): Promise<string> {
  const work = fs.mkdtempSync(path.join(path.dirname(servers.bare), "work-"));
  try {
    await must(["git", "clone", "--quiet", "--branch", branch, servers.bare, work], { timeoutMs: 60_000 });
    for (const [file, text] of Object.entries(files)) fs.writeFileSync(path.join(work, file), text);
    await must(["git", "-C", work, "add", "--", ...Object.keys(files)]);
    await must(["git", "-C", work, ...JOURNEY_AUTHOR, "commit", "--quiet", "-m", message]);
    await must(["git", "-C", work, "push", "--quiet", "origin", branch], { timeoutMs: 60_000 });
    return (await must(["git", "-C", work, "rev-parse", "HEAD"])).trim();
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/**
 * External Secrets' chart as its release packages it: the release generates its CRD templates
 * (templates/crds/, each behind `installCRDs`) when it packages the chart, and the chart source
 * beside the project has only their README. The reference folder's CRDs of the same release
 * (`external-secrets-chart-<version>`) stand in for them; every other chart is packaged from
 * its source as it is.
 */
export function externalSecretsPackaging(referenceDir: string): (pin: ChartPin, source: string, work: string) => string {
  return (pin, source, work) => {
    if (pin.chart !== "external-secrets") return source;
    const crds = path.join(referenceDir, `external-secrets-chart-${pin.version}`);
    const out = path.join(work, `${pin.chart}-${pin.version}`);
    fs.rmSync(out, { recursive: true, force: true });
    fs.cpSync(source, out, { recursive: true });
    for (const f of fs.readdirSync(crds).filter((x) => /^external-secrets\.io_.*\.yaml$/.test(x))) {
      fs.writeFileSync(path.join(out, "templates", "crds", f), `{{- if .Values.installCRDs }}\n${fs.readFileSync(path.join(crds, f), "utf8").trimEnd()}\n{{- end }}\n`);
    }
    return out;
  };
}
