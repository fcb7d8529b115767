import * as assert from "node:assert/strict";
import { PEERING_FLOWS, slurmctldNodePort } from "../facts/contract";
import { byType, json, plan } from "./helpers";

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

  it("deploy into the tenant account, and touch central only through central's attachment role", async () => {
    const [central, acme] = [await plan("central-dev"), await plan("tenant-acme-dev")];
    const providers = byType(acme, "pulumi:providers:aws");
    const own = providers.find((p) => p.urn.endsWith("::aws"))!;
    const inCentral = providers.find((p) => p.urn.endsWith("::central"))!;
    assert.deepEqual(json(own.inputs?.allowedAccountIds), ["444455556666"]);
    assert.deepEqual(json(inCentral.inputs?.allowedAccountIds), ["111122223333"]);
    const [assume] = json<{ roleArn: string; tags: Record<string, string> }[]>(inCentral.inputs?.assumeRoles);
    assert.equal(assume.roleArn, central.outputs.peeringRoleArn);
    assert.deepEqual(assume.tags, { "clusterra:tenant": "acme" });
    assert.deepEqual(json<{ tags: Record<string, string> }>(own.inputs?.defaultTags).tags, {
      "managed-by": "clusterra", "clusterra:environment": "dev", "clusterra:stack-kind": "tenant", "clusterra:tenant": "acme",
    });
    const centralSide = acme.deployment.deployment.resources.filter((r) => r.provider?.startsWith(inCentral.urn)).map((r) => r.type).sort();
    assert.deepEqual(centralSide, [
      "aws:ec2/route:Route",
      "aws:ec2/securityGroup:SecurityGroup",
      "aws:ec2/vpcPeeringConnectionAccepter:VpcPeeringConnectionAccepter",
      "aws:iam/role:Role",
      "aws:iam/rolePolicy:RolePolicy",
      "aws:lb/listener:Listener",
      "aws:lb/loadBalancer:LoadBalancer",
      "aws:lb/targetGroup:TargetGroup",
      "aws:lb/targetGroupAttachment:TargetGroupAttachment",
      ...Array<string>(4).fill("aws:secretsmanager/secret:Secret"),
      ...Array<string>(4).fill("aws:secretsmanager/secretPolicy:SecretPolicy"),
      // slurm.key, the JWT key and the database password; the cluster credential comes from the tenant server.
      ...Array<string>(3).fill("aws:secretsmanager/secretVersion:SecretVersion"),
      "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule",
      "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule",
      "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
      "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
    ]);
  });

  it("route each VPC to the other over the peering, once accepted (the server's NAT subnet too)", async () => {
    const acme = await plan("tenant-acme-dev");
    const [accept] = byType(acme, "aws:ec2/vpcPeeringConnectionAccepter:VpcPeeringConnectionAccepter");
    const routes = byType(acme, "aws:ec2/route:Route").filter((r) => r.inputs?.vpcPeeringConnectionId);
    assert.deepEqual(routes.map((r) => r.inputs?.destinationCidrBlock).sort(), ["10.0.0.0/16", "10.0.0.0/16", "10.16.0.0/20"]);
    const tables = byType(acme, "aws:ec2/routeTable:RouteTable").map((t) => t.id).sort();
    const toCentral = routes.filter((r) => r.inputs?.destinationCidrBlock === "10.0.0.0/16");
    assert.deepEqual(toCentral.map((r) => r.inputs?.routeTableId).sort(), tables);
    assert.ok(toCentral.every((r) => r.dependencies?.includes(accept.urn)));
  });

  it("admit across the peering exactly the contract's flows, tagged with their flow id", async () => {
    const [central, acme] = [await plan("central-dev"), await plan("tenant-acme-dev")];
    const ingress = byType(acme, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule").filter((r) => r.inputs?.cidrIpv4);
    const seen = ingress.map((r) => [(r.inputs?.tags as Record<string, string>)["clusterra:flow"], r.inputs?.fromPort, r.inputs?.toPort, r.inputs?.cidrIpv4]).sort();
    assert.deepEqual(seen, [
      ["argocd-to-k3s-api", 6443, 6443, `${central.outputs.hostPrivateIp}/32`],
      ["slurmctld-to-slurmd", 6818, 6818, `${central.outputs.hostPrivateIp}/32`],
      ["slurmd-to-slurmctld", 6817, 6817, "10.16.0.0/20"],
    ]);
    for (const [flowId, from] of seen) {
      const flow = PEERING_FLOWS.find((f) => f.id === flowId)!;
      assert.equal(flow.fromPort, from);
    }
  });

  it("let slurmd nodes out, by address, only to slurmctld across the peering, HTTPS and the VPC resolver", async () => {
    const acme = await plan("tenant-acme-dev");
    const [workers] = byType(acme, "aws:ec2/securityGroup:SecurityGroup").filter((g) => g.urn.endsWith("-workers"));
    const egress = byType(acme, "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule").filter((r) => r.inputs?.securityGroupId === workers.id && r.inputs?.cidrIpv4);
    assert.deepEqual(egress.map((r) => [r.inputs?.ipProtocol, r.inputs?.toPort, r.inputs?.cidrIpv4]).sort(), [
      ["tcp", 443, "0.0.0.0/0"],
      ["tcp", 53, "10.16.0.0/20"],
      ["tcp", 6817, "10.0.0.0/16"],
      ["udp", 53, "10.16.0.0/20"],
    ]);
  });

  it("deploy through the customer's deploy role, with the tenant's ExternalId", async () => {
    const acme = await plan("tenant-acme-dev");
    const own = byType(acme, "pulumi:providers:aws").find((p) => p.urn.endsWith("::aws"))!;
    assert.deepEqual(json(own.inputs?.assumeRoles), [{ roleArn: "arn:aws:iam::444455556666:role/clusterra-deploy", sessionName: "clusterra-tenant-acme-dev", externalId: "clusterra-dev-acme" }]);
  });

  it("give each tenant its own slurmctld endpoint: an internal NLB forwarding to its own NodePort", async () => {
    for (const [stack, id] of [["tenant-acme-dev", "acme"], ["tenant-globex-dev", "globex"]] as const) {
      const p = await plan(stack);
      const [nlb] = byType(p, "aws:lb/loadBalancer:LoadBalancer");
      assert.deepEqual([nlb.inputs?.internal, nlb.inputs?.loadBalancerType, nlb.inputs?.name], [true, "network", `clusterra-dev-${id}`]);
      const [tg] = byType(p, "aws:lb/targetGroup:TargetGroup");
      assert.equal(tg.inputs?.port, slurmctldNodePort(id));
      const [listener] = byType(p, "aws:lb/listener:Listener");
      assert.equal(listener.inputs?.port, 6817);
      assert.equal(p.outputs.slurmctldNodePort, slurmctldNodePort(id));
    }
    assert.notEqual(slurmctldNodePort("acme"), slurmctldNodePort("globex"));
  });

  it("spread subnets over the configured zones, tagged for Karpenter discovery", async () => {
    const globex = await plan("tenant-globex-dev");
    const privateSubnets = byType(globex, "aws:ec2/subnet:Subnet").filter((s) => (s.inputs?.tags as Record<string, string>)["karpenter.sh/discovery"]);
    assert.deepEqual(privateSubnets.map((s) => s.inputs?.availabilityZone), ["us-east-1a", "us-east-1b", "us-east-1c"]);
    assert.ok(privateSubnets.every((s) => (s.inputs?.tags as Record<string, string>)["karpenter.sh/discovery"] === "clusterra-dev-globex"));
  });
});
