import * as assert from "node:assert/strict";
import { formatIssues, validateStack } from "../config";
import type { ConfigIssue } from "../config/types";
import { ownPortConflict, portConflicts } from "../config/tenant-ports";
import { controlPlaneExtraConf, type ControlPlaneFacts } from "../components/fleet/control-plane";
import { centralObjects, skipWithoutHelm } from "./helpers";
import { flowPortLabel, flowPorts, NODE_PORT_RANGE, PEERING_FLOWS, portRangesOverlap, slurmctldNodePort, SRUN_PORT_BLOCK_SIZE, srunPortBlock } from "../facts/contract";
import { slinkyLoginPodLabels } from "../facts/fleet";
import { SERVER_FLOWS } from "../components/tenant/cluster-security-groups";
import { exampleFile, exampleFiles, withValues } from "./helpers";

/**
 * Tenant ids found by search over t0, t1, ... (deterministic: the ports follow from the id):
 * t486's block is acme's, t370's slurmctld port lies in acme's block, t168's block holds
 * globex's slurmctld port, t172's block holds its own slurmctld port.
 */
const COLLIDING = { sameBlockAsAcme: "t486", ctldInAcmeBlock: "t370", blockOnGlobexCtld: "t168", ownCtldInBlock: "t172" } as const;

const SRUN_FLOW = PEERING_FLOWS.find((f) => f.id === "slurmstepd-to-srun");

describe("srun port blocks (the contract)", () => {
  it("gives each tenant an aligned block of SRUN_PORT_BLOCK_SIZE inside the NodePort range, stable per id", () => {
    for (const id of ["acme", "globex", "initech", "t0", "a-very-long-tenant-name"]) {
      const b = srunPortBlock(id);
      assert.equal(b.to - b.from + 1, SRUN_PORT_BLOCK_SIZE, id);
      assert.equal((b.from - NODE_PORT_RANGE.from) % SRUN_PORT_BLOCK_SIZE, 0, id);
      assert.ok(b.from >= NODE_PORT_RANGE.from && b.to <= NODE_PORT_RANGE.to, id);
      assert.deepEqual(srunPortBlock(id), b);
    }
    assert.deepEqual([srunPortBlock("acme"), srunPortBlock("globex")], [{ from: 32730, to: 32739 }, { from: 32000, to: 32009 }]);
    assert.equal(portRangesOverlap({ from: 1, to: 5 }, { from: 5, to: 9 }), true);
    assert.equal(portRangesOverlap({ from: 1, to: 4 }, { from: 5, to: 9 }), false);
  });

  it("makes the srun flow a per-tenant block, admitted on central, opened by the workers only", () => {
    assert.ok(SRUN_FLOW);
    assert.deepEqual([SRUN_FLOW.from, SRUN_FLOW.to, SRUN_FLOW.side], ["tenant-vpc", "central-host", "central"]);
    assert.deepEqual(flowPorts(SRUN_FLOW, "acme"), { fromPort: 32730, toPort: 32739 });
    assert.equal(flowPortLabel(SRUN_FLOW, "globex"), "tcp/32000-32009");
    assert.equal(flowPortLabel(SRUN_FLOW), `tcp/${NODE_PORT_RANGE.from}-${NODE_PORT_RANGE.to} (the tenant's own block of ${SRUN_PORT_BLOCK_SIZE})`);
    // The K3s server runs no job steps: its group gets no rule for the callback.
    assert.ok(!SERVER_FLOWS.includes(SRUN_FLOW));
  });

  it("names every way two tenants' ports meet", () => {
    assert.deepEqual(portConflicts("acme", "globex"), []);
    assert.deepEqual(portConflicts("acme", "acme"), []);
    assert.deepEqual(portConflicts(COLLIDING.sameBlockAsAcme, "acme"), ["gets the srun port block 32730-32739, meeting tenant acme's 32730-32739"]);
    assert.deepEqual(portConflicts(COLLIDING.ctldInAcmeBlock, "acme"), [`gets the slurmctld NodePort ${slurmctldNodePort(COLLIDING.ctldInAcmeBlock)}, inside tenant acme's srun port block 32730-32739`]);
    assert.deepEqual(portConflicts(COLLIDING.blockOnGlobexCtld, "globex"), ["gets the srun port block 30540-30549, which holds tenant globex's slurmctld NodePort 30542"]);
    assert.equal(ownPortConflict("acme"), undefined);
    assert.equal(ownPortConflict(COLLIDING.ownCtldInBlock), "its srun port block 32490-32499 holds its own slurmctld NodePort 32499");
  });
});

describe("srun port blocks (validation)", () => {
  const acme = exampleFile("tenant-acme-dev");
  const asTenant = (id: string) => withValues(acme, { "clusterra:tenant": { id, accountId: "444455556666" }, "clusterra:network": { vpcCidr: "10.16.32.0/20", availabilityZones: 2 } }, `tenant-${id}-dev`);
  const issuesOf = (id: string): ConfigIssue[] => {
    const r = validateStack(asTenant(id), exampleFiles());
    return r.ok ? [] : r.issues.filter((i) => i.key === "clusterra:tenant.id");
  };

  it("rejects a tenant whose ports meet another tenant's of the same central, naming the file, the ports and what is valid", () => {
    const [issue] = issuesOf(COLLIDING.sameBlockAsAcme);
    assert.ok(issue, "expected an issue");
    assert.equal(issue.value, COLLIDING.sameBlockAsAcme);
    assert.match(issue.problem, /srun port block 32730-32739, meeting tenant acme's 32730-32739 \(stacks\/Pulumi.tenant-acme-dev.yaml\)/);
    assert.match(issue.valid, /another tenant id/);
    assert.match(formatIssues(issuesOf(COLLIDING.blockOnGlobexCtld)), /globex's slurmctld NodePort 30542/);
  });

  it("rejects a tenant whose srun block holds its own slurmctld port, and accepts one apart from all", () => {
    assert.match(issuesOf(COLLIDING.ownCtldInBlock)[0]?.problem ?? "", /holds its own slurmctld NodePort/);
    assert.deepEqual(issuesOf("initech"), []);
  });
});

describe("srun port blocks (central's fleet)", () => {
  const facts: ControlPlaneFacts = {
    environment: "dev", tenantId: "acme", clusterName: "clusterra-dev-acme", centralRegion: "us-east-1",
    secretNames: { slurm: "s", jwt: "j", mariadb: "m" }, tenantCidr: "10.16.0.0/20", srunPortBlock: srunPortBlock("acme"), nodeSets: [], users: [],
  };

  it("forwards each port of the block to the same port of the login pod, keeping the client's address", function () {
    const objects = centralObjects("acme"); // acme's, rendered from its facts as ArgoCD renders them
    if (!objects) return skipWithoutHelm(this);
    const svc = objects.find((o) => o.kind === "Service" && o.metadata.name === "srun-peering");
    assert.equal(svc.spec?.type, "NodePort");
    assert.equal(svc.spec?.externalTrafficPolicy, "Local");
    assert.deepEqual(svc.spec?.selector, slinkyLoginPodLabels());
    const { from, to } = srunPortBlock("acme");
    assert.deepEqual(svc.spec?.ports?.map((p: any) => [p.port, p.nodePort, p.targetPort]), Array.from({ length: to - from + 1 }, (_, i) => [from + i, from + i, from + i]));
  });

  it("gives srun the block in the served slurm.conf, and admits only the tenant's VPC on it to the login pod", function () {
    assert.match(controlPlaneExtraConf(facts), /^SrunPortRange=32730-32739$/m);
    const objects = centralObjects("acme");
    if (!objects) return skipWithoutHelm(this);
    const policy = objects.find((o) => o.kind === "NetworkPolicy" && o.metadata.name === "srun-from-tenant-vpc");
    assert.deepEqual(policy?.spec?.podSelector, { matchLabels: slinkyLoginPodLabels() });
    assert.deepEqual(policy?.spec?.ingress, [{ from: [{ ipBlock: { cidr: "10.16.0.0/20" } }], ports: [{ protocol: "TCP", port: 32730, endPort: 32739 }] }]);
  });
});
