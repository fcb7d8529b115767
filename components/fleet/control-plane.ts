/**
 * One tenant's Slurm control plane on central, in its own namespace: the Slinky `slurm`
 * release (slurmctld with persistent state, slurmdbd, slurmrestd, a login set) whose
 * `controller.extraConf` declares the tenant's remote NodeSets and one partition per
 * shape; the MariaDB slurmdbd writes to; the tenant's keys and database password from
 * Secrets Manager; the tenant's own NodePorts on the central host (slurmctld, and its srun
 * block to the login); NetworkPolicies that admit no other tenant. Pure: the same facts give byte-identical files.
 */
import { NAMESPACE_NAME_LABEL } from "../../facts/fleet";
import type { INetworkPolicy as NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import { SLURM_PORTS, SRUN_PORT_BLOCK_SIZE, type PortRange } from "../../facts/contract";
import { TENANT_DNS, CONTROL_PLANE_EGRESS, INIT_CONTAINER_RESOURCES, HARDENED_CONTAINER, HARDENED_READ_ONLY_CONTAINER, LOGIN_CONTAINER, LOGIN_SSHD_CONFIG, MAX_SCRIPT_BYTES, maxJobCount, tenantControlPlaneRequest, controlPlanePodLabels, CONTROLLER_PROGRAM_KEYS, TENANT_CONTROLLER_CONF_KEYS, CONTROLLER_PROGRAM_PARAMETERS, SLURMCTLD_TRIGGER_STATE, TENANT_CONTROL_PLANE, TENANT_SLURMCTLD_PARAMETERS, type ComponentRequest, type ControlPlanePod } from "../../facts/control-plane";
import {
  ACCOUNTING_BACKUP, ACCOUNTING_DATABASE, CENTRAL_ADD_ONS, CONTROL_PLANE_SECRETS, LOGIN_SET, MARIADB_BACKUP_POD_LABELS, MARIADB_OPERATOR_POD_LABELS, MARIADB_POD_LABELS, slinkyLoginPodLabels, slinkyPodLabels, SLINKY_IMAGES, SLURM_RELEASE, SLURMCTLD_STATE_GIB, tenantFleetPath, tenantNamespace,
} from "../../facts/fleet";
import type { CentralConfig } from "../../config/types";
import type { TenantUser } from "../../config/users";
import { EFS_MOUNT_PATH } from "../../facts/tenant-cluster";
import { identityPodParts, MERGE_SCRIPT_KEY, usersConfigMap, usersDigest } from "../identity/passwd";
import { USER_DIRECTORIES_PROLOG, userDirectoriesProlog } from "../identity/user-directories";
import type { NodeSetPlan } from "../../config/sizing";
import { externalSecret } from "./external-secrets";

/** Central's backup policy for every tenant's accounting database (its stack file). */
export type CentralBackups = CentralConfig["backups"];

/** What central's side of one tenant is rendered from (all resolved by the tenant stack). */
export interface ControlPlaneFacts {
  readonly environment: string;
  /** Its central's scope (facts/project.ts centralScope): the tenant's fleet folder is under it. */
  readonly scope: string;
  readonly tenantId: string;
  /** Slurm's cluster name (accounting). */
  readonly clusterName: string;
  /** Central's region: its Secrets Manager. */
  readonly centralRegion: string;
  /** Secrets Manager names of the tenant's secrets, by id. */
  readonly secretNames: Readonly<Record<keyof typeof CONTROL_PLANE_SECRETS, string>>;
  /** The tenant's VPC: its slurmd reach slurmctld from there, with their own addresses (no SNAT). */
  readonly tenantCidr: string;
  /** The tenant's SrunPortRange on central (its stack file's clusterra:ports.srun): NodePorts to its login pod. */
  readonly srunPortBlock: PortRange;
  /** The tenant's NodeSets (in its own cluster). */
  readonly nodeSets: readonly NodeSetPlan[];
  /** The tenant's users: slurmctld resolves submitters and their groups, the login runs their shells. */
  readonly users: readonly TenantUser[];
}

export function controlPlanePath(scope: string, tenantId: string): string {
  return `${tenantFleetPath(scope, tenantId)}/control-plane`;
}

const quantity = (r: ComponentRequest) => ({ cpu: `${r.cpuMillis}m`, memory: `${r.memoryMiB}Mi` });

/** Each component's memory limit, as a multiple of its request: room for a burst (slurmctld's scheduling pass, MariaDB's buffer pool), not for a leak. */
const MEMORY_LIMIT_FACTOR = 2;

/**
 * Requests exactly as facts/control-plane.ts (the capacity check sums them); a memory
 * limit of twice the request keeps one tenant from starving the shared host.
 */
export function componentResources(component: keyof typeof TENANT_CONTROL_PLANE): Record<string, unknown> {
  const r = TENANT_CONTROL_PLANE[component];
  return { requests: quantity(r), limits: { memory: `${r.memoryMiB * MEMORY_LIMIT_FACTOR}Mi` } };
}

/**
 * slurm.conf lines for the tenant's remote NodeSets: central's chart only writes lines for
 * NodeSets of its own release, and its partitions may not name remote ones. Each remote
 * NodeSet is a Slurm nodeset by its feature; each shape is a partition over its NodeSets.
 */
export function hybridSlurmConf(nodeSets: readonly NodeSetPlan[]): string {
  const shapes = [...new Map(nodeSets.map((n) => [n.shape.name, n.shape])).keys()];
  const lines = [
    ...nodeSets.map((n) => `NodeSet=${n.name} Feature=${n.name}`),
    ...shapes.map((shape, i) => {
      const members = nodeSets.filter((n) => n.shape.name === shape).map((n) => n.name).join(",");
      return `PartitionName=${shape} Nodes=${members} State=UP MaxTime=UNLIMITED Default=${i === 0 ? "YES" : "NO"}`;
    }),
  ];
  return lines.join("\n") + "\n";
}

/**
 * The central release's `controller.extraConf`: the remote NodeSets and partitions, the
 * tenant's SrunPortRange, the SlurmctldParameters that contain a tenant on central (the
 * operator merges them with its own), and the job limits that keep its state volume from
 * filling. slurmctld serves this slurm.conf to the login's sackd
 * (configless), so srun and salloc there listen only on the block central forwards to the
 * login pod.
 */
export function controlPlaneExtraConf(f: Pick<ControlPlaneFacts, "nodeSets" | "srunPortBlock">): string {
  return [
    hybridSlurmConf(f.nodeSets).trimEnd(),
    `SrunPortRange=${f.srunPortBlock.from}-${f.srunPortBlock.to}`,
    `SlurmctldParameters=${TENANT_SLURMCTLD_PARAMETERS.join(",")}`,
    // Pending jobs keep their scripts in the state volume: bounded so they cannot fill it.
    `MaxJobCount=${maxJobCount(SLURMCTLD_STATE_GIB)}`,
    `SchedulerParameters=max_script_size=${MAX_SCRIPT_BYTES}`,
    "",
  ].join("\n");
}

/**
 * slurm.conf's lines as Slurm's parser reads them (parse_config.c): continuation lines joined,
 * backslashes dropped, comments cut, a key of letters, digits, `_` and `.` before `=` (an
 * operator such as `+=` before it ignored for a string), `Include <file>` without `=`. Pure.
 */
function confEntries(conf: string): { key: string; value: string; typed: string; op?: string }[] {
  const joined = conf.replace(/\\\r?\n/g, "").replace(/\\/g, "");
  return joined.split("\n").flatMap((line) => {
    const text = line.replace(/#.*$/, "").trim();
    if (!text) return [];
    const include = /^(include)\s+(\S.*)$/i.exec(text);
    if (include) return [{ key: include[1], value: include[2], typed: text }];
    const m = /^([A-Za-z0-9_.]+)\s*([-*+/]?)=\s*(.*)$/.exec(text);
    return m ? [{ key: m[1], value: m[3], typed: text, op: m[2] }] : [{ key: text, value: "", typed: text }];
  });
}

/**
 * What a tenant controller's slurm.conf lines (its `extraConf`) would let the tenant run on
 * central, or leave open: a key outside TENANT_CONTROLLER_CONF_KEYS (named as a program when it
 * is one), a flag that runs a program, and a last SlurmctldParameters (the one the operator
 * merges and Slurm keeps) without the containing ones. Empty when none. Pure.
 */
export function controllerConfProblems(extraConf: string): string[] {
  const entries = confEntries(extraConf);
  const problems: string[] = [];
  const is = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
  for (const e of entries) {
    if (TENANT_CONTROLLER_CONF_KEYS.some((k) => is(k, e.key))) continue;
    const program = CONTROLLER_PROGRAM_KEYS.find((k) => is(k, e.key));
    problems.push(program ? `${e.typed}: slurmctld would run what ${program} names on central (never set on a tenant's controller)` : `${e.typed}: not a key a tenant's controller may set (${TENANT_CONTROLLER_CONF_KEYS.join(", ")})`);
  }
  // One plain SlurmctldParameters line: the operator merges it with its own by a parse of its
  // own (it skips an operator before `=` and a value with a space), and Slurm keeps the last
  // line, so any other form could leave disable_triggers out of what runs.
  const lines = entries.filter((e) => is(e.key, "SlurmctldParameters"));
  if (lines.length > 1) problems.push(`SlurmctldParameters set ${lines.length} times (${lines.map((l) => l.typed).join(" | ")}): one line only, which the operator merges with its own`);
  for (const l of lines) if (l.op || /[\s"']/.test(l.value)) problems.push(`${l.typed}: SlurmctldParameters as plain Key=a,b,c only (no operator, quotes or spaces), the form the operator merges`);
  const params = lines.flatMap((l) => l.value.split(",")).map((p) => p.trim().toLowerCase());
  for (const flag of CONTROLLER_PROGRAM_PARAMETERS) if (params.includes(flag)) problems.push(`SlurmctldParameters ${flag}: slurmctld would run a program on central`);
  const missing = TENANT_SLURMCTLD_PARAMETERS.filter((need) => !(lines.at(-1)?.value ?? "").split(",").map((p) => p.trim().toLowerCase()).includes(need));
  if (missing.length) problems.push(`SlurmctldParameters lacks ${missing.join(", ")}${lines.length ? ` in its last line (${lines[lines.length - 1].typed}), the one slurmctld keeps` : ""}: a tenant, SlurmUser through its own slurm.key, could set a trigger that runs a program on central`);
  // The job limits that keep pending jobs from filling the state volume: present, and no looser.
  const jobs = entries.filter((e) => is(e.key, "MaxJobCount")).at(-1);
  const bound = maxJobCount(SLURMCTLD_STATE_GIB);
  if (!jobs || !/^\d+$/.test(jobs.value) || Number(jobs.value) > bound) problems.push(`${jobs?.typed ?? "no MaxJobCount"}: MaxJobCount at most ${bound}, what slurmctld's ${SLURMCTLD_STATE_GIB} GiB state volume holds`);
  const script = /(?:^|,)max_script_size=(\d+)(?:,|$)/.exec(entries.filter((e) => is(e.key, "SchedulerParameters")).at(-1)?.value ?? "");
  if (!script || Number(script[1]) > MAX_SCRIPT_BYTES) problems.push(`SchedulerParameters: max_script_size at most ${MAX_SCRIPT_BYTES} (${script ? `max_script_size=${script[1]}` : "none set: Slurm's default is 4 MiB"})`);
  return problems;
}

/**
 * The init container that removes slurmctld's stored event triggers before it starts: a
 * permanent one saved before `disable_triggers` would still fire (its program run in the
 * controller's pod). Mounts only the state claim.
 */
export function clearTriggersInitContainer(image: { readonly repository: string; readonly tag: string }): Record<string, unknown> {
  const dir = "/statesave";
  return {
    name: "clear-triggers",
    image: `${image.repository}:${image.tag}`,
    command: ["/bin/rm", "-f", "--", ...SLURMCTLD_TRIGGER_STATE.files.map((f) => `${dir}/${f}`)],
    volumeMounts: [{ name: SLURMCTLD_TRIGGER_STATE.volume, mountPath: dir }],
    resources: INIT_CONTAINER_RESOURCES,
    securityContext: HARDENED_READ_ONLY_CONTAINER,
  };
}

const keyRef = (id: "slurm" | "jwt") => ({ create: false, secretRef: { name: CONTROL_PLANE_SECRETS[id].name, key: CONTROL_PLANE_SECRETS[id].key } });

/** The tenant's users in its namespace on central (the controller and the login read them). */
function controlPlaneUsers(f: ControlPlaneFacts) {
  return usersConfigMap(tenantNamespace(f.tenantId), f.users, EFS_MOUNT_PATH);
}

/**
 * A writable /tmp for a Slurm daemon under a read-only image: Slinky's slurmctld image starts
 * through supervisord, whose pid file and sockets (and Python's tempfile) live in /tmp; slurmdbd
 * refuses to start when its ArchiveDir (default /tmp) is not writable (the journey:
 * "fatal: archive directory /tmp is not writable").
 */
const DAEMON_TMP = {
  volume: { name: "tmp", emptyDir: { sizeLimit: "64Mi" } },
  mount: { name: "tmp", mountPath: "/tmp" },
} as const;

/** The annotation every pod template of a tenant's namespace carries: the resolver it is made for (TENANT_DNS.resolverAnnotation). Pure. */
export function resolverAnnotations(): Record<string, string> {
  return { [TENANT_DNS.resolverAnnotation]: TENANT_DNS.resolver };
}

/**
 * The Slinky release every tenant's control plane runs on central: images, requests, state,
 * accounting to its MariaDB, one login set, the users' init containers, the user-directory
 * prolog. The tenant's own values (controlPlaneSlurmValues) go over it.
 */
export function controlPlaneSharedValues(): Record<string, unknown> {
  const ctld = identityPodParts(SLINKY_IMAGES.slurmctld, "");
  const login = identityPodParts(SLINKY_IMAGES.login, "");
  // The resolver the pods are made for (central's admission policy gives it to the pods that
  // name it): a new one restarts them in the tenant's rollout, beside the egress that reaches it.
  const metadata = { annotations: resolverAnnotations() };
  return {
    // Each user's directory on the tenant's EFS before their first job (slurmd runs it on the node).
    prologScripts: { [USER_DIRECTORIES_PROLOG]: userDirectoriesProlog(EFS_MOUNT_PATH) },
    // The tenant's own keys, delivered by External Secrets: never created by the chart.
    slurmKey: keyRef("slurm"),
    jwtKey: keyRef("jwt"),
    controller: {
      metadata,
      slurmctld: { image: { ...SLINKY_IMAGES.slurmctld }, resources: componentResources("slurmctld"), volumeMounts: [...ctld.volumeMounts, DAEMON_TMP.mount], securityContext: HARDENED_READ_ONLY_CONTAINER },
      logfile: { image: { ...SLINKY_IMAGES.helper }, securityContext: HARDENED_READ_ONLY_CONTAINER },
      podSpec: { initContainers: [ctld.initContainer, clearTriggersInitContainer(SLINKY_IMAGES.slurmctld)], volumes: [...ctld.volumes, DAEMON_TMP.volume] },
      persistence: { enabled: true, resources: { requests: { storage: `${SLURMCTLD_STATE_GIB}Gi` } } },
    },
    restapi: { metadata, replicas: 1, slurmrestd: { resources: componentResources("slurmrestd"), securityContext: HARDENED_READ_ONLY_CONTAINER } },
    accounting: {
      metadata,
      enabled: true,
      slurmdbd: { resources: componentResources("slurmdbd"), securityContext: HARDENED_READ_ONLY_CONTAINER, volumeMounts: [DAEMON_TMP.mount] },
      podSpec: { volumes: [DAEMON_TMP.volume] },
      storageConfig: {
        host: ACCOUNTING_DATABASE.service,
        port: ACCOUNTING_DATABASE.port,
        database: ACCOUNTING_DATABASE.database,
        username: ACCOUNTING_DATABASE.username,
        passwordKeyRef: { name: CONTROL_PLANE_SECRETS.mariadb.name, key: CONTROL_PLANE_SECRETS.mariadb.key },
      },
    },
    loginsets: {
      [LOGIN_SET]: {
        metadata,
        enabled: true,
        replicas: 1,
        login: { image: { ...SLINKY_IMAGES.login }, resources: componentResources("login"), volumeMounts: login.volumeMounts, securityContext: LOGIN_CONTAINER },
        extraSshdConfig: Object.entries(LOGIN_SSHD_CONFIG).map(([k, v]) => `${k} ${v}`).join("\n"),
        initconf: { image: { ...SLINKY_IMAGES.helper } },
        podSpec: { initContainers: [login.initContainer], volumes: login.volumes },
        // The chart's default is a LoadBalancer: on K3s that would publish sshd on the host.
        service: { spec: { type: "ClusterIP" } },
      },
    },
  };
}

/** The tenant's own control-plane values: its Slurm cluster name, its NodeSets and srun block, its users' digest. */
export function controlPlaneSlurmValues(f: ControlPlaneFacts): Record<string, unknown> {
  // A new user list restarts slurmctld and the login (they read passwd at start).
  const annotations = identityPodParts(SLINKY_IMAGES.slurmctld, usersDigest(controlPlaneUsers(f))).annotations;
  return {
    clusterName: f.clusterName,
    controller: { metadata: { annotations }, extraConf: controlPlaneExtraConf(f) },
    loginsets: { [LOGIN_SET]: { metadata: { annotations } } },
  };
}

/** A key of a Secret, as mariadb-operator's CRD spells it. */
interface SecretKeyRef {
  readonly name: string;
  readonly key: string;
  /** The operator creates the Secret with a random value when it is missing. */
  readonly generate: boolean;
}

/** The fields of k8s.mariadb.com/v1alpha1 Backup the fleet sets (reference CRD, mariadb-operator 26.6.0). */
export interface MariaDbBackup {
  readonly apiVersion: "k8s.mariadb.com/v1alpha1";
  readonly kind: "Backup";
  /** No namespace: the chart puts it in the tenant's. Its sync wave follows the MariaDB's. */
  readonly metadata: { readonly name: string; readonly annotations: { readonly "argocd.argoproj.io/sync-wave": string } };
  readonly spec: {
    readonly mariaDbRef: { readonly name: string };
    readonly schedule: { readonly cron: string };
    readonly maxRetention: string;
    readonly compression: "gzip";
    readonly databases: readonly string[];
    readonly storage: { readonly persistentVolumeClaim: { readonly accessModes: readonly string[]; readonly resources: { readonly requests: { readonly storage: string } } } };
    readonly resources: Record<string, unknown>;
    /** Labels and annotations of the backup Job's pods. */
    readonly podMetadata: { readonly labels: Readonly<Record<string, string>>; readonly annotations: Readonly<Record<string, string>> };
  };
}

/**
 * The accounting database's scheduled logical backup (mariadb-dump in one transaction) to a
 * volume of its own, kept `retentionDays`: on central's data volume, which DLM snapshots to
 * the region daily. A restore is a `Restore` naming it (README, "Day 2").
 */
function accountingBackup(backups: CentralBackups): MariaDbBackup {
  return {
    apiVersion: "k8s.mariadb.com/v1alpha1",
    kind: "Backup",
    // Applied once its MariaDB is Healthy (wave 0): before it, the operator errors on a
    // Backup of a MariaDB that does not exist yet and retries it with back-off.
    metadata: { name: ACCOUNTING_BACKUP.name, annotations: { "argocd.argoproj.io/sync-wave": "1" } },
    spec: {
      mariaDbRef: { name: ACCOUNTING_DATABASE.service },
      schedule: { cron: backups.schedule },
      maxRetention: `${backups.retentionDays * 24}h`,
      compression: "gzip",
      databases: [ACCOUNTING_DATABASE.database],
      storage: { persistentVolumeClaim: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: `${ACCOUNTING_BACKUP.storageGiB}Gi` } } } },
      resources: { requests: { cpu: "50m", memory: "64Mi" }, limits: { memory: "256Mi" } },
      // Its Job's pods: the egress policy for the dump selects on them.
      podMetadata: { labels: { ...MARIADB_BACKUP_POD_LABELS }, annotations: resolverAnnotations() },
    },
  };
}

/** The fields of k8s.mariadb.com/v1alpha1 MariaDB the fleet sets (reference CRD, mariadb-operator 26.6.0). */
export interface MariaDb {
  readonly apiVersion: "k8s.mariadb.com/v1alpha1";
  readonly kind: "MariaDB";
  /** No namespace: the chart puts it in the tenant's. */
  readonly metadata: { readonly name: string };
  readonly spec: {
    readonly rootPasswordSecretKeyRef: SecretKeyRef;
    readonly username: string;
    readonly passwordSecretKeyRef: SecretKeyRef;
    readonly database: string;
    readonly port: number;
    readonly storage: { readonly size: string };
    readonly resources: Record<string, unknown>;
    /** The mariadb container's securityContext, and the pod's (it replaces the operator's defaults whole). */
    readonly securityContext: Readonly<Record<string, unknown>>;
    readonly podSecurityContext: Readonly<Record<string, unknown>>;
    /** Annotations of its pods. */
    readonly podMetadata: { readonly annotations: Readonly<Record<string, string>> };
    readonly myCnf: string;
  };
}

/** mariadb-operator's MariaDB, as the slurm chart's storageConfig expects it. */
export function accountingDatabase(): MariaDb {
  return {
    apiVersion: "k8s.mariadb.com/v1alpha1",
    kind: "MariaDB",
    metadata: { name: ACCOUNTING_DATABASE.service },
    spec: {
      // root's password is generated in the cluster by the operator and never leaves it.
      rootPasswordSecretKeyRef: { name: "mariadb-root", key: "password", generate: true },
      username: ACCOUNTING_DATABASE.username,
      passwordSecretKeyRef: { name: CONTROL_PLANE_SECRETS.mariadb.name, key: CONTROL_PLANE_SECRETS.mariadb.key, generate: false },
      database: ACCOUNTING_DATABASE.database,
      port: ACCOUNTING_DATABASE.port,
      storage: { size: `${ACCOUNTING_DATABASE.storageGiB}Gi` },
      // Its temporary tables and sorts (sacct, rollups) go to the image's /tmp: room for them, above the namespace's default.
      resources: { ...componentResources("mariadb"), requests: { ...(componentResources("mariadb").requests as Record<string, string>), "ephemeral-storage": "256Mi" }, limits: { ...(componentResources("mariadb").limits as Record<string, string>), "ephemeral-storage": "2Gi" } },
      // mariadbd runs as the image's mysql user and needs no capability; the image writes
      // /run/mysqld, so its root stays writable. The operator's pod defaults, with the runtime's
      // seccomp profile (its container securityContext takes none).
      securityContext: { allowPrivilegeEscalation: HARDENED_CONTAINER.allowPrivilegeEscalation, capabilities: HARDENED_CONTAINER.capabilities },
      podSecurityContext: { runAsNonRoot: true, runAsUser: MARIADB_IMAGE_USER, runAsGroup: MARIADB_IMAGE_USER, fsGroup: MARIADB_IMAGE_USER, seccompProfile: HARDENED_CONTAINER.seccompProfile },
      podMetadata: { annotations: resolverAnnotations() },
      // slurmdbd's recommended settings for its job tables.
      myCnf: "[mariadb]\ninnodb_buffer_pool_size=128M\ninnodb_lock_wait_timeout=900\nmax_allowed_packet=16M\n",
    },
  };
}

/**
 * What the control-plane-manifests chart (fleet/charts/tenant-control-plane) reads alike for
 * every tenant of an environment: the accounting database and its backup (central's backup
 * policy), the Services' selectors and ports, and the secrets' Kubernetes names. What
 * contains the tenant is the guards chart's (tenantGuardsSharedValues).
 */
export function controlPlaneManifestsSharedValues(backups: CentralBackups): Record<string, unknown> {
  const { refreshInterval, target } = externalSecret({ store: { name: "", namespace: "", region: "", roleArn: "" }, target: "", key: "", remoteKey: "" }).spec ?? {};
  const users = usersConfigMap("", [], EFS_MOUNT_PATH);
  return {
    namespaced: [accountingDatabase(), accountingBackup(backups)],
    secrets: {
      store: "central-secrets",
      spec: { refreshInterval },
      target: { creationPolicy: target?.creationPolicy, deletionPolicy: target?.deletionPolicy },
      items: (Object.keys(CONTROL_PLANE_SECRETS) as (keyof typeof CONTROL_PLANE_SECRETS)[]).map((id) => ({ id, ...CONTROL_PLANE_SECRETS[id] })),
    },
    usersConfigMap: { name: users.metadata?.name, mergeScriptKey: MERGE_SCRIPT_KEY, mergeScript: users.data?.[MERGE_SCRIPT_KEY] },
    peering: {
      trafficPolicy: "Local",
      slurmctld: { name: "slurmctld-peering", selector: slinkyPodLabels("slurmctld"), port: { name: "slurmctld", protocol: "TCP", port: SLURM_PORTS.slurmctld, targetPort: SLURM_PORTS.slurmctld } },
      srun: { name: "srun-peering", selector: slinkyLoginPodLabels(), portPrefix: "srun-", blockSize: SRUN_PORT_BLOCK_SIZE },
    },
  };
}

/**
 * What the guards chart (fleet/charts/tenant-guards) reads alike for every tenant of an
 * environment: the namespace-only NetworkPolicies (its own pods; mariadb-operator to the
 * database, which creates the slurm user and grants by SQL), its quota and LimitRange, and the
 * other policies' selectors and ports. Its Application is one ArgoCD self-heals
 * (TENANT_GUARDS_APPLICATION_SET): a hand-deleted policy or a raised quota goes back to git's.
 */
export function tenantGuardsSharedValues(): Record<string, unknown> {
  const policy = (name: string, spec: NetworkPolicy["spec"]): NetworkPolicy => ({ apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", metadata: { name }, spec });
  return {
    guards: [
      policy("same-namespace-only", { podSelector: {}, policyTypes: ["Ingress"], ingress: [{ from: [{ podSelector: {} }] }] }),
      // Egress: nothing, unless an egress policy of the chart allows it (CONTROL_PLANE_EGRESS).
      policy(EGRESS_DENY_POLICY, { podSelector: {}, policyTypes: ["Egress"] }),
      ...controlPlaneQuota(),
      policy("mariadb-from-operator", {
        podSelector: { matchLabels: { ...MARIADB_POD_LABELS } },
        policyTypes: ["Ingress"],
        ingress: [{
          from: [{ namespaceSelector: { matchLabels: { [NAMESPACE_NAME_LABEL]: mariadbOperatorNamespace() } }, podSelector: { matchLabels: { ...MARIADB_OPERATOR_POD_LABELS } } }],
          ports: [{ protocol: "TCP", port: ACCOUNTING_DATABASE.port }],
        }],
      }),
    ],
    policies: {
      slurmctld: { name: "slurmctld-from-tenant-vpc", selector: slinkyPodLabels("slurmctld"), port: SLURM_PORTS.slurmctld },
      srun: { name: "srun-from-tenant-vpc", selector: slinkyLoginPodLabels() },
      srunBlockSize: SRUN_PORT_BLOCK_SIZE,
      slurmrestd: { name: "slurmrestd-from-cluster-api", selector: slinkyPodLabels("slurmrestd"), port: SLURM_PORTS.slurmrestd },
      egress: egressPolicyValues(),
      slurmdPort: SLURM_PORTS.slurmd,
      // The tenant's own DNS: its pods carry the namespace they answer (the chart adds this release's).
      dns: { namespace: TENANT_DNS.namespace, selector: TENANT_DNS.labels, answersLabel: TENANT_DNS.answersLabel, port: TENANT_DNS.port },
    },
  };
}

/** The official MariaDB image's mysql user and group, which mariadb-operator runs the server as by default. */
const MARIADB_IMAGE_USER = 999;

/** Claims a tenant's namespace holds: slurmctld's state, the accounting database, its backup. */
const CONTROL_PLANE_CLAIMS_GIB = [SLURMCTLD_STATE_GIB, ACCOUNTING_DATABASE.storageGiB, ACCOUNTING_BACKUP.storageGiB] as const;

/** Requests and limits of a container the fleet gives none (Slinky's sidecars and init containers, mariadb-operator's): the LimitRange's defaults. */
const CONTAINER_DEFAULTS = { request: { cpu: "10m", memory: "16Mi", "ephemeral-storage": "64Mi" }, limit: { memory: "128Mi", "ephemeral-storage": "512Mi" } } as const;

/** Pods a tenant's namespace runs at most: its five components, a surge pod for each of its two Deployments (slurmrestd, the login), the backup Job, two spare. */
const CONTROL_PLANE_PODS = 10;

/** Ephemeral storage (logs, emptyDirs, writable layers) all of a tenant's pods may take together on the host's disk. */
const CONTROL_PLANE_EPHEMERAL_GIB = 8;

/**
 * A tenant's share of central, enforced by the API server: a ResourceQuota sized from the
 * capacity facts (twice the control plane's requests and limits: a rolling replacement and
 * the backup Job fit, a runaway does not), and a LimitRange giving every container without
 * its own requests and limits the defaults (the quota admits no pod without them) and
 * capping a claim at the largest the fleet makes.
 */
export function controlPlaneQuota(): Record<string, unknown>[] {
  const sum = tenantControlPlaneRequest();
  return [
    {
      apiVersion: "v1", kind: "ResourceQuota", metadata: { name: "control-plane" },
      spec: {
        hard: {
          "requests.cpu": `${2 * sum.cpuMillis}m`,
          "requests.memory": `${2 * sum.memoryMiB}Mi`,
          "limits.memory": `${2 * MEMORY_LIMIT_FACTOR * sum.memoryMiB}Mi`,
          "requests.ephemeral-storage": `${CONTROL_PLANE_EPHEMERAL_GIB}Gi`,
          "limits.ephemeral-storage": `${CONTROL_PLANE_EPHEMERAL_GIB}Gi`,
          "requests.storage": `${CONTROL_PLANE_CLAIMS_GIB.reduce((a, b) => a + b, 0)}Gi`,
          persistentvolumeclaims: String(CONTROL_PLANE_CLAIMS_GIB.length),
          pods: String(CONTROL_PLANE_PODS),
          "services.nodeports": String(1 + SRUN_PORT_BLOCK_SIZE),
          "services.loadbalancers": "0",
        },
      },
    },
    {
      apiVersion: "v1", kind: "LimitRange", metadata: { name: "control-plane-defaults" },
      spec: {
        limits: [
          { type: "Container", defaultRequest: { ...CONTAINER_DEFAULTS.request }, default: { ...CONTAINER_DEFAULTS.limit } },
          { type: "PersistentVolumeClaim", max: { storage: `${Math.max(...CONTROL_PLANE_CLAIMS_GIB)}Gi` } },
        ],
      },
    },
  ];
}

/** The namespace-wide policy that leaves a tenant's pods no egress but what the egress policies allow. */
export const EGRESS_DENY_POLICY = "egress-none-by-default";

/** The chart's egress policies, one per pod that opens connections (CONTROL_PLANE_EGRESS): its selector, its peers' selectors and ports, the tenant's slurmd, DNS. */
function egressPolicyValues(): Record<string, unknown>[] {
  return (Object.keys(CONTROL_PLANE_EGRESS) as ControlPlanePod[]).flatMap((pod) => {
    const e = CONTROL_PLANE_EGRESS[pod];
    if (!e.peers.length && !e.slurmd && !e.dns) return [];
    return [{
      name: `${pod}-egress`,
      selector: controlPlanePodLabels(pod),
      to: e.peers.map((p) => (p.port === "srun-block" ? { selector: controlPlanePodLabels(p.pod), srunBlock: true } : { selector: controlPlanePodLabels(p.pod), port: p.port })),
      slurmd: e.slurmd,
      dns: e.dns,
    }];
  });
}

/** The tenant's own values of the control-plane-manifests chart: its region, srun block and secrets' names (its users come from its users file, its facts from its facts file). */
export function controlPlaneManifestsValues(f: ControlPlaneFacts): Record<string, unknown> {
  return {
    centralRegion: f.centralRegion,
    srunPorts: { from: f.srunPortBlock.from, to: f.srunPortBlock.to },
    secretNames: f.secretNames,
  };
}

/** The tenant's own values of the guards chart: what its policies admit from (its VPC, its srun block). */
export function tenantGuardsValues(f: ControlPlaneFacts): Record<string, unknown> {
  return {
    tenantCidr: f.tenantCidr,
    srunPorts: { from: f.srunPortBlock.from, to: f.srunPortBlock.to },
  };
}

/** Where central runs mariadb-operator (its add-on table). */
function mariadbOperatorNamespace(): string {
  const addOn = CENTRAL_ADD_ONS.find((a) => a.chart === "mariadbOperator");
  if (!addOn) throw new Error("facts/fleet.ts CENTRAL_ADD_ONS has no mariadbOperator");
  return addOn.namespace;
}

/** The tenant's values files of its two local charts on central, in its control-plane/values/ folder. */
export const CONTROL_PLANE_MANIFESTS_VALUES = "control-plane-manifests.yaml";
export const TENANT_GUARDS_VALUES = "guards.yaml";

/** The control plane's values and manifests, by path. */
export function controlPlaneDocuments(f: ControlPlaneFacts): Record<string, unknown[]> {
  const dir = controlPlanePath(f.scope, f.tenantId);
  return {
    [`${dir}/values/${SLURM_RELEASE}.yaml`]: [controlPlaneSlurmValues(f)],
    [`${dir}/values/${CONTROL_PLANE_MANIFESTS_VALUES}`]: [controlPlaneManifestsValues(f)],
    [`${dir}/values/${TENANT_GUARDS_VALUES}`]: [tenantGuardsValues(f)],
  };
}
