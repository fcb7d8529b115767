/**
 * Tenant isolation in the central account, proved by evaluating the planned documents
 * (trust, role policy, KMS key policy of central-dev) with the IAM simulator: what a hostile
 * tenant run could ask for is denied, what the tenant's stack needs is allowed.
 */
import * as assert from "node:assert/strict";
import type { PlanResult } from "../planning/plan";
import { byType, examplePorts, json, named, plan } from "./helpers";
import { simulate, type Verdict } from "./sim-request";

const CENTRAL = "111122223333";
const ACCOUNTS = { acme: "444455556666", globex: "777788889999" } as const;
type Tenant = keyof typeof ACCOUNTS;

const SECRET_ACTIONS = [
  "CreateSecret", "DescribeSecret", "GetSecretValue", "PutSecretValue", "UpdateSecret", "DeleteSecret",
  "TagResource", "UntagResource", "PutResourcePolicy", "DeleteResourcePolicy", "GetResourcePolicy", "ListSecretVersionIds", "UpdateSecretVersionStage",
].map((a) => `secretsmanager:${a}`);

interface Facts {
  vpcArn: string;
  routeTableArn: string;
  hostGroupArn: string;
  keyArn: string;
  keyPolicy: unknown;
  roleArn: (tenant: Tenant) => string;
  trust: (tenant: Tenant) => unknown;
  policy: (tenant: Tenant) => unknown;
}

function factsOf(p: PlanResult): Facts {
  const ec2 = (r: string) => `arn:aws:ec2:us-east-1:${CENTRAL}:${r}`;
  const role = (t: Tenant) => named(p, "aws:iam/role:Role", `central-dev-tenant-${t}-access-role`);
  const [key] = byType(p, "aws:kms/key:Key");
  return {
    vpcArn: ec2(`vpc/${p.outputs.vpcId}`),
    routeTableArn: ec2(`route-table/${(p.outputs.routeTableIds as string[])[0]}`),
    hostGroupArn: ec2(`security-group/${p.outputs.hostSecurityGroupId}`),
    keyArn: String(key.outputs?.arn),
    keyPolicy: key.inputs?.policy,
    roleArn: (t) => String(role(t).outputs?.arn),
    trust: (t) => role(t).inputs?.assumeRolePolicy,
    policy: (t) => named(p, "aws:iam/rolePolicy:RolePolicy", `central-dev-tenant-${t}-access-policy`).inputs?.policy,
  };
}

describe("tenant isolation in the central account (IAM simulator over central-dev's plan)", function () {
  this.timeout(60000);
  let f: Facts;
  /** A request made with acme's central role. */
  let asAcme: (action: string, resource: string, context?: Record<string, string | string[]>) => Promise<Verdict>;

  before(async () => {
    f = factsOf(await plan("central-dev"));
    asAcme = (action, resource, context = {}) =>
      simulate({ principal: f.roleArn("acme"), action, resource, resourceAccount: CENTRAL, identity: [f.policy("acme")], context });
  });

  const peering = (id: string, requester: string) => ({
    arn: `arn:aws:ec2:us-east-1:${CENTRAL}:vpc-peering-connection/${id}`,
    context: { "ec2:AccepterVpc": f.vpcArn, "ec2:RequesterVpc": `arn:aws:ec2:us-east-1:${requester}:vpc/vpc-0123456789abcdef0` },
  });

  it("each tenant role is assumable by that tenant's deployer only", async () => {
    const assume = (principal: string, tenant: Tenant) =>
      simulate({ principal, action: "sts:AssumeRole", resource: f.roleArn(tenant), resourceAccount: CENTRAL, resourcePolicy: f.trust(tenant), identity: [{ Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: "sts:AssumeRole", Resource: "*" }] }], context: { "aws:PrincipalArn": principal } });
    const deployer = (name: string) => `arn:aws:iam::${CENTRAL}:role/${name}`;
    assert.equal(await assume(deployer("clusterra-deployer-dev-acme"), "acme"), "Allowed");
    assert.equal(await assume(deployer("clusterra-deployer-dev-acme"), "globex"), "ImplicitlyDenied", "acme's run cannot claim globex");
    assert.equal(await assume(deployer("clusterra-deployer-dev-globex"), "acme"), "ImplicitlyDenied");
    assert.equal(await assume(deployer("clusterra-deployer"), "acme"), "ImplicitlyDenied", "the central deployer is not a tenant");
  });

  it("a tenant run cannot touch central's routes, the host's rules (its own port among them), or make a load balancer", async () => {
    for (const action of ["ec2:CreateRoute", "ec2:ReplaceRoute", "ec2:DeleteRoute"]) assert.equal(await asAcme(action, f.routeTableArn), "ImplicitlyDenied", action);
    for (const action of ["ec2:AuthorizeSecurityGroupIngress", "ec2:RevokeSecurityGroupIngress", "ec2:AuthorizeSecurityGroupEgress", "ec2:RevokeSecurityGroupEgress", "ec2:ModifySecurityGroupRules"]) {
      assert.equal(await asAcme(action, f.hostGroupArn), "ImplicitlyDenied", action);
    }
    const elb = (r: string) => `arn:aws:elasticloadbalancing:us-east-1:${CENTRAL}:${r}`;
    assert.equal(await asAcme("elasticloadbalancing:CreateLoadBalancer", elb("loadbalancer/net/clusterra-dev-acme/0123456789abcdef")), "ImplicitlyDenied");
    assert.equal(await asAcme("elasticloadbalancing:CreateTargetGroup", elb("targetgroup/clusterra-dev-acme/0123456789abcdef")), "ImplicitlyDenied");
  });

  it("a tenant run accepts and tags only its own peering into the central VPC", async () => {
    const own = peering("pcx-0acme", ACCOUNTS.acme);
    assert.equal(await asAcme("ec2:AcceptVpcPeeringConnection", own.arn, own.context), "Allowed");
    assert.equal(await asAcme("ec2:AcceptVpcPeeringConnection", f.vpcArn), "Allowed");
    assert.equal(await asAcme("ec2:CreateTags", own.arn, own.context), "Allowed");
    assert.equal(await asAcme("ec2:DeleteTags", own.arn, { "aws:ResourceTag/clusterra:tenant": "acme" }), "Allowed", "DeleteTags carries no peering keys: the tenant tag scopes it");
    assert.equal(await asAcme("ec2:DescribeVpcPeeringConnections", "*"), "Allowed");
    for (const requester of [ACCOUNTS.globex, "999999999999"]) {
      const foreign = peering("pcx-0other", requester);
      assert.equal(await asAcme("ec2:AcceptVpcPeeringConnection", foreign.arn, foreign.context), "ImplicitlyDenied", `peering from ${requester}`);
      assert.equal(await asAcme("ec2:CreateTags", foreign.arn, foreign.context), "ImplicitlyDenied");
      assert.equal(await asAcme("ec2:ModifyVpcPeeringConnectionOptions", foreign.arn, foreign.context), "ImplicitlyDenied");
    }
    const intoAnotherVpc = { ...own.context, "ec2:AccepterVpc": `arn:aws:ec2:us-east-1:${CENTRAL}:vpc/vpc-0ffffffffffffffff` };
    assert.equal(await asAcme("ec2:AcceptVpcPeeringConnection", own.arn, intoAnotherVpc), "ImplicitlyDenied");
    assert.equal(await asAcme("ec2:DeleteTags", own.arn, { "aws:ResourceTag/clusterra:tenant": "globex" }), "ImplicitlyDenied");
  });

  it("a tenant run manages its own secrets under clusterra/dev/<tenant>/ and no one else's", async () => {
    const secret = (tenant: Tenant) => `arn:aws:secretsmanager:us-east-1:${CENTRAL}:secret:clusterra/dev/${tenant}/slurm-key-AbCdEf`;
    // The central provider tags every secret it creates with the tenant (default tags).
    const tagged = (tenant: Tenant) => ({ "aws:ResourceTag/clusterra:tenant": tenant });
    for (const action of SECRET_ACTIONS) {
      assert.equal(await asAcme(action, secret("acme"), tagged("acme")), "Allowed", action);
      assert.equal(await asAcme(action, secret("globex"), tagged("globex")), "ImplicitlyDenied", `${action} on globex`);
    }
    // Changing who may read a secret needs the tenant's own tag on it, too.
    assert.equal(await asAcme("secretsmanager:PutResourcePolicy", secret("acme"), tagged("globex")), "ImplicitlyDenied");
    assert.equal(await asAcme("secretsmanager:PutResourcePolicy", secret("acme"), { ...tagged("acme"), "secretsmanager:BlockPublicPolicy": "false" }), "ImplicitlyDenied");
    assert.equal(await asAcme("secretsmanager:GetSecretValue", `arn:aws:secretsmanager:us-east-1:${CENTRAL}:secret:clusterra/dev/session-signing-key-AbCdEf`), "ImplicitlyDenied");
    assert.equal(await asAcme("secretsmanager:GetRandomPassword", "*"), "Allowed", "key material is generated through the central provider");
    assert.equal(await asAcme("secretsmanager:ListSecrets", "*"), "ImplicitlyDenied");
  });

  it("central's key encrypts a tenant's secrets only through Secrets Manager, only for its own prefix (role policy and key policy)", async () => {
    // iam-simulate 0.1.173 drops context keys whose variable follows a colon
    // (kms:EncryptionContext:<key>; only `/` variables such as aws:ResourceTag/<key> are
    // matched), so it cannot evaluate the SecretARN condition. That condition is checked
    // exactly here; the simulator evaluates everything else, key policy included.
    const ENCRYPTION_CONTEXT = "kms:EncryptionContext:SecretARN";
    type Stmt = { Sid?: string; Condition?: Record<string, Record<string, unknown>> };
    const withoutContext = (tenant: Tenant) => {
      const doc = json<{ Version: string; Statement: Stmt[] }>(f.policy(tenant));
      const kms = doc.Statement.find((st) => st.Sid === "StackKeyForOwnSecretsOnly")!;
      assert.deepEqual(kms.Condition?.StringLike, { [ENCRYPTION_CONTEXT]: `arn:aws:secretsmanager:us-east-1:${CENTRAL}:secret:clusterra/dev/${tenant}/*` });
      const { StringLike: _, ...rest } = kms.Condition ?? {};
      return { ...doc, Statement: doc.Statement.map((st) => (st === kms ? { ...st, Condition: rest } : st)) };
    };
    const viaKey = (action: string, via: string) =>
      simulate({ principal: f.roleArn("acme"), action, resource: f.keyArn, resourceAccount: CENTRAL, identity: [withoutContext("acme")], resourcePolicy: f.keyPolicy, context: { "kms:ViaService": via } });
    withoutContext("globex");
    for (const action of ["kms:Encrypt", "kms:Decrypt", "kms:GenerateDataKey"]) {
      assert.equal(await viaKey(action, "secretsmanager.us-east-1.amazonaws.com"), "Allowed", action);
      assert.equal(await viaKey(action, "dynamodb.us-east-1.amazonaws.com"), "ImplicitlyDenied", `${action} through DynamoDB`);
    }
    assert.equal(await viaKey("kms:ReEncryptFrom", "secretsmanager.us-east-1.amazonaws.com"), "ImplicitlyDenied");
    assert.equal(await viaKey("kms:ScheduleKeyDeletion", "secretsmanager.us-east-1.amazonaws.com"), "ImplicitlyDenied");
  });

  it("central's key lets each tenant cluster's External Secrets role decrypt its own keys through Secrets Manager, nothing more", async () => {
    // As above, the simulator cannot evaluate kms:EncryptionContext:<key>: checked exactly, then removed.
    type Stmt = { Principal?: { AWS?: string }; Action?: string | string[]; Condition?: Record<string, Record<string, unknown>> };
    const keyPolicy = json<{ Version: string; Statement: Stmt[] }>(f.keyPolicy);
    // Readers decrypt; each tenant's server (which encrypts its ArgoCD credential) is tested with the tenant cluster.
    const readers = keyPolicy.Statement.filter((st) => st.Condition?.ArnEquals?.["aws:PrincipalArn"] && st.Action === "kms:Decrypt");
    assert.deepEqual(
      readers.map((st) => [st.Condition?.ArnEquals?.["aws:PrincipalArn"], st.Condition?.StringLike?.["kms:EncryptionContext:SecretARN"]]),
      (["acme", "globex"] as const).map((t) => [`arn:aws:iam::${ACCOUNTS[t]}:role/clusterra-dev-${t}-external-secrets`, `arn:aws:secretsmanager:us-east-1:${CENTRAL}:secret:clusterra/dev/${t}/*`]),
    );
    const simulated = { ...keyPolicy, Statement: keyPolicy.Statement.map((st) => (st.Condition?.ArnEquals ? { ...st, Condition: { ArnEquals: st.Condition!.ArnEquals, StringEquals: st.Condition!.StringEquals } } : st)) };
    const allowAll = { Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: "kms:*", Resource: "*" }] };
    const as = (principal: string, action: string, via = "secretsmanager.us-east-1.amazonaws.com") =>
      simulate({ principal, action, resource: f.keyArn, resourceAccount: CENTRAL, identity: [allowAll], resourcePolicy: simulated, context: { "kms:ViaService": via } });
    const esRole = `arn:aws:iam::${ACCOUNTS.acme}:role/clusterra-dev-acme-external-secrets`;
    assert.equal(await as(esRole, "kms:Decrypt"), "Allowed");
    assert.equal(await as(esRole, "kms:Decrypt", "s3.us-east-1.amazonaws.com"), "ImplicitlyDenied");
    assert.equal(await as(esRole, "kms:Encrypt"), "ImplicitlyDenied");
    assert.equal(await as(`arn:aws:iam::${ACCOUNTS.acme}:role/clusterra-dev-acme-k3s-server`, "kms:Decrypt"), "ImplicitlyDenied", "only the External Secrets role");
    assert.equal(await as(`arn:aws:iam::${ACCOUNTS.acme}:role/clusterra-dev-acme-k3s-server`, "kms:GenerateDataKey"), "Allowed", "the server publishes ArgoCD's credential");
    assert.equal(await as(`arn:aws:iam::${ACCOUNTS.acme}:role/clusterra-dev-acme-k3s-server`, "kms:GenerateDataKey", "s3.us-east-1.amazonaws.com"), "ImplicitlyDenied");
    assert.equal(await as(`arn:aws:iam::999999999999:role/clusterra-dev-acme-external-secrets`, "kms:Decrypt"), "ImplicitlyDenied");
  });

  it("central owns each tenant's route, 6818 egress and slurmctld port, derived from the tenant stack files", async () => {
    const p = await plan("central-dev");
    const routes = byType(p, "aws:ec2/route:Route").filter((r) => r.inputs?.vpcPeeringConnectionId);
    assert.deepEqual(routes.map((r) => r.inputs?.destinationCidrBlock).sort(), ["10.16.0.0/20", "10.16.16.0/20"]);
    const egress = byType(p, "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule").filter((r) => r.inputs?.securityGroupId === p.outputs.hostSecurityGroupId && r.inputs?.toPort === 6818);
    assert.deepEqual(egress.map((r) => [r.inputs?.cidrIpv4, json<Record<string, string>>(r.inputs?.tags)["clusterra:flow"]]).sort(), [["10.16.0.0/20", "slurmctld-to-slurmd"], ["10.16.16.0/20", "slurmctld-to-slurmd"]]);
    // Each tenant's VPC reaches the host on its own NodePort only: no rule admits a tenant on another's port.
    const fromTenants = byType(p, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule").filter((r) => ["10.16.0.0/20", "10.16.16.0/20"].includes(String(r.inputs?.cidrIpv4)));
    assert.deepEqual(fromTenants.map((r) => [r.urn.split("::").pop(), r.inputs?.securityGroupId, r.inputs?.cidrIpv4, r.inputs?.fromPort, r.inputs?.toPort]).sort(), [
      ["central-dev-tenant-acme-slurmd-to-slurmctld", p.outputs.hostSecurityGroupId, "10.16.0.0/20", examplePorts("acme").slurmctld, examplePorts("acme").slurmctld],
      ["central-dev-tenant-acme-slurmstepd-to-srun", p.outputs.hostSecurityGroupId, "10.16.0.0/20", examplePorts("acme").srunBlock.from, examplePorts("acme").srunBlock.to],
      ["central-dev-tenant-globex-slurmd-to-slurmctld", p.outputs.hostSecurityGroupId, "10.16.16.0/20", examplePorts("globex").slurmctld, examplePorts("globex").slurmctld],
      ["central-dev-tenant-globex-slurmstepd-to-srun", p.outputs.hostSecurityGroupId, "10.16.16.0/20", examplePorts("globex").srunBlock.from, examplePorts("globex").srunBlock.to],
    ]);
    assert.equal(byType(p, "aws:lb/loadBalancer:LoadBalancer").length, 0, "no load balancer: one more tenant is one rule");
  });
});
