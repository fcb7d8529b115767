/**
 * ArgoCD objects of the fleet as typed, validated models (@kubernetes-models/argo-cd).
 * Every Helm Application is multi-source: the fleet repository as `ref: values`, then the
 * chart (pinned in facts/charts.ts, or a local chart) reading `$values/<path>`, so
 * `helm template` can render each one from the repository alone.
 */
// Types only: the models are ES modules, loaded (and validated) by `clusterra fleet check`.
import type { IApplication as Application } from "@kubernetes-models/argo-cd/argoproj.io/v1alpha1/Application";
import type { IAppProject as AppProject } from "@kubernetes-models/argo-cd/argoproj.io/v1alpha1/AppProject";
import { CHARTS, type ChartKey } from "../../facts/charts";
import { SYNC_RETRY, SYNC_WAVES } from "../../facts/fleet";
import { ARGOCD_CHART } from "../../facts/versions";

/** The fleet repository as ArgoCD follows it. */
export interface FleetRepo {
  readonly repoUrl: string;
  readonly revision: string;
}

/** Where an Application deploys: a cluster (by API URL) and a namespace. */
export interface Destination {
  readonly server: string;
  readonly namespace: string;
}

/** What an Application installs. */
export type AppSource =
  | { readonly kind: "chart"; readonly chart: ChartKey; readonly valuesPath: string }
  | { readonly kind: "local-chart"; readonly path: string; readonly valuesPath: string }
  | { readonly kind: "directory"; readonly path: string };

export interface AppArgs {
  readonly name: string;
  readonly project: string;
  readonly repo: FleetRepo;
  readonly source: AppSource;
  readonly destination: Destination;
  readonly wave: keyof typeof SYNC_WAVES;
  /** Release name when it differs from the Application's. */
  readonly releaseName?: string;
  /** Labels for a namespace the Application creates (NetworkPolicies select on them). */
  readonly namespaceLabels?: Readonly<Record<string, string>>;
  /** Fields ArgoCD must not compare (a value the cluster sets, never git). */
  readonly ignoreDifferences?: readonly { group: string; kind: string; name?: string; jsonPointers?: string[]; jqPathExpressions?: string[] }[];
}

/** An OCI chart repository as ArgoCD's Helm source names it (no scheme); others as they are. */
export function helmRepoUrl(repo: string): string {
  return repo.startsWith("oci://") ? repo.slice("oci://".length) : repo;
}

function sources(a: AppArgs) {
  const values = { repoURL: a.repo.repoUrl, targetRevision: a.repo.revision, ref: "values" };
  const helm = (valuesPath: string) => ({ releaseName: a.releaseName ?? a.name, valueFiles: [`$values/${valuesPath}`] });
  switch (a.source.kind) {
    case "chart": {
      const pin = CHARTS[a.source.chart];
      return [values, { repoURL: helmRepoUrl(pin.repo), chart: pin.chart, targetRevision: pin.version, helm: helm(a.source.valuesPath) }];
    }
    case "local-chart":
      return [values, { repoURL: a.repo.repoUrl, targetRevision: a.repo.revision, path: a.source.path, helm: helm(a.source.valuesPath) }];
    case "directory":
      return [{ repoURL: a.repo.repoUrl, targetRevision: a.repo.revision, path: a.source.path, directory: { recurse: false } }];
  }
}

/** An Application in ArgoCD's namespace, synced automatically, pruning what git drops. */
export function application(a: AppArgs): Application {
  return {
    apiVersion: "argoproj.io/v1alpha1",
    kind: "Application",
    metadata: {
      name: a.name,
      namespace: ARGOCD_CHART.namespace,
      annotations: { "argocd.argoproj.io/sync-wave": SYNC_WAVES[a.wave] },
      finalizers: ["resources-finalizer.argocd.argoproj.io"],
    },
    spec: {
      project: a.project,
      sources: sources(a),
      destination: { server: a.destination.server, namespace: a.destination.namespace },
      syncPolicy: {
        automated: { prune: true, selfHeal: true },
        // With ignoreDifferences, a sync also leaves those fields as the cluster has them.
        syncOptions: ["CreateNamespace=true", "ServerSideApply=true", ...(a.ignoreDifferences ? ["RespectIgnoreDifferences=true"] : [])],
        retry: syncRetry(),
        ...(a.namespaceLabels ? { managedNamespaceMetadata: { labels: { ...a.namespaceLabels } } } : {}),
      },
      ...(a.ignoreDifferences ? { ignoreDifferences: a.ignoreDifferences.map((d) => ({ ...d, ...(d.jsonPointers ? { jsonPointers: [...d.jsonPointers] } : {}), ...(d.jqPathExpressions ? { jqPathExpressions: [...d.jqPathExpressions] } : {}) })) } : {}),
    },
  };
}

export interface ProjectArgs {
  readonly name: string;
  readonly description: string;
  /** The fleet repository and the chart repositories the project's Applications use. */
  readonly sourceRepos: readonly string[];
  readonly destinations: readonly Destination[];
  /** Cluster-scoped kinds the project may create (everything else is refused). */
  readonly clusterResources: readonly { group: string; kind: string }[];
  /** Namespaced kinds it may create, when not every one. */
  readonly namespaceResources?: readonly { group: string; kind: string }[];
}

/** An AppProject: only these sources, destinations and kinds. */
export function appProject(p: ProjectArgs): AppProject {
  return {
    apiVersion: "argoproj.io/v1alpha1",
    kind: "AppProject",
    metadata: { name: p.name, namespace: ARGOCD_CHART.namespace },
    spec: {
      description: p.description,
      sourceRepos: [...new Set(p.sourceRepos)].sort(),
      destinations: p.destinations.map((d) => ({ server: d.server, namespace: d.namespace })),
      clusterResourceWhitelist: p.clusterResources.map((r) => ({ group: r.group, kind: r.kind })),
      ...(p.namespaceResources ? { namespaceResourceWhitelist: p.namespaceResources.map((r) => ({ group: r.group, kind: r.kind })) } : {}),
    },
  };
}

/** syncPolicy.retry of every Application the fleet writes (facts/fleet.ts SYNC_RETRY), as a fresh object. */
export function syncRetry(): { limit: number; backoff: { duration: string; factor: number; maxDuration: string }; refresh: boolean } {
  return { limit: SYNC_RETRY.limit, backoff: { ...SYNC_RETRY.backoff }, refresh: SYNC_RETRY.refresh };
}
