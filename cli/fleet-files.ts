/**
 * What every fleet command shares: where the fleet's files are, where the upstream reference
 * is, and how a problem is reported. The check, the render and the validation build on it;
 * none of them on each other's internals.
 */
import * as fs from "fs";
import * as path from "path";
import { PROJECT_ROOT } from "../config";

export interface FleetProblem {
  readonly file: string;
  /** Where in the file: document index and field path. */
  readonly at: string;
  readonly reason: string;
}

/** The upstream reference folder (../shared/reference beside the project, or $CLUSTERRA_REFERENCE). */
export function referenceDir(root = PROJECT_ROOT): string | undefined {
  const candidates = [process.env.CLUSTERRA_REFERENCE, path.join(root, "..", "shared", "reference"), path.join(root, "..", "..", "shared", "reference")];
  return candidates.find((c): c is string => !!c && fs.existsSync(path.join(c, "README.md")));
}

function walk(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

/**
 * Folders under fleet/ that ArgoCD never syncs: the local charts' sources, and the
 * connector's ParallelCluster patches (applied by the operator with `pcluster`).
 */
const NOT_KUBERNETES = ["fleet/charts/", "fleet/connector/"];

/** Generated fleet files ArgoCD syncs. */
export function fleetFiles(root: string): string[] {
  return walk(path.join(root, "fleet"))
    .map((f) => path.relative(root, f).split(path.sep).join("/"))
    .filter((f) => !NOT_KUBERNETES.some((dir) => f.startsWith(dir)) && f.endsWith(".yaml"))
    .sort();
}
