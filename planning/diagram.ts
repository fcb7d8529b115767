/**
 * The architecture picture `plan` writes: Graphviz DOT drawn from the captured resource
 * graph (accounts, then components nested by their component parent, one node per
 * resource type in a component), the peering contract's flows as edges with their ports
 * (facts/contract.ts), rendered to SVG in-process by Graphviz compiled to WebAssembly.
 */
import { CENTRAL_PROVIDER_NAME, CONFIG_NAMESPACE } from "../facts/project";
import { createHash } from "crypto";
import * as fs from "fs";
import * as path from "path";
import { tenantStacksOf } from "../config/capacity";
import { PROJECT_ROOT } from "../config";
import type { StackConfig, StackFile } from "../config/types";
import { flowPortLabel, PEERING_FLOWS, type ContractEndpoint, type TenantPorts } from "../facts/contract";
import { recordedPorts } from "../config/tenant-ports";
import { payerOf, type Payer } from "./cost";
import type { Deployment, DeploymentResource } from "./deployment";

/** The stack's own account and whoever it talks to over the peering. */
export interface DiagramContext {
  readonly stack: string;
  readonly kind: StackConfig["kind"];
  readonly accounts: Readonly<Record<Payer, string>>;
  /** Central: the tenant stacks that join it (drawn as their accounts), with their tenant ids. */
  readonly tenants: readonly { readonly stack: string; readonly id: string; readonly ports?: TenantPorts }[];
  /** Tenant: its ports on central (its slurmctld port and srun block are its own). */
  readonly tenantPorts?: TenantPorts;
}

export function diagramContext(config: StackConfig, files: readonly StackFile[]): DiagramContext {
  const own = config.kind === "tenant" ? config.tenant.accountId : (config.allowedAccountIds?.[0] ?? "this account");
  const accounts = config.kind === "tenant" ? { operator: config.central.accountId, customer: own } : config.kind === "central" ? { operator: own, customer: "" } : { operator: "", customer: own };
  const tenantIdOf = (f: StackFile) => String((f.values[`${CONFIG_NAMESPACE}:tenant`] as { id?: unknown } | undefined)?.id ?? f.stack);
  const tenants = config.kind === "central" ? tenantStacksOf(config.stack, files).map((f) => ({ stack: f.stack, id: tenantIdOf(f), ports: recordedPorts(f.values) })) : [];
  return { stack: config.stack, kind: config.kind, accounts, tenants, ...(config.kind === "tenant" ? { tenantPorts: config.ports } : {}) };
}

/**
 * Settings that belong to a resource drawn beside them (rules, policies, attachments):
 * folded into one count per box so the picture stays readable.
 */
const SETTINGS = /(Policy|PolicyAttachment|IngressRule|EgressRule|RouteTableAssociation|Route|Alias|SecretVersion|PublicAccessBlock|OwnershipControls|ServerSideEncryptionConfiguration|Versioning|LifecycleConfiguration|DefaultSecurityGroup|TargetGroupAttachment|EventTarget|Permission|Tag|VolumeAttachment|InstanceProfile)$/;

/**
 * The page the picture fits: A3 landscape. Graphviz scales a larger drawing down to it; the
 * boxes' grid and their short lists keep that scale near 1 (test/diagram.test.ts renders it).
 */
export const DIAGRAM_PAGE = { widthInches: 16.5, heightInches: 11.7 } as const;

/** The longest line of a box's list of resources, in characters: boxes stay page-sized. */
const LIST_LINE = 34;

const shortType = (type: string) => type.split(":").pop() as string;
const nameOf = (urn: string) => urn.split("::").pop() as string;
const quote = (s: string) => `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;
/** A box's label: its title lines centred, then its list left-aligned (DOT's \n and \l line ends). */
const boxLabel = (title: readonly string[], list: readonly string[]) => `"${[...title.map((l) => `${escape(l)}\\n`), ...list.map((l) => `${escape(l)}\\l`)].join("")}"`;
const escape = (s: string) => s.replace(/\\/g, "\\\\").replace(/"/g, '\\"');

interface Component {
  readonly urn: string;
  readonly type: string;
  readonly name: string;
  readonly children: Component[];
  /** Its own resources, per account. */
  readonly resources: Map<Payer, DeploymentResource[]>;
}

/** Where each contract endpoint is in this graph: a node id, or undefined if not here. */
type Endpoints = Partial<Record<ContractEndpoint, string>>;

/** A component's resources and every descendant's, in one account. */
function resourcesUnder(c: Component, payer: Payer): DeploymentResource[] {
  return [...(c.resources.get(payer) ?? []), ...c.children.flatMap((x) => resourcesUnder(x, payer))];
}

/** A box's list: its resource types with counts, wrapped, then the settings folded into one count. Pure. */
function resourceList(resources: readonly DeploymentResource[]): string[] {
  const counts = new Map<string, number>();
  let settings = 0;
  for (const r of resources) {
    if (SETTINGS.test(r.type)) settings++;
    else counts.set(shortType(r.type), (counts.get(shortType(r.type)) ?? 0) + 1);
  }
  const items = [...counts.entries()].sort((a, b) => a[0].localeCompare(b[0])).map(([t, n]) => (n > 1 ? `${t} x${n}` : t));
  const lines: string[] = [];
  for (const item of items) {
    const last = lines.length - 1;
    if (last >= 0 && lines[last].length + 2 + item.length <= LIST_LINE) lines[last] += `, ${item}`;
    else lines.push(item);
  }
  if (settings) lines.push(`+${settings} rules, policies, attachments`);
  return lines;
}

/**
 * The architecture as DOT: each account a dashed frame; in it the stack's components, a
 * component of several components a frame of its own, any other one box listing its
 * resources (and its descendants') by type; boxes in a grid, so the picture fits a page
 * (a landscape A3 at 96 dpi: tested by rendering it to PNG); the peering contract's flows as
 * red edges with their ports. A central draws each of its tenants as one box in its account.
 */
export function architectureDot(deployment: Deployment, context: DiagramContext): string {
  const resources = deployment.deployment.resources;
  // Short stable ids, in order of first use: the DOT stays readable and diffs stay small.
  const ids = new Map<string, string>();
  const idOf = (key: string) => {
    if (!ids.has(key)) ids.set(key, `n${ids.size}`);
    return ids.get(key) as string;
  };
  const components = new Map<string, Component>();
  const stack = resources.find((r) => r.type === "pulumi:pulumi:Stack");
  const root: Component = { urn: stack?.urn ?? "", type: "", name: context.stack, children: [], resources: new Map() };
  components.set(root.urn, root);
  for (const r of resources) {
    if (r.custom || r.type.startsWith("pulumi:")) continue;
    components.set(r.urn, { urn: r.urn, type: shortType(r.type), name: nameOf(r.urn), children: [], resources: new Map() });
  }
  for (const c of components.values()) if (c !== root) (components.get(resources.find((r) => r.urn === c.urn)?.parent ?? "") ?? root).children.push(c);
  const stackReferences: DeploymentResource[] = [];
  for (const r of resources) {
    if (r.type === "pulumi:pulumi:StackReference") stackReferences.push(r);
    if (!r.custom || r.type.startsWith("pulumi:")) continue;
    const payer = payerOf(deployment, r);
    const owner = components.get(r.parent ?? "") ?? root;
    owner.resources.set(payer, [...(owner.resources.get(payer) ?? []), r]);
  }

  const lines: string[] = [
    "digraph architecture {",
    `  graph [rankdir=LR, newrank=true, nodesep=0.15, ranksep=0.3, size="${DIAGRAM_PAGE.widthInches},${DIAGRAM_PAGE.heightInches}", fontname="Helvetica", fontsize=11, compound=true, label=${quote(`${context.stack}\nresources by account and component${context.kind === "connector" ? "" : "\nred: the peering contract's flows"}`)}, labelloc=t];`,
    '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", fontname="Helvetica", fontsize=10, margin="0.12,0.06"];',
    '  edge [fontname="Helvetica", fontsize=9];',
  ];
  // Each resource's box, by urn: where the contract's endpoints are drawn.
  const boxOf = new Map<string, string>();
  const has = (c: Component, payer: Payer): boolean => resourcesUnder(c, payer).length > 0;
  const box = (key: string, title: readonly string[], list: readonly DeploymentResource[], indent: string): string => {
    const id = idOf(key);
    lines.push(`${indent}${id} [label=${boxLabel(title, resourceList(list))}];`);
    for (const r of list) boxOf.set(r.urn, id);
    return id;
  };
  // Boxes in rows (an invisible edge puts the next one beside), as square as their count allows.
  const grid = (boxes: readonly string[], indent: string) => {
    const columns = Math.max(1, Math.ceil(Math.sqrt(boxes.length)));
    for (let i = 0; i < boxes.length; i++) if (i % columns !== columns - 1 && i + 1 < boxes.length) lines.push(`${indent}${boxes[i]} -> ${boxes[i + 1]} [style=invis];`);
  };
  const emit = (c: Component, payer: Payer, indent: string, repeated = false): string[] => {
    const children = [...c.children].filter((x) => has(x, payer)).sort((a, b) => a.urn.localeCompare(b.urn));
    const own = c.resources.get(payer) ?? [];
    const title = c === root ? [context.stack] : [c.type, c.name];
    // One box for a component of at most one component, or one of several alike (a central's
    // link to each tenant): itself and what is under it, so the picture grows by a box a tenant.
    if (c !== root && (children.length < 2 || repeated)) return [box(`${payer}:${c.urn}`, title, resourcesUnder(c, payer), indent)];
    const inner = c === root ? indent : `${indent}  `;
    if (c !== root) lines.push(`${indent}subgraph cluster_${idOf(`group:${payer}:${c.urn}`)} {`, `${inner}label=${quote(title.join(" "))}; style="rounded,filled"; fillcolor="#f4f6fa"; color="#8a94a6";`);
    const boxes = [...(own.length ? [box(`${payer}:${c.urn}:own`, [`${c === root ? `stack ${context.stack}` : `${c.type} ${c.name}`}: its own`], own, inner)] : [])];
    const alike = (x: Component) => children.filter((y) => y.type === x.type).length > 1;
    for (const child of children) boxes.push(...emit(child, payer, inner, alike(child)));
    grid(boxes, inner);
    if (c !== root) lines.push(`${indent}}`);
    return [];
  };
  const centralHostRef = stackReferences.find((r) => nameOf(r.urn) === CENTRAL_PROVIDER_NAME);
  const endpoints: Endpoints = {};
  for (const payer of ["operator", "customer"] as const) {
    const here = has(root, payer);
    const external = payer === "operator" ? context.kind === "tenant" && centralHostRef !== undefined : false;
    if (!here && !external) continue;
    const who = payer === "operator" ? "operator account" : "customer account";
    lines.push(`  subgraph cluster_${payer} {`, `    label=${quote(`${who} ${context.accounts[payer]}`)}; style="dashed"; color="#3b5b92"; fontsize=12;`);
    emit(root, payer, "    ");
    if (external && centralHostRef) {
      const id = idOf(`operator:stack-reference:${centralHostRef.urn}`);
      lines.push(`    ${id} [label=${quote(`central host\n(stack ${String((centralHostRef.inputs as Record<string, unknown>)?.name ?? "central")})`)}, style="rounded,dashed"];`);
      endpoints["central-host"] = id;
    }
    lines.push("  }");
  }
  const boxWith = (type: string) => resources.filter((r) => r.type === type).map((r) => boxOf.get(r.urn)).find((b) => b !== undefined);
  endpoints[context.kind === "central" ? "central-host" : "tenant-host"] = boxWith("aws:ec2/instance:Instance");
  if (context.kind === "tenant") endpoints["tenant-vpc"] = boxWith("aws:ec2/vpc:Vpc") ?? endpoints["tenant-host"];
  // A central's tenants live in their own accounts: one box each, listing its contract flows
  // (its own ports among them) with one edge to the host, the boxes in a grid: the picture
  // grows by a box a tenant, to the eighteen one central holds.
  const tenantBoxes = context.tenants.map(({ stack: tenant, ports }) => {
    const id = idOf(`tenant:${tenant}`);
    lines.push(`  subgraph cluster_${idOf(`tenant-account:${tenant}`)} {`, `    label=${quote(`customer account (${tenant})`)}; style="dashed"; color="#3b5b92";`);
    lines.push(`    ${id} [label=${boxLabel([`tenant stack ${tenant}`, "(VPC, K3s host, slurmd nodes)"], PEERING_FLOWS.map((f) => `${f.from === "central-host" ? "from" : "to"} central: ${flowPortLabel(f, ports)} ${f.id}`))}, style="rounded,dashed"];`, "  }");
    return id;
  });
  grid(tenantBoxes, "  ");
  const [from, to] = [boxWith("aws:ec2/vpcPeeringConnection:VpcPeeringConnection"), boxWith("aws:ec2/vpcPeeringConnectionAccepter:VpcPeeringConnectionAccepter")];
  if (from && to && from !== to) lines.push(`  ${from} -> ${to} [label="VPC peering", style=bold, dir=both, color="#3b5b92"];`);
  for (const f of PEERING_FLOWS) {
    const edge = (a: string | undefined, b: string | undefined, ports: TenantPorts | undefined) => {
      if (a && b && a !== b) lines.push(`  ${a} -> ${b} [label=${quote(`${flowPortLabel(f, ports)} ${f.id}`)}, color="#b5523b", fontcolor="#b5523b"];`);
    };
    if (context.kind !== "central") edge(endpoints[f.from], endpoints[f.to], context.tenantPorts);
  }
  // Central: one edge a tenant, its flows listed in its box.
  const host = endpoints["central-host"];
  if (host) for (const id of tenantBoxes) lines.push(`  ${host} -> ${id} [dir=both, color="#b5523b"];`);
  lines.push("}");
  return lines.join("\n") + "\n";
}

/**
 * DOT to SVG, in-process (Graphviz as WebAssembly, loaded on first use), every label held to
 * the width Graphviz laid it out for: each text gets that width as its `textLength`, so a
 * renderer without Helvetica (Linux's DejaVu Sans is a tenth wider) draws it inside its box.
 * One layout gives both the SVG and the widths. Kept by the DOT's SHA-256, @viz-js/viz's
 * version and the fitting code under `cacheRoot` (the repository's node_modules/.cache/clusterra/diagrams) when
 * given: an unchanged picture costs a plan no WebAssembly.
 */
export async function renderSvg(dot: string, cacheRoot?: string): Promise<string> {
  // The package exports no package.json: read where npm put it.
  const version = (JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, "node_modules", "@viz-js", "viz", "package.json"), "utf8")) as { version: string }).version;
  const saved = cacheRoot ? path.join(cacheRoot, `${createHash("sha256").update(`${version}\0${fitText.toString()}\0${dot}`).digest("hex")}.svg`) : undefined;
  if (saved && fs.existsSync(saved)) return fs.readFileSync(saved, "utf8");
  const { instance } = await import("@viz-js/viz");
  const viz = await instance();
  const result = viz.renderFormats(dot, ["svg", "json"], { engine: "dot" });
  if (result.status !== "success") throw new Error(`Graphviz could not lay out the diagram: ${result.errors.map((e) => e.message).join("; ")}`);
  const svg = fitText(result.output.svg, textWidths(JSON.parse(result.output.json)));
  if (saved) {
    fs.mkdirSync(path.dirname(saved), { recursive: true });
    fs.writeFileSync(`${saved}.${process.pid}`, svg);
    fs.renameSync(`${saved}.${process.pid}`, saved);
  }
  return svg;
}

/** Graphviz's width of every text it placed (its xdot `T` operations), by position and text. Pure. */
function textWidths(layout: unknown): Map<string, number> {
  const widths = new Map<string, number>();
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") {
      const op = v as { op?: string; pt?: [number, number]; width?: number; text?: string };
      if (op.op === "T" && op.pt && typeof op.width === "number" && typeof op.text === "string") widths.set(textKey(op.pt[0], -op.pt[1], op.text), op.width);
      else Object.values(v).forEach(walk);
    }
  };
  walk(layout);
  return widths;
}

const textKey = (x: number, y: number, text: string) => `${x.toFixed(2)}|${y.toFixed(2)}|${text}`;
const XML_ENTITIES: Readonly<Record<string, string>> = { "&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": '"', "&#39;": "'", "&#45;": "-" };

/** The SVG with each text Graphviz measured given that width (`textLength`, glyphs and spacing fitted). Pure. */
function fitText(svg: string, widths: ReadonlyMap<string, number>): string {
  return svg.replace(/<text ([^>]*)>([^<]*)<\/text>/g, (whole, attributes: string, content: string) => {
    const [x, y] = ["x", "y"].map((a) => Number(new RegExp(`\\b${a}="(-?[0-9.]+)"`).exec(attributes)?.[1]));
    const text = content.replace(/&[#a-z0-9]+;/g, (e) => XML_ENTITIES[e] ?? e);
    const width = widths.get(textKey(x, y, text));
    return width === undefined ? whole : `<text ${attributes} textLength="${width.toFixed(2)}" lengthAdjust="spacingAndGlyphs">${content}</text>`;
  });
}

/** Writes architecture.dot and architecture.svg into the plan folder. */
export async function writeDiagram(outDir: string, deployment: Deployment, context: DiagramContext, cacheRoot?: string): Promise<void> {
  const dot = architectureDot(deployment, context);
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, "architecture.dot"), dot);
  fs.writeFileSync(path.join(outDir, "architecture.svg"), await renderSvg(dot, cacheRoot));
}
