/**
 * An edge-agent's heartbeat proves its tenant with its own role (facts/contract.ts
 * HEARTBEAT_AUTH): the agent and cluster-api are given the same audience, headers and STS
 * endpoint, and cluster-api's caller template, filled with the tenant a heartbeat claims and
 * its account, admits the session of that tenant's planned edge-agent role and no other's.
 */
import * as assert from "node:assert/strict";
import { renderTenantAddOn } from "../fleet-tools/render";
import { heartbeatSigning, heartbeatVerification } from "../components/fleet/heartbeat";
import { HEARTBEAT_AUTH } from "../facts/contract";
import { byType, exampleRoot, needHelm, plan } from "./helpers";

/** cluster-api's match: the template filled, its one `*` any run of characters. */
function matches(template: string, tenant: string, account: string, arn: string): boolean {
  const pattern = template.replace("{tenant}", tenant).replace("{account}", account).split("*").map((p) => p.replace(/[.+?^${}()|[\]\\/]/g, "\\$&")).join("[^/]*");
  return new RegExp(`^${pattern}$`).test(arn);
}

describe("heartbeats: each edge-agent proves its tenant with its own role", function () {
  this.timeout(120_000);
  const scope = { environment: "dev", scope: "dev", region: "us-east-1", partition: "aws" } as const;

  it("gives the agent and cluster-api the same audience, headers and STS endpoint, and cluster-api a bound on age", () => {
    const signing = heartbeatSigning(scope);
    const verification = heartbeatVerification(scope);
    for (const [k, v] of Object.entries(signing)) assert.equal(verification[k], v, k);
    assert.equal(signing.stsEndpoint, "https://sts.us-east-1.amazonaws.com");
    assert.equal(heartbeatSigning({ ...scope, region: "cn-north-1", partition: "aws-cn" }).stsEndpoint, "https://sts.cn-north-1.amazonaws.com.cn");
    assert.ok(Number(verification.maxAgeSeconds) > 0 && Number(verification.maxAgeSeconds) <= 300);
    assert.notEqual(heartbeatSigning({ ...scope, environment: "prod", scope: "prod" }).audience, signing.audience, "another environment's cluster-api refuses it");
    assert.notEqual(heartbeatSigning({ ...scope, scope: "dev-b" }).audience, signing.audience, "another cell's cluster-api of the environment refuses it");
  });

  it("admits the session of the tenant's planned edge-agent role for that tenant only", async () => {
    const template = String(heartbeatVerification(scope).callerArnTemplate);
    const tenants = await Promise.all(["acme", "globex"].map(async (id) => {
      const p = await plan(`tenant-${id}-dev`);
      const role = byType(p, "aws:iam/role:Role").find((r) => String(r.inputs?.name ?? "").endsWith("-edge-agent"));
      assert.ok(role, `${id}: an edge-agent role`);
      const account = p.config.kind === "tenant" ? p.config.tenant.accountId : "";
      return { id, account, session: `arn:aws:sts::${account}:assumed-role/${String(role.inputs?.name)}/edge-agent-${id}` };
    }));
    const [acme, globex] = tenants;
    assert.ok(matches(template, acme.id, acme.account, acme.session), acme.session);
    assert.ok(matches(template, globex.id, globex.account, globex.session), globex.session);
    // globex's agent claiming to be acme: its session is not acme's role in acme's account.
    assert.ok(!matches(template, acme.id, acme.account, globex.session));
    // Nor another role of acme's own account, nor the role itself (an IAM user or role ARN is not a session).
    assert.ok(!matches(template, acme.id, acme.account, `arn:aws:sts::${acme.account}:assumed-role/clusterra-dev-acme-worker/i-0abc`));
    assert.ok(!matches(template, acme.id, acme.account, `arn:aws:iam::${acme.account}:role/clusterra-dev-acme-edge-agent`));
  });

  it("reaches the agent's and cluster-api's environments as the charts render them", async function () {
    const helm = needHelm(this);
    const objects = renderTenantAddOn(exampleRoot(), helm, "dev", "acme", "edge-agent") as { kind: string; spec?: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } } }[];
    const env = new Map(objects.find((o) => o.kind === "Deployment")?.spec?.template.spec.containers[0].env.map((e) => [e.name, e.value]));
    assert.equal(env.get("HEARTBEAT_AUTH"), HEARTBEAT_AUTH.scheme);
    assert.equal(env.get("HEARTBEAT_AUDIENCE"), heartbeatSigning(scope).audience);
    assert.equal(env.get("HEARTBEAT_STS_ENDPOINT"), heartbeatSigning(scope).stsEndpoint);
    // Signed for central's region, not the agent's own (AWS_REGION), or STS refuses the scope.
    assert.equal(env.get("HEARTBEAT_STS_REGION"), scope.region);
    assert.equal(env.get("HEARTBEAT_BODY_DIGEST_HEADER"), HEARTBEAT_AUTH.bodyDigestHeader);
  });
});
