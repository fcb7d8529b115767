/**
 * The slurmd the Slurm part runs, read from the pod Slinky's NodeSet controller (v1.2.1) made
 * in the tenant's cluster when the scaling loop raised a NodeSet (journey/scaling.ts): its
 * Slurm node name, its NodeSet, the controller it fetches its configuration from, its
 * features, and the command line the slurmd image runs for it. The image's entrypoint gathers
 * the container's args into SLURMD_OPTIONS and its supervisord has bash run `exec slurmd
 * --systemd $SLURMD_OPTIONS`: bash splits the words (the operator quotes `--conf '<items>'` for
 * that). Here slurmd runs as `slurmd -D` (the same foreground, without systemd's notify socket),
 * and options bash would expand (`$NAME`, globs) are refused rather than guessed. What the
 * entrypoint adds from POD_CPUS and POD_MEMORY (CoreSpecCount, MemSpecLimit: the instance's
 * cores and memory less the pod's limits) is left out: the journey's node is this machine, not
 * the instance type, so the figures would be this machine's; a pod whose topology annotation
 * would add `Topology=` is refused. Pure.
 */
import { parse } from "shell-quote";

/** The slurmd pod Slinky's NodeSet controller made, as the API server holds it. */
export interface OperatorPod {
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly ownerReferences?: readonly { readonly kind: string; readonly name: string }[];
  };
  readonly spec: {
    readonly hostname?: string;
    readonly nodeName?: string;
    readonly containers: readonly { readonly name: string; readonly args?: readonly string[]; readonly command?: readonly string[]; readonly env?: readonly { readonly name: string; readonly value?: string; readonly valueFrom?: unknown }[] }[];
  };
}

/** The container Slinky names slurmd's in a NodeSet pod, and the labels it sets on the pod (api/v1beta1/well_known.go). */
export const SLINKY_NODESET_POD = {
  container: "slurmd",
  hostnameLabel: "nodeset.slinky.slurm.net/pod-hostname",
  indexLabel: "nodeset.slinky.slurm.net/pod-index",
  /** The annotation the pod's POD_TOPOLOGY reads; the image adds `Topology=<it>` to slurmd's --conf. */
  topologyAnnotation: "topology.slinky.slurm.net/spec",
} as const;

/** What the Slurm part runs for one of the NodeSet's slurmd. */
export interface OperatorSlurmd {
  /** The pod it was read from. */
  readonly pod: string;
  readonly nodeSet: string;
  /** The Slurm node name of ordinal 0, 1, ...: the operator's for the pod's own ordinal, the same pattern for the others. */
  readonly hostname: (ordinal: number) => string;
  /** Where slurmd fetches its configuration (`--conf-server`). */
  readonly confServer: { readonly host: string; readonly port: number };
  /** The node's features (`--conf 'Features=...'`). */
  readonly features: readonly string[];
  /** slurmd's own arguments after the image's `slurmd -D`. */
  readonly options: readonly string[];
}

/**
 * The words a command line splits into, as bash splits an unquoted `$OPTIONS` after quotes
 * (quotes removed); what bash would expand or treat apart (`$NAME`, a glob, `;`, `|`, ...) is a
 * problem, never a guess. Pure.
 */
export function shellWords(line: string): { words: string[]; problems: string[] } {
  const words: string[] = [];
  const problems: string[] = [];
  for (const w of parse(line, (name) => {
    problems.push(`$${name} in \`${line}\` would be expanded by the image's shell`);
    return `$${name}`;
  })) {
    if (typeof w === "string") words.push(w);
    else problems.push(`${JSON.stringify(w)} in \`${line}\` is not a plain word`);
  }
  return { words, problems };
}

/** `--conf 'A=b C=d'` (or `--conf=...`): the items slurmd reads as `key=value`. Pure. */
function confItems(options: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const [i, o] of options.entries()) {
    const value = o === "--conf" ? options[i + 1] : o.startsWith("--conf=") ? o.slice("--conf=".length) : undefined;
    for (const item of (value ?? "").split(/\s+/).filter(Boolean)) {
      const eq = item.indexOf("=");
      if (eq > 0) out.set(item.slice(0, eq), item.slice(eq + 1));
    }
  }
  return out;
}

/** The slurmd the operator's pod describes, or every reason it cannot run. Pure. */
export function slurmdFromPod(pod: OperatorPod): { slurmd?: OperatorSlurmd; problems: string[] } {
  const problems: string[] = [];
  const name = pod.metadata.name;
  const container = pod.spec.containers.find((c) => c.name === SLINKY_NODESET_POD.container);
  if (!container) return { problems: [`pod ${name} has no ${SLINKY_NODESET_POD.container} container`] };
  if (container.command?.length) problems.push(`pod ${name}: its ${container.name} container replaces the image's entrypoint (${container.command.join(" ")})`);
  const env = new Map((container.env ?? []).map((e) => [e.name, e.value ?? ""]));
  if (container.env?.some((e) => e.name === "SLURMD_OPTIONS" && e.valueFrom !== undefined)) problems.push(`pod ${name}: SLURMD_OPTIONS comes from a source the journey does not read (valueFrom)`);
  const topology = pod.metadata.annotations?.[SLINKY_NODESET_POD.topologyAnnotation];
  if (topology) problems.push(`pod ${name}: the image would add Topology=${topology} to slurmd's --conf, which the journey does not model`);
  // The entrypoint: SLURMD_OPTIONS="${SLURMD_OPTIONS:-} $*".
  const split = shellWords([env.get("SLURMD_OPTIONS") ?? "", ...(container.args ?? [])].join(" "));
  problems.push(...split.problems.map((p) => `pod ${name}: ${p}`));
  const options = split.words;
  const at = options.indexOf("--conf-server");
  const server = at >= 0 ? options[at + 1] ?? "" : "";
  const m = /^(.+):(\d+)$/.exec(server);
  if (!m) problems.push(`pod ${name}: no --conf-server <host>:<port> in its args (${options.join(" ") || "none"})`);
  if (!options.includes("-Z")) problems.push(`pod ${name}: slurmd is not dynamic (-Z): central's slurm.conf names no node of a NodeSet`);
  const nodeSet = pod.metadata.ownerReferences?.find((r) => r.kind === "NodeSet")?.name;
  if (!nodeSet) problems.push(`pod ${name}: no NodeSet owns it`);
  const features = (confItems(options).get("Features") ?? "").split(",").filter(Boolean);
  if (!features.length) problems.push(`pod ${name}: its --conf gives no Features`);
  const own = pod.metadata.labels?.[SLINKY_NODESET_POD.hostnameLabel] ?? pod.spec.hostname ?? name;
  const index = pod.metadata.labels?.[SLINKY_NODESET_POD.indexLabel];
  if (index === undefined || !own.endsWith(index)) problems.push(`pod ${name}: its node name ${own} does not end with its ordinal (${SLINKY_NODESET_POD.indexLabel}: ${index ?? "none"})`);
  // The operator pads ordinals to the NodeSet's ordinalPadding: a leading zero shows the width, "0" or no padding is 1; any other index leaves it unknown.
  else if (index.length > 1 && !index.startsWith("0")) problems.push(`pod ${name}: its ordinal ${index} does not show the NodeSet's ordinal padding, so its siblings' names are unknown`);
  if (problems.length || !m || !nodeSet || index === undefined) return { problems };
  const stem = own.slice(0, own.length - index.length);
  return {
    slurmd: {
      pod: name,
      nodeSet,
      hostname: (ordinal) => `${stem}${String(ordinal).padStart(index.length, "0")}`,
      confServer: { host: m[1], port: Number(m[2]) },
      features,
      options,
    },
    problems,
  };
}
