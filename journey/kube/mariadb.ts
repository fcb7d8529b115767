/**
 * mariadb-operator v26.6.0 on central, for real (built by scripts/install-tools), and the
 * MariaDB pods it makes. The operator runs from the Deployment ArgoCD synced: its arguments
 * (probes and metrics on loopback ports of the journey's), its environment (the chart's
 * ConfigMap, the pod's fields), as its ServiceAccount, inside the sealed namespace. Each
 * tenant's MariaDB runs from the StatefulSet the operator made, as the kubelet would run it:
 * the operator's ConfigMap, TLS Secrets and root password Secret, in the journey's Slurm image
 * (Debian's MariaDB, the release the operator's default image runs), at an address of the
 * sealed namespace of its own that the names the operator dials resolve to. The operator then
 * makes the accounting database, user and grant over SQL, as it does on AWS.
 *
 * Stand-in, named: MariaDB's official image initializes an empty data directory in its
 * entrypoint (root's password from MARIADB_ROOT_PASSWORD, root@MARIADB_ROOT_HOST); Debian's
 * MariaDB has no such entrypoint, so `initSql` says what it does and the server runs it once.
 */
import * as fs from "fs";
import * as path from "path";
import { ACCOUNTING_DATABASE, CENTRAL_ADD_ONS, tenantNamespace } from "../../facts/fleet";
import { step, type JourneyStep } from "../host/step";
import { kubeconfigText, type Cluster } from "./cluster";
import type { Kubectl } from "./kubectl";
import { asContainer, containerArgv, prepareContainer, type PodTemplate, type PreparedContainer } from "./pods";
import { rbacRefusals, type Processes } from "./processes";
import type { SealedNetwork } from "./sealed-network";
import { pinAddressFlags } from "./slurm-operator";
import { tcpProbe } from "../host/network";
import { inPod, NETNS_ETC, preparePod, run, waitFor, type Pod } from "../host/processes";
import { loopbackAddress } from "../host/loopback";
import { CreationOrder, writtenBeforeReady } from "./creation-order";

const MARIADB_RESOURCE = "mariadbs.k8s.mariadb.com";
const BACKUP_RESOURCE = "backups.k8s.mariadb.com";

/** The chart's Deployment and container (the fleet installs it as the central add-on of that name). */
const MARIADB_OPERATOR = { deployment: "mariadb-operator", container: "controller" } as const;

/** The namespace the fleet installs mariadb-operator in. */
function operatorNamespace(): string {
  const addOn = CENTRAL_ADD_ONS.find((a) => a.name === MARIADB_OPERATOR.deployment);
  if (!addOn) throw new Error(`no central add-on ${MARIADB_OPERATOR.deployment} in facts/fleet.ts`);
  return addOn.namespace;
}

/** The MariaDB pod's container, as the operator names it. */
const MARIADB_CONTAINER = "mariadb";
/** Where MariaDB's data is (the storage claim; the official image's default, Debian's is /var/lib/mariadb), and the user the image's entrypoint runs the server as when started as root. */
const DATA_DIR = "/var/lib/mysql";
const MYSQL_USER = "mysql";

/** The n-th MariaDB's address in the sealed namespace. Pure. */
export function mariadbAddress(index: number): string {
  return loopbackAddress("mariadb", index);
}

/**
 * The names the operator and the pods dial a MariaDB by: its Service's (as
 * mariadb-operator's ServiceNameVariants gives them) and its first pod's under the internal
 * Service. Pure.
 */
export function mariadbNames(name: string, namespace: string, clusterDomain: string): string[] {
  const svc = (s: string) => [`${s}.${namespace}.svc.${clusterDomain}`, `${s}.${namespace}.svc`, `${s}.${namespace}`];
  return [...svc(name), `${name}-0.${name}-internal.${namespace}.svc.${clusterDomain}`, `${name}-0.${name}-internal.${namespace}.svc`];
}

/**
 * What the official image's entrypoint runs on an empty data directory, for the variables the
 * operator gives the container: no passwordless root but at localhost, root's password, and
 * root at MARIADB_ROOT_HOST with every privilege. Undefined when the environment names no root password. Pure.
 */
export function initSql(env: Readonly<Record<string, string>>): string | undefined {
  const password = env.MARIADB_ROOT_PASSWORD;
  if (!password) return undefined;
  const q = (v: string) => `'${v.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
  const host = env.MARIADB_ROOT_HOST || "%";
  return [
    // mariadb-install-db's passwordless roots at the loopback addresses and the pod's name would
    // shadow root@% for a client at those addresses: the entrypoint drops them.
    "DROP USER IF EXISTS 'root'@'127.0.0.1', 'root'@'::1';",
    "EXECUTE IMMEDIATE CONCAT('DROP USER IF EXISTS root@''', @@hostname, '''');",
    `ALTER USER 'root'@'localhost' IDENTIFIED BY ${q(password)};`,
    ...(host === "localhost" ? [] : [`CREATE USER IF NOT EXISTS 'root'@${q(host)} IDENTIFIED BY ${q(password)};`, `GRANT ALL ON *.* TO 'root'@${q(host)} WITH GRANT OPTION;`]),
    "",
  ].join("\n");
}

interface Workload {
  metadata: { name: string; namespace: string; labels?: Record<string, string> };
  spec: { template: PodTemplate; volumeClaimTemplates?: { metadata: { name: string } }[] };
}

/** Starts the operator where ArgoCD synced its Deployment; the process name, or why not. */
async function startMariadbOperator(o: {
  readonly cluster: Cluster;
  readonly kc: Kubectl;
  readonly binary: string;
  readonly sealed: SealedNetwork;
  readonly processes: Processes;
  readonly dir: string;
  /** First of two loopback ports for its probes and metrics. */
  readonly port: number;
}): Promise<{ process?: string; problem?: string }> {
  const ns = operatorNamespace();
  fs.mkdirSync(o.dir, { recursive: true });
  const d = await o.kc.get<Workload>(["deployment", MARIADB_OPERATOR.deployment, "-n", ns]);
  if (!d) return { problem: `no Deployment ${ns}/${MARIADB_OPERATOR.deployment}` };
  const account = d.spec.template.spec.serviceAccountName ?? "default";
  const token = await o.kc.run(["-n", ns, "create", "token", account, "--duration=24h"]);
  if (token.code !== 0) return { problem: `no token for ${ns}/${account}: ${token.stderr.trim()}` };
  const c = await prepareContainer(o.kc, ns, d.spec.template, MARIADB_OPERATOR.container, o.dir, [], { fields: { name: MARIADB_OPERATOR.deployment, namespace: ns, serviceAccountName: account } });
  if (c.missing.length) return { problem: `${MARIADB_OPERATOR.deployment}: ${c.missing.join("; ")}` };
  // Its ServiceAccount's credential as a kubeconfig (client-go reads KUBECONFIG before the
  // in-cluster files): the chart's RBAC is what it has.
  const kubeconfig = path.join(o.dir, "mariadb-operator.kubeconfig");
  fs.writeFileSync(kubeconfig, kubeconfigText(o.cluster.url, o.cluster.caData, token.stdout.trim()), { mode: 0o600 });
  const argv = o.sealed.argv([o.binary, ...pinAddressFlags(c.args, o.port)]);
  const name = `${o.cluster.name}-mariadb-operator`;
  o.processes.start(name, argv[0], argv.slice(1), { PATH: process.env.PATH, ...c.env, KUBECONFIG: kubeconfig });
  return { process: name };
}

/**
 * Runs the first pod of a MariaDB's StatefulSet at `address`, its names resolving there in the
 * sealed namespace; what it runs, or why not.
 */
async function startMariadbPod(o: {
  readonly kc: Kubectl;
  readonly statefulSet: Workload;
  readonly image: string;
  readonly sealed: SealedNetwork;
  readonly processes: Processes;
  readonly dir: string;
  readonly address: string;
}): Promise<{ process?: string; port?: number; problem?: string }> {
  const ns = o.statefulSet.metadata.namespace;
  const podName = `${o.statefulSet.metadata.name}-0`;
  fs.mkdirSync(o.dir, { recursive: true });
  const claims = (o.statefulSet.spec.volumeClaimTemplates ?? []).map((c) => c.metadata.name);
  const c: PreparedContainer = await prepareContainer(o.kc, ns, o.statefulSet.spec.template, MARIADB_CONTAINER, o.dir, claims, { fields: { name: podName, namespace: ns, ip: o.address } });
  if (c.missing.length) return { problem: `${ns}/${podName}: ${c.missing.join("; ")}` };
  const port = Number(c.env.MYSQL_TCP_PORT);
  if (!Number.isInteger(port)) return { problem: `${ns}/${podName}: no MYSQL_TCP_PORT in its environment` };
  const pod: Pod = { netns: o.sealed.name, hostname: podName, image: o.image, shared: [], root: o.dir, binds: c.binds };
  preparePod(pod);
  // The image's entrypoint runs as the pod's user (the operator gives 999, the official
  // image's mysql); as root it would run the server as mysql instead.
  const asRoot = c.uid === 0;
  const user = asRoot ? [`--user=${MYSQL_USER}`] : [];
  let [uid, gid] = [c.uid, c.gid];
  if (asRoot) {
    const ids = await run(inPod(pod, ["sh", "-c", `echo $(id -u ${MYSQL_USER}) $(id -g ${MYSQL_USER})`]), { timeoutMs: 10_000 });
    [uid, gid] = ids.stdout.trim().split(" ").map(Number);
    if (ids.code !== 0 || !Number.isInteger(uid)) return { problem: `the image has no user ${MYSQL_USER}` };
  }
  // The server's socket and pid folder (the image's configuration names /run/mariadbd).
  const runDir = path.join(o.dir, "run", "mariadbd");
  fs.mkdirSync(runDir, { recursive: true });
  fs.chownSync(runDir, uid, gid);
  // The official entrypoint's first start on an empty data directory.
  const data = c.binds.find((b) => b.to === DATA_DIR)?.from;
  if (!data) return { problem: `${ns}/${podName}: no volume at ${DATA_DIR}` };
  const extra: string[] = [];
  if (!fs.existsSync(path.join(data, "mysql"))) {
    const sql = initSql(c.env);
    if (!sql) return { problem: `${ns}/${podName}: no MARIADB_ROOT_PASSWORD in its environment` };
    const install = await run(inPod(pod, asContainer(c, ["mariadb-install-db", ...user, `--datadir=${DATA_DIR}`, "--auth-root-authentication-method=normal", "--skip-test-db"])), { timeoutMs: 120_000 });
    if (install.code !== 0) return { problem: `mariadb-install-db: ${(install.stderr || install.stdout).trim().slice(-300)}` };
    const init = path.join(o.dir, "run", "init.sql");
    fs.writeFileSync(init, sql, { mode: 0o600 });
    fs.chownSync(init, uid, gid);
    extra.push("--init-file=/run/init.sql");
  }
  fs.appendFileSync(path.join(NETNS_ETC, o.sealed.name, "hosts"), `${o.address} ${mariadbNames(o.statefulSet.metadata.name, ns, c.env.CLUSTER_NAME || "cluster.local").join(" ")}\n`);
  // The image's command (mariadbd, as its user) with the container's args; listening on the
  // pod's address alone: the tenants' MariaDBs share the sealed namespace and its port.
  const argv = inPod(pod, asContainer(c, containerArgv(c, ["mariadbd", ...user, `--datadir=${DATA_DIR}`, `--bind-address=${o.address}`, ...extra])));
  const name = `mariadb-${ns}`;
  o.processes.start(name, argv[0], argv.slice(1));
  const up = await waitFor(async () => (!o.processes.alive(name) ? false : (await tcpProbe(o.sealed.name, o.address, port, 1000)) || undefined), 60_000, 500);
  return up ? { process: name, port } : { problem: `${ns}/${podName} did not listen on ${o.address}:${port}: ${o.processes.tail(name, 4)}` };
}

/** A value in a MariaDB option file, quoted so that `#`, quotes and spaces stay part of it. Pure. */
export function optionValue(v: string): string {
  return `"${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/** A MariaDB pod the journey runs: where it listens, or why it does not. */
export interface MariadbPod {
  readonly namespace: string;
  readonly address: string;
  readonly port?: number;
  readonly process?: string;
  readonly problem?: string;
}

/**
 * mariadb-operator and the MariaDB pods it makes on central, started as ArgoCD syncs them:
 * `tick` (called every few seconds while the fleet syncs) starts the operator once its
 * Deployment exists, and each MariaDB's pod once the operator made its StatefulSet.
 */
export class CentralMariadb {
  operator?: string;
  problem?: string;
  private readonly pods = new Map<string, MariadbPod>();
  /** Pods being started: each runs on its own, so a slow first start never holds the caller's loop. */
  private readonly starting = new Map<string, Promise<void>>();

  /** The order the API server wrote MariaDBs and Backups in (a Backup is written only once its MariaDB is Ready). */
  readonly order: CreationOrder;

  constructor(private readonly o: {
    readonly cluster: Cluster;
    readonly kc: Kubectl;
    readonly binary: string;
    readonly image: string;
    readonly sealed: SealedNetwork;
    readonly processes: Processes;
    readonly dir: string;
    readonly port: number;
  }) {
    this.order = new CreationOrder(o.kc, [MARIADB_RESOURCE, BACKUP_RESOURCE]);
  }

  /** One pass; a failure is kept as the problem the steps report, never thrown, and the operator's start is tried again next pass. */
  async tick(): Promise<void> {
    try {
      await this.order.keep();
      await this.pass();
    } catch (e) {
      this.problem = `starting mariadb-operator or its pods: ${(e as Error).message}`;
    }
  }

  /** Waits for the pods being started (before their steps read them). */
  async settled(): Promise<void> {
    await Promise.all(this.starting.values());
  }

  /** Stops watching (the run's end). */
  stopWatching(): void {
    this.order.stop();
  }

  private async pass(): Promise<void> {
    if (!this.operator) {
      if (!(await this.o.kc.get(["deployment", MARIADB_OPERATOR.deployment, "-n", operatorNamespace()]))) return;
      const r = await startMariadbOperator({ cluster: this.o.cluster, kc: this.o.kc, binary: this.o.binary, sealed: this.o.sealed, processes: this.o.processes, dir: path.join(this.o.dir, "operator"), port: this.o.port });
      this.operator = r.process;
      this.problem = r.problem;
    }
    // Each MariaDB's StatefulSet (the operator names it after the MariaDB), once made.
    const dbs = (await this.o.kc.get<{ items: { metadata: { name: string; namespace: string } }[] }>([MARIADB_RESOURCE, "-A"]))?.items ?? [];
    for (const m of dbs) {
      const ns = m.metadata.namespace;
      if (this.pods.has(ns)) continue;
      const s = await this.o.kc.get<Workload>(["statefulset", m.metadata.name, "-n", ns]);
      if (!s) continue;
      const address = mariadbAddress(this.pods.size);
      this.pods.set(ns, { namespace: ns, address, problem: "still starting" });
      this.starting.set(ns, startMariadbPod({ kc: this.o.kc, statefulSet: s, image: this.o.image, sealed: this.o.sealed, processes: this.o.processes, dir: path.join(this.o.dir, ns), address })
        .catch((e: Error) => ({ problem: `starting ${ns}/${s.metadata.name}-0: ${e.message}` }))
        .then((r) => void this.pods.set(ns, { namespace: ns, address, ...r })));
    }
  }

  /** The MariaDB pod of a namespace, once started. */
  pod(namespace: string): MariadbPod | undefined {
    return this.pods.get(namespace);
  }
}

/** What slurmdbd's database user sees when it logs in over TCP: its grants and whether its database exists; a problem when it cannot log in. */
export async function accountingLogin(o: {
  readonly kc: Kubectl;
  readonly namespace: string;
  readonly pod: MariadbPod;
  readonly image: string;
  readonly sealed: SealedNetwork;
  readonly dir: string;
}): Promise<{ grants: string[]; database: boolean; problem?: string }> {
  const db = await o.kc.get<{ spec: { username?: string; database?: string; passwordSecretKeyRef?: { name: string; key: string } } }>([MARIADB_RESOURCE, ACCOUNTING_DATABASE.service, "-n", o.namespace]);
  const ref = db?.spec.passwordSecretKeyRef;
  if (!db?.spec.username || !db.spec.database || !ref) return { grants: [], database: false, problem: `MariaDB ${o.namespace}/${ACCOUNTING_DATABASE.service} names no username, database and password Secret` };
  const secret = await o.kc.get<{ data?: Record<string, string> }>(["secret", ref.name, "-n", o.namespace]);
  const password = secret?.data?.[ref.key];
  if (!password || !o.pod.port) return { grants: [], database: false, problem: `no Secret ${o.namespace}/${ref.name} key ${ref.key}, or no MariaDB listening` };
  // The password in a client option file only root reads, never on a command line.
  const dir = path.join(o.dir, "client");
  fs.mkdirSync(path.join(dir, "run"), { recursive: true });
  fs.writeFileSync(path.join(dir, "run", "client.cnf"), `[client]\nuser=${optionValue(db.spec.username)}\npassword=${optionValue(Buffer.from(password, "base64").toString())}\n`, { mode: 0o600 });
  const pod: Pod = { netns: o.sealed.name, hostname: "client", image: o.image, shared: [], root: dir };
  preparePod(pod);
  const sql = `SHOW GRANTS; SELECT CONCAT('database:', COUNT(*)) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = '${db.spec.database.replace(/'/g, "''")}'`;
  const r = await run(inPod(pod, ["mariadb", "--defaults-extra-file=/run/client.cnf", "--protocol=tcp", "-h", o.pod.address, "-P", String(o.pod.port), "-N", "-B", "-e", sql]), { timeoutMs: 20_000 });
  if (r.code !== 0) return { grants: [], database: false, problem: `${db.spec.username} cannot log in: ${(r.stderr || r.stdout).trim().slice(-300)}` };
  const lines = r.stdout.trim().split("\n");
  return { grants: lines.filter((l) => l.startsWith("GRANT")), database: lines.includes("database:1") };
}

/**
 * mariadb-operator on central, checked after the fleet synced: it ran as its ServiceAccount,
 * every MariaDB, Database, User, Grant and Backup carries its own Ready condition, and each
 * tenant's slurmdbd user logs in to the MariaDB pod with the grants the operator gave it.
 */
export async function mariadbSteps(o: { mariadb: CentralMariadb; c: Kubectl; tenants: readonly string[]; image: string; processes: Processes; sealed: SealedNetwork; dir: string; report: (s: JourneyStep) => void; version: string }): Promise<void> {
  const who = `mariadb-operator ${o.version}`;
  const log = o.mariadb.operator ? o.processes.log(o.mariadb.operator) : "";
  const forbidden = rbacRefusals(log);
  type Condition = { type: string; status: string; message?: string; lastTransitionTime?: string };
  type Listed = { items: { metadata: { name: string; namespace: string; creationTimestamp?: string }; spec?: { mariaDbRef?: { name: string } }; status?: { conditions?: Condition[] } }[] };
  const notReady: string[] = [];
  let ready = 0;
  for (const kind of ["mariadbs", "databases", "users", "grants"]) {
    for (const x of (await o.c.get<Listed>([`${kind}.k8s.mariadb.com`, "-A"]))?.items ?? []) {
      const cond = x.status?.conditions?.find((k) => k.type === "Ready");
      if (cond?.status === "True") ready++;
      else notReady.push(`${kind} ${x.metadata.namespace}/${x.metadata.name}: ${cond?.message ?? "no Ready condition"}`);
    }
  }
  // A scheduled Backup reports Complete (Scheduled, Running, Success or Failed), never Ready;
  // it is applied after its MariaDB is Ready (its sync wave), so the operator never saw it
  // orphaned: judged by the order the API server wrote them in (resource versions, not seconds).
  const backups = (await o.c.get<Listed>([BACKUP_RESOURCE, "-A"]))?.items ?? [];
  for (const b of backups) {
    const cond = b.status?.conditions?.find((k) => k.type === "Complete");
    if (!cond || cond.message === "Failed") notReady.push(`backups ${b.metadata.namespace}/${b.metadata.name}: ${cond?.message ?? "no Complete condition"}`);
    else ready++;
  }
  const ownerOf = new Map(backups.map((b) => [`${b.metadata.namespace}/${b.metadata.name}`, `${b.metadata.namespace}/${b.spec?.mariaDbRef?.name ?? ""}`]));
  notReady.push(...writtenBeforeReady(o.mariadb.order.sightings, "MariaDB", "Backup", ownerOf, o.mariadb.order.unobserved.get(BACKUP_RESOURCE) ?? new Set()));
  const alive = !!o.mariadb.operator && o.processes.alive(o.mariadb.operator);
  o.report(step(`central: ${who} reconciles every tenant's MariaDB, its database, user, grant and backup (applied after its MariaDB is Ready), as its ServiceAccount (chart RBAC)`, alive && forbidden.length === 0 && notReady.length === 0 && ready > 0,
    o.mariadb.problem ?? (!alive ? `the operator is not running: ${o.mariadb.operator ? o.processes.tail(o.mariadb.operator) : "never started"}` : forbidden.length ? `refused by its RBAC: ${forbidden.slice(0, 3).join(" | ")}` : notReady.length ? notReady.slice(0, 6).join("; ") : `${ready} objects Ready by the operator's own conditions (each Backup Complete: scheduled)`)));
  for (const t of o.tenants) {
    const ns = tenantNamespace(t);
    const pod = o.mariadb.pod(ns);
    const login = pod?.port ? await accountingLogin({ kc: o.c, namespace: ns, pod, image: o.image, sealed: o.sealed, dir: path.join(o.dir, "mariadb", `${ns}-check`) }) : undefined;
    const ok = !!login && !login.problem && login.database && login.grants.length > 0;
    o.report(step(`tenant ${t}: its MariaDB runs from the StatefulSet ${who} made, and slurmdbd's user logs in with the grants the operator gave it over SQL`, ok,
      !pod ? `no MariaDB StatefulSet in ${ns}` : pod.problem ?? login?.problem ?? `${pod.address}:${pod.port}; database ${login?.database ? "present" : "ABSENT"}; ${login?.grants.join(" | ") ?? ""}`));
  }
}
