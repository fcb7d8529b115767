/**
 * The Slurm journey itself: bring up central's tenant control plane and the tenant's slurmd
 * pods in namespaces joined as the plans join the VPCs, filtered as the plans' security
 * groups filter them, and walk a user's path through it. Each step reports what it saw.
 */
import { randomBytes } from "crypto";
import * as fs from "fs";
import * as path from "path";
import { K3S_API_PORT, SLURM_PORTS } from "../../facts/contract";
import { step, type JourneyStep } from "../host/step";
import { buildTopology, describeDrop, droppedFlows, dropCounts, ruleHits, tcpProbe, teardown, type Drop } from "../host/network";
import { IDENTITY_FILES, inImage, inPod, must, POD_MOUNTS, preparePod, quote, run, sleep, Supervisor, tail, waitFor, type Daemon, type Pod, type RunResult } from "../host/processes";
import { DIRECTORY_MODES } from "../../components/identity/user-directories";
import { NO_PASSWORD, SHARED_GROUP, sharedDirectory, userDirectory, type TenantUser } from "../../config/users";
import { journeyEtcSlurm, journeyOverrides, journeySlurmdbdConf, journeySshdConfig, mariadbInitSql, nodeSetOf, partitionsOf, SSHD_STAND_INS } from "./slurm-config";
import type { OperatorFiles, OperatorLogin } from "../kube/tenant-slurm";
import { slurmConfValues } from "../kube/slurm-operator";
import { planTopology, type Topology } from "./topology";
import { shellWords, slurmdFromPod, type OperatorPod, type OperatorSlurmd } from "./slurmd-pod";
import { journeyWorld, worldProblems, type JourneyPlans, type JourneyWorld, type PodIdentity } from "./world";
import { parseDroppedFlows, SG_TABLE, DROPS } from "../host/nft";
import { POLICY_TABLE } from "../host/network-policy";
import { INSTANCE_METADATA } from "../../facts/instance-metadata";
import { LOGIN_CAPABILITIES, LOGIN_SSH_METHODS, TENANT_DNS } from "../../facts/control-plane";
import { K3S_CLUSTER_DNS } from "../../facts/central-host";
import { setprivLimitArgs } from "../kube/pods";
import { SLURM_USER, type SlurmImage } from "../host/image";

export interface JourneyRunOptions {
  readonly workDir: string;
  readonly plans: JourneyPlans;
  readonly slurmdCount: number;
  readonly srunTimeoutMs: number;
  /** The repository the plans wrote their fleet into (journey/example/repository.ts). */
  readonly repository: string;
  /** The image every pod runs (journey/host/image.ts). */
  readonly image: SlurmImage;
  /** The files of central's slurmctld and slurmdbd /etc/slurm as the Slinky operator wrote them for the tenant (the Kubernetes part); absent when it did not get that far. */
  readonly operatorFiles?: OperatorFiles;
  /** The slurmd pod the tenant's Slinky operator made when the scaling loop raised a NodeSet (the Kubernetes part); absent when it did not get that far. */
  readonly slurmdPod?: OperatorPod;
  /** The same of the other tenant: with both, its own Slurm runs beside the tenant's (its jobs before, during and after the attack). */
  readonly other?: { readonly operatorFiles: OperatorFiles; readonly slurmdPod: OperatorPod };
}

/** Bounds of each wait (ms): the whole journey stays well under two minutes. */
const WAIT = { key: 5000, mariadb: 20000, slurmdbd: 20000, slurmctld: 15000, register: 20000, ping: 25000, job: 30000, command: 10000 } as const;
/** MariaDB's socket in its pod: the journey's clients reach it as root there. */
const MARIADB_SOCKET = "/run/mysqld.sock";
/** Only the owner may read or enter a user's directory, and jobs create files for the owner only. */
const PRIVATE = { directory: 0o700, file: 0o600, umask: "077" } as const;

/** Ping interval is SlurmdTimeout/3. */
const SLURMD_TIMEOUT_S = 15;

interface Context {
  readonly world: JourneyWorld;
  readonly topology: Topology;
  readonly supervisor: Supervisor;
  readonly work: string;
  readonly efs: string;
  readonly pods: {
    readonly slurmctld: Pod;
    readonly slurmdbd: Pod;
    readonly mariadb: Pod;
    readonly login: Pod;
    readonly slurmd: readonly Pod[];
  };
  readonly token: string;
  readonly image: SlurmImage;
  /** What every slurmd runs: the operator's NodeSet pod (slurmd-pod.ts). */
  readonly slurmd: OperatorSlurmd;
  /** What the login runs: the operator's login Deployment, sackd's options split as its image splits them. */
  readonly login: OperatorLogin & { readonly sackd: readonly string[] };
  /** central's slurmctld /etc/slurm: the operator's files with the journey's overrides (slurm-config.ts). */
  readonly etc?: Readonly<Record<string, string>>;
  /** The slurmdbd.conf the operator wrote (the Slurm part puts its own database password in it). */
  readonly slurmdbdConf?: string;
  /** The per-run auth/jwt key slurmctld and slurmdbd share where their files name one (the operator's AuthAltParameters). */
  readonly jwtKey: Buffer;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** Runs one step's body, timing it; a throw fails the step with the error as its detail. */
async function timed(name: string, body: () => Promise<{ ok: boolean; detail: string }>): Promise<JourneyStep> {
  const started = Date.now();
  try {
    const r = await body();
    return step(name, r.ok, `${r.detail} (${seconds(Date.now() - started)})`);
  } catch (e) {
    return step(name, false, `${e instanceof Error ? e.message : String(e)} (${seconds(Date.now() - started)})`);
  }
}

function down(d: Daemon): string | undefined {
  return d.exit ? `${d.name} exited (${d.exit.signal ?? `code ${d.exit.code}`}): ${tail(d.log)}` : undefined;
}

/** A Slurm client command on central's login pod. */
function login(ctx: Context, argv: readonly string[], timeoutMs: number = WAIT.command): Promise<RunResult> {
  return run(inPod(ctx.pods.login, argv), { timeoutMs });
}

function field(text: string, key: string): string | undefined {
  return new RegExp(`(?:^|\\s)${key}=(\\S*)`).exec(text)?.[1];
}

export async function runJourney(options: JourneyRunOptions): Promise<JourneyStep[]> {
  const steps: JourneyStep[] = [];
  const world = journeyWorld(options.plans, options.repository);
  const prefix = `sj${randomBytes(2).toString("hex")}`;
  // Every slurmd runs as the tenant's operator made its NodeSet pod: its node name, its
  // features, its --conf-server and its other options; nothing of it is the journey's own.
  const fromPod = options.slurmdPod ? slurmdFromPod(options.slurmdPod) : { problems: ["the Kubernetes part handed over no slurmd pod (its scaling loop's steps say why)"] };
  const operatorSlurmd = fromPod.slurmd;
  const podStep = `${world.tenant.id}'s slurmd run as its slurm-operator made the NodeSet's pod (node name, features, --conf-server, options)`;
  // Its --conf-server must be the name the tenant's cluster resolves to central's slurmctld: the Service the fleet makes.
  const service = world.tenant.controllerService;
  const elsewhere = operatorSlurmd && (operatorSlurmd.confServer.host !== service.host || operatorSlurmd.confServer.port !== service.port) ? `--conf-server ${operatorSlurmd.confServer.host}:${operatorSlurmd.confServer.port} is not the Service the fleet makes for central's slurmctld (${service.host}:${service.port})` : undefined;
  // The check is the pod's: its node name and options parsed, its --conf-server the fleet's Service.
  const podOk = !!operatorSlurmd && !elsewhere;
  if (!operatorSlurmd || !podOk) return [step(podStep, podOk, elsewhere ?? fromPod.problems.join("; "))];
  steps.push(step(podStep, podOk, `${operatorSlurmd.pod} of NodeSet ${operatorSlurmd.nodeSet}: slurmd -D ${operatorSlurmd.options.join(" ")}; nodes ${Array.from({ length: options.slurmdCount }, (_, i) => operatorSlurmd.hostname(i)).join(", ")} (ordinals past the pod's own named as the operator names them)`));
  // The login as central's operator made its LoginSet's Deployment: sackd's options, sshd's file, its limits.
  const handed = options.operatorFiles?.login;
  const operatorLogin = handed && "deployment" in handed ? handed : undefined;
  const sackdOptions = operatorLogin ? shellWords(operatorLogin.sackdOptions) : undefined;
  const loginStep = `the login run as central's slurm-operator made the LoginSet's Deployment (sackd's options, sshd_config, securityContext)`;
  const loginOk = !!operatorLogin && !!sackdOptions && sackdOptions.problems.length === 0;
  if (!operatorLogin || !sackdOptions || !loginOk) return [...steps, step(loginStep, loginOk, sackdOptions?.problems.join("; ") ?? (handed && "problem" in handed ? handed.problem : "the Kubernetes part handed over no login Deployment (its steps say why)"))];
  steps.push(step(loginStep, loginOk, `${operatorLogin.deployment}: sackd -D ${sackdOptions.words.join(" ")}; sshd_config of ${operatorLogin.sshdConfig.split("\n").filter((l) => /^\s*[A-Za-z]/.test(l)).length} lines; capabilities ${operatorLogin.limits.capabilities?.join(",") ?? "the runtime's default set"}${operatorLogin.limits.noNewPrivs ? ", no_new_privs" : ""}`));
  // The other tenant's Slurm, as its operators made it, when the Kubernetes part handed it over.
  const otherSlurmd = options.other ? slurmdFromPod(options.other.slurmdPod).slurmd : undefined;
  const otherLogin = options.other?.operatorFiles.login && "deployment" in options.other.operatorFiles.login ? options.other.operatorFiles.login : undefined;
  const otherSackd = otherLogin ? shellWords(otherLogin.sackdOptions) : undefined;
  const runOther = otherSlurmd && otherLogin && otherSackd && otherSackd.problems.length === 0 && world.other.id !== world.tenant.id;
  const topology = planTopology(world, prefix, { count: options.slurmdCount, hostname: operatorSlurmd.hostname, features: operatorSlurmd.features }, runOther ? { count: 1, hostname: otherSlurmd.hostname, features: otherSlurmd.features } : undefined);
  fs.mkdirSync(options.workDir, { recursive: true });
  const work = fs.mkdtempSync(path.join(options.workDir, `${prefix}-`));
  const supervisor = new Supervisor(path.join(work, "logs"));
  const { pods, efs, identities } = tenantPods(work, options.image.dir, "", world, topology.central, topology.slurmd);
  const ctx: Context = {
    world,
    topology,
    supervisor,
    work,
    efs,
    pods,
    token: randomBytes(6).toString("hex"),
    image: options.image,
    slurmd: operatorSlurmd,
    login: { ...operatorLogin, sackd: sackdOptions.words },
    ...(options.operatorFiles ? { etc: journeyEtcSlurm(options.operatorFiles.slurmctld, SLURMD_TIMEOUT_S) } : {}),
    ...(options.operatorFiles?.slurmdbd["slurmdbd.conf"] ? { slurmdbdConf: options.operatorFiles.slurmdbd["slurmdbd.conf"] } : {}),
    jwtKey: randomBytes(32),
  };
  const other = runOther && options.other && topology.other.controlPlane ? otherContext(ctx, options, { slurmd: otherSlurmd, login: { ...otherLogin, sackd: otherSackd.words }, files: options.other.operatorFiles }) : undefined;
  try {
    const network = await timed("namespaces and security groups up", () => networkUp(ctx));
    steps.push(network);
    if (!network.passed) return steps;
    const users = await timed(`the tenant's users reach slurmctld, the login and slurmd as the fleet delivers them (${world.users.length} users)`, () =>
      usersDelivered([
        { identity: world.controlPlane.slurmctldIdentity, dir: identities.slurmctld },
        { identity: world.controlPlane.loginIdentity, dir: identities.login },
        { identity: world.tenant.slurmdIdentity, dir: identities.slurmd },
      ], world.users, ctx));
    steps.push(users);
    if (!users.passed) return steps;
    const accounting = await timed("slurmdbd up and connected to MariaDB", () => accountingUp(ctx));
    steps.push(accounting);
    if (!accounting.passed) return steps;
    const ctld = await timed("slurmctld up", () => slurmctldUp(ctx));
    steps.push(ctld);
    if (!ctld.passed) return steps;
    const registered = await timed(`slurmd registers with its pod address (${topology.slurmd.length} pod${topology.slurmd.length > 1 ? "s" : ""})`, () => slurmdRegisters(ctx));
    steps.push(registered);
    if (registered.passed) {
      steps.push(await timed("slurmctld pings slurmd (6818 through the rules)", () => slurmctldPings(ctx)));
      steps.push(await timed("sbatch from central's login writes /mnt/efs/job_<id>.out on the tenant", () => batchJob(ctx)));
      if (topology.slurmd.length > 1) steps.push(await timed("two-node job with an inner srun", () => twoNodeJob(ctx)));
      steps.push(await timed(`two users (${world.users.slice(0, 2).map((u) => `${u.name} ${u.uid}`).join(", ")}) each run a batch job from central's login; each reads their own output from the login, never the other's`, () => twoUsers(ctx)));
      steps.push(await timed(`a user logs in to central's login over ssh, its sshd held to the capabilities the fleet gives the login (${LOGIN_CAPABILITIES.length}), accepting keys only, and runs a step`, () => sshLogin(ctx)));
    }
    if (registered.passed) steps.push(await timed(`${world.tenant.id}'s slurm.key, as SlurmUser on its own node, sets no trigger on its slurmctld on central (a trigger's program would run in the controller's pod)`, () => triggerRefused(ctx)));
    // The other tenant's own Slurm on the same host, its jobs before, during and after the attack.
    const otherUp = registered.passed && other ? await timed(`${world.other.id}'s own Slurm beside ${world.tenant.id}'s on central's host (its slurm.key, MariaDB, slurmdbd, slurmctld and login, as its operators made them) and its slurmd over its own NodePort; a job of its runs`, () => otherSlurmUp(other)) : undefined;
    if (otherUp) steps.push(otherUp);
    const otherRuns = otherUp?.passed ? other : undefined;
    if (registered.passed) steps.push(await timed(`code run as SlurmUser in ${world.tenant.id}'s slurmctld pod on central (the next route) reaches nothing outside its NetworkPolicies, enforced as K3s does; its jobs run meanwhile${otherRuns ? `, and ${world.other.id}'s` : ""}`, () => attackerContained(ctx, otherRuns)));
    if (otherRuns) steps.push(await timed(`${world.other.id}'s jobs still run after the attack on its neighbour`, () => otherJob(otherRuns)));
    steps.push(await timed(`${world.other.id} cannot reach ${world.tenant.id}'s slurmctld NodePort`, () => isolation(ctx, world.tenant.nodePort)));
    const block = world.tenant.srun.block;
    steps.push(await timed(`${world.other.id} cannot reach ${world.tenant.id}'s srun block ${block.from}-${block.to}`, () => isolation(ctx, block.from)));
    if (registered.passed) {
      const limit = `timeout ${seconds(options.srunTimeoutMs)}`;
      const names = topology.slurmd.map((s) => s.hostname);
      const first = names[0];
      steps.push(await timed(`interactive srun -N1 hostname from central's login (${limit})`, () => interactiveSrun(ctx, ["srun", "-N1", "-w", first, "hostname"], [first], options.srunTimeoutMs)));
      if (names.length > 1) steps.push(await timed(`interactive srun -N2 hostname from central's login (${limit})`, () => interactiveSrun(ctx, ["srun", "-N2", "-w", names.join(","), "hostname"], names, options.srunTimeoutMs)));
      steps.push(await timed(`salloc -N1 srun hostname from central's login (${limit})`, () => interactiveSrun(ctx, ["salloc", "-N1", "-w", first, "srun", "hostname"], [first], options.srunTimeoutMs)));
      // A terminal as the browser's would give it: script(1) holds a pty for srun, whose step gets one of its own.
      steps.push(await timed(`srun --pty from central's login, in a pty (${limit})`, () =>
        interactiveSrun(ctx, ["script", "-qec", `srun -N1 -w ${first} --pty sh -c 'tty; hostname'`, "/dev/null"], [PTY_SEEN, first], options.srunTimeoutMs)));
    }
    if (registered.passed) steps.push(await timed("the Slurm key and the database password rotate while a job runs: it finishes and is accounted", () => rotationDrill(ctx)));
    if (registered.passed) steps.push(await timed("the accounting database and the queue survive the control plane's loss: backed up, destroyed, restored", () => restoreDrill(ctx)));
    return steps;
  } finally {
    await supervisor.stopAll();
    await other?.supervisor.stopAll();
    const problems = await teardown(topology.namespaces.map((n) => n.name));
    if (problems.length > 0) steps.push(step("everything the journey started is gone", false, problems.join("; ")));
  }
}

/** Where a pod's control-plane place is: its namespace and hostname (topology.ts). */
interface PodPlace {
  readonly ns: { readonly name: string };
  readonly hostname: string;
}

/**
 * A tenant's pods in the Slurm part, under `work`, their folders tagged with `tag` (the other
 * tenant's id; none for the tenant's): its control plane's on central and its slurmd pods, each with its own /var/log/slurm
 * (the operator's pods mount a volume there: SlurmctldLogFile, SlurmdLogFile); the identity
 * folders by kind (slurmctld's serves slurmdbd and MariaDB too); its /mnt/efs, the access
 * point's root as the plan creates it, on the slurmd pods.
 */
function tenantPods(work: string, image: string, tag: string, world: JourneyWorld, central: { readonly slurmctld: PodPlace; readonly slurmdbd: PodPlace; readonly mariadb: { readonly ns: { readonly name: string } }; readonly login: PodPlace }, slurmd: readonly PodPlace[]): { pods: Context["pods"]; efs: string; identities: Record<"slurmctld" | "login" | "slurmd", string> } {
  // The tenant's folders are work/<base>, the other tenant's work/<base>-<id>; its pods' work/pods/<id>-<name>.
  const own = (base: string) => path.join(work, tag ? `${base}-${tag}` : base);
  const identities = { slurmctld: path.join(own("identity"), "slurmctld"), login: path.join(own("identity"), "login"), slurmd: path.join(own("identity"), "slurmd") };
  const efs = own("efs");
  fs.mkdirSync(efs, { recursive: true });
  fs.chownSync(efs, world.tenant.efsRoot.uid, world.tenant.efsRoot.gid);
  fs.chmodSync(efs, world.tenant.efsRoot.mode);
  const pod = (name: string, hostname: string, netns: string, identity: string, podEfs?: string): Pod => ({
    netns, hostname, image, shared: [work], root: path.join(work, "pods", tag ? `${tag}-${name}` : name), identity, ...(podEfs ? { efs: podEfs } : {}),
    binds: [{ from: path.join(work, "pods", tag ? `${tag}-${name}` : name, "log"), to: SLURM_LOG_DIR }],
  });
  return {
    pods: {
      slurmctld: pod("slurmctld", central.slurmctld.hostname, central.slurmctld.ns.name, identities.slurmctld),
      slurmdbd: pod("slurmdbd", central.slurmdbd.hostname, central.slurmdbd.ns.name, identities.slurmctld),
      mariadb: pod("mariadb", "mariadb-0", central.mariadb.ns.name, identities.slurmctld),
      login: pod("login", central.login.hostname, central.login.ns.name, identities.login),
      slurmd: slurmd.map((s) => pod(s.hostname, s.hostname, s.ns.name, identities.slurmd, efs)),
    },
    efs,
    identities,
  };
}

/**
 * The other tenant's Slurm as a context of its own: its world (the plans with the two tenants
 * swapped: its users, its fleet's control plane, its Services), its pods on central and its
 * slurmd pod (topology.other.controlPlane), its operators' files, its own slurm.key and jwt
 * key, its own logs and /mnt/efs. The same steps run it as run the tenant's.
 */
function otherContext(ctx: Context, options: JourneyRunOptions, made: { slurmd: OperatorSlurmd; login: Context["login"]; files: OperatorFiles }): Context {
  const plans = options.plans;
  const world = journeyWorld({ central: plans.central, tenant: plans.other, other: plans.tenant }, options.repository);
  const cp = ctx.topology.other.controlPlane;
  if (!cp) throw new Error("the topology runs no Slurm of the other tenant");
  const topology: Topology = { ...ctx.topology, central: { ...ctx.topology.central, slurmctld: cp.slurmctld, slurmdbd: cp.slurmdbd, mariadb: cp.mariadb, login: cp.login }, slurmd: cp.slurmd };
  const id = world.tenant.id;
  const { pods, efs } = tenantPods(ctx.work, ctx.image.dir, id, world, cp, cp.slurmd);
  return {
    world,
    topology,
    supervisor: new Supervisor(path.join(ctx.work, `logs-${id}`)),
    work: ctx.work,
    efs,
    pods,
    token: randomBytes(6).toString("hex"),
    image: ctx.image,
    slurmd: made.slurmd,
    login: made.login,
    etc: journeyEtcSlurm(made.files.slurmctld, SLURMD_TIMEOUT_S),
    ...(made.files.slurmdbd["slurmdbd.conf"] ? { slurmdbdConf: made.files.slurmdbd["slurmdbd.conf"] } : {}),
    jwtKey: randomBytes(32),
  };
}

/** The other tenant's Slurm up, as the tenant's came up (users, accounting, slurmctld, slurmd), and one job of its run. */
async function otherSlurmUp(g: Context): Promise<{ ok: boolean; detail: string }> {
  const id = g.world.tenant.id;
  const stages: [string, () => Promise<{ ok: boolean; detail: string }>][] = [
    ["users", () => usersDelivered([
      { identity: g.world.controlPlane.slurmctldIdentity, dir: g.pods.slurmctld.identity as string },
      { identity: g.world.controlPlane.loginIdentity, dir: g.pods.login.identity as string },
      { identity: g.world.tenant.slurmdIdentity, dir: g.pods.slurmd[0].identity as string },
    ], g.world.users, g)],
    ["accounting", () => accountingUp(g)],
    ["slurmctld", () => slurmctldUp(g)],
    ["slurmd", () => slurmdRegisters(g)],
    ["a job", () => otherJob(g)],
  ];
  const done: string[] = [];
  for (const [name, stage] of stages) {
    const r = await stage();
    if (!r.ok) return { ok: false, detail: `${id}'s ${name}: ${r.detail}${done.length ? ` (after ${done.join(", ")})` : ""}` };
    done.push(name);
  }
  return { ok: true, detail: `${id}: slurmctld ${g.topology.central.slurmctld.address}, slurmdbd ${g.topology.central.slurmdbd.address}, MariaDB ${g.topology.central.mariadb.address}, login ${g.topology.central.login.address} on central's host; slurmd ${g.topology.slurmd.map((s) => `${s.hostname} ${s.address}`).join(", ")} through NodePort ${g.world.tenant.nodePort}; its own slurm.key` };
}

/** One job of the other tenant's, on its slurmd, to the end: its output in its own /mnt/efs. */
async function otherJob(g: Context): Promise<{ ok: boolean; detail: string }> {
  const r = await batchJob(g);
  return { ok: r.ok, detail: `${g.world.tenant.id}: ${r.detail}` };
}

/**
 * Each kind of pod's init container, run as the fleet declares it: its ConfigMap's files in a
 * directory, its command run in the image (its /etc holds the image's accounts), its output
 * directory then mounted over the pod's /etc/passwd and /etc/group (as its Slurm container
 * mounts them). Passes when every pod resolves every user with their ids and the shared group
 * with every user in it, and the machine's own accounts are still there.
 */
async function usersDelivered(pods: readonly { identity: PodIdentity; dir: string }[], users: readonly TenantUser[], ctx: Context): Promise<{ ok: boolean; detail: string }> {
  const results: string[] = [];
  let ok = true;
  for (const { identity, dir } of pods) {
    // `dir` is what the pod mounts over /etc's files: the init container's emptyDir.
    const source = `${dir}-configmap`;
    const merged = dir;
    fs.mkdirSync(source, { recursive: true });
    fs.mkdirSync(merged, { recursive: true });
    for (const [file, text] of Object.entries(identity.files)) fs.writeFileSync(path.join(source, file), text);
    const unmounted = IDENTITY_FILES.filter((f) => !identity.mountedOverEtc.includes(`/etc/${f}`));
    // The command names the init container's mounts: here, the directories standing for them.
    if (!identity.command.some((w) => w.startsWith(identity.source)) || !identity.command.includes(identity.merged)) {
      ok = false;
      results.push(`${identity.pod}: the init container's command names neither its ConfigMap mount ${identity.source} nor its output ${identity.merged}: ${identity.command.join(" ")}`);
      continue;
    }
    const argv = identity.command.map((w) => (w === identity.merged ? merged : w.startsWith(identity.source) ? source + w.slice(identity.source.length) : w));
    const r = await run(inImage(ctx.image.dir, [ctx.work], argv), { timeoutMs: WAIT.command });
    if (r.code !== 0) {
      ok = false;
      results.push(`${identity.pod}: the init container failed (${r.code}): ${(r.stderr || r.stdout).trim()}`);
      continue;
    }
    const passwd = fs.readFileSync(path.join(dir, "passwd"), "utf8").split("\n");
    const group = fs.readFileSync(path.join(dir, "group"), "utf8").split("\n");
    const wrong = users.filter((u) => !passwd.some((l) => l.startsWith(`${u.name}:${NO_PASSWORD}:${u.uid}:${u.gid}:`))).map((u) => u.name);
    const shared = group.find((l) => l.startsWith(`${SHARED_GROUP.name}:x:${SHARED_GROUP.gid}:`));
    const outside = users.filter((u) => !(shared ?? "").split(":")[3]?.split(",").includes(u.name)).map((u) => u.name);
    const kept = passwd.some((l) => l.startsWith("root:x:0:0:"));
    const good = unmounted.length === 0 && wrong.length === 0 && shared !== undefined && outside.length === 0 && kept;
    ok &&= good;
    results.push(`${identity.pod}: ${passwd.filter(Boolean).length} passwd and ${group.filter(Boolean).length} group lines` +
      (unmounted.length ? `; NOT mounted over ${unmounted.map((f) => `/etc/${f}`).join(", ")}` : "") +
      (wrong.length ? `; missing ${wrong.join(", ")}` : "") + (shared ? (outside.length ? `; ${outside.join(", ")} not in ${SHARED_GROUP.name}` : "") : `; no ${SHARED_GROUP.name} group`) + (kept ? "" : "; the image's root is gone"));
  }
  return { ok, detail: results.join("; ") };
}

async function networkUp(ctx: Context): Promise<{ ok: boolean; detail: string }> {
  const { topology, world } = ctx;
  await buildTopology(topology);
  const translated = topology.firewalls.reduce((n, f) => n + f.translation.translated, 0);
  const perEni = topology.firewalls.map((f) => `${f.ns.label.split(" ").slice(0, 3).join(" ")} ${f.translation.translated}`).join(", ");
  const skipped = [...new Set(topology.firewalls.flatMap((f) => f.translation.skipped.map((s) => `${s.rule} (${s.why})`)))];
  const problems = worldProblems(world);
  const detail = [
    `${topology.namespaces.length} namespaces; ${translated} security-group rules as nftables on ${topology.firewalls.length} ENIs (${perEni})`,
    skipped.length > 0 ? `${skipped.length} rules match nothing here: ${skipped.join("; ")}` : "",
    problems.length > 0 ? `plans and fleet disagree: ${problems.join("; ")}` : "",
  ].filter(Boolean).join("; ");
  return { ok: problems.length === 0, detail };
}

/** Keys of the operator's slurm.conf (and one override) whose running values `slurmctld up` compares with the file. */
const RUNNING_KEYS = ["ClusterName", "StateSaveLocation", "SlurmctldParameters", "AuthAltTypes", "ProctrackType"] as const;

/** Where Slinky's pods keep their Slurm logs (the operator's slurm.conf names files there). */
const SLURM_LOG_DIR = "/var/log/slurm";

/** slurmctld's state folder on the machine: the operator's StateSaveLocation, under the pod's spool volume. */
function stateDir(ctx: Context): string {
  const at = slurmConfValues(ctx.etc?.["slurm.conf"] ?? "").StateSaveLocation ?? `${POD_MOUNTS.spool}/slurmctld`;
  if (!at.startsWith(`${POD_MOUNTS.spool}/`)) throw new Error(`StateSaveLocation ${at} is not under ${POD_MOUNTS.spool}, the controller pod's state volume`);
  return path.join(ctx.pods.slurmctld.root, "spool", at.slice(POD_MOUNTS.spool.length + 1));
}

/** Where every Slurm daemon and sackd reads the tenant's shared key (Slinky mounts it there). */
const SLURM_KEY = "slurm.key";

/** The tenant's slurm.key as Slinky mounts it into every Slurm pod: /etc/slurm/slurm.key, SlurmUser's, 0600. */
function placeKey(pods: readonly Pod[], key: Buffer): void {
  for (const p of pods) {
    const file = path.join(p.root, "etc-slurm", SLURM_KEY);
    fs.rmSync(file, { force: true });
    fs.writeFileSync(file, key, { mode: 0o600 });
    fs.chownSync(file, SLURM_USER.uid, SLURM_USER.gid);
  }
}

/** The login's sackd as the operator's Deployment runs it (configless from slurmctld: its SACKD_OPTIONS): clients on the login get their configuration and credentials through it. */
function startSackd(ctx: Context): Daemon {
  return ctx.supervisor.start("sackd", ctx.pods.login, ["sackd", "-D", ...ctx.login.sackd]);
}

async function accountingUp(ctx: Context): Promise<{ ok: boolean; detail: string }> {
  const { pods, world, topology } = ctx;
  const keyed = [pods.slurmctld, pods.slurmdbd, pods.login, ...pods.slurmd];
  for (const p of keyed) preparePod(p, ["slurmctld", "slurmd"]);
  // slurmctld saves its state as SlurmUser, and each daemon running as SlurmUser keeps its
  // sockets in /run/<daemon> (the pods' emptyDirs; systemd's RuntimeDirectory on a host).
  const slurmUsers: [Pod, string][] = [[pods.slurmctld, "spool/slurmctld"], [pods.slurmctld, "run/slurmctld"], [pods.slurmdbd, "run/slurmdbd"]];
  // sackd keeps the configuration it fetched in /run/slurm/conf, where the login's clients read it.
  fs.mkdirSync(path.join(pods.login.root, "run", "slurm"), { recursive: true, mode: 0o755 });
  // Every pod's log folder: SlurmUser's, as the image's own /var/log/slurm.
  for (const [p, dir] of [...slurmUsers, ...[...keyed, pods.mariadb].map((x): [Pod, string] => [x, "log"])]) {
    fs.mkdirSync(path.join(p.root, dir), { recursive: true, mode: 0o755 });
    fs.chownSync(path.join(p.root, dir), SLURM_USER.uid, SLURM_USER.gid);
  }
  preparePod(pods.mariadb);
  // One key per run, shared by every Slurm daemon of the tenant, as Slinky shares slurm.key.
  placeKey(keyed, randomBytes(1024));

  const password = randomBytes(12).toString("hex");
  fs.writeFileSync(path.join(pods.mariadb.root, "my.cnf"), world.controlPlane.mariadbCnf);
  fs.writeFileSync(path.join(pods.mariadb.root, "init.sql"), mariadbInitSql({ controlPlane: world.controlPlane, password }), { mode: 0o600 });
  const db = await startMariadb(ctx);
  if (typeof db === "string") return { ok: false, detail: db };
  const unwritten = writeSlurmdbdConf(ctx, password);
  if (unwritten) return { ok: false, detail: unwritten };
  const dbd = await startSlurmdbd(ctx);
  if (typeof dbd === "string") return { ok: false, detail: dbd };
  const tables = await accountingTables(ctx);
  if (tables === undefined) return { ok: false, detail: `slurmdbd made no tables in ${world.controlPlane.accounting.database}: ${tail(dbd.log)}` };
  const given = slurmConfValues(ctx.slurmdbdConf ?? "");
  return { ok: true, detail: `slurmdbd on the slurmdbd.conf central's Slinky operator wrote (DbdHost=${given.DbdHost}, StorageUser=${given.StorageUser}, ${given.AuthType} with ${given.AuthAltTypes ?? "no alternative"}; StoragePass its own MariaDB's) at ${topology.central.slurmdbd.address}:${SLURM_PORTS.slurmdbd}, ${tables} tables in ${world.controlPlane.accounting.database} on MariaDB ${topology.central.mariadb.address}:${world.controlPlane.accounting.port}, auth/slurm with one per-run slurm.key on ${keyed.length} pods (${ctx.image.versions})` };
}

/** The MariaDB pod as mariadb-operator makes it: a fresh data directory (the init file creates slurm's user and grants), then the server. */
async function startMariadb(ctx: Context): Promise<Daemon | string> {
  const { pods, world, topology, supervisor } = ctx;
  const data = path.join(pods.mariadb.root, "data");
  if (!fs.existsSync(path.join(data, "mysql"))) {
    const install = await run(inPod(pods.mariadb, ["mariadb-install-db", "--no-defaults", `--datadir=${data}`, "--user=root", "--auth-root-authentication-method=normal", "--skip-test-db"]), { timeoutMs: WAIT.mariadb });
    if (install.code !== 0) return `mariadb-install-db failed: ${(install.stderr || install.stdout).trim().slice(-300)}`;
  }
  const db = supervisor.start("mariadb", pods.mariadb, [
    "mariadbd", `--defaults-file=${path.join(pods.mariadb.root, "my.cnf")}`, "--user=root", `--datadir=${data}`, `--socket=${MARIADB_SOCKET}`, "--pid-file=/run/mysqld.pid",
    `--bind-address=${topology.central.mariadb.address}`, `--port=${world.controlPlane.accounting.port}`, "--skip-name-resolve", `--init-file=${path.join(pods.mariadb.root, "init.sql")}`,
  ]);
  const dbUp = await waitFor(async () => (down(db) ? false : (await tcpProbe(pods.slurmdbd.netns, topology.central.mariadb.address, world.controlPlane.accounting.port, 1000)) || undefined), WAIT.mariadb, 300);
  return dbUp ? db : `MariaDB not reachable on ${topology.central.mariadb.address}:${world.controlPlane.accounting.port}: ${down(db) ?? tail(db.log)}`;
}

/** Where a Slurm file's AuthAltParameters puts auth/jwt's key (`jwt_key=`). Pure. */
function jwtKeyPath(conf: string): string | undefined {
  return /(?:^|,)jwt_key=([^,\s]+)/.exec(slurmConfValues(conf).AuthAltParameters ?? "")?.[1];
}

/** The run's jwt key where a daemon's file names it under /etc/slurm (`jwt_key=`), SlurmUser's, 0600: slurmctld and slurmdbd share it, as Slinky mounts one Secret in both. */
function placeJwtKey(ctx: Context, pod: Pod, jwt: string | undefined): void {
  if (!jwt?.startsWith(`${POD_MOUNTS.etc}/`)) return;
  const file = path.join(pod.root, "etc-slurm", jwt.slice(POD_MOUNTS.etc.length + 1));
  fs.rmSync(file, { force: true });
  fs.writeFileSync(file, ctx.jwtKey, { mode: 0o600 });
  fs.chownSync(file, SLURM_USER.uid, SLURM_USER.gid);
}

/** The operator's slurmdbd.conf with the part's database password, as Slinky mounts it: SlurmUser's, 0600 (slurmdbd refuses it otherwise); its jwt key beside it. */
function writeSlurmdbdConf(ctx: Context, password: string): string | undefined {
  if (!ctx.slurmdbdConf) return "no slurmdbd.conf from central's Slinky operator: the Kubernetes part did not reach the tenant's slurmdbd";
  const file = path.join(ctx.pods.slurmdbd.root, "etc-slurm", "slurmdbd.conf");
  fs.rmSync(file, { force: true });
  fs.writeFileSync(file, journeySlurmdbdConf(ctx.slurmdbdConf, password), { mode: 0o600 });
  fs.chownSync(file, SLURM_USER.uid, SLURM_USER.gid);
  placeJwtKey(ctx, ctx.pods.slurmdbd, jwtKeyPath(ctx.slurmdbdConf));
  return undefined;
}

/** slurmdbd, once it serves its port. */
async function startSlurmdbd(ctx: Context): Promise<Daemon | string> {
  const { pods, topology, supervisor } = ctx;
  const dbd = supervisor.start("slurmdbd", pods.slurmdbd, ["slurmdbd", "-D"]);
  const up = await waitFor(async () => (down(dbd) ? false : (await tcpProbe(pods.slurmctld.netns, topology.central.slurmdbd.address, SLURM_PORTS.slurmdbd, 1000)) || undefined), WAIT.slurmdbd, 500);
  return up ? dbd : `slurmdbd not serving ${SLURM_PORTS.slurmdbd}: ${down(dbd) ?? tail(dbd.log)}`;
}

/** Tables of the accounting database (slurmdbd creates them on its first start). */
async function accountingTables(ctx: Context): Promise<number | undefined> {
  const { pods, world } = ctx;
  return waitFor(async () => {
    const q = await run(inPod(pods.mariadb, ["mariadb", "--no-defaults", "-S", MARIADB_SOCKET, "-u", "root", "-N", "-e", `SELECT COUNT(*) FROM information_schema.tables WHERE table_schema='${world.controlPlane.accounting.database}'`]), { timeoutMs: 5000 });
    const n = Number(q.stdout.trim());
    return n > 0 ? n : undefined;
  }, WAIT.slurmdbd, 500);
}

async function slurmctldUp(ctx: Context): Promise<{ ok: boolean; detail: string }> {
  const { pods, world, topology } = ctx;
  if (!ctx.etc?.["slurm.conf"]) return { ok: false, detail: "no slurm.conf from central's Slinky operator: the Kubernetes part did not reach the tenant's slurmctld" };
  // The controller holds the operator's files (its Prolog scripts among them, served
  // configless); the login's sackd and the slurmd fetch them from it.
  const etc = path.join(pods.slurmctld.root, "etc-slurm");
  // Scripts (Prolog, Epilog and the like) executable; configuration files read-only.
  for (const [file, text] of Object.entries(ctx.etc)) fs.writeFileSync(path.join(etc, file), text, { mode: file.endsWith(".conf") ? 0o644 : 0o755 });
  // auth/jwt beside auth/slurm (the operator's AuthAltTypes): a per-run key where it names it, SlurmUser's.
  const jwt = jwtKeyPath(ctx.etc["slurm.conf"]);
  const state = stateDir(ctx);
  fs.mkdirSync(state, { recursive: true, mode: 0o755 });
  fs.chownSync(state, SLURM_USER.uid, SLURM_USER.gid);
  placeJwtKey(ctx, ctx.pods.slurmctld, jwt);
  const started = await startSlurmctld(ctx, true);
  if (typeof started === "string") return { ok: false, detail: started };
  const ping = started.ping;
  let registered = "";
  const cluster = await waitFor(async () => {
    const r = await login(ctx, ["sacctmgr", "-n", "-P", "show", "cluster", "format=cluster,controlhost,controlport"], 5000);
    registered = (r.stdout + r.stderr).trim();
    return r.stdout.includes(`${world.controlPlane.clusterName}|${topology.central.slurmctld.address}|`) ? r.stdout.trim() : undefined;
  }, WAIT.slurmctld, 500);
  const parts = (await login(ctx, ["sinfo", "-h", "-o", "%P"], 5000)).stdout.trim().split("\n").join(",");
  // What slurmctld runs with is the operator's file (and the overrides after it): the keys below
  // as `scontrol show config` reports them.
  const given = slurmConfValues(ctx.etc["slurm.conf"]);
  const shown = (await login(ctx, ["scontrol", "show", "config"], 5000)).stdout;
  const running = (key: string) => new RegExp(`^${key}\\s*=\\s*(.*?)\\s*$`, "m").exec(shown)?.[1];
  const differ = RUNNING_KEYS.filter((k) => running(k) !== given[k]).map((k) => `${k}: running ${running(k) ?? "(none)"}, the file says ${given[k] ?? "(none)"}`);
  return {
    ok: cluster !== undefined && differ.length === 0,
    detail: `on the slurm.conf central's Slinky operator wrote (${journeyOverrides(SLURMD_TIMEOUT_S).filter((l) => /^[A-Za-z]+=/.test(l)).length} keys overridden after it): ${differ.length ? `NOT RUNNING IT: ${differ.join("; ")}` : RUNNING_KEYS.map((k) => `${k}=${given[k]}`).join(", ")}; ${ping} at ${topology.central.slurmctld.address}:${SLURM_PORTS.slurmctld}, NodePort ${world.tenant.nodePort} on ${topology.central.hostAddress}; partitions ${parts}; accounting: ${cluster ?? `cluster not registered in slurmdbd: ${registered || "nothing"}`}`,
  };
}

/** slurmctld, once `scontrol ping` from the login says it is up (the login's sackd started once it listens); `clean` starts without its saved state (-c). */
async function startSlurmctld(ctx: Context, clean: boolean, restartSackd = false): Promise<{ daemon: Daemon; ping: string } | string> {
  const { pods, topology, supervisor } = ctx;
  const ctld = supervisor.start("slurmctld", pods.slurmctld, ["slurmctld", "-D", ...(clean ? ["-c"] : [])]);
  const listening = await waitFor(async () => (down(ctld) ? false : (await tcpProbe(pods.login.netns, topology.central.slurmctld.address, SLURM_PORTS.slurmctld, 1000)) || undefined), WAIT.slurmctld, 300);
  if (!listening) return `slurmctld not listening on ${topology.central.slurmctld.address}:${SLURM_PORTS.slurmctld}: ${down(ctld) ?? tail(ctld.log)}`;
  if (restartSackd) for (const d of supervisor.daemons.filter((x) => x.name === "sackd" && !x.exit)) await supervisor.stop(d);
  if (!supervisor.daemons.some((d) => d.name === "sackd" && !d.exit)) startSackd(ctx);
  const ping = await waitFor(async () => {
    if (down(ctld)) return "down";
    const r = await login(ctx, ["scontrol", "ping"], 5000);
    return /is UP/.test(r.stdout) ? r.stdout.trim().replace(/\s+/g, " ") : undefined;
  }, WAIT.slurmctld, 500);
  return !ping || ping === "down" ? `slurmctld not answering: ${down(ctld) ?? tail(ctld.log)}` : { daemon: ctld, ping };
}

/** Job ids slurmdbd has recorded, in order. */
async function accountedJobs(ctx: Context): Promise<string[]> {
  const r = await login(ctx, ["sacct", "-n", "-P", "-X", "-a", "-S", "2000-01-01", "-o", "JobID"], 10000);
  return r.stdout.trim().split("\n").filter((l) => /^\d+$/.test(l));
}

/**
 * The backup drilled: a job held in the queue; the accounting database dumped as the fleet's
 * mariadb-operator Backup dumps it (one transaction, its databases, its compression) and
 * slurmctld's state copied as the data volume's snapshot holds it; then the tenant's control
 * plane destroyed (MariaDB's data and slurmctld's state gone); then MariaDB made anew as the
 * operator makes it, the dump restored as its Restore does, the state put back, and the
 * daemons started: every job accounted before is accounted again, and the held job is still
 * queued.
 */
async function restoreDrill(ctx: Context): Promise<{ ok: boolean; detail: string }> {
  const { pods, world, supervisor } = ctx;
  const backup = world.controlPlane.backup;
  const submittedAt = Date.now();
  const held = await submit(ctx, ["-N1", "--hold"], "true");
  // Every job before the held one (ids are sequential) has reached slurmdbd: the history to keep.
  const earlier = Array.from({ length: Number(held) - 1 }, (_, i) => String(i + 1));
  const accounted = await waitFor(async () => {
    const ids = await accountedJobs(ctx);
    return earlier.every((id) => ids.includes(id)) ? ids : undefined;
  }, WAIT.job, 500);
  if (!accounted) return { ok: false, detail: `jobs ${earlier.join(",")} not all in slurmdbd: ${(await accountedJobs(ctx)).join(",")}` };
  const dir = path.join(ctx.work, "backup");
  fs.mkdirSync(dir, { recursive: true });
  const zip = backup.compression === "gzip" ? " | gzip" : backup.compression === "bzip2" ? " | bzip2" : "";
  const dump = path.join(dir, `${backup.name}.sql${backup.compression === "gzip" ? ".gz" : backup.compression === "bzip2" ? ".bz2" : ""}`);
  const dumped = await run(inPod(pods.mariadb, ["bash", "-c", `set -o pipefail; mariadb-dump --no-defaults -S ${MARIADB_SOCKET} -u root --single-transaction --events --routines --databases ${backup.databases.map(quote).join(" ")}${zip} > ${quote(dump)}`]), { timeoutMs: WAIT.mariadb });
  if (dumped.code !== 0) return { ok: false, detail: `the backup failed: ${dumped.stderr.trim()}` };
  const state = stateDir(ctx);
  const snapshot = path.join(dir, "slurmctld-state");
  // The daily snapshot comes long after a submission: here, once slurmctld has saved the held job's state.
  const saved = await waitFor(async () => (fs.existsSync(path.join(state, "job_state")) && fs.statSync(path.join(state, "job_state")).mtimeMs > submittedAt ? true : undefined), WAIT.slurmctld, 200);
  if (!saved) return { ok: false, detail: `slurmctld did not save its state after job ${held} within ${seconds(WAIT.slurmctld)}` };
  // As a volume snapshot holds it: owners and modes kept (slurmctld refuses a state folder not SlurmUser's).
  await must(["cp", "-a", state, snapshot]);
  // The tenant's control plane destroyed: its daemons gone with the database's files and slurmctld's state.
  for (const name of ["slurmctld", "slurmdbd", "mariadb"]) for (const d of supervisor.daemons.filter((x) => x.name === name)) await supervisor.stop(d);
  fs.rmSync(path.join(pods.mariadb.root, "data"), { recursive: true, force: true });
  fs.rmSync(state, { recursive: true, force: true });
  const db = await startMariadb(ctx);
  if (typeof db === "string") return { ok: false, detail: `recreating MariaDB: ${db}` };
  const unzip = backup.compression === "gzip" ? "gzip -dc" : backup.compression === "bzip2" ? "bzip2 -dc" : "cat";
  const restored = await run(inPod(pods.mariadb, ["bash", "-c", `set -o pipefail; ${unzip} ${quote(dump)} | mariadb --no-defaults -S ${MARIADB_SOCKET} -u root`]), { timeoutMs: WAIT.mariadb });
  if (restored.code !== 0) return { ok: false, detail: `the restore failed: ${restored.stderr.trim()}` };
  await must(["cp", "-a", snapshot, state]);
  const dbd = await startSlurmdbd(ctx);
  if (typeof dbd === "string") return { ok: false, detail: `after the restore: ${dbd}` };
  const ctld = await startSlurmctld(ctx, false);
  if (typeof ctld === "string") return { ok: false, detail: `after the restore: ${ctld}` };
  const after = await accountedJobs(ctx);
  const lost = accounted.filter((id) => !after.includes(id));
  const queued = (await login(ctx, ["squeue", "-h", "-j", held, "-o", "%i %t %r"], 5000)).stdout.trim();
  await login(ctx, ["scancel", held], 5000);
  const size = fs.statSync(dump).size;
  return {
    ok: lost.length === 0 && queued === `${held} PD JobHeldUser`,
    detail: `Backup ${backup.name} (${backup.cron}, ${backup.databases.join(",")}, ${backup.compression}): ${(size / 1024).toFixed(0)} KiB; ${accounted.length} jobs accounted before, ${after.length} after the restore${lost.length ? `, LOST ${lost.join(",")}` : ""}; queue: ${queued || `job ${held} gone`}`,
  };
}

/** A job's state once it has finished, and whether slurmdbd has it. */
async function finishedAndAccounted(ctx: Context, id: string): Promise<string> {
  const state = await waitJob(ctx, id);
  const accounted = await waitFor(async () => {
    const r = (await login(ctx, ["sacct", "-n", "-P", "-X", "-j", id, "-o", "State"], 5000)).stdout.trim();
    return /^COMPLETED/.test(r) ? r : undefined;
  }, WAIT.job, 500);
  return `job ${id} ${state}, slurmdbd: ${accounted ?? "no COMPLETED record"}`;
}

/**
 * The keys rotated while a job runs (README, "Day 2", rotation): a new slurm.key in every
 * pod, then each daemon restarted, central's side first (slurmctld with the login's sackd,
 * whose clients check slurmctld on the new key; then slurmdbd), then the tenant's slurmd,
 * each back once it has registered again; then the accounting database's password, changed
 * in MariaDB as mariadb-operator applies a new secret version, and slurmdbd restarted with
 * it. The running job finishes and is accounted, and a job after the rotation runs too.
 */
async function rotationDrill(ctx: Context): Promise<{ ok: boolean; detail: string }> {
  const { pods, world, supervisor } = ctx;
  const node = ctx.topology.slurmd[0];
  const running = await submit(ctx, ["-N1", "-w", node.hostname], "sleep 8; echo rotated");
  await waitFor(async () => (/RUNNING/.test(field((await login(ctx, ["scontrol", "-o", "show", "job", running], 5000)).stdout, "JobState") ?? "") ? true : undefined), WAIT.job, 300);
  // The Slurm key: a new version in every pod (External Secrets' part), then the daemons restarted, central's side first.
  const started = Date.now();
  placeKey([pods.slurmctld, pods.slurmdbd, pods.login, ...pods.slurmd], randomBytes(1024));
  const live = (name: string) => supervisor.daemons.filter((x) => x.name === name && !x.exit);
  for (const d of live("slurmctld")) await supervisor.stop(d);
  const ctld = await startSlurmctld(ctx, false, true);
  if (typeof ctld === "string") return { ok: false, detail: `slurmctld on the new key: ${ctld}` };
  for (const d of live("slurmdbd")) await supervisor.stop(d);
  const keyedDbd = await startSlurmdbd(ctx);
  if (typeof keyedDbd === "string") return { ok: false, detail: `slurmdbd on the new key: ${keyedDbd}` };
  for (const [i, s] of ctx.topology.slurmd.entries()) {
    for (const d of live(`slurmd-${s.hostname}`)) await supervisor.stop(d);
    startSlurmd(ctx, i);
  }
  // Each slurmd back on the new key: registered again since the restart (its SlurmdStartTime), and up.
  const since = Math.floor(started / 1000) * 1000;
  const keyed = await waitFor(async () => {
    const lines = await Promise.all(ctx.topology.slurmd.map((s) => nodeLine(ctx, s.hostname)));
    return lines.every((l) => /^(IDLE|MIXED|ALLOCATED)/.test(field(l, "State") ?? "") && Date.parse(field(l, "SlurmdStartTime") ?? "") >= since) ? true : undefined;
  }, WAIT.register, 500);
  const keyMs = Date.now() - started;
  // The database password: changed in MariaDB (the operator's part), then slurmdbd restarted with it.
  const password = randomBytes(12).toString("hex");
  const altered = await run(inPod(pods.mariadb, ["mariadb", "--no-defaults", "-S", MARIADB_SOCKET, "-u", "root", "-e", `ALTER USER '${world.controlPlane.accounting.username}'@'%' IDENTIFIED BY '${password}'`]), { timeoutMs: WAIT.command });
  if (altered.code !== 0) return { ok: false, detail: `changing the database password: ${altered.stderr.trim()}` };
  // The secret's new version is what a MariaDB made anew (a restore) starts from, too.
  fs.writeFileSync(path.join(pods.mariadb.root, "init.sql"), mariadbInitSql({ controlPlane: world.controlPlane, password }), { mode: 0o600 });
  for (const d of supervisor.daemons.filter((x) => x.name === "slurmdbd" && !x.exit)) await supervisor.stop(d);
  const unwritten = writeSlurmdbdConf(ctx, password);
  if (unwritten) return { ok: false, detail: unwritten };
  const dbd = await startSlurmdbd(ctx);
  if (typeof dbd === "string") return { ok: false, detail: `slurmdbd with the new password: ${dbd}` };
  const during = await finishedAndAccounted(ctx, running);
  const after = await submit(ctx, ["-N1", "-w", node.hostname], "echo after");
  const later = await finishedAndAccounted(ctx, after);
  const ok = keyed === true && /COMPLETED ExitCode=0:0/.test(during) && /slurmdbd: COMPLETED/.test(during) && /COMPLETED ExitCode=0:0/.test(later) && /slurmdbd: COMPLETED/.test(later);
  return { ok, detail: `slurm.key replaced and slurmctld, slurmdbd, sackd and ${ctx.topology.slurmd.length} slurmd restarted on it in ${seconds(keyMs)} (central first${keyed ? "" : "; NOT every node back"}) and the database password changed while ${during.split(",")[0]} ran: ${during}; after: ${later}` };
}

async function nodeLine(ctx: Context, name: string): Promise<string> {
  return (await login(ctx, ["scontrol", "-o", "show", "node", name], 5000)).stdout.trim();
}

/** The i-th slurmd as the image runs the operator's NodeSet pod: `slurmd -D` and the pod's options (its node name is the pod's hostname). */
function startSlurmd(ctx: Context, i: number): Daemon {
  const s = ctx.topology.slurmd[i];
  return ctx.supervisor.start(`slurmd-${s.hostname}`, ctx.pods.slurmd[i], ["slurmd", "-D", ...ctx.slurmd.options]);
}

async function slurmdRegisters(ctx: Context): Promise<{ ok: boolean; detail: string }> {
  const { world, topology } = ctx;
  const conf = world.tenant.controllerService;
  const daemons = topology.slurmd.map((_, i) => startSlurmd(ctx, i));
  const results: string[] = [];
  let ok = true;
  for (const [i, s] of topology.slurmd.entries()) {
    const line = await waitFor(async () => {
      if (down(daemons[i])) return "down";
      const l = await nodeLine(ctx, s.hostname);
      return /State=IDLE/.test(l) ? l : undefined;
    }, WAIT.register, 500);
    if (!line || line === "down") {
      ok = false;
      const shown = (await nodeLine(ctx, s.hostname)).slice(0, 200);
      results.push(`${s.hostname} not IDLE: ${down(daemons[i]) ?? (shown || tail(daemons[i].log))}`);
      continue;
    }
    const addr = field(line, "NodeAddr");
    // The NodeSet and partitions the operator's slurm.conf gives a node of these features.
    const nodeSet = nodeSetOf(ctx.etc?.["slurm.conf"] ?? "", s.features);
    const expectedParts = nodeSet ? partitionsOf(ctx.etc?.["slurm.conf"] ?? "", nodeSet) : [];
    const parts = (field(line, "Partitions") ?? "").split(",").filter(Boolean);
    const missing = expectedParts.filter((p) => !parts.includes(p));
    if (addr !== s.address) {
      ok = false;
      results.push(`${s.hostname} registered from ${addr} (${topology.names.get(addr ?? "") ?? "?"}), not its pod address ${s.address}: SNAT on the way, slurmctld will call the wrong address on ${SLURM_PORTS.slurmd}`);
    } else if (!nodeSet) {
      ok = false;
      results.push(`${s.hostname} NodeAddr=${addr} but its features ${s.features.join(",")} match no NodeSet= line of the operator's slurm.conf: it is in no partition`);
    } else if (missing.length > 0) {
      ok = false;
      results.push(`${s.hostname} NodeAddr=${addr} but not in partition ${missing.join(",")} (NodeSet ${nodeSet})`);
    } else {
      results.push(`${s.hostname} NodeAddr=${addr} State=IDLE Partitions=${parts.join(",")} Features=${field(line, "AvailableFeatures")}`);
    }
  }
  const server = ctx.slurmd.confServer;
  return { ok, detail: `${results.join("; ")}; --conf-server ${server.host}:${server.port} (the operator's), the Service ${conf.host}:${conf.port} -> ${conf.endpointAddress}:${conf.endpointPort}` };
}

/** New connections each slurmd node's group admitted on the contract's slurmctld-to-slurmd rule (only a flow's first packet reaches the rule). */
async function pingHits(ctx: Context): Promise<number[]> {
  const out: number[] = [];
  for (const s of ctx.topology.slurmd) {
    const hits = await ruleHits(s.node);
    out.push([...hits.entries()].filter(([k]) => k.endsWith("slurmctld-to-slurmd")).reduce((n, [, v]) => n + v, 0));
  }
  return out;
}

/** slurmctld's ping agents so far (logged at SlurmctldDebug=debug). */
function pingAgents(ctx: Context): string[] {
  const log = ctx.supervisor.daemons.find((d) => d.name === "slurmctld")?.log;
  return log && fs.existsSync(log) ? fs.readFileSync(log, "utf8").match(/Spawning ping agent for \S+/g) ?? [] : [];
}

async function slurmctldPings(ctx: Context): Promise<{ ok: boolean; detail: string }> {
  const { topology } = ctx;
  const agentsBefore = pingAgents(ctx).length;
  const hitsBefore = await pingHits(ctx);
  // No job runs now: every new connection from central to 6818 is slurmctld's ping (or registration check).
  const seen = await waitFor(async () => {
    const hits = await pingHits(ctx);
    return pingAgents(ctx).length > agentsBefore && hits.every((h, i) => h > hitsBefore[i]) ? hits : undefined;
  }, WAIT.ping, 500);
  const hits = seen ?? (await pingHits(ctx));
  const agents = pingAgents(ctx).slice(agentsBefore);
  const lines = await Promise.all(topology.slurmd.map((s) => nodeLine(ctx, s.hostname)));
  const states = lines.map((l) => field(l, "State") ?? "?");
  const responding = states.every((st) => /^IDLE/.test(st) && !/NOT_RESPONDING|DOWN/.test(st));
  const perNode = topology.slurmd.map((s, i) => `${s.hostname} +${hits[i] - hitsBefore[i]} at ${s.node.label}`).join(", ");
  return {
    ok: seen !== undefined && responding,
    detail: `${agents.length} ping agent${agents.length === 1 ? "" : "s"} (${[...new Set(agents.map((a) => a.split(" ").pop()))].join(", ") || "none"}); 6818 connections from ${topology.central.hostAddress} admitted by slurmctld-to-slurmd: ${perNode}; states ${states.join(",")}${seen ? "" : `; not all nodes pinged within ${seconds(WAIT.ping)} (SlurmdTimeout=${SLURMD_TIMEOUT_S})`}`,
  };
}

async function waitJob(ctx: Context, id: string): Promise<string> {
  const state = await waitFor(async () => {
    const r = await login(ctx, ["scontrol", "-o", "show", "job", id], 5000);
    const s = field(r.stdout, "JobState");
    return s && !/PENDING|RUNNING|CONFIGURING|COMPLETING/.test(s) ? `${s}${field(r.stdout, "Reason") && field(r.stdout, "Reason") !== "None" ? ` (${field(r.stdout, "Reason")})` : ""} ExitCode=${field(r.stdout, "ExitCode")} NodeList=${field(r.stdout, "NodeList")}` : undefined;
  }, WAIT.job, 500);
  return state ?? `still not finished after ${seconds(WAIT.job)}`;
}

async function submit(ctx: Context, args: readonly string[], script: string): Promise<string> {
  const r = await login(ctx, ["sbatch", "--parsable", `--chdir=/mnt/efs`, "--output=/mnt/efs/job_%j.out", ...args, "--wrap", script]);
  const id = r.stdout.trim().split(";")[0];
  if (r.code !== 0 || !/^\d+$/.test(id)) throw new Error(`sbatch failed: ${(r.stderr || r.stdout).trim()}`);
  return id;
}

async function batchJob(ctx: Context): Promise<{ ok: boolean; detail: string }> {
  const s = ctx.topology.slurmd[0];
  const id = await submit(ctx, ["-N1", "-w", s.hostname], `echo "${ctx.token} job $SLURM_JOB_ID on $(hostname)"`);
  const state = await waitJob(ctx, id);
  const file = path.join(ctx.efs, `job_${id}.out`);
  const content = fs.existsSync(file) ? fs.readFileSync(file, "utf8").trim() : undefined;
  const expected = `${ctx.token} job ${id} on ${s.hostname}`;
  const accounted = (await login(ctx, ["sacct", "-n", "-P", "-X", "-j", id, "-o", "JobID,State,NodeList"], 5000)).stdout.trim();
  return {
    ok: content === expected && /^COMPLETED/.test(state),
    detail: `job ${id} ${state}; /mnt/efs/job_${id}.out ${content === undefined ? "missing" : `= "${content}"`}${content !== undefined && content !== expected ? ` (expected "${expected}")` : ""}; sacct: ${accounted || "no record"}`,
  };
}

async function twoNodeJob(ctx: Context): Promise<{ ok: boolean; detail: string }> {
  const names = ctx.topology.slurmd.map((s) => s.hostname);
  const id = await submit(ctx, ["-N2", "-w", names.join(",")], "srun hostname");
  const state = await waitJob(ctx, id);
  const file = path.join(ctx.efs, `job_${id}.out`);
  const lines = fs.existsSync(file) ? fs.readFileSync(file, "utf8").trim().split("\n") : [];
  const missing = names.filter((n) => !lines.includes(n));
  return { ok: missing.length === 0 && /^COMPLETED/.test(state), detail: `job ${id} ${state}; srun output ${JSON.stringify(lines.sort())}${missing.length ? `, missing ${missing.join(",")}` : ""}` };
}

/**
 * The tenant is root on its own nodes and holds slurm.key, with which auth/slurm signs a
 * credential for any uid: as SlurmUser on its own slurmd pod it asks its slurmctld on central
 * for a permanent trigger on its own node going down, whose program slurmctld would run in its
 * pod on central. Refused, and none stored: the slurm.conf the operator wrote carries
 * `disable_triggers`. A trigger that was accepted is cleared again, so the rest runs as before.
 */
async function triggerRefused(ctx: Context): Promise<{ ok: boolean; detail: string }> {
  const [node, pod] = [ctx.topology.slurmd[0], ctx.pods.slurmd[0]];
  const asSlurmUser = (argv: readonly string[]) => run(inPod(pod, ["runuser", "-u", SLURM_USER.name, "--", ...argv]), { timeoutMs: WAIT.command });
  const who = await asSlurmUser(["scontrol", "ping"]);
  if (who.code !== 0) return { ok: false, detail: `SlurmUser on ${node.hostname} does not reach slurmctld at all (the check would prove nothing): ${(who.stderr || who.stdout).trim()}` };
  const set = await asSlurmUser(["strigger", "--set", `--node=${node.hostname}`, "--down", "--flags=PERM", "--program=/bin/true"]);
  const stored = (await asSlurmUser(["strigger", "--get", "--noheader"])).stdout.trim().split("\n").filter(Boolean);
  for (const line of stored) await asSlurmUser(["strigger", "--clear", `--id=${line.trim().split(/\s+/)[0]}`]);
  const params = slurmConfValues(ctx.etc?.["slurm.conf"] ?? "").SlurmctldParameters ?? "(none)";
  // Refused for the reason that contains it, not for any other (a wrong option, no slurmctld).
  const ok = set.code !== 0 && /presently disabled/i.test(set.stderr + set.stdout) && stored.length === 0;
  return {
    ok,
    detail: ok
      ? `strigger --set --node=${node.hostname} --down --flags=PERM as ${SLURM_USER.name} (${SLURM_USER.uid}) refused: ${(set.stderr || set.stdout).trim()}; no trigger stored (SlurmctldParameters=${params})`
      : set.code !== 0 && !stored.length ? `refused, but not as disabled (SlurmctldParameters=${params}): ${(set.stderr || set.stdout).trim()}`
      : `ACCEPTED: ${stored.length} trigger(s) stored as ${SLURM_USER.name} from ${node.hostname} with the tenant's own key (${stored.join(" | ")}); its program would run in slurmctld's pod on central; cleared again (SlurmctldParameters=${params})`,
  };
}

/** Where the login's sshd finds its configuration, host key and users' keys in the pod (a volume: root-owned, as sshd's StrictModes wants). */
const SSH_DIR = "/etc/clusterra-ssh";

/**
 * A user's shell on the login, as sshd gives it: Debian's sshd (OpenSSH, as the login image's)
 * started as root in the login pod with the limits of the operator's login container (its
 * securityContext: the bounding set cut to its capabilities), on the sshd_config the operator
 * wrote (UsePAM yes, on Debian's PAM stack: the journey's image is not the login image) after the
 * journey's stand-in keywords, a key of the run's for the first user; the user logs in from the
 * central host (where cluster-api runs) and runs a step on a tenant node, and a client without
 * a key is refused with publickey the only method offered. Fails if sshd cannot bind, chroot its
 * child, pass PAM's account check, switch to the user or give them the session with those
 * capabilities, or offers any other method.
 */
async function sshLogin(ctx: Context): Promise<{ ok: boolean; detail: string }> {
  const user = ctx.world.users[0];
  const node = ctx.topology.slurmd[0];
  const address = ctx.topology.central.login.address;
  const dir = path.join(ctx.work, "ssh");
  fs.mkdirSync(path.join(dir, "authorized"), { recursive: true, mode: 0o755 });
  const key = path.join(ctx.work, "ssh-client", "id");
  fs.mkdirSync(path.dirname(key), { recursive: true, mode: 0o700 });
  for (const [file, type] of [[path.join(dir, "host_ed25519"), "ed25519"], [key, "ed25519"]]) await must(["ssh-keygen", "-q", "-t", type, "-N", "", "-C", "", "-f", file], { timeoutMs: WAIT.command });
  fs.copyFileSync(`${key}.pub`, path.join(dir, "authorized", user.name));
  fs.chmodSync(path.join(dir, "authorized", user.name), 0o644);
  fs.writeFileSync(path.join(dir, "sshd_config"), journeySshdConfig(ctx.login.sshdConfig, { address, dir: SSH_DIR }));
  fs.mkdirSync(path.join(ctx.pods.login.root, "run", "sshd"), { recursive: true, mode: 0o755 });
  const pod: Pod = { ...ctx.pods.login, binds: [...(ctx.pods.login.binds ?? []), { from: dir, to: SSH_DIR, readOnly: true }] };
  const limits = setprivLimitArgs(ctx.login.limits);
  const sshd = ctx.supervisor.start("sshd", pod, ["setpriv", ...limits, "--", "/usr/sbin/sshd", "-D", "-e", "-f", `${SSH_DIR}/sshd_config`]);
  try {
    const up = await waitFor(async () => (sshd.exit ? false : (await tcpProbe(ctx.topology.central.host.name, address, 22, 1000)) || undefined), WAIT.slurmctld, 300);
    if (!up) return { ok: false, detail: `sshd did not listen on ${address}:22 (${sshd.exit ? `exited ${sshd.exit.code}` : "running"}): ${tail(sshd.log)}` };
    // The wrappers exec into sshd: its pid is the daemon's.
    const bounding = capabilitySet(fs.readFileSync(`/proc/${sshd.pid}/status`, "utf8"), "CapBnd");
    const r = await run(["ip", "netns", "exec", ctx.topology.central.host.name, "ssh", "-i", key, "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
      `${user.name}@${address}`, `id -un; srun -N1 -w ${node.hostname} hostname`], { timeoutMs: WAIT.job });
    const lines = r.stdout.trim().split("\n");
    const held = [...LOGIN_CAPABILITIES].map((c) => c.toLowerCase()).sort().join(",") === [...bounding].sort().join(",");
    // What sshd offers a client that has no key: it names the methods it accepts when it refuses.
    const keyless = await run(["ip", "netns", "exec", ctx.topology.central.host.name, "ssh", "-o", "BatchMode=yes", "-o", "PubkeyAuthentication=no", "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
      `${user.name}@${address}`, "true"], { timeoutMs: WAIT.command });
    const offered = /Permission denied \(([^)]*)\)/.exec(keyless.stderr)?.[1].split(",") ?? [];
    const keysOnly = keyless.code !== 0 && offered.join(",") === LOGIN_SSH_METHODS.join(",");
    const ok = held && keysOnly && r.code === 0 && lines[0] === user.name && lines[1] === node.hostname;
    return {
      ok,
      detail: `sshd on ${ctx.login.deployment}'s sshd_config (the journey's ${SSHD_STAND_INS.length} lines first) as root with CapBnd ${bounding.join(",") || "(none)"}${held ? "" : ` (the fleet gives ${LOGIN_CAPABILITIES.join(",")})`}; without a key: ${keyless.code === 0 ? "LOGGED IN" : `refused, sshd accepts ${offered.join(",") || `(nothing said: ${keyless.stderr.trim().slice(0, 200)})`}`}${keysOnly ? "" : ` (the fleet allows ${LOGIN_SSH_METHODS.join(",")} only)`}; ssh ${user.name}@${address} from the central host: ${ok ? `"${lines.join(" / ")}"` : `exit ${r.code}: ${(r.stderr || r.stdout).trim().slice(0, 300)}; sshd: ${tail(sshd.log)}`}`,
    };
  } finally {
    await ctx.supervisor.stop(sshd, 2000);
  }
}

/** A process's capability set from /proc/<pid>/status, as lower-case names (cap_ dropped). Pure. */
export function capabilitySet(status: string, field: "CapBnd" | "CapEff" | "CapPrm"): string[] {
  const hex = new RegExp(`^${field}:\\s*([0-9a-f]+)$`, "m").exec(status)?.[1];
  if (!hex) return [];
  const mask = BigInt(`0x${hex}`);
  return CAPABILITY_NAMES.filter((_, bit) => (mask >> BigInt(bit)) & 1n);
}

/** Linux capabilities by bit number (capability.h). */
const CAPABILITY_NAMES = ["chown", "dac_override", "dac_read_search", "fowner", "fsetid", "kill", "setgid", "setuid", "setpcap", "linux_immutable", "net_bind_service", "net_broadcast", "net_admin", "net_raw", "ipc_lock", "ipc_owner", "sys_module", "sys_rawio", "sys_chroot", "sys_ptrace", "sys_pacct", "sys_admin", "sys_boot", "sys_nice", "sys_resource", "sys_time", "sys_tty_config", "mknod", "lease", "audit_write", "audit_control", "setfcap", "mac_override", "mac_admin", "syslog", "wake_alarm", "block_suspend", "audit_read", "perfmon", "bpf", "checkpoint_restore"];

/** A place a payload in a tenant's controller pod must not reach, with the namespace that answers there. */
interface Target {
  readonly what: string;
  readonly ns: string;
  readonly address: string;
  readonly port: number;
  /** udp: a datagram the listener answers (DNS's own protocol); tcp otherwise. */
  readonly protocol?: "udp";
}

/** The flows the host's NetworkPolicies refused so far, leaving a pod (egress) or reaching one (ingress). */
async function policyDrops(ctx: Context, direction: "ingress" | "egress" = "egress"): Promise<Drop[]> {
  const r = await run(["ip", "netns", "exec", ctx.topology.central.host.name, "nft", "-j", "list", "set", "inet", POLICY_TABLE, DROPS[direction].set], { timeoutMs: 5000 });
  return r.code === 0 ? parseDroppedFlows(direction, r.stdout).map((d) => ({ ...d, at: ctx.topology.central.host })) : [];
}

/**
 * Standing in for the next route to code on central (after the trigger): a payload run as
 * SlurmUser inside the tenant's slurmctld pod, with the namespace's NetworkPolicies enforced
 * on the host as K3s's network policy controller would. It tries the other tenant's slurmd
 * and API server, its slurmctld, slurmdbd and MariaDB on the same host, central's API server, the instance metadata service and the internet, each
 * answering there (a listener); every try must fail and be dropped by the policies, while
 * the same payload reaches its own slurmd (allowed) and a job of the tenant's runs to the
 * end. Then, with the policies taken off, each target must answer: the policies are what
 * stopped it, not a missing route.
 */
async function attackerContained(ctx: Context, other?: Context): Promise<{ ok: boolean; detail: string }> {
  const { topology: tp, world } = ctx;
  const host = tp.central.host.name;
  // Where the other tenant's own Slurm runs, its daemons are the targets (they answer on their ports); elsewhere a listener stands there.
  const served = other !== undefined;
  const targets: (Target & { served?: boolean; allowed?: boolean })[] = [
    { what: `${world.other.id}'s slurmd pod`, ns: tp.other.pod.name, address: tp.other.address, port: SLURM_PORTS.slurmd, served },
    { what: `${world.other.id}'s K3s API server`, ns: tp.other.server.name, address: tp.other.serverAddress, port: K3S_API_PORT },
    ...tp.central.other.map((p) => ({ what: `${p.name} pod on central`, ns: p.ns.name, address: p.address, port: p.port, served })),
    { what: "central's API server", ns: host, address: tp.central.hostAddress, port: K3S_API_PORT },
    { what: "the instance metadata service", ns: host, address: INSTANCE_METADATA.address, port: INSTANCE_METADATA.port },
    { what: "the internet", ns: tp.internet.ns.name, address: tp.internet.address, port: tp.internet.port },
    // A query's name is data: K3s's CoreDNS would carry it out of central to the VPC's resolver.
    ...(["tcp", "udp"] as const).map((protocol) => ({ what: `K3s's CoreDNS over ${protocol} (it forwards every name it does not hold out of central)`, ns: tp.central.dns.cluster.ns.name, address: tp.central.dns.cluster.address, port: K3S_CLUSTER_DNS.port, ...(protocol === "udp" ? { protocol } : {}) })),
    // Another tenant's DNS: it would answer (and spend its CPU on) what this tenant asks.
    ...(["tcp", "udp"] as const).map((protocol) => ({ what: `${world.other.id}'s DNS over ${protocol}`, ns: tp.central.dns.other.ns.name, address: tp.central.dns.other.address, port: TENANT_DNS.port, ...(protocol === "udp" ? { protocol } : {}) })),
    // The retiring shared DNS (the release before's pods ask it until their tenant rolls out): it answers every tenant's names.
    ...(["tcp", "udp"] as const).map((protocol) => ({ what: `the retiring shared DNS over ${protocol}`, ns: tp.central.dns.shared.ns.name, address: tp.central.dns.shared.address, port: TENANT_DNS.port, ...(protocol === "udp" ? { protocol } : {}) })),
    // What the pod may reach: its own slurmd, and its own DNS (which forwards nothing).
    ...(["tcp", "udp"] as const).map((protocol) => ({ what: `its own DNS over ${protocol}`, ns: tp.central.dns.tenant.ns.name, address: tp.central.dns.tenant.address, port: TENANT_DNS.port, allowed: true, ...(protocol === "udp" ? { protocol } : {}) })),
  ];
  const own = tp.slurmd[0];
  // A UDP listener answers each datagram: a reply is the only sign one arrived. Its command reads
  // the datagram before answering (one that exits unread can make socat's write fail, unanswered).
  const listeners = targets.filter((t) => !t.served).map((t, i) => ctx.supervisor.startCommand(`listener-${i}`, ["ip", "netns", "exec", t.ns, "socat", t.protocol === "udp" ? `UDP-RECVFROM:${t.port},bind=${t.address},fork` : `TCP-LISTEN:${t.port},bind=${t.address},reuseaddr,fork`, t.protocol === "udp" ? "SYSTEM:head -c 1 >/dev/null; echo answer" : "SYSTEM:true"]));
  // The payload: SlurmUser in the controller's pod, one connection per target (bash's /dev/tcp),
  // or one datagram and the first byte of its answer (bash's /dev/udp reads a datagram a byte
  // at a time: the rest of it is gone, so one byte is all a read may wait for).
  const payload = (t: Target) => run(inPod(ctx.pods.slurmctld, ["runuser", "-u", SLURM_USER.name, "--", "timeout", "3", "bash", "-c",
    t.protocol === "udp" ? `exec 3<>/dev/udp/${t.address}/${t.port} && printf query >&3 && read -r -t 2 -n 1 answer <&3` : `exec 3<>/dev/tcp/${t.address}/${t.port}`]), { timeoutMs: 8000 });
  // From the tenant's DNS pod: the internet, the instance metadata service, the tenant's slurmctld and the other tenant's slurmd refused; central's API server allowed.
  const dnsTargets: (Target & { allowed?: boolean })[] = [
    ...targets.filter((t) => t.what === "the internet" || t.what === "the instance metadata service" || t.what === `${world.other.id}'s slurmd pod`),
    { what: `${world.tenant.id}'s slurmctld pod`, ns: tp.central.slurmctld.ns.name, address: tp.central.slurmctld.address, port: SLURM_PORTS.slurmctld },
    { ...(targets.find((t) => t.what === "central's API server") as Target), allowed: true },
  ];
  const dnsTries = async () => Promise.all(dnsTargets.map(async (t) => ({ t, connected: (await run(["ip", "netns", "exec", tp.central.dns.tenant.ns.name, "timeout", "3", "bash", "-c", `exec 3<>/dev/tcp/${t.address}/${t.port}`], { timeoutMs: 8000 })).code === 0 })));
  // Each tenant's DNS admits its own tenant's namespace alone: tried from K3s's CoreDNS pod,
  // which no policy selects (its egress is open), so only the DNS pods' ingress can refuse it.
  const askedFromOutside: Target[] = [
    { what: `${world.tenant.id}'s DNS`, ns: tp.central.dns.tenant.ns.name, address: tp.central.dns.tenant.address, port: TENANT_DNS.port },
    { what: `${world.other.id}'s DNS`, ns: tp.central.dns.other.ns.name, address: tp.central.dns.other.address, port: TENANT_DNS.port },
  ];
  const outsideTries = async () => Promise.all(askedFromOutside.map(async (t) => ({ t, connected: (await run(["ip", "netns", "exec", tp.central.dns.cluster.ns.name, "timeout", "3", "bash", "-c", `exec 3<>/dev/tcp/${t.address}/${t.port}`], { timeoutMs: 8000 })).code === 0 })));
  const tryAll = async () => Promise.all([...targets, { what: `its own slurmd ${own.hostname}`, ns: own.ns.name, address: own.address, port: SLURM_PORTS.slurmd, allowed: true }].map(async (t) => ({ t, connected: (await payload(t)).code === 0 })));
  try {
    // Wait until every listener answers from its own side (the probe must be able to succeed).
    const ready = await waitFor(async () => ((await Promise.all(targets.filter((t) => t.protocol !== "udp").map((t) => tcpProbe(t.ns, t.address, t.port, 1000)))).every(Boolean) ? true : undefined), 5000, 200);
    if (!ready) return { ok: false, detail: `the targets' listeners did not answer (${listeners.filter((l) => l.exit).map((l) => `${l.name}: ${tail(l.log)}`).join("; ") || "none exited"})` };
    const job = await submit(ctx, ["-N1", "-w", own.hostname], `sleep 4; echo "${ctx.token} job $SLURM_JOB_ID on $(hostname)"`);
    const theirs = other ? await submit(other, ["-N1", "-w", other.topology.slurmd[0].hostname], `sleep 4; echo "${other.token} job $SLURM_JOB_ID on $(hostname)"`) : undefined;
    const before = await policyDrops(ctx);
    const beforeIn = await policyDrops(ctx, "ingress");
    const enforced = await tryAll();
    const fromDns = await dnsTries();
    const fromOutside = await outsideTries();
    const drops = newDrops(before, await policyDrops(ctx));
    const dropsIn = newDrops(beforeIn, await policyDrops(ctx, "ingress"));
    const state = await waitJob(ctx, job);
    const theirState = other && theirs ? await waitJob(other, theirs) : undefined;
    // The control: the same tries with the policies taken off, then put back as they were.
    const off = await run(["ip", "netns", "exec", host, "nft", "delete", "table", "inet", POLICY_TABLE], { timeoutMs: 5000 });
    const open = off.code === 0 ? await tryAll() : [];
    const dnsOpen = off.code === 0 ? await dnsTries() : [];
    const outsideOpen = off.code === 0 ? await outsideTries() : [];
    const back = await run(["ip", "netns", "exec", host, "nft", "-f", "-"], { timeoutMs: 5000, input: tp.central.policy.text });
    const lines: string[] = [];
    let ok = off.code === 0 && back.code === 0 && /^COMPLETED/.test(state) && (theirState === undefined || /^COMPLETED/.test(theirState));
    for (const r of enforced) {
      const allowed = r.t.allowed === true;
      const protocol = r.t.protocol ?? "tcp";
      const dropped = drops.filter((d) => d.destination === r.t.address && d.port === r.t.port && d.protocol === protocol);
      const openly = open.find((o) => o.t.address === r.t.address && o.t.port === r.t.port && o.t.protocol === r.t.protocol)?.connected;
      const good = allowed ? r.connected : !r.connected && dropped.length > 0 && openly === true;
      ok &&= good;
      lines.push(`${r.t.what} ${r.t.address}:${r.t.port} ${r.connected ? (allowed ? "reached (allowed)" : "REACHED") : dropped.length ? "refused by the policies" : "refused, but no policy drop recorded"}${allowed ? "" : openly ? "" : " (unreachable even without the policies: the try proves nothing)"}`);
    }
    // Code in the tenant's DNS pod (standing for a flaw in CoreDNS that a tenant's query reaches): central's API server alone.
    const dnsLines: string[] = [];
    for (const r of fromDns) {
      const dropped = drops.filter((d) => d.source === tp.central.dns.tenant.address && d.destination === r.t.address && d.port === r.t.port);
      const openly = dnsOpen.find((o) => o.t.address === r.t.address && o.t.port === r.t.port)?.connected;
      const good = r.t.allowed ? r.connected : !r.connected && dropped.length > 0 && openly === true;
      ok &&= good;
      dnsLines.push(`${r.t.what} ${r.connected ? (r.t.allowed ? "reached (allowed)" : "REACHED") : dropped.length ? "refused by the policies" : "refused, but no policy drop recorded"}${r.t.allowed || openly ? "" : " (unreachable even without the policies)"}`);
    }
    const outsideLines: string[] = [];
    for (const r of fromOutside) {
      const dropped = dropsIn.filter((d) => d.source === tp.central.dns.cluster.address && d.destination === r.t.address && d.port === r.t.port);
      const openly = outsideOpen.find((o) => o.t.address === r.t.address)?.connected;
      ok &&= !r.connected && dropped.length > 0 && openly === true;
      outsideLines.push(`${r.t.what} ${r.connected ? "REACHED" : dropped.length ? "refused at its ingress" : "refused, but no ingress drop recorded"}${openly ? "" : " (unreachable even without the policies)"}`);
    }
    return {
      ok,
      detail: `as ${SLURM_USER.name} (${SLURM_USER.uid}) in ${tp.central.slurmctld.address}: ${lines.join("; ")}; from ${world.tenant.id}'s DNS pod ${tp.central.dns.tenant.address} (a flaw in CoreDNS): ${dnsLines.join("; ")}; from K3s's CoreDNS pod ${tp.central.dns.cluster.address} (no policy holds its egress): ${outsideLines.join("; ")}; without the policies every target answered: ${open.filter((o) => o.connected).length}/${open.length}, ${dnsOpen.filter((o) => o.connected).length}/${dnsOpen.length} from the DNS pod, ${outsideOpen.filter((o) => o.connected).length}/${outsideOpen.length} from K3s's CoreDNS pod${off.code === 0 ? "" : ` (could not take them off: ${off.stderr.trim()})`}${back.code === 0 ? "" : `; NOT PUT BACK: ${back.stderr.trim()}`}; job ${job} meanwhile: ${state}${other ? `; ${other.world.tenant.id}'s job ${theirs} meanwhile: ${theirState}` : ""}; isolated: egress ${tp.central.policy.isolated.egress.join(", ") || "none"}, ingress ${tp.central.policy.isolated.ingress.join(", ") || "none"}`,
    };
  } finally {
    for (const l of listeners) await ctx.supervisor.stop(l, 1000);
  }
}

/** A command as one of the tenant's users, in a pod (runuser: no password, as the console's session would be). */
function asUser(pod: Pod, user: TenantUser, script: string): string[] {
  return inPod(pod, ["runuser", "-u", user.name, "--", "sh", "-c", script]);
}

/** Owner, group and mode of a path on the shared file system as the tenant's nodes see it. */
function ownership(file: string): string {
  if (!fs.existsSync(file)) return "missing";
  const st = fs.statSync(file);
  return `${st.uid}:${st.gid} ${(st.mode & 0o7777).toString(8).padStart(4, "0")}`;
}

/**
 * One batch job each for two users, submitted as the user from the login with a private
 * umask into their own directory, which does not exist before: the release's Prolog makes it
 * (their uid and gid, 0700) and the shared directory (the shared group, 2770). The output
 * must be theirs, 0600, print their name and groups as the job saw them, be readable by them
 * from the login (a step on the node) and refused to the other user.
 */
async function twoUsers(ctx: Context): Promise<{ ok: boolean; detail: string }> {
  const node = ctx.topology.slurmd[0];
  if (ctx.world.users.length < 2) return { ok: false, detail: `the tenant's stack file names ${ctx.world.users.length} user(s) in clusterra:users; the step needs two` };
  const onEfs = (p: string) => path.join(ctx.efs, path.relative(POD_MOUNTS.efs, p));
  const before = ctx.world.users.slice(0, 2).map((u) => `${u.name} ${ownership(onEfs(userDirectory(POD_MOUNTS.efs, u)))}`);
  const jobs: { user: TenantUser; id: string; file: string; inPod: string }[] = [];
  for (const user of ctx.world.users.slice(0, 2)) {
    const inPodDir = userDirectory(POD_MOUNTS.efs, user);
    const wrap = `echo "${ctx.token} $(id -un) uid $(id -u) groups $(id -Gn | tr ' ' ,) job $SLURM_JOB_ID on $(hostname)"`;
    const submit = `umask ${PRIVATE.umask}; exec sbatch --parsable -N1 -w ${node.hostname} --chdir=${inPodDir} --output=${inPodDir}/job_%j.out --wrap ${quote(wrap)}`;
    const r = await run(asUser(ctx.pods.login, user, submit), { timeoutMs: WAIT.command });
    const id = r.stdout.trim().split(";")[0];
    if (r.code !== 0 || !/^\d+$/.test(id)) return { ok: false, detail: `sbatch as ${user.name} failed: ${(r.stderr || r.stdout).trim()}` };
    jobs.push({ user, id, file: onEfs(`${inPodDir}/job_${id}.out`), inPod: `${inPodDir}/job_${id}.out` });
  }
  const results: string[] = [];
  let ok = true;
  for (const [i, job] of jobs.entries()) {
    const state = await waitJob(ctx, job.id);
    const owner = field((await login(ctx, ["scontrol", "-o", "show", "job", job.id], 5000)).stdout, "UserId");
    const stat = fs.existsSync(job.file) ? fs.statSync(job.file) : undefined;
    const expected = `${ctx.token} ${job.user.name} uid ${job.user.uid} groups ${job.user.name},${SHARED_GROUP.name} job ${job.id} on ${node.hostname}`;
    const dir = ownership(onEfs(userDirectory(POD_MOUNTS.efs, job.user)));
    const other = jobs[(i + 1) % jobs.length].user;
    // As a user reads it from the login (which does not mount EFS): a step on a tenant node.
    const readFromLogin = (u: TenantUser) => run(asUser(ctx.pods.login, u, `exec srun -N1 -w ${node.hostname} cat ${job.inPod}`), { timeoutMs: WAIT.job });
    const own = await readFromLogin(job.user);
    const theirs = await readFromLogin(other);
    const mode = stat ? stat.mode & 0o777 : undefined;
    const good = /^COMPLETED/.test(state) && dir === `${job.user.uid}:${job.user.gid} ${DIRECTORY_MODES.user}` && stat?.uid === job.user.uid && mode === PRIVATE.file && own.code === 0 && own.stdout.trim() === expected && theirs.code !== 0;
    ok &&= good;
    results.push(
      `${job.user.name}: job ${job.id} ${state}${owner ? ` user ${owner}` : ""}; ${userDirectory(POD_MOUNTS.efs, job.user)} ${dir}; ${job.inPod} ${stat ? `uid ${stat.uid} mode ${mode?.toString(8)}` : "missing"}` +
        `; from the login ${job.user.name} reads "${own.stdout.trim() || own.stderr.trim()}"; ${other.name} ${theirs.code === 0 ? `READ IT: "${theirs.stdout.trim()}"` : `refused (${theirs.stderr.trim().split("\n").find((l) => /denied/.test(l)) ?? theirs.stderr.trim().split("\n").pop()})`}`,
    );
  }
  const shared = ownership(onEfs(sharedDirectory(POD_MOUNTS.efs)));
  const sharedOk = shared === `0:${SHARED_GROUP.gid} ${DIRECTORY_MODES.shared}`;
  return { ok: ok && sharedOk, detail: `before the first jobs: ${before.join(", ")}; ${results.join("; ")}; ${sharedDirectory(POD_MOUNTS.efs)} ${shared}${sharedOk ? "" : ` (expected 0:${SHARED_GROUP.gid} ${DIRECTORY_MODES.shared})`}` };
}

function newDrops(before: readonly Drop[], after: readonly Drop[]): Drop[] {
  const key = (d: Drop) => `${d.at.name}|${d.direction}|${d.source}|${d.destination}|${d.protocol}|${d.port}`;
  const seen = new Set(before.map(key));
  return after.filter((d) => !seen.has(key(d)));
}

/** The other tenant's pod tries a port of this tenant's on the central host: as planned, then with its own egress opened. */
async function isolation(ctx: Context, port: number): Promise<{ ok: boolean; detail: string }> {
  const { topology } = ctx;
  const o = topology.other;
  const target = { address: topology.central.hostAddress, port };
  const before = await droppedFlows(topology);
  const asPlanned = await tcpProbe(o.pod.name, target.address, target.port, 2000);
  const mid = await droppedFlows(topology);
  // A tenant owns its security groups: open the other tenant's egress entirely; central's own rule must still refuse.
  const open = await run(["ip", "netns", "exec", o.node.name, "nft", "insert", "rule", "inet", SG_TABLE, "egress", "accept"], { timeoutMs: 5000 });
  const opened = await tcpProbe(o.pod.name, target.address, target.port, 2000);
  // Back to the plan's rules: the next probe starts from them again.
  const listed = await run(["ip", "netns", "exec", o.node.name, "nft", "-a", "list", "chain", "inet", SG_TABLE, "egress"], { timeoutMs: 5000 });
  const handle = /# handle (\d+)/.exec(listed.stdout.split("\n").find((l) => /^\s*accept # handle/.test(l)) ?? "")?.[1];
  if (open.code === 0 && handle) await run(["ip", "netns", "exec", o.node.name, "nft", "delete", "rule", "inet", SG_TABLE, "egress", "handle", handle], { timeoutMs: 5000 });
  const after = await droppedFlows(topology);
  const first = newDrops(before, mid).map((d) => describeDrop(d, topology.names));
  const second = newDrops(mid, after).map((d) => describeDrop(d, topology.names));
  const ok = !asPlanned && !opened && first.length > 0 && second.some((d) => d.includes(topology.central.host.label));
  return {
    ok,
    detail: `${o.tenantId} pod ${o.address} -> ${target.address}:${target.port}: ${asPlanned ? "CONNECTED" : "refused"} as planned (${first.join("; ") || "no drop recorded"}); with ${o.tenantId}'s egress opened: ${opened ? "CONNECTED" : "refused"} (${second.join("; ") || "no drop recorded"})`,
  };
}

/** Where slurmd last saw a step launch come from (the address slurmstepd calls srun back at). */
function launchSource(ctx: Context, hostname: string): string | undefined {
  const log = ctx.supervisor.daemons.find((d) => d.name === `slurmd-${hostname}`)?.log;
  const hits = log && fs.existsSync(log) ? [...fs.readFileSync(log, "utf8").matchAll(/launch task (StepId=\S+) request from \S+ \S+ HOST:(\S+) PORT:(\d+)/g)] : [];
  const last = hits[hits.length - 1];
  return last ? `${last[1]} launch from ${last[2]}${ctx.topology.names.has(last[2]) ? ` (${ctx.topology.names.get(last[2])})` : ""}` : undefined;
}

/** What `tty` prints on a pty: srun --pty gave the step a terminal of its own. */
const PTY_SEEN = "/dev/pts/";

/**
 * An interactive command on central's login, bounded by `timeoutMs`: passes when it exits 0
 * and its output holds every expected line (PTY_SEEN stands for any line starting with it).
 * Reports where the launch came from as slurmd saw it and anything the rules dropped.
 */
async function interactiveSrun(ctx: Context, argv: readonly string[], expected: readonly string[], timeoutMs: number): Promise<{ ok: boolean; detail: string }> {
  const { topology } = ctx;
  const s = topology.slurmd[0];
  // Start from idle nodes (a cancelled step leaves its node COMPLETING a moment), so the allocation is granted at once.
  for (const n of topology.slurmd) await waitFor(async () => (/^IDLE(\+DYNAMIC_NORM)?$/.test(field(await nodeLine(ctx, n.hostname), "State") ?? "") ? true : undefined), WAIT.job, 500);
  const before = await droppedFlows(topology);
  const countsBefore = await dropCounts(topology);
  const r = await run(inPod(ctx.pods.login, argv), { timeoutMs });
  await sleep(300);
  const drops = newDrops(before, await droppedFlows(topology));
  const countsAfter = await dropCounts(topology);
  // A killed srun leaves its allocation behind (InactiveLimit=0): clear it for the next step.
  if (r.code !== 0) await login(ctx, ["scancel", "--user=root"], 5000);
  // script(1) echoes the end of its (empty) input as a caret pair, which can land in front
  // of the step's next line (or as a NUL): not the step's output, wherever it falls.
  const lines = r.stdout.split(/\r?\n/).map((l) => l.replace(/\^@|\u0000/g, "").trim()).filter((l) => l !== "");
  const missing = expected.filter((e) => !lines.some((l) => (e === PTY_SEEN ? l.startsWith(PTY_SEEN) : l === e)));
  const ok = r.code === 0 && missing.length === 0;
  const seen = launchSource(ctx, s.hostname);
  const counted = countsAfter
    .map((c, i) => ({ label: c.ns.label, ingress: c.ingress - countsBefore[i].ingress, egress: c.egress - countsBefore[i].egress }))
    .filter((c) => c.ingress + c.egress > 0)
    .map((c) => `${c.label}: ${c.egress} out, ${c.ingress} in`);
  const dropped = drops.map((d) => describeDrop(d, topology.names)).join("; ") || "nothing";
  const outcome = ok
    ? `printed ${JSON.stringify(lines)} in ${seconds(r.ms)}`
    : r.timedOut ? `still waiting after ${seconds(timeoutMs)}, killed` : `exit ${r.code}${missing.length ? `, missing ${missing.join(",")}` : ""}: ${(r.stderr || r.stdout).trim().split("\n").slice(-2).join(" | ")}`;
  return { ok, detail: `${outcome}; slurmd saw ${seen ?? "no step launch"}; dropped: ${dropped}${counted.length ? `; drop counters: ${counted.join(", ")}` : ""}` };
}
