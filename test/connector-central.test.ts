/**
 * Connector mode on both sides: the central stack's Lattice service network, joined by each
 * connector's shared service, and the connector keys of configuration.
 */
import * as assert from "node:assert/strict";
import { validateStack } from "../config";
import type { CentralConfig } from "../config/types";
import { connectorBridgeRoleName } from "../facts/connector-network";
import { byType, exampleFile, exampleFiles, json, plan, withValues } from "./helpers";
import { decide } from "../access/iam-sim";

const CENTRAL = "111122223333";

function verdict(principal: string, action: string, resource: string, identity: unknown, resourcePolicy?: unknown, context: Record<string, string> = {}): Promise<string> {
  return decide({ principal, action, resource, identity: [identity], resourceAccount: resource.split(":")[4], context, ...(resourcePolicy ? { resourcePolicy } : {}) });
}

describe("connector mode, control plane side (central-dev)", function () {
  this.timeout(60000);

  it("associates one Lattice service network with central's VPC, admitting only the host's group on 443", async () => {
    const p = await plan("central-dev");
    const [network] = byType(p, "aws:vpclattice/serviceNetwork:ServiceNetwork");
    assert.equal(network.inputs?.authType, "AWS_IAM");
    const [vpc] = byType(p, "aws:ec2/vpc:Vpc");
    const [association] = byType(p, "aws:vpclattice/serviceNetworkVpcAssociation:ServiceNetworkVpcAssociation");
    assert.deepEqual([association.inputs?.vpcIdentifier, association.inputs?.serviceNetworkIdentifier], [vpc.outputs?.id, network.outputs?.id]);
    const groupId = (association.inputs?.securityGroupIds as string[])[0];
    const rules = byType(p, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule").filter((r) => r.inputs?.securityGroupId === groupId);
    assert.equal(rules.length, 1);
    assert.deepEqual([rules[0].inputs?.fromPort, rules[0].inputs?.toPort, rules[0].inputs?.cidrIpv4], [443, 443, undefined]);
    assert.match(String(rules[0].inputs?.referencedSecurityGroupId), /^sg-/);
  });

  it("accepts each connector's RAM share and associates its slurmrestd service, after acceptance", async () => {
    const p = await plan("central-dev");
    const connectors = await Promise.all(["connector-demo", "connector-offline"].map((s) => plan(s)));
    const accepters = byType(p, "aws:ram/resourceShareAccepter:ResourceShareAccepter");
    assert.deepEqual(accepters.map((a) => a.inputs?.shareArn).sort(), connectors.map((c) => c.outputs.resourceShareArn).sort());
    const associations = byType(p, "aws:vpclattice/serviceNetworkServiceAssociation:ServiceNetworkServiceAssociation");
    assert.deepEqual(associations.map((a) => a.inputs?.serviceIdentifier).sort(), connectors.map((c) => c.outputs.slurmrestdServiceArn).sort());
    for (const a of associations) assert.ok(accepters.some((acc) => a.dependencies?.includes(acc.urn)), "associated only once the share is accepted");
  });

  it("lets the bridge role invoke exactly the shared services and assume exactly the connectors' roles", async () => {
    const p = await plan("central-dev");
    const [demo, offline] = await Promise.all(["connector-demo", "connector-offline"].map((s) => plan(s)));
    const bridge = byType(p, "aws:iam/role:Role").find((r) => r.inputs?.name === connectorBridgeRoleName("dev"))!;
    const policy = json(byType(p, "aws:iam/rolePolicy:RolePolicy").find((r) => r.inputs?.role === bridge.outputs?.name)!.inputs?.policy);
    const principal = String(bridge.outputs?.arn);
    // End to end across accounts: central's grant and the connector's own auth policy and trust.
    for (const c of [demo, offline]) {
      const auth = json(byType(c, "aws:vpclattice/authPolicy:AuthPolicy")[0].inputs?.policy);
      const trust = json(byType(c, "aws:iam/role:Role").find((r) => r.outputs?.arn === c.outputs.controlPlaneRoleArn)!.inputs?.assumeRolePolicy);
      assert.equal(await verdict(principal, "vpc-lattice-svcs:Invoke", `${c.outputs.slurmrestdServiceArn}/api/slurm/v0.0.40/ping`, policy, auth, { "vpc-lattice-svcs:SourceVpcOwnerAccount": CENTRAL }), "Allowed");
      assert.equal(await verdict(principal, "sts:AssumeRole", String(c.outputs.controlPlaneRoleArn), policy, trust, { "sts:ExternalId": String(c.outputs.externalId) }), "Allowed");
      assert.notEqual(await verdict(principal, "sts:AssumeRole", String(c.outputs.controlPlaneRoleArn), policy, trust), "Allowed", "not without the ExternalId");
    }
    assert.equal(await verdict(principal, "vpc-lattice-svcs:Invoke", "arn:aws:vpc-lattice:us-east-1:999988887777:service/svc-0123456789abcdef0/x", policy), "ImplicitlyDenied");
    assert.equal(await verdict(principal, "sts:AssumeRole", "arn:aws:iam::444455556666:role/admin", policy), "ImplicitlyDenied");
    // Only cluster-api's role may assume the bridge, with the grant the stack gives it.
    const trust = json(bridge.inputs?.assumeRolePolicy);
    const callerGrant = byType(p, "aws:iam/rolePolicy:RolePolicy").find((r) => r.inputs?.name === "clusterra-assume-connector-bridge")!;
    assert.equal(callerGrant.inputs?.role, "clusterra-dev-cluster-api");
    assert.equal(await verdict(`arn:aws:iam::${CENTRAL}:role/clusterra-dev-cluster-api`, "sts:AssumeRole", principal, json(callerGrant.inputs?.policy), trust), "Allowed");
    const anyAssume = { Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: "sts:AssumeRole", Resource: "*" }] };
    assert.notEqual(await verdict(`arn:aws:iam::${CENTRAL}:role/clusterra-dev-central-k3s`, "sts:AssumeRole", principal, anyAssume, trust), "Allowed");
  });
});

describe("connector configuration", () => {
  const demo = exampleFile("connector-demo");
  const issues = (file = demo) => {
    const r = validateStack(file, exampleFiles().filter((f) => f.stack !== file.stack));
    return r.ok ? [] : r.issues;
  };

  it("hands central the connectors that name it", () => {
    const r = validateStack(exampleFile("central-dev"), exampleFiles().filter((f) => f.stack !== "central-dev"));
    assert.ok(r.ok);
    assert.deepEqual((r.config as CentralConfig).connectors, [{ stack: "connector-demo", clusterName: "demo-pcluster" }, { stack: "connector-offline", clusterName: "offline-pcluster" }]);
  });

  it("requires route tables without internet, and a central stack of the same environment and region", () => {
    const c = demo.values["clusterra:connector"] as Record<string, unknown>;
    const found = issues(withValues(demo, { "clusterra:connector": { ...c, noInternet: true }, "clusterra:environment": "prod", "aws:region": "eu-west-1", "clusterra:central": { stack: "central-dev", accountId: "999999999999" } }));
    assert.deepEqual(found.map((i) => i.key).sort(), ["aws:region", "clusterra:central.accountId", "clusterra:connector.routeTableIds", "clusterra:environment"]);
    assert.match(found.find((i) => i.key === "aws:region")!.problem, /Lattice/);
    const missing = issues(withValues(demo, { "clusterra:central": { stack: "central-nowhere", accountId: "111122223333" } }));
    assert.deepEqual(missing.map((i) => [i.key, i.valid]), [["clusterra:central.stack", "one of central-dev"]]);
  });

  it("refuses a second connector of one central with the same cluster name", () => {
    const offline = exampleFile("connector-offline");
    const c = offline.values["clusterra:connector"] as Record<string, unknown>;
    const found = issues(withValues(offline, { "clusterra:connector": { ...c, clusterName: "demo-pcluster" } }));
    assert.deepEqual(found.map((i) => [i.key, i.problem]), [["clusterra:connector.clusterName", "already attached to central-dev by stack connector-demo"]]);
  });

  it("names the bad key and what is valid for malformed connector values", () => {
    const c = demo.values["clusterra:connector"] as Record<string, unknown>;
    const found = issues(withValues(demo, { "clusterra:connector": { ...c, clusterSecurityGroupIds: ["sg-nope"], headNodeRoleName: "" } }));
    assert.ok(found.some((i) => i.key.startsWith("clusterra:connector.clusterSecurityGroupIds") && /security group id/.test(i.valid)));
    assert.ok(found.some((i) => i.key === "clusterra:connector.headNodeRoleName"));
  });
});
