/**
 * Where the CLI keeps what it can compute again (the IAM simulator's verdicts, compiled CRD
 * validators): under the repository's node_modules/.cache, beside other tools' caches, so it
 * is never committed and `npm ci` starts it afresh.
 */
import * as path from "path";

export function cacheDir(root: string, name: string): string {
  return path.join(root, "node_modules", ".cache", "clusterra", name);
}
