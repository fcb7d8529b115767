/**
 * The image the Slurm part's pods run: the root file system `scripts/install-tools` makes
 * with debootstrap (Debian's Slurm 26.05, the major version Slinky v1.2.1's images run, and
 * MariaDB), found by its stamp file, or reported missing with how to make it.
 */
import * as fs from "fs";
import * as path from "path";

/** Where install-tools makes it, under the project root. */
export const SLURM_IMAGE_DIR = path.join(".tools", "rootfs", "slurm");
/** install-tools' stamp: its pin on the first line, what it installed on the second. */
const STAMP = ".clusterra-stamp";

export interface SlurmImage {
  readonly dir: string;
  /** What install-tools installed, as it recorded it (`slurm 26.05.5-1, mariadb 1:11.8.9+ds-4`). */
  readonly versions: string;
}

/** The image, or why there is none. Pure but for reading the stamp. */
export function findSlurmImage(root: string): { image?: SlurmImage; missing?: string } {
  const dir = path.resolve(root, SLURM_IMAGE_DIR);
  let stamp: string;
  try {
    stamp = fs.readFileSync(path.join(dir, STAMP), "utf8");
  } catch {
    return { missing: `the Slurm root file system ${dir} is not made: run \`sudo bash scripts/install-tools\` (debootstrap, about a minute)` };
  }
  const versions = stamp.split("\n")[1]?.trim() ?? "";
  if (!/^slurm 26\.05\./.test(versions)) return { missing: `${dir} holds ${versions || "an unknown Slurm"}, not Slurm 26.05: run \`sudo bash scripts/install-tools\`` };
  return { image: { dir, versions } };
}
