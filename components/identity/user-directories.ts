/**
 * Each user's directory on the tenant's shared file system, made before their first job: a
 * Slurm Prolog, which slurmd runs as root on the job's node before the job (central's
 * release carries it; slurmd receive it with their configuration). Only root on a node can
 * make a directory for another uid, and the nodes mount EFS with root access for this
 * (components/tenant/shared-file-system.ts); a job never runs as root. Pure.
 */
import { SHARED_GROUP, sharedDirectory, TENANT_ID_FLOOR, userDirectory } from "../../config/users";

/** The Prolog's key in the central release's `prologScripts` (the chart names the file `prolog-<key>`). */
export const USER_DIRECTORIES_PROLOG = "user-directories";

/** The modes the Prolog gives: a user's directory is theirs alone; the shared one is the group's, new files keep the group. */
export const DIRECTORY_MODES = { user: "0700", users: "0755", shared: "2770" } as const;

/**
 * The Prolog. A directory is made once, under a temporary name and renamed into place, so two
 * nodes starting the same user's first jobs never leave it half made; an existing one is
 * never touched (its owner may have changed its mode). Jobs of ids outside the tenant's range
 * (root, system accounts) get nothing. Any failure fails the Prolog, which drains the node
 * rather than running a job that cannot write its output.
 */
export function userDirectoriesProlog(efsMount: string): string {
  const users = userDirectory(efsMount, { name: "" }).replace(/\/$/, "");
  const shared = sharedDirectory(efsMount);
  return `#!/bin/sh
set -eu
[ "$SLURM_JOB_UID" -ge ${TENANT_ID_FLOOR} ] || exit 0
make() { # make <path> <owner:group> <mode>
  [ -d "$1" ] && return 0
  tmp=$(mktemp -d "$(dirname "$1")/.new-XXXXXX")
  chown "$2" "$tmp"
  chmod "$3" "$tmp"
  mv -T "$tmp" "$1" 2>/dev/null || rmdir "$tmp"
  [ -d "$1" ]
}
make ${users} 0:0 ${DIRECTORY_MODES.users}
make ${shared} 0:${SHARED_GROUP.gid} ${DIRECTORY_MODES.shared}
make "${users}/$SLURM_JOB_USER" "$SLURM_JOB_UID:$SLURM_JOB_GID" ${DIRECTORY_MODES.user}
`;
}
