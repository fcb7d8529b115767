/**
 * The pods Slinky's operator builds, run for real where the journey can: a container of an
 * operator-made pod template started in the Slurm image (journey/slurm/image.ts) as the
 * kubelet would start it, with its volumes made as the kubelet makes them (projected
 * ConfigMaps and Secrets written out with their modes and the pod's fsGroup, emptyDirs and
 * claims as fresh folders), its user and groups from its security context, and its command
 * the image's entrypoint (`slurmctld -D`, `slurmrestd`) followed by the container's args.
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
  readonly configMap?: { readonly name: string; readonly items?: readonly KeyToPath[]; readonly defaultMode?: number };
  readonly secret?: { readonly secretName: string; readonly items?: readonly KeyToPath[]; readonly defaultMode?: number };
  readonly emptyDir?: Record<string, unknown>;
  readonly persistentVolumeClaim?: { readonly claimName: string };
}

export interface Container {
  readonly name: string;
  readonly args?: readonly string[];
  readonly command?: readonly string[];
  readonly env?: readonly { readonly name: string; readonly value?: string }[];
  readonly volumeMounts?: readonly { readonly name: string; readonly mountPath: string; readonly subPath?: string; readonly readOnly?: boolean }[];
  readonly securityContext?: { readonly runAsUser?: number; readonly runAsGroup?: number };
  /** `Always` on an init container: a sidecar (the chart's log tailers), not a step before the main container. */
  readonly restartPolicy?: string;
}

export interface PodTemplate {
  readonly spec: {
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
  const sources: { what: string; data: Record<string, Buffer> | undefined; items?: readonly KeyToPath[] }[] = [];
  let defaultMode = 0o644;
  if (volume.projected) {
    defaultMode = volume.projected.defaultMode ?? defaultMode;
    for (const s of volume.projected.sources) {
      if (s.configMap) sources.push({ what: `ConfigMap ${s.configMap.name}`, data: text(objects.configMaps.get(s.configMap.name)), items: s.configMap.items });
      if (s.secret) sources.push({ what: `Secret ${s.secret.name}`, data: b64(objects.secrets.get(s.secret.name)), items: s.secret.items });
    }
  } else if (volume.configMap) {
    defaultMode = volume.configMap.defaultMode ?? defaultMode;
    sources.push({ what: `ConfigMap ${volume.configMap.name}`, data: text(objects.configMaps.get(volume.configMap.name)), items: volume.configMap.items });
  } else if (volume.secret) {
    defaultMode = volume.secret.defaultMode ?? defaultMode;
    sources.push({ what: `Secret ${volume.secret.secretName}`, data: b64(objects.secrets.get(volume.secret.secretName)), items: volume.secret.items });
  }
  const files: VolumeFile[] = [];
  const missing: string[] = [];
  for (const s of sources) {
    if (!s.data) {
      missing.push(`${s.what} (absent)`);
      continue;
    }
    const r = sourceFiles(s.data, s.items, defaultMode);
    files.push(...r.files);
    missing.push(...r.missing.map((k) => `${s.what} key ${k}`));
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
}

/** Makes a container's volumes under `dir` from the live objects of its namespace (`claims`: a StatefulSet's claim templates). */
export async function prepareContainer(kc: Kubectl, namespace: string, template: PodTemplate, containerName: string, dir: string, claims: readonly string[] = []): Promise<PreparedContainer> {
  const container = [...template.spec.containers, ...(template.spec.initContainers ?? [])].find((c) => c.name === containerName);
  if (!container) throw new Error(`no container ${containerName} in the pod template`);
  const list = async (kind: string) => {
    const l = await kc.get<{ items: { metadata: { name: string }; data?: Record<string, string> }[] }>([kind, "-n", namespace]);
    return new Map((l?.items ?? []).map((o) => [o.metadata.name, o.data ?? {}]));
  };
  const objects = { configMaps: await list("configmaps"), secrets: await list("secrets") };
  const pod = template.spec.securityContext ?? {};
  const fsGroup = pod.fsGroup;
  const uid = container.securityContext?.runAsUser ?? pod.runAsUser ?? 0;
  const gid = container.securityContext?.runAsGroup ?? pod.runAsGroup ?? 0;
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
  const env = Object.fromEntries((container.env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, e.value as string]));
  return { binds, uid, gid, ...(fsGroup !== undefined ? { fsGroup } : {}), env, ...(container.command ? { command: container.command } : {}), args: container.args ?? [], missing };
}

/** What a container runs: its command or else the image's entrypoint, then its args (the kubelet's rule). Pure. */
export function containerArgv(c: Pick<PreparedContainer, "command" | "args">, entrypoint: readonly string[]): string[] {
  return [...(c.command ?? entrypoint), ...c.args];
}

/** The init containers the kubelet runs to completion before the main ones (not the sidecars: `restartPolicy: Always`). Pure. */
export function initSteps(template: PodTemplate): Container[] {
  return (template.spec.initContainers ?? []).filter((c) => c.restartPolicy !== "Always");
}

/** The argv that runs `argv` as the prepared container's user, groups and environment (inside the pod). Pure. */
export function asContainer(c: PreparedContainer, argv: readonly string[]): string[] {
  const groups = [c.gid, ...(c.fsGroup !== undefined && c.fsGroup !== c.gid ? [c.fsGroup] : [])];
  return ["env", "-i", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", ...Object.entries(c.env).map(([k, v]) => `${k}=${v}`),
    "setpriv", `--reuid=${c.uid}`, `--regid=${c.gid}`, `--groups=${groups.join(",")}`, "--", ...argv];
}
