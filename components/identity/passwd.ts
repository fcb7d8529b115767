/**
 * A tenant's users on every Slurm pod: their passwd and group lines in a ConfigMap, and an
 * init container (the pod's own image) that adds them to the image's /etc/passwd and
 * /etc/group, which the Slurm container then mounts over its own. Chosen over sssd: Slinky's
 * sssd reads the container's /etc files through the proxy provider, so the merged files
 * serve sssd (login) and plain NSS (slurmctld resolving a submitter, slurmd and its job)
 * alike, and the image's own accounts (root, slurm, sshd) stay exactly as the image has them.
 * Pure.
 */
import { createHash } from "crypto";
import type { IConfigMap as ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { groupLines, passwdLines, type TenantUser } from "../../config/users";
import { USER_IDENTITY } from "../../facts/fleet";
import { HARDENED_READ_ONLY_CONTAINER, INIT_CONTAINER_RESOURCES } from "../../facts/control-plane";
import { ANNOTATION_KEYS } from "../../facts/project";

/**
 * The init container's script: for each file, the image's lines except any that has one of
 * the users' names or ids, then the users' lines, written beside and renamed into place.
 * Arguments: the ConfigMap's directory, the output directory. (`FILENAME == ARGV[1]`, not
 * `NR == FNR`: an empty users file must not swallow the image's.)
 */
const MERGE_SCRIPT = `set -eu
src=$1 out=$2
for f in ${USER_IDENTITY.files.join(" ")}; do
  awk -F: 'FILENAME == ARGV[1] { name[$1] = 1; id[$3] = 1; next } !($1 in name) && !($3 in id)' "$src/$f" "/etc/$f" > "$out/$f.new"
  cat "$src/$f" >> "$out/$f.new"
  chmod 0644 "$out/$f.new"
  mv "$out/$f.new" "$out/$f"
done
`;

/** The ConfigMap's key that holds MERGE_SCRIPT: one copy per namespace, not one per pod template. */
export const MERGE_SCRIPT_KEY = "merge.sh";

/** The ConfigMap of a tenant's users and the script that merges them, in the namespace of the pods that read it. */
export function usersConfigMap(namespace: string, users: readonly TenantUser[], efsMount: string): ConfigMap {
  const file = (lines: readonly string[]) => lines.map((l) => `${l}\n`).join("");
  return {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: USER_IDENTITY.configMap, namespace },
    data: { passwd: file(passwdLines(users, efsMount)), group: file(groupLines(users)), [MERGE_SCRIPT_KEY]: MERGE_SCRIPT },
  };
}

/** The users' passwd and group files, as the tenant's users file gives them to the charts that make the ConfigMaps. */
export function usersFiles(users: readonly TenantUser[], efsMount: string): { passwd: string; group: string } {
  const data = usersConfigMap("", users, efsMount).data ?? {};
  return { passwd: data.passwd ?? "", group: data.group ?? "" };
}

/** A digest of the ConfigMap's data: pods that carry it in an annotation restart when the users change. */
export function usersDigest(map: ConfigMap): string {
  return createHash("sha256").update(JSON.stringify(map.data ?? {})).digest("hex").slice(0, 16);
}

const VOLUMES = { source: "clusterra-users", merged: "clusterra-identity" } as const;

/**
 * What a Slinky pod needs to see the users, as the chart's values spell it: the init
 * container (the main container's image), its two volumes, the main container's mounts of
 * the merged files over /etc's, and the annotation that rolls the pod when they change.
 */
export function identityPodParts(image: { readonly repository: string; readonly tag: string }, digest: string): {
  initContainer: Record<string, unknown>;
  volumes: Record<string, unknown>[];
  volumeMounts: Record<string, unknown>[];
  annotations: Record<string, string>;
} {
  return {
    initContainer: {
      name: "users",
      image: `${image.repository}:${image.tag}`,
      command: ["/bin/sh", `${USER_IDENTITY.source}/${MERGE_SCRIPT_KEY}`, USER_IDENTITY.source, USER_IDENTITY.merged],
      volumeMounts: [{ name: VOLUMES.source, mountPath: USER_IDENTITY.source, readOnly: true }, { name: VOLUMES.merged, mountPath: USER_IDENTITY.merged }],
      resources: INIT_CONTAINER_RESOURCES,
      // It reads a ConfigMap and writes an emptyDir: nothing else, no privilege.
      securityContext: HARDENED_READ_ONLY_CONTAINER,
    },
    volumes: [
      { name: VOLUMES.source, configMap: { name: USER_IDENTITY.configMap } },
      { name: VOLUMES.merged, emptyDir: { medium: "Memory", sizeLimit: "1Mi" } },
    ],
    volumeMounts: USER_IDENTITY.files.map((f) => ({ name: VOLUMES.merged, mountPath: `/etc/${f}`, subPath: f, readOnly: true })),
    annotations: { [ANNOTATION_KEYS.users]: digest },
  };
}
