/**
 * The architecture picture `plan` writes: Graphviz DOT drawn from the captured resource
 * graph (accounts, then components nested by their component parent, one node per
 * resource type in a component), the peering contract's flows as edges with their ports
 * (facts/contract.ts), rendered to SVG in-process by Graphviz compiled to WebAssembly.
 */
import { CENTRAL_PROVIDER_NAME, CONFIG_NAMESPACE } from "../facts/project";
import * as fs from "fs";
import * as path from "path";
import { tenantStacksOf } from "../config/capacity";
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
 * folded into one count per component so the picture stays readable.
 */
const SETTINGS = /(Policy|PolicyAttachment|IngressRule|EgressRule|RouteTableAssociation|Route|Alias|SecretVersion|PublicAccessBlock|OwnershipControls|ServerSideEncryptionConfiguration|Versioning|LifecycleConfiguration|DefaultSecurityGroup|TargetGroupAttachment|EventTarget|Permission|Tag|VolumeAttachment|InstanceProfile)$/;

const shortType = (type: string) => type.split(":").pop() as string;
const nameOf = (urn: string) => urn.split("::").pop() as string;
const quote = (s: string) => `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`;

interface Component {
  readonly urn: string;
  readonly label: string;
  readonly children: Component[];
  /** Drawn resources by type, per account. */
  readonly resources: Map<Payer, Map<string, DeploymentResource[]>>;
}

/** Where each contract endpoint is in this graph: a node id, or undefined if not here. */
type Endpoints = Partial<Record<ContractEndpoint, string>>;

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
  const root: Component = { urn: stack?.urn ?? "", label: context.stack, children: [], resources: new Map() };
  components.set(root.urn, root);
  for (const r of resources) {
    if (r.custom || r.type.startsWith("pulumi:")) continue;
    components.set(r.urn, { urn: r.urn, label: `${shortType(r.type)}\n${nameOf(r.urn)}`, children: [], resources: new Map() });
  }
  for (const c of components.values()) if (c !== root) (components.get(resources.find((r) => r.urn === c.urn)?.parent ?? "") ?? root).children.push(c);

  const nodeOf = (r: DeploymentResource, payer: Payer) => `${payer}:${r.parent ?? ""}:${SETTINGS.test(r.type) ? "settings" : r.type}`;
  const endpoints: Endpoints = {};
  const peering: { from?: string; to?: string } = {};
  const stackReferences: DeploymentResource[] = [];
  for (const r of resources) {
    if (r.type === "pulumi:pulumi:StackReference") stackReferences.push(r);
    if (!r.custom || r.type.startsWith("pulumi:")) continue;
    const payer = payerOf(deployment, r);
    const owner = components.get(r.parent ?? "") ?? root;
    const byType = owner.resources.get(payer) ?? new Map<string, DeploymentResource[]>();
    const key = SETTINGS.test(r.type) ? "settings" : r.type;
    byType.set(key, [...(byType.get(key) ?? []), r]);
    owner.resources.set(payer, byType);
    const node = nodeOf(r, payer);
    if (r.type === "aws:ec2/instance:Instance") endpoints[context.kind === "central" ? "central-host" : "tenant-host"] = node;
    if (r.type === "aws:ec2/vpc:Vpc" && context.kind === "tenant") endpoints["tenant-vpc"] = node;
    if (r.type === "aws:ec2/vpcPeeringConnection:VpcPeeringConnection") peering.from = node;
    if (r.type === "aws:ec2/vpcPeeringConnectionAccepter:VpcPeeringConnectionAccepter") peering.to = nodeOf(r, payer);
  }
  if (context.kind === "tenant") endpoints["tenant-vpc"] ??= endpoints["tenant-host"];

  const lines: string[] = [
    "digraph architecture {",
    `  graph [rankdir=LR, fontname="Helvetica", fontsize=11, compound=true, label=${quote(`${context.stack}\nresources by account and component${context.kind === "connector" ? "" : "\nred: the peering contract's flows"}`)}, labelloc=t];`,
    '  node [shape=box, style="rounded,filled", fillcolor="#ffffff", fontname="Helvetica", fontsize=10];',
    '  edge [fontname="Helvetica", fontsize=9];',
  ];
  const has = (c: Component, payer: Payer): boolean => (c.resources.get(payer)?.size ?? 0) > 0 || c.children.some((x) => has(x, payer));
  const emit = (c: Component, payer: Payer, indent: string) => {
    const nested = c !== root;
    const drawn = [...(c.resources.get(payer) ?? new Map<string, DeploymentResource[]>()).entries()].sort((a, b) => a[0].localeCompare(b[0]));
    const settings = drawn.find(([type]) => type === "settings")?.[1].length ?? 0;
    if (nested) {
      const label = `${c.label}${settings ? `\n+${settings} rules, policies, attachments` : ""}`;
      lines.push(`${indent}subgraph cluster_${idOf(`${payer}:${c.urn}`)} {`, `${indent}  label=${quote(label)}; style="rounded,filled"; fillcolor="#f4f6fa"; color="#8a94a6";`);
    }
    const inner = nested ? `${indent}  ` : indent;
    const nodes = drawn.filter(([type]) => type !== "settings").map(([type, rs]) => {
      const label = rs.length === 1 ? `${shortType(type)}\n${nameOf(rs[0].urn)}` : `${shortType(type)} x${rs.length}`;
      const id = idOf(`${payer}:${rs[0].parent ?? ""}:${type}`);
      lines.push(`${inner}${id} [label=${quote(label)}];`);
      return id;
    });
    // Two columns per component (an invisible edge puts one node beside another), so
    // large components do not grow into one tall stack.
    const half = Math.ceil(nodes.length / 2);
    for (let i = 0; i + half < nodes.length; i++) lines.push(`${inner}${nodes[i]} -> ${nodes[i + half]} [style=invis];`);
    for (const child of [...c.children].sort((a, b) => a.urn.localeCompare(b.urn))) if (has(child, payer)) emit(child, payer, inner);
    if (nested) lines.push(`${indent}}`);
  };
  const account = (payer: Payer, title: string, body: () => void) => {
    lines.push(`  subgraph cluster_${payer} {`, `    label=${quote(title)}; style="dashed"; color="#3b5b92"; fontsize=12;`);
    body();
    lines.push("  }");
  };
  const centralHostRef = stackReferences.find((r) => nameOf(r.urn) === CENTRAL_PROVIDER_NAME);
  for (const payer of ["operator", "customer"] as const) {
    const here = has(root, payer);
    const external = payer === "operator" ? context.kind === "tenant" && centralHostRef !== undefined : false;
    if (!here && !external) continue;
    const who = payer === "operator" ? "operator account" : "customer account";
    account(payer, `${who} ${context.accounts[payer]}`, () => {
      emit(root, payer, "    ");
      if (external && centralHostRef) {
        const node = `operator:stack-reference:${centralHostRef.urn}`;
        lines.push(`    ${idOf(node)} [label=${quote(`central host\n(stack ${String((centralHostRef.inputs as Record<string, unknown>)?.name ?? "central")})`)}, style="rounded,dashed"];`);
        endpoints["central-host"] = node;
      }
    });
  }
  // A central's tenants live in their own accounts: one node each, the flows drawn to it.
  for (const { stack: tenant } of context.tenants) {
    const node = `tenant:${tenant}`;
    lines.push(`  subgraph cluster_${idOf(`tenant-account:${tenant}`)} {`, `    label=${quote(`customer account (${tenant})`)}; style="dashed"; color="#3b5b92";`);
    lines.push(`    ${idOf(node)} [label=${quote(`tenant stack ${tenant}\n(VPC, K3s host, slurmd nodes)`)}, style="rounded,dashed"];`, "  }");
  }
  if (peering.from && peering.to) lines.push(`  ${idOf(peering.from)} -> ${idOf(peering.to)} [label="VPC peering", style=bold, dir=both, color="#3b5b92"];`);
  for (const f of PEERING_FLOWS) {
    const edge = (from: string | undefined, to: string | undefined, ports: TenantPorts | undefined) => {
      if (from && to && from !== to) lines.push(`  ${idOf(from)} -> ${idOf(to)} [label=${quote(`${flowPortLabel(f, ports)} ${f.id}`)}, color="#b5523b", fontcolor="#b5523b"];`);
    };
    if (context.kind === "central") {
      // Each tenant's flows, to its own node (a per-tenant port is that tenant's).
      const end = (e: ContractEndpoint, stack: string) => (e === "central-host" ? endpoints["central-host"] : `tenant:${stack}`);
      for (const t of context.tenants) edge(end(f.from, t.stack), end(f.to, t.stack), t.ports);
    } else edge(endpoints[f.from], endpoints[f.to], context.tenantPorts);
  }
  lines.push("}");
  return lines.join("\n") + "\n";
}

/** DOT to SVG, in-process (Graphviz as WebAssembly, loaded on first use). */
export async function renderSvg(dot: string): Promise<string> {
  const { instance } = await import("@viz-js/viz");
  const viz = await instance();
  return viz.renderString(dot, { format: "svg", engine: "dot" });
}

/** Writes architecture.dot and architecture.svg into the plan folder. */
export async function writeDiagram(outDir: string, deployment: Deployment, context: DiagramContext): Promise<void> {
  const dot = architectureDot(deployment, context);
  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, "architecture.dot"), dot);
  fs.writeFileSync(path.join(outDir, "architecture.svg"), await renderSvg(dot));
}
