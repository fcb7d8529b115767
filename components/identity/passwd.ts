/**
 * A tenant's users as passwd and group files: what the login and every slurmd pod read
 * (Slinky's login runs sssd with the files provider; slurmd and slurmstepd use NSS files),
 * so a uid has the same name, group and home on every node. Appended to the image's own
 * system accounts, which tenant ids never meet (config/users.ts). Pure.
 */
import type { TenantUser } from "../../config/users";

/** Where each user's own directory is on the tenant's shared file system. */
export function userDirectory(efsMount: string, user: Pick<TenantUser, "name">): string {
  return `${efsMount}/users/${user.name}`;
}

/** passwd lines: no password (the console authenticates), home on the shared file system. */
export function passwdLines(users: readonly TenantUser[], efsMount: string): string[] {
  return users.map((u) => `${u.name}:x:${u.uid}:${u.gid}::${userDirectory(efsMount, u)}:/bin/sh`);
}

/** One group per user, named after them (their gid). */
export function groupLines(users: readonly TenantUser[]): string[] {
  return users.map((u) => `${u.name}:x:${u.gid}:`);
}

/** An image's file with the users' lines added: any existing line for one of their names or ids is dropped. */
export function withUsers(base: string, lines: readonly string[]): string {
  const taken = new Set(lines.flatMap((l) => { const [name, , id] = l.split(":"); return [`n:${name}`, `i:${id}`]; }));
  const kept = base.split("\n").filter((l) => l.trim() !== "" && !taken.has(`n:${l.split(":")[0]}`) && !taken.has(`i:${l.split(":")[2]}`));
  return [...kept, ...lines, ""].join("\n");
}
