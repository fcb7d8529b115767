/**
 * The images the journey's pods run: root file systems `scripts/install-tools` makes with
 * debootstrap, found by their stamp files, or reported missing with how to make them. The
 * Slurm image holds Debian's Slurm 26.05 (the major version Slinky v1.2.1's images run) and
 * MariaDB; the ArgoCD image what ArgoCD's own image gives its binary, and Debian's Redis.
 */
import * as fs from "fs";
import * as path from "path";

/** Where install-tools makes its root file systems, under the project root (one folder per image). */
export const IMAGES_DIR = path.join(".tools", "rootfs");
/** Where install-tools makes the Slurm image. */
export const SLURM_IMAGE_DIR = path.join(IMAGES_DIR, "slurm");
/** install-tools' stamp: its pin on the first line, what it installed on the second. */
const STAMP = ".clusterra-stamp";

export interface SlurmImage {
  readonly dir: string;
  /** What install-tools installed, as it recorded it (`slurm 26.05.5-1, mariadb 1:11.8.9+ds-4`). */
  readonly versions: string;
}

/**
 * An image install-tools made (`.tools/rootfs/<name>`), found by its stamp, whose recorded
 * versions must match `expected` (described as `what`); or why there is none. Pure but for
 * reading the stamp.
 */
export function findImage(root: string, name: string, expected: RegExp, what: string): { image?: SlurmImage; missing?: string } {
  const dir = path.resolve(root, IMAGES_DIR, name);
  let stamp: string;
  try {
    stamp = fs.readFileSync(path.join(dir, STAMP), "utf8");
  } catch {
    return { missing: `the ${name} root file system ${dir} is not made: run \`sudo bash scripts/install-tools\` (debootstrap, about a minute)` };
  }
  const versions = stamp.split("\n")[1]?.trim() ?? "";
  if (!expected.test(versions)) return { missing: `${dir} holds ${versions || "unknown versions"}, not ${what}: run \`sudo bash scripts/install-tools\`` };
  return { image: { dir, versions } };
}

/** Slurm's own user in the Slurm image (install-tools makes it with Slinky's ids) and in Slinky's pods: SlurmUser. */
export const SLURM_USER = { name: "slurm", uid: 401, gid: 401 } as const;

/** The Slurm image (Slurm 26.05), or why there is none. */
export function findSlurmImage(root: string): { image?: SlurmImage; missing?: string } {
  return findImage(root, "slurm", /^slurm 26\.05\./, "Slurm 26.05");
}

/** The ArgoCD image (git and Debian's Redis for ArgoCD's binary), or why there is none. */
export function findArgoCdImage(root: string): { image?: SlurmImage; missing?: string } {
  return findImage(root, "argocd", /^git \S+, redis \S+$/, "git and Redis");
}
