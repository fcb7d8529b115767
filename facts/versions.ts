/** Pinned upstream versions. The reference/ folder beside the project holds their values and CRDs. */
/** ArgoCD's name for the cluster it runs in. */
export const ARGOCD_IN_CLUSTER = "https://kubernetes.default.svc";

/** The label that makes a Secret in ArgoCD's namespace one of its clusters (what the cluster generator reads). */
export const ARGOCD_CLUSTER_SECRET = { label: "argocd.argoproj.io/secret-type", value: "cluster" } as const;

/** The same, as a kubectl label selector. */
export const ARGOCD_CLUSTER_SELECTOR = `${ARGOCD_CLUSTER_SECRET.label}=${ARGOCD_CLUSTER_SECRET.value}`;

/** The AppProject of the central cluster's platform components (the admin project). */
export const PLATFORM_PROJECT = "platform";
/**
 * The project of the tenants' entries on central: their namespaces, AppProjects and cluster
 * credentials, and nothing else. Not `tenant-...`: no tenant's id can name it.
 */
export const ENTRIES_PROJECT = "entries";

export const ARGOCD_CHART = {
  chart: "argo-cd",
  version: "10.1.1",
  repo: "https://argoproj.github.io/argo-helm",
  namespace: "argocd",
  /** The release the central stack installs (its pods' `app.kubernetes.io/instance`). */
  release: "argocd",
  /** The chart's name for its components (its default nameOverride): pods are `app.kubernetes.io/name: <name>-<component>`. */
  name: "argocd",
} as const;

/** K3s's install script, fetched at the pinned release's tag (it verifies the binary's checksum). */
export function k3sInstallScriptUrl(k3sVersion: string): string {
  return `https://raw.githubusercontent.com/k3s-io/k3s/${encodeURIComponent(k3sVersion)}/install.sh`;
}

/** Amazon Linux 2023 images, resolved through AWS's public SSM parameters. */
export function al2023AmiParameter(arch: "arm64" | "x86_64"): string {
  return `/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-${arch}`;
}

/**
 * kube-apiserver arguments for mutating admission policies, on central's host and every
 * tenant's server: beta and off by default in Kubernetes 1.35 (on by default from 1.36).
 * Evaluated in process, they mutate without a webhook to call.
 */
export const MUTATING_ADMISSION_POLICY_ARGS = ["feature-gates=MutatingAdmissionPolicy=true", "runtime-config=admissionregistration.k8s.io/v1beta1=true"] as const;
