/**
 * Each tenant's DNS on central, for real (components/fleet/tenant-dns.ts): CoreDNS, built by
 * install-tools at its image's version, run from the tenant's Deployment ArgoCD synced as the
 * kubelet runs its pod: the Corefile of its ConfigMap, the token of its ServiceAccount, the
 * image's user, its capabilities and no privilege gain, in a network namespace of its own
 * holding the address the API server gave its Service, with the pod's sysctls set there as the
 * runtime sets them. Central's API server is forwarded into that namespace on loopback (in a
 * pod, KUBERNETES_SERVICE_HOST and PORT). Then each tenant pod's resolver is written as the
 * kubelet writes it from the pod the API server admitted, and asked for the tenant's own
 * Service, another tenant's, a platform Service and a name outside the cluster.
 */
import * as fs from "fs";
import * as path from "path";
import { execFileSync } from "child_process";
import { K3S_CLUSTER_DNS } from "../../facts/central-host";
import { TENANT_DNS, tenantDnsName } from "../../facts/control-plane";
import { tenantNamespace } from "../../facts/fleet";
import { ARGOCD_CHART } from "../../facts/versions";
import { teardown } from "../host/network";
import { must, NETNS_ETC, NETNS_RUN, LOOPBACK_RESOLVER, run, Supervisor, tail, waitFor, type Pod } from "../host/processes";
import type { Cluster } from "./cluster";
import { forward } from "./forward";
import { SLINKY_WORKLOADS } from "./tenant-slurm";
import type { Kubectl } from "./kubectl";
import { asContainer, containerArgv, prepareContainer, type PodTemplate } from "./pods";
import { SEALED_STEM, type SealedNetwork } from "./sealed-network";

/**
 * Where the pod finds the built binary: a folder of the run's holding a copy, bound into the
 * image (CoreDNS's own image is the binary alone, at /coredns; a bind mounts a folder here).
 */
const ENTRYPOINT_DIR = "/opt/coredns";
const ENTRYPOINT = `${ENTRYPOINT_DIR}/coredns`;

/** DNS response codes by number (RFC 1035, 6895). */
const RCODES: Readonly<Record<number, string>> = { 0: "NOERROR", 2: "SERVFAIL", 3: "NXDOMAIN", 5: "REFUSED" };

/** A pod's DNS settings as the API server admitted them. */
export interface PodDns {
  readonly dnsPolicy?: string;
  readonly dnsConfig?: { readonly nameservers?: readonly string[]; readonly searches?: readonly string[]; readonly options?: readonly { readonly name: string; readonly value?: string }[] };
}

/**
 * The resolv.conf the kubelet writes for a pod: with dnsPolicy None its dnsConfig alone; with
 * ClusterFirst the cluster's DNS, the namespace's search path and ndots:5, dnsConfig merged
 * in. Pure.
 */
export function kubeletResolvConf(pod: PodDns, namespace: string, clusterDns: string = K3S_CLUSTER_DNS.clusterIp, domain: string = TENANT_DNS.domain): string {
  const none = pod.dnsPolicy === "None";
  const nameservers = [...(none ? [] : [clusterDns]), ...(pod.dnsConfig?.nameservers ?? [])];
  const searches = [...(none ? [] : [`${namespace}.svc.${domain}`, `svc.${domain}`, domain]), ...(pod.dnsConfig?.searches ?? [])];
  const options = new Map<string, string | undefined>(none ? [] : [["ndots", "5"]]);
  for (const o of pod.dnsConfig?.options ?? []) options.set(o.name, o.value);
  return [
    ...nameservers.map((n) => `nameserver ${n}`),
    ...(searches.length ? [`search ${searches.join(" ")}`] : []),
    ...(options.size ? [`options ${[...options].map(([k, v]) => (v === undefined ? k : `${k}:${v}`)).join(" ")}`] : []),
    "",
  ].join("\n");
}

/** The query types the journey asks, by their numbers (RFC 1035). */
const QUERY_TYPES = { A: 1, PTR: 12 } as const;

/**
 * A query for `name`'s records of a type (its number) to `server` (UDP, one try): its
 * response code and the addresses of its A records, printed as `<rcode> <address,...>`.
 * Python's standard library, run inside the asker's namespace: no resolver library stands
 * between the question and the answer.
 */
const QUERY_SCRIPT = [
  "import random, socket, struct, sys",
  "server, name, qtype = sys.argv[1], sys.argv[2], int(sys.argv[3])",
  "qid = random.randrange(65536)",
  "q = struct.pack('>HHHHHH', qid, 0x0100, 1, 0, 0, 0) + b''.join(bytes([len(p)]) + p.encode() for p in name.rstrip('.').split('.')) + b'\\x00' + struct.pack('>HH', qtype, 1)",
  "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)",
  "s.settimeout(3)",
  "s.sendto(q, (server, 53))",
  "r = s.recv(4096)",
  "rcode, answers = r[3] & 15, struct.unpack('>H', r[6:8])[0]",
  "i, found = len(q), []",
  "for _ in range(answers):",
  "    while r[i] not in (0,) and r[i] < 192: i += r[i] + 1",
  "    i += 2 if r[i] >= 192 else 1",
  "    kind, _, _, size = struct.unpack('>HHIH', r[i:i + 10])",
  "    i += 10",
  "    if kind == 1: found.append('.'.join(str(b) for b in r[i:i + 4]))",
  "    i += size",
  "print(rcode, ','.join(found) or '-')",
].join("\n");

/** The name a PTR query asks for an IPv4 address (`d.c.b.a.in-addr.arpa`). Pure. */
export function reverseName(address: string): string {
  return `${address.split(".").reverse().join(".")}.in-addr.arpa`;
}

/** One answer: its code's name and the addresses it gave. Pure. */
export function parseQueryOutput(out: string): { rcode: string; addresses: string[] } | undefined {
  const m = /^(\d+) (\S+)\s*$/.exec(out.trim());
  if (!m) return undefined;
  return { rcode: RCODES[Number(m[1])] ?? `rcode ${m[1]}`, addresses: m[2] === "-" ? [] : m[2].split(",") };
}

export interface TenantDnsInput {
  /** The tenant whose DNS it is. */
  readonly tenantId: string;
  /** Central's admin kubectl and its cluster (URL and CA). */
  readonly kc: Kubectl;
  readonly cluster: Cluster;
  readonly sealed: SealedNetwork;
  /** The built CoreDNS (unsealed: it runs inside its pod's namespace). */
  readonly binary: string;
  /** A root file system for the pod (CoreDNS's image is the binary alone). */
  readonly image: string;
  readonly dir: string;
}

export interface TenantDns {
  /** The address the API server gave its Service: what the tenant's pods must be given. */
  readonly address: string;
  /** Asks the DNS as a tenant pod would, from that pod's resolv.conf: `name`'s code and addresses (A records unless another type is named). */
  readonly ask: (resolvConf: string, name: string, type?: keyof typeof QUERY_TYPES) => Promise<{ rcode: string; addresses: string[] } | string>;
  /** Resolves a short name through the resolv.conf's search path, as the pod's libc does (getent): its addresses, or none. */
  readonly lookup: (resolvConf: string, name: string) => Promise<string[]>;
  readonly detail: string;
  readonly stop: () => Promise<void>;
}

/** The namespace a tenant's DNS pod runs in: the sealed namespaces' stem, so a crashed run's is found and removed. */
function dnsNamespace(tenantId: string): string {
  return `${SEALED_STEM}dns-${tenantId}-${process.pid}`;
}

/** Starts a tenant's CoreDNS as the fleet's Deployment runs it; what runs, or why it cannot. */
export async function startTenantDns(o: TenantDnsInput): Promise<TenantDns | { problem: string; stop: () => Promise<void> }> {
  const netns = dnsNamespace(o.tenantId);
  const supervisor = new Supervisor(path.join(o.dir, "logs"));
  const stop = async () => {
    await supervisor.stopAll();
    await teardown([netns]);
  };
  const fail = (problem: string) => ({ problem, stop });
  const { namespace } = TENANT_DNS;
  const name = tenantDnsName(o.tenantId);
  const service = await o.kc.get<{ spec: { clusterIP?: string } }>(["service", name, "-n", namespace]);
  if (!service) return fail(`no Service ${namespace}/${name} on central`);
  const address = service.spec.clusterIP ?? "";
  if (!/^\d+\.\d+\.\d+\.\d+$/.test(address)) return fail(`Service ${namespace}/${name} holds no address (${address || "none"})`);
  const deployment = await o.kc.get<{ spec: { template: PodTemplate & { spec: { securityContext?: { sysctls?: { name: string; value: string }[] } } } } }>(["deployment", name, "-n", namespace]);
  const template = deployment?.spec.template;
  const container = template?.spec.containers[0];
  if (!template || !container) return fail(`no Deployment ${namespace}/${name} with a container on central`);
  const image = (container as { image?: string }).image ?? "";
  const version = /\bmod\s+github\.com\/coredns\/coredns\s+(\S+)/.exec(execFileSync("go", ["version", "-m", o.binary], { encoding: "utf8" }))?.[1];
  if (!image.endsWith(`:${version}`)) return fail(`the Deployment runs ${image}; the built CoreDNS is ${version ?? "unknown"} (scripts/install-tools and TENANT_DNS must agree)`);

  // The pod's network namespace: loopback, the Service's address, the pod's sysctls.
  await must(["ip", "netns", "add", netns], { timeoutMs: 5000 });
  await must(["ip", "-n", netns, "link", "set", "lo", "up"], { timeoutMs: 5000 });
  await must(["ip", "-n", netns, "addr", "add", `${address}/32`, "dev", "lo"], { timeoutMs: 5000 });
  for (const s of template.spec.securityContext?.sysctls ?? []) await must(["ip", "netns", "exec", netns, "sysctl", "-q", "-w", `${s.name}=${s.value}`], { timeoutMs: 5000 });
  fs.mkdirSync(path.join(NETNS_ETC, netns), { recursive: true });
  fs.writeFileSync(path.join(NETNS_ETC, netns, "hosts"), "127.0.0.1 localhost\n");
  fs.writeFileSync(path.join(NETNS_ETC, netns, "resolv.conf"), LOOPBACK_RESOLVER);
  const side = { ns: netns, argv: (argv: string[]) => ["ip", "netns", "exec", netns, ...argv] };
  const url = new URL(o.cluster.url);
  const api = await forward(supervisor, `${name}-api`, path.join(o.dir, "api.sock"), { side, address: "127.0.0.1", port: Number(url.port) }, { side: { ns: o.sealed.name, argv: o.sealed.argv }, address: url.hostname, port: Number(url.port) });
  if (api.problem) return fail(`central's API server forwarded into the pod's namespace: ${api.problem}`);

  const account = template.spec.serviceAccountName ?? "default";
  const token = await o.kc.run(["-n", namespace, "create", "token", account, "--duration=24h"]);
  if (token.code !== 0) return fail(`no token for ${namespace}/${account}: ${token.stderr.trim()}`);
  const c = await prepareContainer(o.kc, namespace, template, container.name, path.join(o.dir, "pod"), [], {
    fields: { name: `${name}-0`, namespace, ip: address, serviceAccountName: account },
    serviceAccount: { token: token.stdout.trim(), caPem: Buffer.from(o.cluster.caData, "base64").toString() },
    // Distroless's nonroot: the image's USER.
    image: { uid: TENANT_DNS.user, gid: TENANT_DNS.user },
    env: { KUBERNETES_SERVICE_HOST: "127.0.0.1", KUBERNETES_SERVICE_PORT: url.port },
  });
  if (c.missing.length) return fail(`the kubelet could not start its pod: ${c.missing.join("; ")}`);
  const entrypoint = path.join(o.dir, "entrypoint");
  fs.mkdirSync(entrypoint, { recursive: true });
  fs.copyFileSync(o.binary, path.join(entrypoint, path.basename(ENTRYPOINT)));
  fs.chmodSync(path.join(entrypoint, path.basename(ENTRYPOINT)), 0o755);
  const pod: Pod = { netns, hostname: `${name}-0`, image: o.image, shared: [], root: path.join(o.dir, "pod"), slurmDirs: false, binds: [{ from: entrypoint, to: ENTRYPOINT_DIR, readOnly: true }, ...c.binds], ...(c.readOnlyRoot ? { readOnlyRoot: true } : {}) };
  const daemon = supervisor.start(name, pod, asContainer(c, containerArgv(c, [ENTRYPOINT])));
  const readyScript = `import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:${TENANT_DNS.probes.ready}/ready', timeout=2).status)`;
  const ready = await waitFor(async () => (daemon.exit ? false : (await run(side.argv(["python3", "-c", readyScript]), { timeoutMs: 5000 })).stdout.trim() === "200" || undefined), 60_000, 500);
  if (!ready) return fail(`CoreDNS did not become ready on :${TENANT_DNS.probes.ready} in 60 s${daemon.exit ? ` (exited ${daemon.exit.code})` : ""}: ${tail(daemon.log, 4)}`);

  // A tenant pod's view: its resolv.conf bound over /etc/resolv.conf, in the DNS pod's namespace (where the Service's address is).
  const withResolvConf = (resolvConf: string, argv: string[]) => {
    const file = path.join(o.dir, `resolv-${Date.now()}-${Math.random().toString(36).slice(2)}.conf`);
    fs.writeFileSync(file, resolvConf);
    return { file, argv: ["nsenter", `--net=${path.join(NETNS_RUN, netns)}`, "unshare", "--mount", "--propagation", "private", "sh", "-c", 'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"', "sh", file, ...argv] };
  };
  const ask = async (resolvConf: string, query: string, type: keyof typeof QUERY_TYPES = "A") => {
    const server = /^nameserver (\S+)$/m.exec(resolvConf)?.[1];
    if (!server) return `no nameserver in the pod's resolv.conf`;
    const r = await run(side.argv(["python3", "-c", QUERY_SCRIPT, server, query, String(QUERY_TYPES[type])]), { timeoutMs: 10_000 });
    return parseQueryOutput(r.stdout) ?? `no answer from ${server} (exit ${r.code}: ${(r.stderr || r.stdout).trim().split("\n").pop()})`;
  };
  const lookup = async (resolvConf: string, short: string) => {
    const { file, argv } = withResolvConf(resolvConf, ["getent", "ahostsv4", short]);
    const r = await run(argv, { timeoutMs: 15_000 });
    fs.rmSync(file, { force: true });
    return [...new Set(r.stdout.split("\n").map((l) => l.split(/\s+/)[0]).filter((a) => /^\d+\.\d+\.\d+\.\d+$/.test(a)))];
  };
  return { address, ask, lookup, stop, detail: `CoreDNS ${version} from Deployment ${namespace}/${name} (${image}) at its Service's ${address}, as uid ${c.uid}${c.capabilities ? ` with capabilities [${c.capabilities.join(", ")}]` : ""}${c.noNewPrivs ? ", no privilege gain" : ""}, ready` };
}

/** A namespace's Service with an address of its own (not headless), if it has one. */
async function addressedService(kc: Kubectl, ns: string): Promise<{ metadata: { name: string }; spec: { clusterIP?: string } } | undefined> {
  const services = (await kc.get<{ items: { metadata: { name: string }; spec: { clusterIP?: string } }[] }>(["services", "-n", ns]))?.items ?? [];
  return services.find((s) => s.spec.clusterIP && s.spec.clusterIP !== "None");
}

/**
 * A pod made for no resolver in a tenant's namespace (no resolver annotation, as a template
 * the fleet does not know would be): central's API server must refuse it rather than let it
 * ask K3s's CoreDNS. Asked as a server-side dry run (admission runs, nothing is made).
 */
export async function unnamedResolverRefused(kc: Kubectl, tenantId: string): Promise<{ ok: boolean; detail: string }> {
  const ns = tenantNamespace(tenantId);
  const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "made-for-no-resolver", namespace: ns }, spec: { containers: [{ name: "c", image: `${TENANT_DNS.image.repository}:${TENANT_DNS.image.tag}` }] } };
  const r = await kc.run(["create", "--dry-run=server", "-f", "-", "-o", "json"], { input: JSON.stringify(pod) });
  if (r.code === 0) {
    const admitted = JSON.parse(r.stdout) as { spec: PodDns };
    return { ok: false, detail: `admitted with dnsPolicy ${admitted.spec.dnsPolicy ?? "ClusterFirst"} (it would ask ${admitted.spec.dnsConfig?.nameservers?.join(",") || `${K3S_CLUSTER_DNS.clusterIp}, K3s's CoreDNS`})` };
  }
  // The API server's own words, without Pod Security's warnings about the bare pod.
  const said = r.stderr.split("\n").filter((l) => l.trim() && !l.startsWith("Warning:")).join(" ").trim();
  return { ok: /denied request/.test(said), detail: `refused: ${said.replace(/^Error from server \(\w+\): (error when creating "STDIN": )?/, "").slice(0, 300)}` };
}

/** What one tenant's pods on central ask, and what its DNS answers them; `otherTenantId`: a tenant whose names it must not answer. */
export async function tenantPodsDns(kc: Kubectl, dns: TenantDns, tenantId: string, otherTenantId?: string): Promise<{ ok: boolean; detail: string }> {
  const ns = tenantNamespace(tenantId);
  const pods = (await kc.get<{ items: { metadata: { name: string }; spec: PodDns }[] }>(["pods", "-n", ns]))?.items ?? [];
  if (pods.length === 0) return { ok: false, detail: `no pod in ${ns}` };
  const elsewhere = pods.filter((p) => p.spec.dnsPolicy !== "None" || JSON.stringify(p.spec.dnsConfig?.nameservers ?? []) !== JSON.stringify([dns.address]));
  // The resolver of its slurmctld's pod, the one the attacker's code runs in.
  const asker = pods.find((p) => p.metadata.name === `${SLINKY_WORKLOADS.controller.name}-0`) ?? pods[0];
  const resolvConf = kubeletResolvConf(asker.spec, ns);
  // Its own Service with an address of its own (not headless), by its short name through the search path.
  const own = await addressedService(kc, ns);
  const looked = own ? await dns.lookup(resolvConf, own.metadata.name) : [];
  const fqdn = own ? await dns.ask(resolvConf, `${own.metadata.name}.${ns}.svc.${TENANT_DNS.domain}`) : "no Service with an address";
  // A platform Service (ArgoCD's API), and a name outside the cluster carrying data out.
  const platform = await dns.ask(resolvConf, `argocd-server.${ARGOCD_CHART.namespace}.svc.${TENANT_DNS.domain}`);
  // Another tenant's Service, by its full name: a tenant can neither read nor confirm another's names.
  const theirNs = otherTenantId ? tenantNamespace(otherTenantId) : undefined;
  const theirs = theirNs ? await addressedService(kc, theirNs) : undefined;
  const foreign = theirNs && theirs ? await dns.ask(resolvConf, `${theirs.metadata.name}.${theirNs}.svc.${TENANT_DNS.domain}`) : undefined;
  const outside = await dns.ask(resolvConf, `${tenantId}-secret-${Date.now().toString(36)}.exfil.example.com`);
  // A reverse lookup of its own Service's address: no reverse zone (it would name any namespace's Services).
  const reverse = own ? await dns.ask(resolvConf, reverseName(own.spec.clusterIP as string), "PTR") : "no Service with an address";
  const said = (a: Awaited<ReturnType<TenantDns["ask"]>>) => (typeof a === "string" ? a : `${a.rcode}${a.addresses.length ? ` ${a.addresses.join(",")}` : ""}`);
  const ok = elsewhere.length === 0 && !!own && looked.includes(own.spec.clusterIP as string)
    && typeof fqdn !== "string" && fqdn.rcode === "NOERROR" && fqdn.addresses.includes(own.spec.clusterIP as string)
    && typeof platform !== "string" && platform.rcode === "NXDOMAIN" && typeof outside !== "string" && outside.rcode === "REFUSED"
    && (!otherTenantId || (typeof foreign === "object" && foreign.rcode === "NXDOMAIN"))
    && typeof reverse !== "string" && reverse.rcode === "REFUSED";
  return {
    ok,
    detail: [
      elsewhere.length ? `pods that ask another server than its DNS's ${dns.address}: ${elsewhere.slice(0, 4).map((p) => `${p.metadata.name} (dnsPolicy ${p.spec.dnsPolicy ?? "ClusterFirst"}, nameservers ${(p.spec.dnsConfig?.nameservers ?? []).join(",") || `${K3S_CLUSTER_DNS.clusterIp}, K3s's CoreDNS, which forwards every other name out of central`})`).join("; ")}` : `all ${pods.length} pods ask its DNS's ${dns.address} alone (dnsPolicy None)`,
      own ? `${own.metadata.name} by its short name: ${looked.join(",") || "nothing"} (its Service ${own.spec.clusterIP}); by its full name: ${said(fqdn)}` : "no Service with an address in the namespace",
      `a platform Service: ${said(platform)}`,
      ...(otherTenantId ? [`tenant ${otherTenantId}'s ${theirs ? `Service ${theirs.metadata.name}: ${foreign ? said(foreign) : "not asked"}` : "namespace holds no Service with an address to ask for"}`] : []),
      `a name outside the cluster: ${said(outside)} (answered by CoreDNS itself: it has no server to forward to)`,
      `its Service's address in reverse: ${said(reverse)}`,
    ].join("; "),
  };
}
