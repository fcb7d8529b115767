/**
 * What every fleet command shares: where the fleet's files are, where the upstream reference
 * is, and how a problem is reported. The check, the render and the validation build on it;
 * none of them on each other's internals.
 */
import * as fs from "fs";
import * as path from "path";
import { parseAllDocuments } from "yaml";
import { PROJECT_ROOT } from "../config";
import { clusterParams, expandApplicationSet, type ClusterParams } from "../components/fleet/application-set";
import { ARGOCD_CLUSTER_SECRET } from "../facts/versions";

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

/** One document of a fleet file; `generated` when an ApplicationSet in that file makes it. */
export interface FleetDocument {
  readonly file: string;
  readonly index: number;
  readonly object: Record<string, unknown>;
  /** The ApplicationSet that generates it, and its RollingSync step (0-based; -1: none). */
  readonly generated?: { readonly by: string; readonly step: number };
}

interface ClusterExternalSecret {
  kind?: string;
  spec?: { target?: { template?: { metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> }; data?: Record<string, string> } } };
}

/**
 * The ArgoCD cluster Secrets the fleet's ExternalSecrets write (their templates' labels,
 * annotations and name/server/project): what the cluster generator reads on central.
 */
export function fleetClusterSecrets(documents: readonly FleetDocument[]): ClusterParams[] {
  return documents
    .map((d) => d.object as ClusterExternalSecret)
    .filter((o) => o.kind === "ExternalSecret" && o.spec?.target?.template?.metadata?.labels?.[ARGOCD_CLUSTER_SECRET.label] === ARGOCD_CLUSTER_SECRET.value)
    .map((o) => {
      const t = o.spec?.target?.template ?? {};
      return clusterParams({ metadata: { labels: t.metadata?.labels, annotations: t.metadata?.annotations }, stringData: t.data ?? {} });
    });
}

/**
 * Every document of every fleet file ArgoCD syncs, then the Applications each ApplicationSet
 * generates from the fleet's cluster Secrets (filed under the ApplicationSet's file); a
 * template the expansion cannot render is a problem naming it.
 */
export function fleetDocuments(root: string, skip: (file: string) => boolean = () => false): { documents: FleetDocument[]; problems: FleetProblem[] } {
  const documents: FleetDocument[] = [];
  const problems: FleetProblem[] = [];
  for (const file of fleetFiles(root).filter((f) => !skip(f))) {
    parseAllDocuments(fs.readFileSync(path.join(root, file), "utf8")).forEach((d, index) => {
      const object = d.toJS() as unknown;
      if (object && typeof object === "object") documents.push({ file, index, object: object as Record<string, unknown> });
    });
  }
  const clusters = fleetClusterSecrets(documents);
  for (const d of documents.filter((x) => x.object.kind === "ApplicationSet")) {
    const name = String((d.object.metadata as { name?: string } | undefined)?.name);
    try {
      for (const g of expandApplicationSet(d.object, clusters)) documents.push({ file: d.file, index: d.index, object: g.application, generated: { by: name, step: g.step } });
    } catch (e) {
      // The expansion is pure: whatever stops it (a template, a patch that is not YAML, a missing field) is this document's problem.
      problems.push({ file: d.file, at: `document ${d.index} ApplicationSet/${name}`, reason: `ArgoCD could not generate its Applications: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}` });
    }
  }
  return { documents, problems };
}
