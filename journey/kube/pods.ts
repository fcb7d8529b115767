/**
 * Pods the journey runs for real where it can (the Slinky operator's Slurm pods, ArgoCD's):
 * a container of a pod template started in an image (a root file system install-tools made)
 * as the kubelet would start it, with its volumes made as the kubelet makes them (projected
 * ConfigMaps and Secrets written out with their modes and the pod's fsGroup, emptyDirs and
 * claims as fresh folders, the service account's token), its environment resolved from the
 * live ConfigMaps and Secrets and the pod's fields, `$(VAR)` expanded in its command and
 * args, its user and groups from its security context, and its command the image's
 * entrypoint followed by the container's args.
 */
import * as fs from "fs";
import * as path from "path";
import type { Kubectl } from "./kubectl";

export interface KeyToPath {
  readonly key: string;
  readonly path: string;
  readonly mode?: number;
}

export interface Volume {
  readonly name: string;
  readonly projected?: {
    readonly defaultMode?: number;
    readonly sources: readonly { readonly configMap?: { readonly name: string; readonly items?: readonly KeyToPath[] }; readonly secret?: { readonly name: string; readonly items?: readonly KeyToPath[] } }[];
  };
  readonly configMap?: { readonly name: string; readonly items?: readonly KeyToPath[]; readonly defaultMode?: number; readonly optional?: boolean };
  readonly secret?: { readonly secretName: string; readonly items?: readonly KeyToPath[]; readonly defaultMode?: number; readonly optional?: boolean };
  readonly emptyDir?: Record<string, unknown>;
  readonly persistentVolumeClaim?: { readonly claimName: string };
}

export interface Container {
  readonly name: string;
  readonly args?: readonly string[];
  readonly command?: readonly string[];
  readonly env?: readonly EnvVar[];
  /** Every key of a ConfigMap or Secret as a variable (`prefix` before each name); `env` wins over them. */
  readonly envFrom?: readonly EnvFromSource[];
  readonly volumeMounts?: readonly { readonly name: string; readonly mountPath: string; readonly subPath?: string; readonly readOnly?: boolean }[];
  readonly securityContext?: ContainerSecurity;
  /** `Always` on an init container: a sidecar (the chart's log tailers), not a step before the main container. */
  readonly restartPolicy?: string;
}

/** The parts of a container's securityContext the journey's pods honour. */
export interface ContainerSecurity {
  readonly runAsUser?: number;
  readonly runAsGroup?: number;
  readonly allowPrivilegeEscalation?: boolean;
  readonly readOnlyRootFilesystem?: boolean;
  readonly capabilities?: { readonly add?: readonly string[]; readonly drop?: readonly string[] };
}

/** A container's environment variable: a value, or one read from a ConfigMap, a Secret or the pod. */
export interface EnvVar {
  readonly name: string;
  readonly value?: string;
  readonly valueFrom?: {
    readonly configMapKeyRef?: { readonly name: string; readonly key: string; readonly optional?: boolean };
    readonly secretKeyRef?: { readonly name: string; readonly key: string; readonly optional?: boolean };
    readonly fieldRef?: { readonly fieldPath: string };
  };
}

export interface EnvFromSource {
  readonly prefix?: string;
  readonly configMapRef?: { readonly name: string; readonly optional?: boolean };
  readonly secretRef?: { readonly name: string; readonly optional?: boolean };
}

export interface PodTemplate {
  readonly spec: {
    readonly serviceAccountName?: string;
    readonly automountServiceAccountToken?: boolean;
    readonly containers: readonly Container[];
    readonly initContainers?: readonly Container[];
    readonly volumes?: readonly Volume[];
    readonly securityContext?: { readonly runAsUser?: number; readonly runAsGroup?: number; readonly fsGroup?: number };
  };
}

/** One file a projected, ConfigMap or Secret volume holds. */
export interface VolumeFile {
  readonly path: string;
  readonly content: Buffer;
  readonly mode: number;
}

/** Keys of one source as files: its items, or every key by name. Pure. */
function sourceFiles(data: Readonly<Record<string, Buffer>>, items: readonly KeyToPath[] | undefined, defaultMode: number): { files: VolumeFile[]; missing: string[] } {
  const wanted: readonly KeyToPath[] = items ?? Object.keys(data).map((key) => ({ key, path: key }));
  const files: VolumeFile[] = [];
  const missing: string[] = [];
  for (const i of wanted) {
    const content = data[i.key];
    if (content === undefined) missing.push(i.key);
    else files.push({ path: i.path, content, mode: i.mode ?? defaultMode });
  }
  return { files, missing };
}

/**
 * The files of a volume as the kubelet writes them: each source's keys (or its items), the
 * item's mode or the volume's default (0644), and with an fsGroup the group's read bits
 * added (the kubelet's volume ownership). Secrets' data is base64, as the API gives it. Pure.
 */
export function volumeFiles(
  volume: Volume,
  objects: { readonly configMaps: ReadonlyMap<string, Readonly<Record<string, string>>>; readonly secrets: ReadonlyMap<string, Readonly<Record<string, string>>> },
  fsGroup: number | undefined,
): { files: VolumeFile[]; missing: string[] } {
  const text = (d: Readonly<Record<string, string>> | undefined) => (d ? Object.fromEntries(Object.entries(d).map(([k, v]) => [k, Buffer.from(v)])) : undefined);
  const b64 = (d: Readonly<Record<string, string>> | undefined) => (d ? Object.fromEntries(Object.entries(d).map(([k, v]) => [k, Buffer.from(v, "base64")])) : undefined);
  const sources: { what: string; data: Record<string, Buffer> | undefined; items?: readonly KeyToPath[]; optional?: boolean }[] = [];
  let defaultMode = 0o644;
  if (volume.projected) {
    defaultMode = volume.projected.defaultMode ?? defaultMode;
    for (const s of volume.projected.sources) {
      if (s.configMap) sources.push({ what: `ConfigMap ${s.configMap.name}`, data: text(objects.configMaps.get(s.configMap.name)), items: s.configMap.items });
      if (s.secret) sources.push({ what: `Secret ${s.secret.name}`, data: b64(objects.secrets.get(s.secret.name)), items: s.secret.items });
    }
  } else if (volume.configMap) {
    defaultMode = volume.configMap.defaultMode ?? defaultMode;
    sources.push({ what: `ConfigMap ${volume.configMap.name}`, data: text(objects.configMaps.get(volume.configMap.name)), items: volume.configMap.items, optional: volume.configMap.optional });
  } else if (volume.secret) {
    defaultMode = volume.secret.defaultMode ?? defaultMode;
    sources.push({ what: `Secret ${volume.secret.secretName}`, data: b64(objects.secrets.get(volume.secret.secretName)), items: volume.secret.items, optional: volume.secret.optional });
  }
  const files: VolumeFile[] = [];
  const missing: string[] = [];
  for (const s of sources) {
    if (!s.data) {
      // An optional source that does not exist leaves the volume empty (the kubelet's rule).
      if (!s.optional) missing.push(`${s.what} (absent)`);
      continue;
    }
    const r = sourceFiles(s.data, s.items, defaultMode);
    files.push(...r.files);
    if (!s.optional) missing.push(...r.missing.map((k) => `${s.what} key ${k}`));
  }
  return { files: files.map((f) => ({ ...f, mode: fsGroup === undefined ? f.mode : f.mode | 0o440 })), missing };
}

/** A container made ready to run: the folders to mount where, its user, groups and environment. */
export interface PreparedContainer {
  readonly binds: readonly { readonly from: string; readonly to: string; readonly readOnly?: boolean }[];
  readonly uid: number;
  readonly gid: number;
  readonly fsGroup?: number;
  readonly env: Readonly<Record<string, string>>;
  /** The container's command, when it replaces the image's entrypoint. */
  readonly command?: readonly string[];
  /** Its args, after the command or the entrypoint. */
  readonly args: readonly string[];
  /** Volume sources that do not exist (or lack a key): the kubelet would not start the pod. */
  readonly missing: readonly string[];
  /** Its securityContext's limits: no privilege gain, the capabilities it keeps (`undefined`: the runtime's default set), a read-only image. */
  readonly noNewPrivs?: boolean;
  readonly capabilities?: readonly string[];
  readonly readOnlyRoot?: boolean;
}

/** The pod's own fields a container's environment may read (`fieldRef`). */
export interface PodFields {
  readonly name: string;
  readonly namespace: string;
  /** Its address (`status.podIP`). */
  readonly ip?: string;
  readonly serviceAccountName?: string;
}

/**
 * A container's environment as the kubelet resolves it: values, ConfigMap and Secret keys
 * (an optional one that is absent is left out), the pod's fields, and `$(VAR)` in a value
 * expanded from the variables before it. Pure.
 */
export function containerEnv(
  env: readonly EnvVar[],
  objects: { readonly configMaps: ReadonlyMap<string, Readonly<Record<string, string>>>; readonly secrets: ReadonlyMap<string, Readonly<Record<string, string>>> },
  pod: PodFields,
): { env: Record<string, string>; missing: string[] } {
  const out: Record<string, string> = {};
  const missing: string[] = [];
  const fields: Record<string, string | undefined> = { "metadata.name": pod.name, "metadata.namespace": pod.namespace, "status.podIP": pod.ip, "spec.serviceAccountName": pod.serviceAccountName };
  for (const e of env) {
    const from = e.valueFrom;
    if (e.value !== undefined) out[e.name] = expandVars(e.value, out);
    else if (from?.configMapKeyRef) {
      const v = objects.configMaps.get(from.configMapKeyRef.name)?.[from.configMapKeyRef.key];
      if (v !== undefined) out[e.name] = v;
      else if (!from.configMapKeyRef.optional) missing.push(`env ${e.name}: ConfigMap ${from.configMapKeyRef.name} key ${from.configMapKeyRef.key}`);
    } else if (from?.secretKeyRef) {
      const v = objects.secrets.get(from.secretKeyRef.name)?.[from.secretKeyRef.key];
      if (v !== undefined) out[e.name] = Buffer.from(v, "base64").toString();
      else if (!from.secretKeyRef.optional) missing.push(`env ${e.name}: Secret ${from.secretKeyRef.name} key ${from.secretKeyRef.key}`);
    } else if (from?.fieldRef) {
      const v = fields[from.fieldRef.fieldPath];
      if (v !== undefined) out[e.name] = v;
      else missing.push(`env ${e.name}: field ${from.fieldRef.fieldPath} (the journey's pods have none)`);
    } else if (from) missing.push(`env ${e.name}: ${Object.keys(from).join(", ")} (a source the journey's pods do not resolve)`);
    else out[e.name] = "";
  }
  return { env: out, missing };
}

/**
 * The variables a container's `envFrom` gives, as the kubelet resolves them: every key of
 * each ConfigMap or Secret in order (a later source wins), with its prefix; a source that is
 * absent and not optional is missing. Pure.
 */
export function envFromSources(
  sources: readonly EnvFromSource[],
  objects: { readonly configMaps: ReadonlyMap<string, Readonly<Record<string, string>>>; readonly secrets: ReadonlyMap<string, Readonly<Record<string, string>>> },
): { env: Record<string, string>; missing: string[] } {
  const out: Record<string, string> = {};
  const missing: string[] = [];
  for (const s of sources) {
    const ref = s.configMapRef ?? s.secretRef;
    if (!ref) continue;
    const data = s.configMapRef ? objects.configMaps.get(ref.name) : objects.secrets.get(ref.name);
    if (!data) {
      if (!ref.optional) missing.push(`envFrom: ${s.configMapRef ? "ConfigMap" : "Secret"} ${ref.name}`);
      continue;
    }
    for (const [k, v] of Object.entries(data)) out[`${s.prefix ?? ""}${k}`] = s.secretRef ? Buffer.from(v, "base64").toString() : v;
  }
  return { env: out, missing };
}

/** `$(VAR)` replaced by the variable's value where it is defined, `$$` by `$` (the kubelet's expansion of command, args and values). Pure. */
export function expandVars(text: string, env: Readonly<Record<string, string>>): string {
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (whole: string, name?: string) => (name === undefined ? "$" : env[name] ?? whole));
}

/** Where the kubelet projects a pod's service-account token, CA and namespace. */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/** A pod's identity: its fields, and the token its service account was given (projected unless the template turns it off). */
export interface PodIdentity {
  readonly fields: PodFields;
  /** The image's user and environment (its Dockerfile's USER and ENV), under the container's own. */
  readonly image?: { readonly uid: number; readonly gid: number; readonly env?: Readonly<Record<string, string>> };
  /** Variables the kubelet gives every container (the API server's address). */
  readonly env?: Readonly<Record<string, string>>;
  readonly serviceAccount?: { readonly token: string; readonly caPem: string };
}

/** Makes a container's volumes under `dir` from the live objects of its namespace (`claims`: a StatefulSet's claim templates). */
export async function prepareContainer(kc: Kubectl, namespace: string, template: PodTemplate, containerName: string, dir: string, claims: readonly string[] = [], identity?: PodIdentity): Promise<PreparedContainer> {
  const container = [...template.spec.containers, ...(template.spec.initContainers ?? [])].find((c) => c.name === containerName);
  if (!container) throw new Error(`no container ${containerName} in the pod template`);
  const list = async (kind: string) => {
    const l = await kc.get<{ items: { metadata: { name: string }; data?: Record<string, string> }[] }>([kind, "-n", namespace]);
    return new Map((l?.items ?? []).map((o) => [o.metadata.name, o.data ?? {}]));
  };
  const objects = { configMaps: await list("configmaps"), secrets: await list("secrets") };
  const pod = template.spec.securityContext ?? {};
  const fsGroup = pod.fsGroup;
  const uid = container.securityContext?.runAsUser ?? pod.runAsUser ?? identity?.image?.uid ?? 0;
  const gid = container.securityContext?.runAsGroup ?? pod.runAsGroup ?? identity?.image?.gid ?? 0;
  const binds: { from: string; to: string; readOnly?: boolean }[] = [];
  const missing: string[] = [];
  for (const m of container.volumeMounts ?? []) {
    if (!path.isAbsolute(m.mountPath) || m.mountPath.split("/").includes("..") || (m.subPath ?? "").split("/").includes("..")) {
      missing.push(`volume ${m.name}: mount path ${m.mountPath}${m.subPath ? ` (subPath ${m.subPath})` : ""} leaves its root`);
      continue;
    }
    // A StatefulSet's claim templates are volumes too (a claim per pod, bound to a fresh volume).
    const volume = template.spec.volumes?.find((v) => v.name === m.name) ?? (claims.includes(m.name) ? { name: m.name, persistentVolumeClaim: { claimName: m.name } } : undefined);
    if (!volume) {
      missing.push(`volume ${m.name}`);
      continue;
    }
    // One folder per volume, shared by every container of the pod that mounts it.
    const host = path.join(dir, "volumes", m.name);
    const made = fs.existsSync(host);
    fs.mkdirSync(host, { recursive: true });
    if (made) {
      // Made for an earlier container of this pod.
    } else if (volume.emptyDir || volume.persistentVolumeClaim) {
      // As the kubelet makes them: world-writable (emptyDir), or the claim's folder group-owned by fsGroup.
      fs.chmodSync(host, 0o777);
      if (fsGroup !== undefined) fs.chownSync(host, 0, fsGroup);
    } else if (!volume.projected && !volume.configMap && !volume.secret) {
      missing.push(`volume ${m.name}: a kind the journey's pods do not make`);
      continue;
    } else {
      const r = volumeFiles(volume, objects, fsGroup);
      missing.push(...r.missing);
      for (const f of r.files) {
        const file = path.join(host, f.path);
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.writeFileSync(file, f.content, { mode: f.mode });
        fs.chmodSync(file, f.mode);
        if (fsGroup !== undefined) fs.chownSync(file, 0, fsGroup);
      }
    }
    binds.push({ from: m.subPath ? path.join(host, m.subPath) : host, to: m.mountPath, ...(m.readOnly ? { readOnly: true } : {}) });
  }
  if (identity?.serviceAccount && template.spec.automountServiceAccountToken !== false) {
    const sa = path.join(dir, "volumes", "kube-api-access");
    fs.mkdirSync(sa, { recursive: true });
    for (const [file, content] of Object.entries({ token: identity.serviceAccount.token, "ca.crt": identity.serviceAccount.caPem, namespace })) fs.writeFileSync(path.join(sa, file), content, { mode: 0o644 });
    binds.push({ from: sa, to: SERVICE_ACCOUNT_DIR, readOnly: true });
  }
  const fields: PodFields = identity?.fields ?? { name: containerName, namespace };
  const from = envFromSources(container.envFrom ?? [], objects);
  const resolved = containerEnv(container.env ?? [], objects, fields);
  missing.push(...from.missing, ...resolved.missing);
  const env = { ...identity?.image?.env, ...identity?.env, ...from.env, ...resolved.env };
  const expand = (list: readonly string[]) => list.map((a) => expandVars(a, env));
  return { binds, uid, gid, ...(fsGroup !== undefined ? { fsGroup } : {}), env, ...(container.command ? { command: expand(container.command) } : {}), args: expand(container.args ?? []), missing, ...securityLimits(container.securityContext) };
}

/**
 * What a securityContext limits, as the runtime applies it: `allowPrivilegeEscalation: false`
 * sets no_new_privs; `drop: [ALL]` leaves only the added capabilities (a drop of some leaves
 * the rest of the default set, which the journey does not model: undefined); a read-only
 * root. Pure.
 */
export function securityLimits(sc: ContainerSecurity | undefined): Pick<PreparedContainer, "noNewPrivs" | "capabilities" | "readOnlyRoot"> {
  const dropsAll = (sc?.capabilities?.drop ?? []).some((c) => c.toUpperCase() === "ALL");
  return {
    ...(sc?.allowPrivilegeEscalation === false ? { noNewPrivs: true } : {}),
    ...(dropsAll ? { capabilities: (sc?.capabilities?.add ?? []).map((c) => c.toLowerCase().replace(/^cap_/, "")) } : {}),
    ...(sc?.readOnlyRootFilesystem ? { readOnlyRoot: true } : {}),
  };
}

/** What a container runs: its command or else the image's entrypoint, then its args (the kubelet's rule). Pure. */
export function containerArgv(c: Pick<PreparedContainer, "command" | "args">, entrypoint: readonly string[]): string[] {
  return [...(c.command ?? entrypoint), ...c.args];
}

/** The init containers the kubelet runs to completion before the main ones (not the sidecars: `restartPolicy: Always`). Pure. */
export function initSteps(template: PodTemplate): Container[] {
  return (template.spec.initContainers ?? []).filter((c) => c.restartPolicy !== "Always");
}

/** setpriv's arguments for a container's limits: no_new_privs, and the bounding and inheritable sets cut to what it adds (as the runtime leaves them). Pure. */
export function setprivLimitArgs(l: Pick<PreparedContainer, "noNewPrivs" | "capabilities">): string[] {
  const caps = l.capabilities ? [["-all", ...l.capabilities.map((x) => `+${x}`)].join(",")] : [];
  return [...(l.noNewPrivs ? ["--no-new-privs"] : []), ...caps.flatMap((set) => [`--bounding-set=${set}`, `--inh-caps=${set}`])];
}

/** The argv that runs `argv` as the prepared container's user, groups and environment (inside the pod). Pure. */
export function asContainer(c: PreparedContainer, argv: readonly string[]): string[] {
  const groups = [c.gid, ...(c.fsGroup !== undefined && c.fsGroup !== c.gid ? [c.fsGroup] : [])];
  return ["env", "-i", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", ...Object.entries(c.env).map(([k, v]) => `${k}=${v}`),
    "setpriv", `--reuid=${c.uid}`, `--regid=${c.gid}`, `--groups=${groups.join(",")}`, ...setprivLimitArgs(c), "--", ...argv];
}
