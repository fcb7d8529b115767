/**
 * The slurmd the Slurm part runs, read from the pod Slinky's NodeSet controller (v1.2.1) made
 * in the tenant's cluster when the scaling loop raised a NodeSet (journey/scaling.ts): its
 * Slurm node name, its NodeSet, the controller it fetches its configuration from, its
 * features, and the command line the slurmd image runs for it. The image's entrypoint gathers
 * the container's args into SLURMD_OPTIONS and its supervisord starts slurmd with them, split
 * into words as a POSIX shell splits them (the operator quotes `--conf '<items>'` for that).
 * What the entrypoint adds from POD_CPUS and POD_MEMORY (CoreSpecCount, MemSpecLimit: the
 * instance's cores and memory less the pod's limits) is left out: the journey's node is this
 * machine, not the instance type, so the figures would be this machine's. Pure.
 */
import { parse } from "shell-quote";

/** The slurmd pod Slinky's NodeSet controller made, as the API server holds it. */
export interface OperatorPod {
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly ownerReferences?: readonly { readonly kind: string; readonly name: string }[];
  };
  readonly spec: {
    readonly hostname?: string;
    readonly nodeName?: string;
    readonly containers: readonly { readonly name: string; readonly args?: readonly string[]; readonly command?: readonly string[]; readonly env?: readonly { readonly name: string; readonly value?: string }[] }[];
  };
}

/** The container Slinky names slurmd's in a NodeSet pod, and the labels it sets on the pod (api/v1beta1/well_known.go). */
export const SLINKY_NODESET_POD = {
  container: "slurmd",
  hostnameLabel: "nodeset.slinky.slurm.net/pod-hostname",
  indexLabel: "nodeset.slinky.slurm.net/pod-index",
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

/** The words a command line splits into, as a POSIX shell splits them (quotes removed, nothing expanded); an operator (`;`, `|`, ...) is a problem. Pure. */
export function shellWords(line: string): { words: string[]; problems: string[] } {
  const words: string[] = [];
  const problems: string[] = [];
  // Every `$NAME` is left as typed: supervisord expands nothing of SLURMD_OPTIONS.
  for (const w of parse(line, (name) => `$${name}`)) {
    if (typeof w === "string") words.push(w);
    else problems.push(`${JSON.stringify(w)} in \`${line}\` is not a word`);
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
