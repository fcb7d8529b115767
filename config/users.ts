/**
 * A tenant's Linux users, as its identity source gives them (the users table, or the
 * customer's directory): the same name, uid and gid on the login and every slurmd, so a job
 * runs as its submitter and its files belong to them on the shared file system. Pure checks
 * here; the config module reports them with the file and key.
 */
import { KUBERNETES_LIMITS } from "../facts/aws-limits";
import { isImageAccountName, RESERVED_NAME_PREFIXES } from "../facts/image-accounts";

export interface TenantUser {
  readonly name: string;
  readonly uid: number;
  /** The user's own group (gid = uid unless set otherwise). */
  readonly gid: number;
}

/**
 * The tenant's shared group: every user is a member, and it owns the shared directory on the
 * shared file system. Its gid is the first above the images' system accounts (below 1000)
 * and the distributions' first interactive users (1000-9999).
 */
export const SHARED_GROUP = { name: "clusterra", gid: 10000 } as const;

/** The lowest uid and gid a tenant user may have: above the shared group, so no user is ever one of the image's accounts on any node. */
export const TENANT_ID_FLOOR = SHARED_GROUP.gid + 1;

/** The largest id: below nobody/nogroup (65534) and the 16-bit boundary some tools keep. */
export const TENANT_ID_CEILING = 65533;

/** useradd's default NAME_REGEX, at most 32 characters (utmp). */
const LINUX_NAME = /^[a-z_][a-z0-9_-]{0,31}$/;

/**
 * Every problem of a list of users, each with the index, the field, the value and what is
 * valid; `at` maps a position in `users` to the index people know it by (its file's).
 */
export function userProblems(users: readonly TenantUser[], at: (i: number) => number = (i) => i): { index: number; field: keyof TenantUser; value: unknown; problem: string; valid: string }[] {
  const out: ReturnType<typeof userProblems> = [];
  const names = new Map<string, number>();
  const uids = new Map<number, number>();
  const range = `an integer from ${TENANT_ID_FLOOR} to ${TENANT_ID_CEILING}`;
  users.forEach((u, position) => {
    const i = at(position);
    if (u.name === SHARED_GROUP.name) out.push({ index: i, field: "name", value: u.name, problem: "is the tenant's shared group", valid: `any other Linux name than ${SHARED_GROUP.name}` });
    else if (isImageAccountName(u.name)) out.push({ index: i, field: "name", value: u.name, problem: "is an account or group of the platform's images (it would replace the image's own entry on every pod)", valid: `a name that is not ${RESERVED_NAME_PREFIXES.map((p) => `${p}...`).join(" or ")} nor one of facts/image-accounts.ts (root, slurm, sshd, mysql, ...)` });
    else if (!LINUX_NAME.test(u.name)) out.push({ index: i, field: "name", value: u.name, problem: "not a valid Linux user name", valid: "lowercase letters, digits, _ and -, starting with a letter or _, at most 32 characters" });
    else if (names.has(u.name)) out.push({ index: i, field: "name", value: u.name, problem: `duplicates users[${names.get(u.name)}].name`, valid: "a name no other user of this tenant has" });
    else names.set(u.name, i);
    for (const field of ["uid", "gid"] as const) {
      const v = u[field];
      if (!Number.isInteger(v) || v < TENANT_ID_FLOOR || v > TENANT_ID_CEILING) out.push({ index: i, field, value: v, problem: v === SHARED_GROUP.gid ? "is the tenant's shared group" : v < TENANT_ID_FLOOR ? "collides with the images' system and default user ids" : "out of range", valid: range });
    }
    if (uids.has(u.uid)) out.push({ index: i, field: "uid", value: u.uid, problem: `duplicates users[${uids.get(u.uid)}].uid`, valid: "a uid no other user of this tenant has" });
    else uids.set(u.uid, i);
  });
  return out;
}

/** Where each user's own directory is on the tenant's shared file system (their home). */
export function userDirectory(efsMount: string, user: Pick<TenantUser, "name">): string {
  return `${efsMount}/users/${user.name}`;
}

/** The tenant's shared directory, owned by the shared group. */
export function sharedDirectory(efsMount: string): string {
  return `${efsMount}/shared`;
}

/**
 * A passwd entry's password field for users with no password: `*` matches no password, and
 * says there is no shadow entry to look up. `x` would send PAM to /etc/shadow, which holds none
 * of them: pam_unix's account check then fails, and the login's sshd (Slinky's sshd_config sets
 * UsePAM yes) refuses every user ("Access denied by PAM account configuration").
 */
export const NO_PASSWORD = "*";

/** passwd lines: no password (the console authenticates), home on the shared file system. */
export function passwdLines(users: readonly TenantUser[], efsMount: string): string[] {
  return users.map((u) => `${u.name}:${NO_PASSWORD}:${u.uid}:${u.gid}::${userDirectory(efsMount, u)}:/bin/sh`);
}

/** One group per user (their gid), named after them, and the shared group with every user in it. */
export function groupLines(users: readonly TenantUser[]): string[] {
  return [...users.map((u) => `${u.name}:x:${u.gid}:`), `${SHARED_GROUP.name}:x:${SHARED_GROUP.gid}:${users.map((u) => u.name).join(",")}`];
}

/**
 * What the users' ConfigMap holds besides their passwd and group files: the merge script and
 * the keys' names (test/identity.test.ts holds them under it).
 */
export const IDENTITY_CONFIGMAP_RESERVE = 16 * 1024;

/** The most bytes of passwd and group a tenant's users may take: the ConfigMap's limit less the reserve. */
export const IDENTITY_FILES_MAX = KUBERNETES_LIMITS.configMapData.max - IDENTITY_CONFIGMAP_RESERVE;

/** The bytes of the users' passwd and group files (UTF-8), as the ConfigMap carries them. */
export function identityFileBytes(users: readonly TenantUser[], efsMount: string): number {
  const bytes = (lines: readonly string[]) => lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
  return bytes(passwdLines(users, efsMount)) + bytes(groupLines(users));
}
