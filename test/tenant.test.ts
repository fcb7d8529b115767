import * as assert from "node:assert/strict";
import { flowPorts, PEERING_FLOWS } from "../facts/contract";
import { byType, examplePorts, json, plan } from "./helpers";

describe("tenant stacks", function () {
  this.timeout(60000);

  it("read central through a StackReference resolved from central's own offline outputs", async () => {
    const [central, acme] = [await plan("central-dev"), await plan("tenant-acme-dev")];
    const [ref] = byType(acme, "pulumi:pulumi:StackReference");
    assert.equal(ref.inputs?.name, "central-dev");
    const [request] = byType(acme, "aws:ec2/vpcPeeringConnection:VpcPeeringConnection");
    assert.equal(request.inputs?.peerVpcId, central.outputs.vpcId);
    assert.equal(request.inputs?.peerOwnerId, "111122223333");
    assert.equal(request.inputs?.peerRegion, undefined, "same region: no peerRegion");
  });

  it("deploy into the tenant account, and touch central only through the role central made for this tenant", async () => {
    const [central, acme] = [await plan("central-dev"), await plan("tenant-acme-dev")];
    const providers = byType(acme, "pulumi:providers:aws");
    const own = providers.find((p) => p.urn.endsWith("::aws"))!;
    const inCentral = providers.find((p) => p.urn.endsWith("::central"))!;
    assert.deepEqual(json(own.inputs?.allowedAccountIds), ["444455556666"]);
    assert.deepEqual(json(inCentral.inputs?.allowedAccountIds), ["111122223333"]);
    const [assume] = json<{ roleArn: string; tags?: Record<string, string> }[]>(inCentral.inputs?.assumeRoles);
    assert.equal(assume.roleArn, (central.outputs.tenantRoleArns as Record<string, string>).acme);
    assert.equal(assume.tags, undefined, "no session tags: the role itself is the tenant's");
    assert.deepEqual(json<{ tags: Record<string, string> }>(own.inputs?.defaultTags).tags, {
      "managed-by": "clusterra", "clusterra:environment": "dev", "clusterra:stack-kind": "tenant", "clusterra:tenant": "acme",
    });
    const centralSide = acme.deployment.deployment.resources.filter((r) => r.provider?.startsWith(inCentral.urn)).map((r) => r.type).sort();
    // Routes, rules and the endpoint on central's side are central's own resources now.
    assert.deepEqual(centralSide, [
      // The alarms central keeps on this tenant's server (its metrics shared through central's sink).
      ...Array<string>(5).fill("aws:cloudwatch/metricAlarm:MetricAlarm"),
      "aws:ec2/vpcPeeringConnectionAccepter:VpcPeeringConnectionAccepter",
      // The tenant's own secrets, under its prefix in central's Secrets Manager: slurm.key, the
      // JWT key and the database password; the cluster credential comes from the tenant server.
      // Central's External Secrets role for the tenant is central's (TenantLink).
      ...Array<string>(4).fill("aws:secretsmanager/secret:Secret"),
      ...Array<string>(4).fill("aws:secretsmanager/secretPolicy:SecretPolicy"),
      ...Array<string>(3).fill("aws:secretsmanager/secretVersion:SecretVersion"),
    ]);
  });

  it("route each VPC to the other over the peering, once accepted", async () => {
    const acme = await plan("tenant-acme-dev");
    const [accept] = byType(acme, "aws:ec2/vpcPeeringConnectionAccepter:VpcPeeringConnectionAccepter");
    const routes = byType(acme, "aws:ec2/route:Route").filter((r) => r.inputs?.vpcPeeringConnectionId);
    // Both the private and the NAT subnet's tables (the server talks to central too); central routes back itself (TenantLink).
    assert.deepEqual(routes.map((r) => r.inputs?.destinationCidrBlock).sort(), ["10.0.0.0/16", "10.0.0.0/16"]);
    const toCentral = routes.find((r) => r.inputs?.destinationCidrBlock === "10.0.0.0/16")!;
    assert.ok(toCentral.dependencies?.includes(accept.urn));
  });

  it("admit across the peering exactly the contract's flows, tagged with their flow id", async () => {
    const [central, acme] = [await plan("central-dev"), await plan("tenant-acme-dev")];
    const ingress = byType(acme, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule").filter((r) => r.inputs?.cidrIpv4);
    const seen = ingress.map((r) => [(r.inputs?.tags as Record<string, string>)["clusterra:flow"], r.inputs?.fromPort, r.inputs?.toPort, r.inputs?.cidrIpv4]).sort();
    assert.deepEqual(seen, [
      ["argocd-to-k3s-api", 6443, 6443, `${central.outputs.hostPrivateIp}/32`],
      ["slurmctld-to-slurmd", 6818, 6818, `${central.outputs.hostPrivateIp}/32`],
    ]);
    for (const [flowId, from] of seen) {
      const flow = PEERING_FLOWS.find((f) => f.id === flowId)!;
      assert.equal(flowPorts(flow, examplePorts("acme")).fromPort, from);
    }
  });

  it("let slurmd nodes out only to their own slurmctld port and srun block on the central host, HTTPS and the VPC resolver", async () => {
    const [central, acme] = [await plan("central-dev"), await plan("tenant-acme-dev")];
    const [workers] = byType(acme, "aws:ec2/securityGroup:SecurityGroup").filter((g) => g.urn.endsWith("-workers"));
    // By address; rules among the cluster's own groups are the cluster flow table's (tenant-cluster tests).
    const egress = byType(acme, "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule").filter((r) => r.inputs?.securityGroupId === workers.id && r.inputs?.cidrIpv4);
    assert.deepEqual(egress.map((r) => [r.inputs?.ipProtocol, r.inputs?.toPort, r.inputs?.cidrIpv4]).sort(), [
      ["tcp", examplePorts("acme").slurmctld, `${central.outputs.hostPrivateIp}/32`],
      ["tcp", examplePorts("acme").srunBlock.to, `${central.outputs.hostPrivateIp}/32`],
      ["tcp", 443, "0.0.0.0/0"],
      ["tcp", 53, "10.16.0.0/20"],
      ["udp", 53, "10.16.0.0/20"],
    ]);
  });

  it("deploy through the customer's deploy role, with the tenant's ExternalId", async () => {
    const acme = await plan("tenant-acme-dev");
    const own = byType(acme, "pulumi:providers:aws").find((p) => p.urn.endsWith("::aws"))!;
    assert.deepEqual(json(own.inputs?.assumeRoles), [{ roleArn: "arn:aws:iam::444455556666:role/clusterra-deploy-dev-acme", sessionName: "clusterra-tenant-acme-dev", externalId: "clusterra-dev-acme" }]);
  });

  it("publish the slurmctld endpoint central made for this tenant: the central host on the tenant's own port", async () => {
    const central = await plan("central-dev");
    for (const [stack, id] of [["tenant-acme-dev", "acme"], ["tenant-globex-dev", "globex"]] as const) {
      const p = await plan(stack);
      const endpoint = (central.outputs.slurmctldEndpoints as Record<string, { host: string; port: number }>)[id];
      assert.deepEqual(endpoint, { host: central.outputs.hostPrivateIp, port: examplePorts(id).slurmctld });
      assert.deepEqual([p.outputs.slurmctldEndpoint, p.outputs.slurmctldPort], [endpoint.host, endpoint.port]);
      assert.equal(byType(p, "aws:lb/loadBalancer:LoadBalancer").length, 0);
    }
    assert.notEqual(examplePorts("acme").slurmctld, examplePorts("globex").slurmctld);
  });

  it("spread subnets over the configured zones, tagged for Karpenter discovery", async () => {
    const globex = await plan("tenant-globex-dev");
    const privateSubnets = byType(globex, "aws:ec2/subnet:Subnet").filter((s) => (s.inputs?.tags as Record<string, string>)["karpenter.sh/discovery"]);
    assert.deepEqual(privateSubnets.map((s) => s.inputs?.availabilityZone), ["us-east-1a", "us-east-1b", "us-east-1c"]);
    assert.ok(privateSubnets.every((s) => (s.inputs?.tags as Record<string, string>)["karpenter.sh/discovery"] === "clusterra-dev-globex"));
  });
});
