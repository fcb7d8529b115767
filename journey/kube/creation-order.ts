/**
 * The order the API server wrote objects in, as a watch sees it: each object's resourceVersion
 * when first seen, and when first seen Ready. K3s's datastore (kine) numbers every write from
 * one counter, so two resource versions order two writes across kinds exactly, where
 * creationTimestamp and lastTransitionTime are whole seconds.
 */
import type { Kubectl } from "./kubectl";

/** One line of the watch: kind, namespace/name, resourceVersion, Ready's status (empty when none). */
export const SIGHTING_OUTPUT = 'jsonpath={.kind} {.metadata.namespace}/{.metadata.name} {.metadata.resourceVersion} {.status.conditions[?(@.type=="Ready")].status}{"\\n"}';

export interface Sighting {
  /** The resource watched (set by the watch that saw it). */
  readonly resource?: string;
  readonly kind: string;
  readonly key: string;
  readonly rv: number;
  readonly ready: boolean;
}

/** A watch line as a sighting; undefined for anything else. Pure. */
export function parseSighting(line: string): Sighting | undefined {
  const m = /^(\S+) (\S+\/\S+) (\d+) ?(\S*)$/.exec(line.trim());
  return m ? { kind: m[1], key: m[2], rv: Number(m[3]), ready: m[4] === "True" } : undefined;
}

/**
 * Each dependent written before its owner was Ready (or whose owner never was): `dependents`
 * maps a dependent's key to its owner's; `unobserved` are dependents that already existed when
 * the watch began (their creation was not seen, so never counted as in order). Pure.
 */
export function writtenBeforeReady(sightings: readonly Sighting[], ownerKind: string, dependentKind: string, ownerOf: ReadonlyMap<string, string>, unobserved: ReadonlySet<string>): string[] {
  const first = (kind: string, key: string, ready: boolean) => Math.min(...sightings.filter((s) => s.kind === kind && s.key === key && (!ready || s.ready)).map((s) => s.rv));
  const out: string[] = [];
  for (const [dependent, owner] of ownerOf) {
    if (unobserved.has(dependent)) {
      out.push(`${dependentKind} ${dependent}: written before the watch began, its order not observed`);
      continue;
    }
    const [created, ready] = [first(dependentKind, dependent, false), first(ownerKind, owner, true)];
    if (!Number.isFinite(created)) out.push(`${dependentKind} ${dependent}: never seen by the watch`);
    else if (!Number.isFinite(ready) || created < ready) out.push(`${dependentKind} ${dependent}: written at resourceVersion ${created}, before its ${ownerKind} ${owner} was Ready (${Number.isFinite(ready) ? `resourceVersion ${ready}` : "never"})`);
  }
  return out;
}

/** Watches of some kinds on one cluster, kept running (started again while a kind is not served yet), their sightings kept. */
export class CreationOrder {
  readonly sightings: Sighting[] = [];
  /** Per resource, the objects (`namespace/name`) that existed when its watch began. */
  readonly unobserved = new Map<string, Set<string>>();
  private readonly watches = new Map<string, ReturnType<Kubectl["watch"]>>();

  constructor(private readonly kc: Kubectl, private readonly resources: readonly string[]) {}

  /** Starts each watch not running (called every few seconds). */
  async keep(): Promise<void> {
    for (const resource of this.resources) {
      const w = this.watches.get(resource);
      if (w && !w.ended()) continue;
      const listed = await this.kc.run(["get", resource, "-A", "-o", "jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}{\"\\n\"}{end}"]);
      if (listed.code !== 0) continue;
      // What exists before this watch begins was not seen made, unless an earlier watch saw it
      // (a watch the API server ended is started again, its objects already sighted).
      const before = this.unobserved.get(resource) ?? new Set<string>();
      for (const key of listed.stdout.split("\n").filter(Boolean)) if (!this.sightings.some((s) => s.key === key && s.resource === resource)) before.add(key);
      this.unobserved.set(resource, before);
      this.watches.set(resource, this.kc.watch(resource, (line) => {
        const s = parseSighting(line);
        // The first sighting, and the first Ready one, are all the order needs.
        if (s && !this.sightings.some((x) => x.resource === resource && x.key === s.key && (x.ready || !s.ready))) this.sightings.push({ ...s, resource });
      }, SIGHTING_OUTPUT));
    }
  }

  stop(): void {
    for (const w of this.watches.values()) w.stop();
  }
}
