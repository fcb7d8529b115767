import * as assert from "node:assert/strict";
import { formatIssues, validateStack } from "../config";
import type { ConfigIssue, StackFile } from "../config/types";
import { freePorts, ownPortConflict, portConflicts, portsAtSlot, recordedPorts, TENANTS_PER_NODE_PORT_RANGE } from "../config/tenant-ports";
import { controlPlaneExtraConf, type ControlPlaneFacts } from "../components/fleet/control-plane";
import { centralObjects, examplePorts, skipWithoutHelm } from "./helpers";
import { flowPortLabel, flowPorts, NODE_PORT_RANGE, PEERING_FLOWS, portRangesOverlap, SRUN_PORT_BLOCK_SIZE, srunBlockAt, type TenantPorts } from "../facts/contract";
import { slinkyLoginPodLabels } from "../facts/fleet";
import { SERVER_FLOWS } from "../components/tenant/cluster-security-groups";
import { exampleFile, exampleFiles, withValues } from "./helpers";

const SRUN_FLOW = PEERING_FLOWS.find((f) => f.id === "slurmstepd-to-srun");

/** Ports as a stack file records them. */
const recorded = (slurmctld: number, srun: number): TenantPorts => ({ slurmctld, srunBlock: srunBlockAt(srun) });

describe("tenant ports (the contract)", () => {
  it("reads each tenant's ports from its stack file: a slurmctld NodePort and a block of SRUN_PORT_BLOCK_SIZE", () => {
    assert.deepEqual(examplePorts("acme"), { slurmctld: 32191, srunBlock: { from: 32730, to: 32739 } });
    assert.deepEqual(examplePorts("globex"), { slurmctld: 30542, srunBlock: { from: 32000, to: 32009 } });
    assert.equal(srunBlockAt(30001).to - srunBlockAt(30001).from + 1, SRUN_PORT_BLOCK_SIZE);
    assert.equal(recordedPorts({}), undefined);
    assert.equal(recordedPorts({ "clusterra:ports": { slurmctld: "30000", srun: 30001 } }), undefined);
    assert.equal(portRangesOverlap({ from: 1, to: 5 }, { from: 5, to: 9 }), true);
    assert.equal(portRangesOverlap({ from: 1, to: 4 }, { from: 5, to: 9 }), false);
  });

  it("makes the srun flow a per-tenant block, admitted on central, opened by the workers only", () => {
    assert.ok(SRUN_FLOW);
    assert.deepEqual([SRUN_FLOW.from, SRUN_FLOW.to, SRUN_FLOW.side], ["tenant-vpc", "central-host", "central"]);
    assert.deepEqual(flowPorts(SRUN_FLOW, examplePorts("acme")), { fromPort: 32730, toPort: 32739 });
    assert.equal(flowPortLabel(SRUN_FLOW, examplePorts("globex")), "tcp/32000-32009");
    assert.equal(flowPortLabel(SRUN_FLOW), `tcp/${NODE_PORT_RANGE.from}-${NODE_PORT_RANGE.to} (the tenant's own block of ${SRUN_PORT_BLOCK_SIZE})`);
    // The K3s server runs no job steps: its group gets no rule for the callback.
    assert.ok(!SERVER_FLOWS.includes(SRUN_FLOW));
  });

  it("names every way two tenants' ports meet", () => {
    const acme = examplePorts("acme");
    assert.deepEqual(portConflicts(acme, examplePorts("globex"), "globex"), []);
    assert.deepEqual(portConflicts(recorded(30000, 32730), acme, "acme"), ["has the srun block 32730-32739, meeting tenant acme's 32730-32739"]);
    assert.deepEqual(portConflicts(recorded(32735, 30001), acme, "acme"), ["has the slurmctld NodePort 32735, inside tenant acme's srun block 32730-32739"]);
    assert.deepEqual(portConflicts(recorded(32191, 30001), acme, "acme"), ["has the slurmctld NodePort 32191 of tenant acme"]);
    assert.deepEqual(portConflicts(recorded(30000, 30540), examplePorts("globex"), "globex"), ["has the srun block 30540-30549, which holds tenant globex's slurmctld NodePort 30542"]);
    assert.equal(ownPortConflict(acme), undefined);
    assert.equal(ownPortConflict(recorded(32499, 32490)), "its srun block 32490-32499 holds its own slurmctld NodePort 32499");
  });

  it("finds the lowest free ports beside the taken ones, and fits a whole range of tenants without a clash", () => {
    assert.deepEqual(freePorts([]), recorded(30000, 30001));
    assert.deepEqual(freePorts([examplePorts("acme"), examplePorts("globex")]), recorded(30000, 30001));
    assert.deepEqual(freePorts([recorded(30000, 30001)]), recorded(30011, 30012));
    // Allocated one after another, as an operator adds tenants: every one apart from every other.
    const taken: TenantPorts[] = [];
    for (let next = freePorts(taken); next; next = freePorts(taken)) taken.push(next);
    assert.equal(taken.length, TENANTS_PER_NODE_PORT_RANGE);
    assert.equal(TENANTS_PER_NODE_PORT_RANGE, 251);
    // A generated fleet's allocation is the same, slot by slot.
    taken.forEach((t, slot) => assert.deepEqual(portsAtSlot(slot), t, `slot ${slot}`));
    for (let i = 0; i < taken.length; i++) {
      assert.equal(ownPortConflict(taken[i]), undefined);
      for (let j = i + 1; j < taken.length; j++) assert.deepEqual(portConflicts(taken[i], taken[j], `t${j}`), []);
    }
  });
});

describe("tenant ports (validation)", () => {
  const acme = exampleFile("tenant-acme-dev");
  const asTenant = (id: string, ports: unknown) => withValues(acme, { "clusterra:tenant": { id, accountId: "444455556666" }, "clusterra:network": { vpcCidr: "10.16.32.0/20", availabilityZones: 2 }, "clusterra:ports": ports }, `tenant-${id}-dev`);
  const issuesOf = (id: string, ports: unknown): ConfigIssue[] => {
    const r = validateStack(asTenant(id, ports), exampleFiles());
    return r.ok ? [] : r.issues.filter((i) => i.key.startsWith("clusterra:ports"));
  };

  it("rejects ports that meet another tenant's of the same central, naming the file, the ports and free ones", () => {
    const [issue] = issuesOf("initech", { slurmctld: 30000, srun: 32730 });
    assert.ok(issue, "expected an issue");
    assert.deepEqual(issue.value, { slurmctld: 30000, srun: 32730 });
    assert.match(issue.problem, /srun block 32730-32739, meeting tenant acme's 32730-32739 \(stacks\/Pulumi.tenant-acme-dev.yaml\)/);
    assert.equal(issue.valid, "ports no other tenant of central-dev has; free on central-dev: clusterra:ports: { slurmctld: 30000, srun: 30001 }");
    assert.match(formatIssues(issuesOf("initech", { slurmctld: 30000, srun: 30540 })), /globex's slurmctld NodePort 30542/);
  });

  it("gives two pull requests cut from one main the same free ports: each passes alone, together one is refused (the merge queue's run)", () => {
    // Each pull request takes the ports validation names against its own base.
    const hint = (id: string, base: readonly StackFile[]) => {
      const r = validateStack(asTenant(id, undefined), base);
      return /clusterra:ports: \{ slurmctld: (\d+), srun: (\d+) \}/.exec(r.ok ? "" : r.issues.map((i) => i.valid).join(" "));
    };
    const [a, b] = [hint("initech", exampleFiles()), hint("umbrella", exampleFiles())];
    assert.ok(a && b);
    assert.deepEqual([a[1], a[2]], [b[1], b[2]]);
    const initech = withValues(asTenant("initech", { slurmctld: Number(a[1]), srun: Number(a[2]) }), { "clusterra:network": { vpcCidr: "10.16.32.0/20", availabilityZones: 2 } });
    const umbrella = withValues(asTenant("umbrella", { slurmctld: Number(b[1]), srun: Number(b[2]) }), { "clusterra:network": { vpcCidr: "10.16.48.0/20", availabilityZones: 2 } });
    assert.equal(validateStack(initech, exampleFiles()).ok, true);
    assert.equal(validateStack(umbrella, exampleFiles()).ok, true);
    // main with both merged, as the merge queue plans it: the second names the first.
    const both = validateStack(umbrella, [...exampleFiles(), initech]);
    assert.equal(both.ok, false);
    assert.match(both.ok ? "" : formatIssues(both.issues), /has the slurmctld NodePort 30000 of tenant initech \(stacks\/Pulumi.tenant-initech-dev.yaml\)/);
  });

  it("names no free ports while a tenant of the same central records none (it may be live on ports of its own)", () => {
    const files = exampleFiles().map((f) => (f.stack === "tenant-globex-dev" ? withValues(f, { "clusterra:ports": undefined }) : f));
    const r = validateStack(asTenant("initech", undefined), files);
    assert.deepEqual(r.ok ? [] : r.issues.filter((i) => i.key === "clusterra:ports").map((i) => i.valid), [
      "no ports can be named free on central-dev while stacks/Pulumi.tenant-globex-dev.yaml records no valid ports: record its ports first (a live tenant keeps the ones it has: its facts file's slurmctld.port and its SrunPortRange in central's slurm.conf)",
    ]);
  });

  it("requires the key, naming free ports, and refuses a block holding its own port or past the range", () => {
    assert.deepEqual(issuesOf("initech", undefined).map((i) => [i.key, i.value, i.problem, i.valid]), [
      ["clusterra:ports", undefined, "missing: a tenant's ports on central are recorded in its stack file, never derived", "free on central-dev: clusterra:ports: { slurmctld: 30000, srun: 30001 } (a tenant deployed before ports were recorded keeps the ones it has: its facts file's slurmctld.port and its SrunPortRange in central's slurm.conf)"],
    ]);
    assert.match(issuesOf("initech", { slurmctld: 30005, srun: 30000 })[0]?.problem ?? "", /holds its own slurmctld NodePort 30005/);
    assert.deepEqual(issuesOf("initech", { slurmctld: 29999, srun: 32760 }).map((i) => i.key).sort(), ["clusterra:ports.slurmctld", "clusterra:ports.srun"]);
    assert.deepEqual(issuesOf("initech", { slurmctld: 30000, srun: 30001 }), []);
  });
});

describe("tenant ports (central's validation)", () => {
  const centralIssues = (globexPorts: unknown): string[] => {
    const files = exampleFiles().map((f) => (f.stack === "tenant-globex-dev" ? withValues(f, { "clusterra:ports": globexPorts }) : f));
    const r = validateStack(exampleFile("central-dev"), files.filter((f) => f.stack !== "central-dev"));
    return r.ok ? [] : r.issues.map((i) => `${String(i.value)}: ${i.problem}`);
  };

  it("refuses a tenant stack of it without valid ports (central would drop the tenant) and two tenants sharing one", () => {
    assert.deepEqual(centralIssues({ slurmctld: 30542, srun: 32000 }), []);
    const dropped = "tenant-globex-dev: stacks/Pulumi.tenant-globex-dev.yaml records no valid clusterra:ports: central-dev would leave the tenant out, its rules, route, role and endpoint removed by the next `pulumi up -s central-dev`";
    assert.deepEqual(centralIssues(undefined), [dropped]);
    // A port central's host serves itself is never a tenant's: its K3s API, its kubelet.
    assert.deepEqual(centralIssues({ slurmctld: 6443, srun: 10250 }), [dropped]);
    assert.deepEqual(centralIssues({ slurmctld: 32191, srun: 30000 }), ["tenant-acme-dev: tenant acme (stacks/Pulumi.tenant-acme-dev.yaml) has the slurmctld NodePort 32191 of tenant globex (stacks/Pulumi.tenant-globex-dev.yaml)"]);
  });
});

describe("srun port blocks (central's fleet)", () => {
  const facts: ControlPlaneFacts = {
    environment: "dev", scope: "dev", tenantId: "acme", clusterName: "clusterra-dev-acme", centralRegion: "us-east-1",
    secretNames: { slurm: "s", jwt: "j", mariadb: "m" }, tenantCidr: "10.16.0.0/20", srunPortBlock: examplePorts("acme").srunBlock, nodeSets: [], users: [],
  };

  it("forwards each port of the block to the same port of the login pod, keeping the client's address", function () {
    const objects = centralObjects("acme"); // acme's, rendered from its facts as ArgoCD renders them
    if (!objects) return skipWithoutHelm(this);
    const svc = objects.find((o) => o.kind === "Service" && o.metadata.name === "srun-peering");
    assert.equal(svc.spec?.type, "NodePort");
    assert.equal(svc.spec?.externalTrafficPolicy, "Local");
    assert.deepEqual(svc.spec?.selector, slinkyLoginPodLabels());
    const { from, to } = examplePorts("acme").srunBlock;
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
