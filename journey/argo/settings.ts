/**
 * ArgoCD's settings as the installed chart gives them (its values.yaml defaults under the
 * release's values), read the way the application controller reads argocd-cm: resource
 * exclusions, respectRBAC, and whether an Application's health is assessed (which makes an
 * app-of-apps wait for a child before its next wave). Pure functions.
 */
import { parse } from "yaml";
import { APPLICATION_HEALTH_KEY } from "../../components/central/argocd-values";

export interface ResourceFilter {
  readonly apiGroups: readonly string[];
  readonly kinds: readonly string[];
  readonly clusters?: readonly string[];
}

export interface ArgoSettings {
  readonly exclusions: readonly ResourceFilter[];
  readonly inclusions: readonly ResourceFilter[];
  /** resource.respectRBAC: "" (off), "normal" or "strict". */
  readonly respectRBAC: string;
  /** A health check for argoproj.io/Application is configured (app-of-apps waves wait). */
  readonly applicationHealth: boolean;
  /** applicationsetcontroller.enable.progressive.syncs. */
  readonly progressiveSyncs: boolean;
}

type Values = Record<string, unknown>;

function get(v: unknown, ...keys: string[]): unknown {
  return keys.reduce<unknown>((o, k) => (o && typeof o === "object" ? (o as Values)[k] : undefined), v);
}

/** The chart's argocd-cm: the release's configs.cm keys over the chart's defaults. */
export function argoCm(chartValues: Values, releaseValues: Values): Record<string, string> {
  const merged = { ...((get(chartValues, "configs", "cm") as Values | undefined) ?? {}), ...((get(releaseValues, "configs", "cm") as Values | undefined) ?? {}) };
  return Object.fromEntries(Object.entries(merged).filter(([, v]) => v !== null && v !== undefined).map(([k, v]) => [k, String(v)]));
}

export function argoSettings(chartValues: Values, releaseValues: Values): ArgoSettings {
  const cm = argoCm(chartValues, releaseValues);
  const params = { ...((get(chartValues, "configs", "params") as Values | undefined) ?? {}), ...((get(releaseValues, "configs", "params") as Values | undefined) ?? {}) };
  const filters = (key: string) => ((cm[key] ? parse(cm[key]) : []) as ResourceFilter[] | null) ?? [];
  return {
    exclusions: filters("resource.exclusions"),
    inclusions: filters("resource.inclusions"),
    respectRBAC: cm["resource.respectRBAC"] ?? "",
    applicationHealth: Object.keys(cm).some((k) => k === APPLICATION_HEALTH_KEY) || /argoproj\.io\/Application:\s*\n\s+health\.lua/.test(cm["resource.customizations"] ?? ""),
    progressiveSyncs: String(params["applicationsetcontroller.enable.progressive.syncs"]) === "true",
  };
}

/** ArgoCD's glob for exclusion lists: `*` matches anything, otherwise exact. */
function matches(patterns: readonly string[], value: string): boolean {
  return patterns.some((p) => p === "*" || p === value || (p.includes("*") && new RegExp(`^${p.split("*").map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`).test(value)));
}

/** Whether ArgoCD leaves a kind out of every sync on a cluster (with a warning only). */
export function isExcluded(s: ArgoSettings, group: string, kind: string, cluster: string): boolean {
  const hit = (f: ResourceFilter) => matches(f.apiGroups, group) && matches(f.kinds, kind) && (!f.clusters?.length || matches(f.clusters, cluster));
  if (s.exclusions.some(hit)) return true;
  return s.inclusions.length > 0 && !s.inclusions.some(hit);
}
