import * as assert from "node:assert/strict";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { PROJECT_ROOT } from "../config";
import { architectureDot, DIAGRAM_PAGE, diagramContext, renderSvg } from "../planning/diagram";
import { portsAtSlot } from "../config/tenant-ports";
import { PEERING_FLOWS } from "../facts/contract";
import { EXAMPLE_STACKS, exampleFiles, examplePorts, plan } from "./helpers";
import { centralCeiling } from "../config/capacity";

const DOCS = path.join(PROJECT_ROOT, "docs", "architecture");

async function dotOf(stack: string): Promise<string> {
  const p = await plan(stack);
  return architectureDot(p.deployment, diagramContext(p.config, exampleFiles()));
}

/** The box whose label starts with these title lines (in this account's frame when given): its id and its account frame. */
function box(dot: string, title: string, account?: "operator" | "customer"): { id: string; account: string; label: string } {
  const lines = dot.split("\n");
  const frameOf = (at: number) => (lines.slice(0, at).reverse().find((l) => /^  subgraph cluster_/.test(l)) ?? "").trim();
  const prefix = `[label="${title.replace(/\n/g, "\\n")}\\n`;
  const at = lines.findIndex((l, i) => (l.includes(prefix) || l.includes(`[label="${title.replace(/\n/g, "\\n")}"`)) && (!account || frameOf(i) === `subgraph cluster_${account} {`));
  assert.ok(at >= 0, `no box titled ${JSON.stringify(title)}${account ? ` in the ${account} account` : ""}`);
  return { id: (/^\s*(n\d+) \[/.exec(lines[at]) as RegExpExecArray)[1], account: frameOf(at), label: lines[at] };
}

/**
 * Each node's texts against its shape: every text has the width Graphviz laid it out for
 * (textLength), and that width is inside the box, whatever font draws it. Pure.
 */
function labelsOutsideBoxes(svg: string): string[] {
  const problems: string[] = [];
  for (const g of svg.split(/<g id="node\d+" class="node">/).slice(1).map((part) => part.split("</g>")[0])) {
    const numbers = (/<(?:polygon|path)[^>]*(?:points|d)="([^"]+)"/.exec(g)?.[1] ?? "").match(/-?[0-9.]+/g)?.map(Number) ?? [];
    const xs = numbers.filter((_, i) => i % 2 === 0);
    const [left, right] = [Math.min(...xs), Math.max(...xs)];
    for (const t of g.matchAll(/<text ([^>]*)>([^<]*)<\/text>/g)) {
      const attr = (name: string) => new RegExp(`\\b${name}="([^"]+)"`).exec(t[1])?.[1];
      const [x, width, anchor] = [Number(attr("x")), Number(attr("textLength")), attr("text-anchor")];
      if (!attr("textLength")) problems.push(`"${t[2]}" has no textLength: a wider font draws it past its box`);
      const [from, to] = anchor === "middle" ? [x - width / 2, x + width / 2] : anchor === "end" ? [x - width, x] : [x, x + width];
      if (from < left - 0.5 || to > right + 0.5) problems.push(`"${t[2]}" spans ${from.toFixed(1)}-${to.toFixed(1)}, its box ${left.toFixed(1)}-${right.toFixed(1)}`);
    }
  }
  return problems;
}

describe("architecture diagram", function () {
  this.timeout(60000);

  it("draws a tenant in two accounts, its central-side peering and keys in the operator's, every contract flow with its port", async () => {
    const dot = await dotOf("tenant-acme-dev");
    assert.match(dot, /label="operator account 111122223333"/);
    assert.match(dot, /label="customer account 444455556666"/);
    const vpc = box(dot, "PrivateNetwork\ntenant-acme");
    const server = box(dot, "TenantK3sServer\ntenant-acme-k3s");
    const host = box(dot, "central host\n(stack central-dev)");
    assert.deepEqual([vpc.account, server.account, host.account], ["subgraph cluster_customer {", "subgraph cluster_customer {", "subgraph cluster_operator {"]);
    assert.match(vpc.label, /[ ,l]Vpc[,\\]/);
    assert.match(server.label, /[ ,l]Instance[,\\]/);
    const edge = (from: string, to: string, label: string) => assert.ok(dot.includes(`  ${from} -> ${to} [label="${label}"`), `${from} -> ${to} ${label}`);
    edge(vpc.id, host.id, `tcp/${examplePorts("acme").slurmctld} slurmd-to-slurmctld`);
    edge(server.id, host.id, "tcp/8443 edge-agent-heartbeat");
    edge(host.id, vpc.id, "tcp/6818 slurmctld-to-slurmd");
    edge(host.id, server.id, "tcp/6443 argocd-to-k3s-api");
    assert.equal(PEERING_FLOWS.filter((f) => dot.includes(` ${f.id}`)).length, PEERING_FLOWS.length);
    // The request in the customer's account, its acceptance in the operator's.
    edge(box(dot, "CentralPeering\ntenant-acme-peering", "customer").id, box(dot, "CentralPeering\ntenant-acme-peering", "operator").id, "VPC peering");
  });

  it("frames a component of components, boxes every other one with its resources by type, one box per tenant", async () => {
    const dot = await dotOf("central-dev");
    const lines = dot.split("\n");
    const frame = lines.findIndex((l) => l.includes('label="CentralEnvironment central-dev"'));
    const host = box(dot, "K3sHost\ncentral-dev-k3s");
    assert.ok(frame > 0 && frame < lines.findIndex((l) => l.includes(`${host.id} [`)), "the host's box is in the environment's frame");
    assert.match(host.label, /Instance/);
    assert.match(box(dot, "StateTables\ncentral-dev-state").label, /\\nTable x6\\l/);
    // Each tenant's link on central is one box, however many components it holds.
    for (const id of ["acme", "globex"]) assert.match(box(dot, `TenantLink\ncentral-dev-tenant-${id}`).label, /Role x3\\l/);
    // Central draws each tenant stack that joins it, in its own account.
    for (const t of ["tenant-acme-dev", "tenant-globex-dev"]) {
      assert.match(dot, new RegExp(`label="customer account \\(${t}\\)"`));
      const tenant = box(dot, `tenant stack ${t}\n(VPC, K3s host, slurmd nodes)`);
      const id = t.split("-")[1];
      // One edge to its host, its flows (its own ports among them) in its box.
      assert.ok(dot.includes(`  ${host.id} -> ${tenant.id} [dir=both`), `${t}: no edge to the host`);
      for (const flow of [`to central: tcp/${examplePorts(id).slurmctld} slurmd-to-slurmctld`, "to central: tcp/8443 edge-agent-heartbeat", "from central: tcp/6818 slurmctld-to-slurmd", "from central: tcp/6443 argocd-to-k3s-api", `to central: tcp/${examplePorts(id).srunBlock.from}-${examplePorts(id).srunBlock.to} slurmstepd-to-srun`]) {
        assert.ok(tenant.label.includes(`\\n${flow}\\l`) || tenant.label.includes(`\\l${flow}\\l`), `${t}: ${flow} not in ${tenant.label}`);
      }
    }
  });

  it("fits an A3 landscape page, rendered to PNG, near full scale, every label inside its box (DejaVu Sans: Linux without Helvetica)", async () => {
    const { Resvg } = await import("@resvg/resvg-js");
    const page = { width: DIAGRAM_PAGE.widthInches * 96, height: DIAGRAM_PAGE.heightInches * 96 };
    const central = await plan("central-dev");
    const full = diagramContext(central.config, exampleFiles());
    // A central as full as one goes: the most tenants one holds, each a box and five flows.
    const most = centralCeiling().tenants;
    const fullest = { ...full, tenants: Array.from({ length: most }, (_, i) => ({ stack: `tenant-t${i}-dev`, id: `t${i}`, ports: portsAtSlot(i) })) };
    const pictures = [...(await Promise.all(EXAMPLE_STACKS.map(async (stack) => [stack, await dotOf(stack)] as const))), [`central-dev with ${most} tenants`, architectureDot(central.deployment, fullest)] as const];
    for (const [name, dot] of pictures) {
      const svg = await renderSvg(dot);
      const png = new Resvg(svg, { font: { loadSystemFonts: true, defaultFontFamily: "DejaVu Sans" } }).render();
      assert.ok(png.width <= page.width && png.height <= page.height, `${name}: ${png.width} x ${png.height} px, over ${page.width} x ${page.height}`);
      const scale = Number(/transform="scale\(([0-9.]+)/.exec(svg)?.[1]);
      assert.ok(scale >= (name === `central-dev with ${most} tenants` ? 0.55 : 0.85), `${name}: drawn at ${scale} to fit the page`);
      for (const problem of labelsOutsideBoxes(svg)) assert.fail(`${name}: ${problem}`);
    }
  });

  it("keeps a rendered picture by its DOT: the same DOT is not laid out again, another one is", async () => {
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), "diagrams-"));
    const dot = await dotOf("connector-demo");
    const svg = await renderSvg(dot, cache);
    assert.equal(svg, await renderSvg(dot));
    const [kept] = fs.readdirSync(cache);
    // What is kept is what is served: a picture edited in the cache comes back as it is.
    fs.writeFileSync(path.join(cache, kept), "<svg>kept</svg>");
    assert.equal(await renderSvg(dot, cache), "<svg>kept</svg>");
    const other = dot.replace("connector-demo", "connector-other");
    assert.match(await renderSvg(other, cache), /connector(-|&#45;)other/);
    assert.equal(fs.readdirSync(cache).length, 2);
    fs.rmSync(cache, { recursive: true, force: true });
  });

  it("docs/architecture holds each example stack's current DOT and SVG (UPDATE_DIAGRAMS=1 npm test rewrites them)", async () => {
    for (const stack of EXAMPLE_STACKS) {
      const dot = await dotOf(stack);
      const svg = await renderSvg(dot);
      if (process.env.UPDATE_DIAGRAMS) {
        fs.mkdirSync(DOCS, { recursive: true });
        fs.writeFileSync(path.join(DOCS, `${stack}.dot`), dot);
        fs.writeFileSync(path.join(DOCS, `${stack}.svg`), svg);
      }
      assert.ok(svg.startsWith("<?xml") && svg.includes("<svg"), stack);
      const stale = "stale: regenerate with UPDATE_DIAGRAMS=1 npm test";
      assert.equal(fs.readFileSync(path.join(DOCS, `${stack}.dot`), "utf8"), dot, `${stack}.dot ${stale}`);
      assert.equal(fs.readFileSync(path.join(DOCS, `${stack}.svg`), "utf8"), svg, `${stack}.svg ${stale}`);
    }
  });
});
