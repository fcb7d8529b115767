/**
 * Helm charts the fleet installs, pinned: the one table every Application, values file and
 * check derives its chart, repository and version from. The upstream sources of each are in
 * ../shared/reference/charts/<chart>-<version>.
 */
export interface ChartPin {
  /** Chart name in its repository. */
  readonly chart: string;
  /** Helm repository URL, or an OCI registry path (oci://...). */
  readonly repo: string;
  readonly version: string;
}

export const CHARTS = {
  cilium: { chart: "cilium", repo: "https://helm.cilium.io", version: "1.19.6" },
  karpenter: { chart: "karpenter", repo: "oci://public.ecr.aws/karpenter", version: "1.14.1" },
  karpenterCrd: { chart: "karpenter-crd", repo: "oci://public.ecr.aws/karpenter", version: "1.14.1" },
  slurmOperatorCrds: { chart: "slurm-operator-crds", repo: "oci://ghcr.io/slinkyproject/charts", version: "1.2.1" },
  slurmOperator: { chart: "slurm-operator", repo: "oci://ghcr.io/slinkyproject/charts", version: "1.2.1" },
  slurm: { chart: "slurm", repo: "oci://ghcr.io/slinkyproject/charts", version: "1.2.1" },
  externalSecrets: { chart: "external-secrets", repo: "https://charts.external-secrets.io", version: "2.9.0" },
  certManager: { chart: "cert-manager", repo: "https://charts.jetstack.io", version: "v1.19.6" },
  mariadbOperatorCrds: { chart: "mariadb-operator-crds", repo: "https://helm.mariadb.com/mariadb-operator", version: "26.6.0" },
  mariadbOperator: { chart: "mariadb-operator", repo: "https://helm.mariadb.com/mariadb-operator", version: "26.6.0" },
} as const satisfies Record<string, ChartPin>;

export type ChartKey = keyof typeof CHARTS;
