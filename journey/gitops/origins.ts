/**
 * Where the fleet's sources live, as ArgoCD dials them: the fleet's git repository and each
 * pinned chart's Helm repository or OCI registry (facts/charts.ts). The journey serves each
 * host inside its sealed namespace under the same name (servers.ts); nothing here touches a
 * network. Pure.
 */
import type { ChartPin } from "../../facts/charts";

export interface GitOrigin {
  readonly host: string;
  /** The repository's path on the host (`/clusterra/infra.git`). */
  readonly path: string;
}

export interface ChartOrigin {
  readonly host: string;
  /** The repository's path on the host: a Helm repository's folder, or an OCI namespace (`slinkyproject/charts`). */
  readonly path: string;
  readonly charts: readonly ChartPin[];
}

export interface Origins {
  readonly git: GitOrigin;
  readonly helm: readonly ChartOrigin[];
  readonly oci: readonly ChartOrigin[];
}

/** The fleet's repository URL (`https://host/path`) as host and path; an error names what is wrong. */
export function gitOrigin(repoUrl: string): GitOrigin {
  const m = /^https:\/\/([a-z0-9.-]+)(\/[^?#]+)$/i.exec(repoUrl);
  if (!m) throw new Error(`fleet repoUrl ${JSON.stringify(repoUrl)}: the journey serves an https://<host>/<path> repository only`);
  return { host: m[1].toLowerCase(), path: m[2] };
}

/** The charts grouped by where they are pulled from: Helm repositories (https://) and OCI registries (oci://). */
export function chartOrigins(charts: readonly ChartPin[]): { helm: ChartOrigin[]; oci: ChartOrigin[] } {
  const groups = new Map<string, { kind: "helm" | "oci"; host: string; path: string; charts: ChartPin[] }>();
  for (const c of charts) {
    const m = /^(https|oci):\/\/([a-z0-9.-]+)(\/.*)?$/i.exec(c.repo);
    if (!m) throw new Error(`chart ${c.chart}: repo ${JSON.stringify(c.repo)} is neither https:// nor oci://`);
    const kind = m[1].toLowerCase() === "oci" ? "oci" : "helm";
    const host = m[2].toLowerCase();
    const p = (m[3] ?? "").replace(/\/+$/, "");
    const key = `${kind} ${host}${p}`;
    const g = groups.get(key) ?? { kind, host, path: kind === "oci" ? p.replace(/^\//, "") : p, charts: [] };
    g.charts.push(c);
    groups.set(key, g);
  }
  const all = [...groups.values()];
  const strip = (g: (typeof all)[number]): ChartOrigin => ({ host: g.host, path: g.path, charts: g.charts });
  return { helm: all.filter((g) => g.kind === "helm").map(strip), oci: all.filter((g) => g.kind === "oci").map(strip) };
}

/** The fleet's origins: its repository and its charts'. */
export function fleetOrigins(repoUrl: string, charts: readonly ChartPin[]): Origins {
  return { git: gitOrigin(repoUrl), ...chartOrigins(charts) };
}
