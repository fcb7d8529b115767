/**
 * An AppProject's rules as ArgoCD enforces them on a sync: the source repositories, the
 * destinations, and which kinds may be deployed (cluster-scoped by whitelist, namespaced by
 * blacklist/whitelist). Pure functions; each refusal is ArgoCD's reason in words.
 */

export interface GroupKind {
  readonly group: string;
  readonly kind: string;
}

export interface AppProjectSpec {
  readonly sourceRepos?: readonly string[];
  readonly destinations?: readonly { server?: string; name?: string; namespace?: string }[];
  readonly clusterResourceWhitelist?: readonly GroupKind[];
  readonly clusterResourceBlacklist?: readonly GroupKind[];
  readonly namespaceResourceWhitelist?: readonly GroupKind[];
  readonly namespaceResourceBlacklist?: readonly GroupKind[];
}

/** ArgoCD's glob (`*` any run of characters), anchored. */
export function glob(pattern: string, value: string): boolean {
  if (pattern === "*") return true;
  return new RegExp(`^${pattern.split("*").map((s) => s.replace(/[.+?^${}()|[\]\\/]/g, "\\$&")).join(".*")}$`).test(value);
}

const gkMatch = (list: readonly GroupKind[] | undefined, gk: GroupKind) => (list ?? []).some((e) => glob(e.group, gk.group) && glob(e.kind, gk.kind));

/** Why the project refuses a source repository (undefined: permitted). */
export function sourceRefusal(p: AppProjectSpec, repoURL: string, project: string): string | undefined {
  const repos = p.sourceRepos ?? [];
  // ArgoCD compares normalised URLs; OCI repositories without their scheme.
  const norm = (u: string) => u.replace(/^oci:\/\//, "").replace(/\.git$/, "").replace(/\/$/, "").toLowerCase();
  return repos.some((r) => glob(norm(r), norm(repoURL))) ? undefined : `application repo ${repoURL} is not permitted in project '${project}'`;
}

/** Why the project refuses a destination (undefined: permitted). */
export function destinationRefusal(p: AppProjectSpec, server: string, namespace: string, project: string): string | undefined {
  const ok = (p.destinations ?? []).some((d) => (d.server === undefined || glob(d.server, server)) && (d.namespace === undefined || glob(d.namespace, namespace)));
  return ok ? undefined : `application destination {${server} ${namespace}} is not permitted in project '${project}'`;
}

/** Why the project refuses a kind (undefined: permitted). */
export function kindRefusal(p: AppProjectSpec, gk: GroupKind, namespaced: boolean, project: string): string | undefined {
  if (!namespaced) {
    if (!gkMatch(p.clusterResourceWhitelist, gk) || gkMatch(p.clusterResourceBlacklist, gk)) return `resource ${gk.group}:${gk.kind} is not permitted in project ${project}`;
    return undefined;
  }
  if (gkMatch(p.namespaceResourceBlacklist, gk)) return `resource ${gk.group}:${gk.kind} is not permitted in project ${project}`;
  if (p.namespaceResourceWhitelist && !gkMatch(p.namespaceResourceWhitelist, gk)) return `resource ${gk.group}:${gk.kind} is not permitted in project ${project}`;
  return undefined;
}
