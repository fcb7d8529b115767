/**
 * A tenant's Slurm behind the real operators: central's slurmctld from the StatefulSet and
 * slurm.conf Slinky's operator made for it on central, and the tenant's slurmrestd from the
 * Deployment and configuration the tenant's operator made in the tenant's cluster, both Slurm
 * 26.05 from the journey's image (journey/kube/pods.ts runs them as the kubelet would).
 * They share a network namespace of the tenant's own, loopback only: every tenant's
 * slurmctld listens on 6817, and the names of both slurm.conf files resolve to it there;
 * slurmdbd's database name is forwarded to the MariaDB mariadb-operator made. The
 * tenant's operator reaches its slurmrestd by the Service name its RestApi gives
 * (`slurm-restapi.slurm:6820`) at an address of the sealed namespace that socat forwards into
 * the tenant's (as a Service forwards): the NodeSet controller's joint, for real.
 */
import * as fs from "fs";
import * as path from "path";
import { SLURM_RELEASE, tenantNamespace } from "../../facts/fleet";
import { SLURMCTLD_TRIGGER_STATE } from "../../facts/control-plane";
import { TENANT_NAMESPACES } from "../../facts/tenant-cluster";
import { SLURM_PORTS } from "../../facts/contract";
import type { SlurmImage } from "../host/image";
import { abandonedNamespaces, tcpProbe, teardown } from "../host/network";
import { inPod, LOOPBACK_RESOLVER, must, NETNS_ETC, NETNS_RUN, POD_MOUNTS, run, Supervisor, tail, waitFor, type Daemon, type Pod } from "../host/processes";
import type { Kubectl } from "./kubectl";
import type { SealedNetwork } from "./sealed-network";
import { asContainer, containerArgv, initSteps, prepareContainer, type PodTemplate, type PreparedContainer } from "./pods";
import { slurmConfValues } from "./slurm-operator";
import type { MariadbPod } from "./mariadb";
import { loopbackAddress } from "../host/loopback";
import { forward, type ForwardEnd } from "./forward";

/** The namespaces' name stem: a crashed run's are found by it and removed. */
const TENANT_SLURM_STEM = "clusterra-slurm-";
/** The pods' address in a tenant's namespace (TEST-NET-1, on a veth pair inside it: nothing routes there or beyond). */
const POD_ADDRESS = "192.0.2.1/32";
/** slurmrestd's port, as the operator's RestApi Service and Deployment give it. */
const SLURMRESTD_PORT = SLURM_PORTS.slurmrestd;

/** Where, in the sealed namespace, the n-th tenant's operator finds its slurmrestd (its hosts file's address for the Service name). Pure. */
export function restapiForwardAddress(index: number): string {
  return loopbackAddress("restapiForward", index);
}

/** The objects Slinky v1.2.1's operator names after the release (`<release>-controller`, `<release>-restapi`). */
export const SLINKY_WORKLOADS = {
  controller: { kind: "statefulset", name: `${SLURM_RELEASE}-controller`, container: "slurmctld" },
  accounting: { kind: "statefulset", name: `${SLURM_RELEASE}-accounting`, container: "slurmdbd" },
  restapi: { kind: "deployment", name: `${SLURM_RELEASE}-restapi`, container: "slurmrestd" },
} as const;

/** The entrypoint of each Slinky image, in the foreground: the operator sets only args (a container's command would replace it). */
const ENTRYPOINTS = { slurmctld: ["slurmctld", "-D"], slurmdbd: ["slurmdbd", "-D"], slurmrestd: ["slurmrestd"] } as const;


/** A tenant's folder in a run's: its pods' files and logs, and what the Slurm part is handed (journey/slurm/handover.ts). Pure. */
export function tenantSlurmFolder(runDir: string, tenantId: string): string {
  return path.join(runDir, `slurm-${tenantId}`);
}

/** The login Deployment central's Slinky operator made for a tenant's LoginSet: what the Slurm part's login runs. */
export interface OperatorLogin {
  readonly deployment: string;
  /** Its login container's SACKD_OPTIONS (the image's entrypoint hands them to sackd). */
  readonly sackdOptions: string;
  /** The sshd_config it mounts at /etc/ssh/sshd_config (the operator's `<LoginSet>-ssh-config` ConfigMap). */
  readonly sshdConfig: string;
  /** Its login container's securityContext, as the runtime applies it. */
  readonly limits: Pick<PreparedContainer, "noNewPrivs" | "capabilities">;
}

/**
 * What central's Slinky operator made for a tenant that the Slurm part runs: slurmctld's and
 * slurmdbd's /etc/slurm files (slurm.conf, cgroup.conf, Prolog scripts; slurmdbd.conf, which
 * holds the Kubernetes part's per-run database password), key files left out, and its login
 * Deployment, or why there is none to run.
 */
export interface OperatorFiles {
  readonly slurmctld: Readonly<Record<string, string>>;
  readonly slurmdbd: Readonly<Record<string, string>>;
  readonly login: OperatorLogin | { readonly problem: string };
}

/** How long the journey waits for an object the operator makes from a synced custom resource (a LoginSet's Deployment). */
const OPERATOR_MAKES_MS = 120_000;

/** Where Slinky's login image reads sshd's configuration, and the name of its login container (loginbuilder). */
const SLINKY_LOGIN = { container: "login", sshdConfig: "/etc/ssh/sshd_config" } as const;

/**
 * The login Deployment the operator made for the LoginSet in `namespace` (the one a LoginSet
 * owns), its container made ready under `dir` as the kubelet would (its volumes written out,
 * its environment resolved): what the Slurm part's login needs of it, or why it cannot run.
 */
async function operatorLogin(kc: Kubectl, namespace: string, dir: string): Promise<{ login?: OperatorLogin; problem?: string }> {
  // The operator makes it when it reconciles the LoginSet: on a loaded machine that may come after the Controller's StatefulSet.
  const deployment = await waitFor(async () => {
    const list = await kc.get<{ items: { metadata: { name: string; ownerReferences?: { kind: string }[] }; spec: { template: PodTemplate } }[] }>(["deployments", "-n", namespace]);
    return list?.items.find((d) => d.metadata.ownerReferences?.some((r) => r.kind === "LoginSet"));
  }, OPERATOR_MAKES_MS, 1000);
  if (!deployment) return { problem: `no Deployment of a LoginSet in ${namespace} after ${OPERATOR_MAKES_MS / 1000} s of waiting for the operator` };
  const c = await prepareContainer(kc, namespace, deployment.spec.template, SLINKY_LOGIN.container, dir);
  const sshd = c.binds.find((b) => b.to === SLINKY_LOGIN.sshdConfig)?.from;
  const problems = [...(sshd && fs.existsSync(sshd) ? [] : [`nothing mounted at ${SLINKY_LOGIN.sshdConfig}`]), ...(c.env.SACKD_OPTIONS ? [] : ["no SACKD_OPTIONS"]), ...c.missing];
  if (problems.length || !sshd) return { problem: `${deployment.metadata.name}: ${problems.join("; ")}` };
  return { login: { deployment: deployment.metadata.name, sackdOptions: c.env.SACKD_OPTIONS, sshdConfig: fs.readFileSync(sshd, "utf8"), limits: { ...(c.noNewPrivs ? { noNewPrivs: true } : {}), ...(c.capabilities ? { capabilities: c.capabilities } : {}) } } };
}

/** A Slurm pod's /etc/slurm files as the kubelet made them, keys left out. */
function etcFiles(dir: string): Record<string, string> {
  return Object.fromEntries(fs.readdirSync(dir).filter((f) => !f.endsWith(".key") && fs.statSync(path.join(dir, f)).isFile()).map((f) => [f, fs.readFileSync(path.join(dir, f), "utf8")]));
}

export interface TenantSlurm {
  readonly tenantId: string;
  /** Where, in the sealed namespace, the tenant's operator finds its slurmrestd. */
  readonly restapiAddress: string;
  /** What the steps report. */
  readonly detail: string;
  /** The files of the controller's and the accounting pod's /etc/slurm the operator wrote, keys left out: the Slurm part's configuration. */
  readonly operatorFiles?: OperatorFiles;
  /** The tenant's slurmrestd process, stopped and started again behind its Service (the forward stays), as a crashed pod and its restart. */
  readonly slurmrestd?: RestapiSwitch;
  readonly problem?: string;
  readonly stop: () => Promise<void>;
}

/** Stops and restarts a tenant's slurmrestd; `start` gives why it did not listen again, if it did not. */
export interface RestapiSwitch {
  readonly stop: () => Promise<void>;
  readonly start: () => Promise<string | undefined>;
}

/** A process's status fields (/proc/<pid>/status), or undefined once it is gone. */
function processStatus(pid: number | undefined): Record<string, string> | undefined {
  if (!pid) return undefined;
  try {
    return Object.fromEntries(fs.readFileSync(`/proc/${pid}/status`, "utf8").split("\n").map((l) => l.split(":\t")).filter((kv) => kv.length === 2).map(([k, v]) => [k, v.trim()]));
  } catch {
    return undefined;
  }
}

/** `<Key>=<value>`'s host part for names like `slurm-controller-0(slurm-controller.tenant-acme)`. Pure. */
export function slurmctldNames(slurmctldHost: string): string[] {
  const m = /^([^(\s]+)(?:\(([^)]+)\))?$/.exec(slurmctldHost.trim());
  return m ? [m[1], ...(m[2] ? [m[2]] : [])] : [];
}

/**
 * Starts the tenant's MariaDB, slurmdbd, slurmctld and slurmrestd and the forward; a problem
 * when it cannot. `stop` ends what it started and removes the namespace, whatever happened.
 */
export async function startTenantSlurm(o: {
  readonly tenantId: string;
  readonly index: number;
  readonly image: SlurmImage;
  readonly central: Kubectl;
  readonly tenant: Kubectl;
  readonly sealed: SealedNetwork;
  readonly dir: string;
  /** The tenant's MariaDB on central, as mariadb-operator made it (journey/kube/mariadb.ts). */
  readonly mariadb?: MariadbPod;
}): Promise<TenantSlurm> {
  const netns = `${TENANT_SLURM_STEM}${o.tenantId}-${process.pid}`;
  const dir = tenantSlurmFolder(o.dir, o.tenantId);
  const supervisor = new Supervisor(path.join(dir, "logs"));
  const restapiAddress = restapiForwardAddress(o.index);
  const daemons: Daemon[] = [];
  let slurmctldLog = path.join(dir, "slurmctld", "volumes", "slurm-logfile", "slurmctld.log");
  const stop = async () => {
    await supervisor.stopAll();
    await teardown([netns]);
  };
  // Once read, the operator's files go to the Slurm part whatever fails after.
  let operatorFiles: OperatorFiles | undefined;
  const fail = async (problem: string): Promise<TenantSlurm> => ({ tenantId: o.tenantId, restapiAddress, detail: "", problem, stop, ...(operatorFiles ? { operatorFiles } : {}) });
  const left = await abandonedNamespaces(`${TENANT_SLURM_STEM}${o.tenantId}-`);
  if (left.length) await teardown(left);

  // Whatever fails, the namespace and what runs in it go with `stop` (the caller's cleanup).
  const start = async (): Promise<TenantSlurm> => {
    // Central's side: the controller StatefulSet and the slurm.conf the operator wrote.
    const ns = tenantNamespace(o.tenantId);
    // The operators make them once they have reconciled the Controller and RestApi.
    const workload = (kc: Kubectl, w: { kind: string; name: string }, namespace: string) =>
      waitFor(() => kc.get<{ spec: { template: PodTemplate; volumeClaimTemplates?: { metadata: { name: string } }[] } }>([w.kind, w.name, "-n", namespace]), 30_000, 1000);
    const sts = await workload(o.central, SLINKY_WORKLOADS.controller, ns);
    const dbdSts = await workload(o.central, SLINKY_WORKLOADS.accounting, ns);
    const deploy = await workload(o.tenant, SLINKY_WORKLOADS.restapi, TENANT_NAMESPACES.slurm);
    if (!sts || !dbdSts || !deploy) {
      const absent = [[sts, SLINKY_WORKLOADS.controller, `${ns} on central`], [dbdSts, SLINKY_WORKLOADS.accounting, `${ns} on central`], [deploy, SLINKY_WORKLOADS.restapi, `${TENANT_NAMESPACES.slurm} in ${o.tenantId}'s cluster`]] as const;
      return fail(absent.filter(([w]) => !w).map(([, w, where]) => `no ${w.kind} ${w.name} in ${where}`).join("; "));
    }
    // The tenant's namespace: loopback only; every name of both files resolves to it (below).
    await must(["ip", "netns", "add", netns], { timeoutMs: 5000 });
    await must(["ip", "-n", netns, "link", "set", "lo", "up"], { timeoutMs: 5000 });
    // One address besides loopback, on a veth pair whose both ends stay in the namespace (no
    // route beyond it): glibc's AI_ADDRCONFIG gives slurmctld no address to listen on where
    // loopback is all there is.
    await must(["ip", "-n", netns, "link", "add", "pod0", "type", "veth", "peer", "name", "pod1"], { timeoutMs: 5000 });
    await must(["ip", "-n", netns, "addr", "add", POD_ADDRESS, "dev", "pod0"], { timeoutMs: 5000 });
    // No IPv6 link-local addresses: nothing to announce, even inside.
    for (const link of ["pod0", "pod1"]) for (const set of [["addrgenmode", "none"], ["up"]]) await must(["ip", "-n", netns, "link", "set", link, ...set], { timeoutMs: 5000 });
    fs.mkdirSync(path.join(NETNS_ETC, netns), { recursive: true });
    fs.writeFileSync(path.join(NETNS_ETC, netns, "hosts"), "127.0.0.1 localhost\n");
    fs.writeFileSync(path.join(NETNS_ETC, netns, "resolv.conf"), LOOPBACK_RESOLVER);
    // The tenant's folder is seen at its own path (MariaDB's data, its init file).
    const pod = (name: string, hostname: string, binds: PreparedContainer["binds"], readOnlyRoot?: boolean): Pod => ({ netns, hostname, image: o.image.dir, shared: [dir], root: path.join(dir, name, "root"), binds, ...(readOnlyRoot ? { readOnlyRoot } : {}) });
    for (const p of ["slurmctld", "slurmdbd", "slurmrestd"]) for (const d of ["run", "spool", "etc-slurm"]) fs.mkdirSync(path.join(dir, p, "root", d), { recursive: true });

    /** A pod's init containers run to completion (the users' merge), then its main container made ready. */
    const preparePod = async (kc: Kubectl, namespace: string, template: PodTemplate, main: string, name: string, hostname: string, claims: readonly string[] = []) => {
      const problems: string[] = [];
      for (const init of initSteps(template)) {
        const c = await prepareContainer(kc, namespace, template, init.name, path.join(dir, name), claims);
        if (c.missing.length) {
          problems.push(...c.missing.map((m) => `${init.name}: ${m}`));
          continue;
        }
        plantTrigger(c);
        const r = await run(inPod(pod(name, hostname, c.binds, c.readOnlyRoot), asContainer(c, containerArgv(c, []))), { timeoutMs: 30_000 });
        if (r.code !== 0) problems.push(`init container ${init.name} exited ${r.code}: ${(r.stderr || r.stdout).trim().slice(-300)}`);
      }
      const c = await prepareContainer(kc, namespace, template, main, path.join(dir, name), claims);
      return { c, problems: [...problems, ...c.missing.map((m) => `${main}: ${m}`)] };
    };
    // A permanent trigger stored before disable_triggers (it would still fire): written into
    // the state claim once a container has made it, for the controller's init containers to remove.
    const stateSave = path.join(dir, "slurmctld", "volumes", SLURMCTLD_TRIGGER_STATE.volume);
    const storedTrigger = path.join(stateSave, SLURMCTLD_TRIGGER_STATE.files[0]);
    let planted = false;
    const plantTrigger = (c: PreparedContainer) => {
      if (planted || !c.binds.some((b) => b.from === stateSave)) return;
      fs.writeFileSync(storedTrigger, "a trigger stored before disable_triggers\n");
      planted = true;
    };
    const ctldPod = await preparePod(o.central, ns, sts.spec.template, SLINKY_WORKLOADS.controller.container, "slurmctld", `${SLINKY_WORKLOADS.controller.name}-0`, (sts.spec.volumeClaimTemplates ?? []).map((c) => c.metadata.name));
    const restPod = await preparePod(o.tenant, TENANT_NAMESPACES.slurm, deploy.spec.template, SLINKY_WORKLOADS.restapi.container, "slurmrestd", `${SLINKY_WORKLOADS.restapi.name}-0`);
    const dbdPod = await preparePod(o.central, ns, dbdSts.spec.template, SLINKY_WORKLOADS.accounting.container, "slurmdbd", `${SLINKY_WORKLOADS.accounting.name}-0`);
    if (!planted || fs.existsSync(storedTrigger)) ctldPod.problems.push(planted ? `init containers left ${SLURMCTLD_TRIGGER_STATE.files[0]} in the state claim: a trigger stored before disable_triggers would fire` : `no init container mounts the state claim ${SLURMCTLD_TRIGGER_STATE.volume}: nothing removes a trigger stored before disable_triggers`);
    const problems = [...ctldPod.problems.map((m) => `slurmctld ${m}`), ...dbdPod.problems.map((m) => `slurmdbd ${m}`), ...restPod.problems.map((m) => `slurmrestd ${m}`)];
    if (problems.length) return fail(`the kubelet could not start the pods: ${problems.join("; ")}`);
    const [ctld, dbd, rest] = [ctldPod.c, dbdPod.c, restPod.c];
    const etc = (c: PreparedContainer) => {
      const from = c.binds.find((b) => b.to === POD_MOUNTS.etc)?.from;
      if (!from) throw new Error(`a Slurm container mounts nothing at ${POD_MOUNTS.etc}`);
      return from;
    };
    // The login is the Slurm part's to run (the Kubernetes part runs no login pod): why it cannot is reported there.
    const login = await operatorLogin(o.central, ns, path.join(dir, "login"));
    operatorFiles = { slurmctld: etcFiles(etc(ctld)), slurmdbd: etcFiles(etc(dbd)), login: login.login ?? { problem: login.problem ?? "no login" } };
    const central = slurmConfValues(operatorFiles.slurmctld["slurm.conf"] ?? "");
    const tenantSide = slurmConfValues(fs.readFileSync(path.join(etc(rest), "slurm.conf"), "utf8"));
    const dbdConf = slurmConfValues(operatorFiles.slurmdbd["slurmdbd.conf"] ?? "");
    const names = [...new Set([...slurmctldNames(central.SlurmctldHost ?? ""), ...slurmctldNames(tenantSide.SlurmctldHost ?? ""), central.AccountingStorageHost, dbdConf.DbdHost, dbdConf.StorageHost].filter(Boolean))];
    fs.writeFileSync(path.join(NETNS_ETC, netns, "hosts"), `127.0.0.1 localhost ${names.join(" ")}\n`);
    const log = ctld.binds.find((b) => b.to === "/var/log/slurm");
    if (log) slurmctldLog = path.join(log.from, "slurmctld.log");

    // The accounting database mariadb-operator made (its StatefulSet's pod in the sealed
    // namespace; the database, user and grant by the operator over SQL), reached at the name
    // slurmdbd.conf gives it through a forward (as its Service forwards). Then slurmdbd:
    // slurmctld serves nothing until slurmdbd has given a new cluster its id.
    const port = Number(dbdConf.StoragePort);
    if (!o.mariadb?.port || o.mariadb.problem) return fail(`no MariaDB from mariadb-operator for ${ns}: ${o.mariadb?.problem ?? "its pod never started"}`);
    if (!Number.isInteger(port)) return fail("slurmdbd.conf names no StoragePort");
    const inTenant: ForwardEnd["side"] = { ns: netns, argv: (argv) => ["nsenter", `--net=${path.join(NETNS_RUN, netns)}`, ...argv] };
    const inSealed: ForwardEnd["side"] = { ns: o.sealed.name, argv: (argv) => o.sealed.argv(argv) };
    const dbForward = await forward(supervisor, "mariadb-forward", path.join(dir, "mariadb.sock"), { side: inTenant, address: "127.0.0.1", port }, { side: inSealed, address: o.mariadb.address, port: o.mariadb.port });
    daemons.push(...dbForward.daemons);
    if (dbForward.problem) return fail(`the forward ${dbdConf.StorageHost}:${port} -> MariaDB at ${o.mariadb.address}:${o.mariadb.port}: ${dbForward.problem}`);
    const slurmdbd = supervisor.start("slurmdbd", pod("slurmdbd", dbdConf.DbdHost ?? `${SLINKY_WORKLOADS.accounting.name}-0`, dbd.binds, dbd.readOnlyRoot), asContainer(dbd, containerArgv(dbd, ENTRYPOINTS.slurmdbd)));
    daemons.push(slurmdbd);
    const dbdUp = await waitFor(async () => (slurmdbd.exit ? false : (await tcpProbe(netns, "127.0.0.1", SLURM_PORTS.slurmdbd, 1000)) || undefined), 30_000, 300);
    if (!dbdUp) return fail(`slurmdbd did not listen on ${SLURM_PORTS.slurmdbd}: ${tail(slurmdbd.log, 4)}`);

    // slurmctld answers to the first name of SlurmctldHost: its pod's hostname.
    const ctldHost = slurmctldNames(central.SlurmctldHost ?? "")[0] ?? `${SLINKY_WORKLOADS.controller.name}-0`;
    const slurmctld = supervisor.start("slurmctld", pod("slurmctld", ctldHost, ctld.binds, ctld.readOnlyRoot), asContainer(ctld, containerArgv(ctld, ENTRYPOINTS.slurmctld)));
    const listening = await waitFor(async () => (slurmctld.exit ? false : (await tcpProbe(netns, "127.0.0.1", SLURM_PORTS.slurmctld, 1000)) || undefined), 20_000, 300);
    if (!listening) return { ...(await fail(`slurmctld did not listen on ${SLURM_PORTS.slurmctld}: ${tail(slurmctldLog, 4)} ${tail(slurmctld.log, 2)}`)) };

    let slurmrestd: Daemon | undefined;
    const startRestd = async (): Promise<string | undefined> => {
      const d = supervisor.start("slurmrestd", pod("slurmrestd", `${SLINKY_WORKLOADS.restapi.name}-0`, rest.binds, rest.readOnlyRoot), asContainer(rest, containerArgv(rest, ENTRYPOINTS.slurmrestd)));
      slurmrestd = d;
      const up = await waitFor(async () => (d.exit ? false : (await tcpProbe(netns, "127.0.0.1", SLURMRESTD_PORT, 1000)) || undefined), 20_000, 300);
      return up ? undefined : `slurmrestd did not listen on ${SLURMRESTD_PORT}: ${tail(d.log, 4)}`;
    };
    const restDown = await startRestd();
    if (restDown) return fail(restDown);
    const restapi: RestapiSwitch = {
      stop: async () => {
        if (slurmrestd && !slurmrestd.exit) await supervisor.stop(slurmrestd);
      },
      start: startRestd,
    };

    // The Service's forward: the sealed namespace's address to slurmrestd's port in the tenant's.
    const restForward = await forward(supervisor, "restapi-forward", path.join(dir, "restapi.sock"), { side: inSealed, address: restapiAddress, port: SLURMRESTD_PORT }, { side: inTenant, address: "127.0.0.1", port: SLURMRESTD_PORT });
    daemons.push(...restForward.daemons);
    if (restForward.problem) return fail(`the forward ${restapiAddress}:${SLURMRESTD_PORT} -> slurmrestd: ${restForward.problem}`);
    // What the kernel holds each daemon to, read from the running process: its securityContext, applied.
    const held = [["slurmctld", slurmctld, ctld], ["slurmdbd", slurmdbd, dbd], ["slurmrestd", slurmrestd, rest]] as const;
    const unheld = held.flatMap(([name, d, c]) => {
      const st = d ? processStatus(d.pid) : undefined;
      return !st ? [`${name}: no process status`] : (c.noNewPrivs && st.NoNewPrivs !== "1") || (c.capabilities && !c.capabilities.length && !/^0+$/.test(st.CapBnd ?? "")) ? [`${name}: NoNewPrivs ${st.NoNewPrivs}, CapBnd ${st.CapBnd}, not what its securityContext asks`] : [];
    });
    if (unheld.length) return fail(unheld.join("; "));
    const limits = held.map(([name, , c]) => `${name} ${[c.noNewPrivs ? "no_new_privs" : "", c.capabilities ? (c.capabilities.length ? `caps ${c.capabilities.join(",")}` : "no capabilities") : "", c.readOnlyRoot ? "read-only image" : ""].filter(Boolean).join(", ") || "unconfined"}`).join("; ");
    return {
      tenantId: o.tenantId,
      restapiAddress,
      operatorFiles,
      slurmrestd: restapi,
      detail: `slurmctld as ${ctld.uid}:${ctld.gid} on central's operator-written slurm.conf (ClusterName=${central.ClusterName}, ${central.AuthType}, SlurmctldParameters=${central.SlurmctldParameters}; a stored ${SLURMCTLD_TRIGGER_STATE.files[0]} removed by its init containers), slurmdbd on its slurmdbd.conf (${dbdConf.StorageLoc} on the MariaDB mariadb-operator made, ${o.mariadb.address}:${o.mariadb.port}), slurmrestd as ${rest.uid}:${rest.gid} on the tenant's (ClusterName=${tenantSide.ClusterName}), ${o.image.versions}; held to: ${limits}; ${SLINKY_WORKLOADS.restapi.name}.${TENANT_NAMESPACES.slurm}:${SLURMRESTD_PORT} at ${restapiAddress}`,
      stop,
    };
  };
  try {
    return await start();
  } catch (e) {
    return fail(`starting the pods: ${(e as Error).message}`);
  }
}
