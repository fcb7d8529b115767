/**
 * The built tools the journey needs (pinned and built by scripts/install-tools into
 * .tools/bin), found or reported missing with how to get them.
 */
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as path from "path";

export const BINARIES = ["kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "kine", "kwok", "helm", "slurm-operator", "mariadb-operator", "argocd", "registry", "coredns", "karpenter"] as const;
type Binary = (typeof BINARIES)[number];

export type Tools = Record<Binary, string> & {
  /** kwok's stage files (node and pod lifecycles), from the module it was built from. */
  readonly kwokStages: readonly string[];
  /** Slinky's slurm-operator's module version, as `go version -m` reads it off the binary. */
  readonly slurmOperatorVersion: string;
  /** ArgoCD's module version, read the same way. */
  readonly argocdVersion: string;
  /** mariadb-operator's module version, read the same way. */
  readonly mariadbOperatorVersion: string;
  /** Karpenter's module version (sigs.k8s.io/karpenter, which tools/karpenter builds on), read the same way. */
  readonly karpenterVersion: string;
  /** The kwok provider's KWOKNodeClass CRD, from the module Karpenter was built from. */
  readonly karpenterKwokCrd: string;
};

/** kwok's stages the journey uses: nodes ready, pods running and completing, deletes. */
const KWOK_STAGES = ["node/fast/node-initialize.yaml", "node/heartbeat-with-lease/node-heartbeat-with-lease.yaml", "pod/fast/pod-ready.yaml", "pod/fast/pod-complete.yaml", "pod/fast/pod-delete.yaml"];

/** The tools, or the names of those missing. */
export function findTools(root: string): { tools?: Tools; missing: string[] } {
  const bin = path.join(root, ".tools", "bin");
  const missing = BINARIES.filter((b) => !fs.existsSync(path.join(bin, b)));
  if (missing.length) return { missing: [...missing] };
  const found = Object.fromEntries(BINARIES.map((b) => [b, path.join(bin, b)])) as Record<Binary, string>;
  let stageDir: string | undefined;
  let slurmOperatorVersion = "unknown";
  let argocdVersion = "unknown";
  let mariadbOperatorVersion = "unknown";
  let karpenterVersion = "unknown";
  let karpenterKwokCrd = "";
  try {
    slurmOperatorVersion = /\bmod\s+github\.com\/SlinkyProject\/slurm-operator\s+(\S+)/.exec(execFileSync("go", ["version", "-m", found["slurm-operator"]], { encoding: "utf8" }))?.[1] ?? slurmOperatorVersion;
    mariadbOperatorVersion = /\bmod\s+github\.com\/mariadb-operator\/mariadb-operator\/v26\s+(\S+)/.exec(execFileSync("go", ["version", "-m", found["mariadb-operator"]], { encoding: "utf8" }))?.[1] ?? mariadbOperatorVersion;
    argocdVersion = /\b(?:mod|dep)\s+github\.com\/argoproj\/argo-cd\/v3\s+(\S+)/.exec(execFileSync("go", ["version", "-m", found.argocd], { encoding: "utf8" }))?.[1] ?? argocdVersion;
    const version = /\bmod\s+sigs\.k8s\.io\/kwok\s+(\S+)/.exec(execFileSync("go", ["version", "-m", found.kwok], { encoding: "utf8" }))?.[1];
    const modCache = execFileSync("go", ["env", "GOMODCACHE"], { encoding: "utf8" }).trim();
    karpenterVersion = /\bdep\s+sigs\.k8s\.io\/karpenter\s+(\S+)/.exec(execFileSync("go", ["version", "-m", found.karpenter], { encoding: "utf8" }))?.[1] ?? karpenterVersion;
    karpenterKwokCrd = path.join(modCache, "sigs.k8s.io", `karpenter@${karpenterVersion}`, "kwok", "apis", "crds", "karpenter.kwok.sh_kwoknodeclasses.yaml");
    if (version) stageDir = path.join(modCache, "sigs.k8s.io", `kwok@${version}`, "kustomize", "stage");
  } catch {
    /* reported below */
  }
  const stages = stageDir ? KWOK_STAGES.map((s) => path.join(stageDir as string, s)).filter((s) => fs.existsSync(s)) : [];
  if (stages.length !== KWOK_STAGES.length) return { missing: [`kwok's stage files (${KWOK_STAGES.join(", ")}) under its module in the Go module cache`] };
  if (!fs.existsSync(karpenterKwokCrd)) return { missing: [`the KWOKNodeClass CRD of sigs.k8s.io/karpenter ${karpenterVersion} in the Go module cache`] };
  return { tools: { ...found, kwokStages: stages, slurmOperatorVersion, argocdVersion, mariadbOperatorVersion, karpenterVersion, karpenterKwokCrd }, missing: [] };
}
