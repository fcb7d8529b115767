import * as pulumi from "@pulumi/pulumi";
import { CustomResource } from "@pulumi/kubernetes/apiextensions/customResource";
import { Release } from "@pulumi/kubernetes/helm/v3/release";
import { Provider } from "@pulumi/kubernetes/provider";
import { ARGOCD_CHART, ARGOCD_IN_CLUSTER, ENTRIES_PROJECT, PLATFORM_PROJECT } from "../../facts/versions";
import { platformName } from "../../facts/project";
import { CHARTS } from "../../facts/charts";
import { CENTRAL_ADD_ONS } from "../../facts/fleet";
import { syncRetry } from "../fleet/argo";
import { appProject, helmRepoUrl } from "../fleet/argo";
import { argocdValues } from "./argocd-values";

export interface ArgoCdArgs {
  /** Environment name: its pods' label (as the host's node label). */
  readonly environment: string;
  /** The central's scope (facts/project.ts centralScope): its Kubernetes provider's name. */
  readonly scope: string;
  /** Admin kubeconfig of the central K3s. */
  readonly kubeconfig: pulumi.Input<string>;
  /** Fleet repository (HTTPS). */
  readonly repoUrl: string;
  /** Branch, tag or commit ArgoCD follows. */
  readonly revision: string;
  /** Folder of fleet/ the root Application syncs. */
  readonly fleetPath: string;
}

/** Name of the root Application. */
export const ROOT_APPLICATION = "clusterra-root";

/** The root Application: app-of-apps over this environment's fleet folder. */
export function rootApplication(args: { repoUrl: string; revision: string; fleetPath: string }): Record<string, unknown> {
  return {
    apiVersion: "argoproj.io/v1alpha1",
    kind: "Application",
    metadata: { name: ROOT_APPLICATION, namespace: ARGOCD_CHART.namespace, finalizers: ["resources-finalizer.argocd.argoproj.io"] },
    spec: {
      project: PLATFORM_PROJECT,
      source: { repoURL: args.repoUrl, targetRevision: args.revision, path: args.fleetPath, directory: { recurse: false } },
      destination: { server: ARGOCD_IN_CLUSTER, namespace: ARGOCD_CHART.namespace },
      // The root creates the Applications that install the CRDs of its own tenant entries
      // (SecretStore, ExternalSecret): a dry run would refuse the whole sync before they
      // exist, so it is skipped for kinds the cluster does not serve yet, and retried.
      syncPolicy: {
        automated: { prune: true, selfHeal: true },
        syncOptions: ["ServerSideApply=true", "SkipDryRunOnMissingResource=true"],
        retry: syncRetry(),
      },
    },
  };
}

/** The platform project: the only one that may deploy into the ArgoCD namespace (it is the admin). */
export function platformProject(repoUrl: string): Record<string, unknown> {
  return appProject({
    name: PLATFORM_PROJECT,
    description: "Platform components of the central cluster (admin: owns the ArgoCD namespace)",
    // The fleet repository, and the chart repositories of central's add-ons.
    sourceRepos: [repoUrl, ...CENTRAL_ADD_ONS.map((a) => helmRepoUrl(CHARTS[a.chart].repo))],
    destinations: [{ server: ARGOCD_IN_CLUSTER, namespace: "*" }],
    clusterResources: [{ group: "*", kind: "*" }],
  }) as unknown as Record<string, unknown>;
}

/**
 * The project of the tenants' entries (ApplicationSet tenant-entries): a tenant's namespace,
 * its AppProjects, its store and cluster credential in ArgoCD's namespace, and no other kind,
 * so a change to the entry chart cannot do what the platform project can.
 */
export function entriesProject(repoUrl: string): Record<string, unknown> {
  return appProject({
    name: ENTRIES_PROJECT,
    description: "Each tenant's entry on central: its namespace, its two AppProjects, its cluster's credential; nothing else",
    sourceRepos: [repoUrl],
    destinations: [{ server: ARGOCD_IN_CLUSTER, namespace: ARGOCD_CHART.namespace }],
    clusterResources: [{ group: "", kind: "Namespace" }],
    namespaceResources: [
      { group: "argoproj.io", kind: "AppProject" },
      { group: "external-secrets.io", kind: "SecretStore" },
      { group: "external-secrets.io", kind: "ExternalSecret" },
    ],
  }) as unknown as Record<string, unknown>;
}

/**
 * ArgoCD on the central K3s, installed once by Pulumi with the pinned chart, plus the
 * root Application. Everything else on the cluster comes from fleet/ through that root.
 */
export class ArgoCd extends pulumi.ComponentResource {
  constructor(name: string, args: ArgoCdArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:central:ArgoCd", name, {}, opts);
    // The cluster outlives its host (same datastore on the same data volume): a replaced host
    // or a kubeconfig unknown during preview updates the provider, never replaces what it made.
    const k8s = new Provider(`${name}-k3s`, { kubeconfig: args.kubeconfig, enableServerSideApply: true, clusterIdentifier: platformName(args.scope, "central") }, { parent: this });
    const child = { parent: this, provider: k8s };
    const release = new Release(
      `${name}`,
      {
        name: ARGOCD_CHART.release,
        chart: ARGOCD_CHART.chart,
        version: ARGOCD_CHART.version,
        repositoryOpts: { repo: ARGOCD_CHART.repo },
        namespace: ARGOCD_CHART.namespace,
        createNamespace: true,
        atomic: true,
        timeout: 600,
        values: argocdValues(args.environment),
      },
      child,
    );
    const project = new CustomResource(`${name}-platform-project`, platformProject(args.repoUrl) as never, { ...child, dependsOn: [release] });
    const entries = new CustomResource(`${name}-entries-project`, entriesProject(args.repoUrl) as never, { ...child, dependsOn: [release] });
    new CustomResource(`${name}-root`, rootApplication(args) as never, { ...child, dependsOn: [release, project, entries] });
    this.registerOutputs({});
  }
}
