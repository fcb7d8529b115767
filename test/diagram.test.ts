import * as assert from "node:assert/strict";
import * as fs from "fs";
import * as path from "path";
import { PROJECT_ROOT } from "../config";
import { architectureDot, diagramContext, renderSvg } from "../planning/diagram";
import { PEERING_FLOWS } from "../facts/contract";
import { EXAMPLE_STACKS, exampleFiles, examplePorts, plan } from "./helpers";

const DOCS = path.join(PROJECT_ROOT, "docs", "architecture");

async function dotOf(stack: string): Promise<string> {
  const p = await plan(stack);
  return architectureDot(p.deployment, diagramContext(p.config, exampleFiles()));
}

/** The id of the node with this label, and the account cluster it is drawn in. */
function nodeWithLabel(dot: string, label: string): { id: string; account: string } {
  const lines = dot.split("\n");
  const at = lines.findIndex((l) => l.includes(`[label=${JSON.stringify(label).replace(/\\\\n/g, "\\n")}`));
  assert.ok(at >= 0, `no node labelled ${label}`);
  const account = lines.slice(0, at).reverse().find((l) => /^  subgraph cluster_/.test(l));
  return { id: (/^\s*(n\d+) \[/.exec(lines[at]) as RegExpExecArray)[1], account: (account ?? "").trim() };
}

describe("architecture diagram", function () {
  this.timeout(60000);

  it("draws a tenant in two accounts, its central-side peering and keys in the operator's, every contract flow with its port", async () => {
    const dot = await dotOf("tenant-acme-dev");
    assert.match(dot, /label="operator account 111122223333"/);
    assert.match(dot, /label="customer account 444455556666"/);
    const vpc = nodeWithLabel(dot, "Vpc\ntenant-acme-vpc");
    const server = nodeWithLabel(dot, "Instance\ntenant-acme-k3s");
    const host = nodeWithLabel(dot, "central host\n(stack central-dev)");
    assert.deepEqual([vpc.account, server.account, host.account], ["subgraph cluster_customer {", "subgraph cluster_customer {", "subgraph cluster_operator {"]);
    const edge = (from: string, to: string, label: string) => assert.ok(dot.includes(`  ${from} -> ${to} [label="${label}"`), `${from} -> ${to} ${label}`);
    edge(vpc.id, host.id, `tcp/${examplePorts("acme").slurmctld} slurmd-to-slurmctld`);
    edge(server.id, host.id, "tcp/8443 edge-agent-heartbeat");
    edge(host.id, vpc.id, "tcp/6818 slurmctld-to-slurmd");
    edge(host.id, server.id, "tcp/6443 argocd-to-k3s-api");
    assert.equal(PEERING_FLOWS.filter((f) => dot.includes(` ${f.id}`)).length, PEERING_FLOWS.length);
    edge(nodeWithLabel(dot, "VpcPeeringConnection\ntenant-acme-peering-request").id, nodeWithLabel(dot, "VpcPeeringConnectionAccepter\ntenant-acme-peering-accept").id, "VPC peering");
  });

  it("groups resources by their component parent, nested as the components are", async () => {
    const dot = await dotOf("central-dev");
    const lines = dot.split("\n");
    const cluster = (label: string) => lines.findIndex((l) => l.includes(`label="${label}`));
    const environment = cluster("CentralEnvironment\\ncentral-dev");
    const host = cluster("K3sHost\\ncentral-dev-k3s");
    const instance = lines.findIndex((l) => l.includes('[label="Instance\\ncentral-dev-k3s"]'));
    assert.ok(environment > 0 && environment < host && host < instance, "environment > host > instance");
    assert.match(dot, /label="Table x6"/);
    // Central draws each tenant stack that joins it, in its own account.
    const instanceId = nodeWithLabel(dot, "Instance\ncentral-dev-k3s").id;
    for (const t of ["tenant-acme-dev", "tenant-globex-dev"]) {
      assert.match(dot, new RegExp(`label="customer account \\(${t}\\)"`));
      const tenant = nodeWithLabel(dot, `tenant stack ${t}\n(VPC, K3s host, slurmd nodes)`).id;
      const id = t.split("-")[1];
      for (const [from, to, label] of [[tenant, instanceId, `tcp/${examplePorts(id).slurmctld} slurmd-to-slurmctld`], [tenant, instanceId, "tcp/8443 edge-agent-heartbeat"], [instanceId, tenant, "tcp/6818 slurmctld-to-slurmd"], [instanceId, tenant, "tcp/6443 argocd-to-k3s-api"]]) {
        assert.ok(dot.includes(`  ${from} -> ${to} [label="${label}"`), `${t}: ${label}`);
      }
    }
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
