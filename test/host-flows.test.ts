/**
 * The contract's host flows (edge-agent heartbeats into the central host, ArgoCD out of it to
 * the tenant's K3s API): both ends name each other by /32, and central's view of a tenant's
 * server address agrees with the address the tenant's own stack gives the instance.
 */
import * as assert from "node:assert/strict";
import { checkDeployment } from "../planning/policy-check";
import { tenantsFromStackFiles } from "../config";
import { hostRulesFor } from "../components/central/tenant-link";
import { checkCentralCapacity, hostGroupRules } from "../config/capacity";
import { hostAddressProblem } from "../config/cidr";
import { subnetLayout, tenantServerAddress } from "../config/subnet-layout";
import type { DeploymentResource } from "../planning/deployment";
import type { PlanResult } from "../planning/plan";
import { byType, examplePorts, exampleRoot, json, plan } from "./helpers";
import { srunBlockAt } from "../facts/contract";

const INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule";
const EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule";
const TENANTS = { acme: { cidr: "10.16.0.0/20", server: "10.16.12.10" }, globex: { cidr: "10.16.16.0/20", server: "10.16.28.10" } } as const;
type Tenant = keyof typeof TENANTS;

/** The host group's rules of one tenant: [direction, flow, protocol, from, to, peer]. */
function hostRulesOf(central: PlanResult, tenant: string): string[][] {
  const rules = [...byType(central, INGRESS), ...byType(central, EGRESS)].filter(
    (r) => r.inputs?.securityGroupId === central.outputs.hostSecurityGroupId && json<Record<string, string> | undefined>(r.inputs?.tags)?.["clusterra:tenant"] === tenant,
  );
  return rules.map((r) => [r.type === INGRESS ? "in" : "out", json<Record<string, string>>(r.inputs?.tags)["clusterra:flow"], String(r.inputs?.ipProtocol), String(r.inputs?.fromPort), String(r.inputs?.toPort), String(r.inputs?.cidrIpv4)]).sort();
}

function serverOf(p: PlanResult): DeploymentResource {
  const servers = byType(p, "aws:ec2/instance:Instance");
  assert.equal(servers.length, 1);
  return servers[0];
}

describe("host flows between the central host and each tenant's K3s server", function () {
  this.timeout(60000);

  it("central-dev's host group has, per tenant, exactly the contract's rules: its VPC on the VPC flows, its server's /32 on the host flows", async () => {
    const central = await plan("central-dev");
    for (const [tenant, { cidr, server }] of Object.entries(TENANTS)) {
      const port = String(examplePorts(tenant).slurmctld);
      assert.deepEqual(hostRulesOf(central, tenant), [
        ["in", "edge-agent-heartbeat", "tcp", "8443", "8443", `${server}/32`],
        ["in", "slurmd-to-slurmctld", "tcp", port, port, cidr],
        ["in", "slurmstepd-to-srun", "tcp", String(examplePorts(tenant).srunBlock.from), String(examplePorts(tenant).srunBlock.to), cidr],
        ["out", "argocd-to-k3s-api", "tcp", "6443", "6443", `${server}/32`],
        ["out", "slurmctld-to-slurmd", "tcp", "6818", "6818", cidr],
      ].sort(), tenant);
    }
    // Descriptions say which flow and which tenant (EC2's character set is checked for every plan elsewhere).
    const heartbeat = byType(central, INGRESS).find((r) => r.urn.endsWith("::central-dev-tenant-globex-edge-agent-heartbeat"));
    assert.equal(heartbeat?.inputs?.description, "edge-agent heartbeats and node events to cluster-api (tenant globex)");
  });

  it("each tenant's server has the fixed address central names, and names central's host the same way", async () => {
    const central = await plan("central-dev");
    for (const tenant of Object.keys(TENANTS) as Tenant[]) {
      const p = await plan(`tenant-${tenant}-dev`);
      const server = serverOf(p);
      assert.equal(server.inputs?.privateIp, TENANTS[tenant].server, tenant);
      assert.equal(p.outputs.serverPrivateIp, TENANTS[tenant].server);
      // The fixed address is free only once the old server is gone; the NAT subnet has no other tenant to reserve it against.
      assert.equal(server.deleteBeforeReplace, true);
      assert.equal(byType(p, "aws:ec2/subnetCidrReservation:SubnetCidrReservation").length, 0);
      // Central's view and the tenant's agree both ways.
      const centralRules = hostRulesOf(central, tenant).filter(([, flow]) => flow === "edge-agent-heartbeat" || flow === "argocd-to-k3s-api");
      assert.deepEqual(centralRules.map((r) => r[5]), [`${server.inputs?.privateIp}/32`, `${server.inputs?.privateIp}/32`]);
      const tenantRules = [...byType(p, INGRESS), ...byType(p, EGRESS)].filter((r) => ["edge-agent-heartbeat", "argocd-to-k3s-api"].includes(json<Record<string, string> | undefined>(r.inputs?.tags)?.["clusterra:flow"] ?? ""));
      assert.deepEqual(tenantRules.map((r) => [r.type === INGRESS ? "in" : "out", json<Record<string, string>>(r.inputs?.tags)["clusterra:flow"], r.inputs?.cidrIpv4]).sort(), [
        ["in", "argocd-to-k3s-api", `${central.outputs.hostPrivateIp}/32`],
        ["out", "edge-agent-heartbeat", `${central.outputs.hostPrivateIp}/32`],
      ]);
    }
  });

  it("the policy pack passes central-dev's plan, and fails it when a host flow names the tenant's VPC instead of its server", async () => {
    const central = await plan("central-dev");
    const tenants = tenantsFromStackFiles(exampleRoot());
    assert.deepEqual(checkDeployment(central.deployment, { tenants, root: exampleRoot() }).violations.map((v) => `${v.policy}: ${v.message}`), []);
    // Stack policies read outputs over inputs, as the engine sends them.
    const resources = central.deployment.deployment.resources.map((r) =>
      r.urn.endsWith("::central-dev-tenant-acme-argocd-to-k3s-api-out") ? { ...r, inputs: { ...r.inputs, cidrIpv4: TENANTS.acme.cidr }, outputs: { ...r.outputs, cidrIpv4: TENANTS.acme.cidr } } : r,
    );
    const widened = { ...central.deployment, deployment: { ...central.deployment.deployment, resources } };
    const violations = checkDeployment(widened, { tenants, root: exampleRoot() }).violations;
    assert.deepEqual(violations.map((v) => [v.policy, v.urn.split("::").pop()]), [["peering-flows-match-contract", "central-dev-tenant-acme-argocd-to-k3s-api-out"]]);
    assert.match(violations[0].message, /^flow argocd-to-k3s-api goes to one host \(tenant-host\), but the rule names 10\.16\.0\.0\/20 rather than a \/32/);
  });
});

describe("the tenant server's address (pure)", () => {
  it("is a fixed host of the new VPC's NAT subnet, clear of AWS's reserved addresses, whatever the zones", () => {
    for (const [vpcCidr, zones] of [["10.16.0.0/20", 2], ["10.16.16.0/20", 3], ["192.168.0.0/24", 6], ["10.1.0.0/16", 1]] as const) {
      const address = tenantServerAddress({ vpcCidr, availabilityZones: { count: zones } });
      const nat = subnetLayout(vpcCidr, zones).public;
      assert.equal(hostAddressProblem(address, nat), undefined, `${address} in ${nat}`);
      assert.equal(tenantServerAddress({ vpcCidr, availabilityZones: { names: Array.from({ length: zones }, (_, i) => `us-east-1${"abcdef"[i]}`) } }), address);
    }
    assert.equal(tenantServerAddress({ vpcCidr: "10.16.0.0/20", availabilityZones: { count: 2 } }), "10.16.12.10");
    assert.equal(tenantServerAddress({ vpcCidr: "10.16.0.0/20", vpcId: "vpc-0a1b2c3d4e5f60718", subnetIds: ["subnet-0a1b2c3d4e5f60718"], serverPrivateIp: "10.16.1.20" }), "10.16.1.20");
  });

  it("is refused when malformed, outside the block, or one of the five addresses AWS reserves", () => {
    assert.equal(hostAddressProblem("10.16.1.20", "10.16.1.0/24"), undefined);
    assert.equal(hostAddressProblem("10.16.1.4", "10.16.1.0/24"), undefined);
    assert.equal(hostAddressProblem("10.16.1.254", "10.16.1.0/24"), undefined);
    for (const reserved of ["10.16.1.0", "10.16.1.1", "10.16.1.2", "10.16.1.3", "10.16.1.255"]) assert.match(hostAddressProblem(reserved, "10.16.1.0/24") ?? "", /AWS reserves/, reserved);
    assert.equal(hostAddressProblem("10.16.2.20", "10.16.1.0/24"), "outside 10.16.1.0/24");
    for (const malformed of ["", "10.16.1", "10.16.1.20.1", "10.16.1.300", "010.16.1.20", "::1", "10.16.1.20/32"]) assert.match(hostAddressProblem(malformed, "10.16.1.0/24") ?? "", /not an IPv4 address/, malformed);
  });

  it("gives central, for an adopted VPC, rules on the configured address", () => {
    const ports = { slurmctld: 30000, srunBlock: srunBlockAt(30001) };
    const rules = hostRulesFor({ id: "initech", accountId: "123456789012", vpcCidr: "10.40.0.0/16", serverPrivateIp: "10.40.3.7", ports });
    assert.deepEqual(rules.map((r) => [r.direction, r.flow.id, r.rule.fromPort, r.rule.cidrIpv4]).sort(), [
      ["egress", "argocd-to-k3s-api", 6443, "10.40.3.7/32"],
      ["egress", "slurmctld-to-slurmd", 6818, "10.40.0.0/16"],
      ["ingress", "edge-agent-heartbeat", 8443, "10.40.3.7/32"],
      ["ingress", "slurmd-to-slurmctld", ports.slurmctld, "10.40.0.0/16"],
      ["ingress", "slurmstepd-to-srun", ports.srunBlock.from, "10.40.0.0/16"],
    ]);
    assert.ok(rules.every((r) => r.rule.tags && (r.rule.tags as Record<string, string>)["clusterra:tenant"] === "initech"));
  });
});

describe("the central host's group against AWS's rule quota", function () {
  this.timeout(60000);

  it("counts the rules central-dev's plan puts on the host's group", async () => {
    const central = await plan("central-dev");
    const onHost = (type: string) => byType(central, type).filter((r) => r.inputs?.securityGroupId === central.outputs.hostSecurityGroupId).length;
    assert.deepEqual(hostGroupRules(2), { ingress: onHost(INGRESS), egress: onHost(EGRESS) });
  });

  it("warns once a direction passes the default 60 rules (20 tenants fit: 3 x 20 ingress; egress 3 + 2 x 28)", () => {
    assert.deepEqual(checkCentralCapacity("t4g.2xlarge", 17).warnings, []);
    assert.deepEqual(hostGroupRules(20), { ingress: 60, egress: 43 });
    assert.equal(checkCentralCapacity("t4g.2xlarge", 20).warnings.filter((w) => /rules/.test(w)).length, 0);
    const over = checkCentralCapacity("t4g.2xlarge", 21).warnings.filter((w) => /rules/.test(w));
    assert.deepEqual(over, [
      `21 tenants put 63 ingress rules on the central host's security group (one per contract flow touching the host, per tenant, plus the host's own): over the default quota of 60; raise "Inbound or outbound rules per security group" before they join`,
    ]);
    assert.equal(checkCentralCapacity("t4g.2xlarge", 29).warnings.filter((w) => /rules/.test(w)).length, 2);
  });
});
