/**
 * The offline plan gives each resource the account it really lives in: a tenant stack makes
 * its Slurm keys in central's account (through its central provider), so the ARNs the fleet
 * hands the tenant's External Secrets must name central's account, and its roles the tenant's.
 */
import * as assert from "node:assert/strict";
import { providerAccount } from "../planning/mocks";
import { byType, clusterObjects, plan, skipWithoutHelm } from "./helpers";

const CENTRAL = "111122223333";

describe("accounts in the offline plan", function () {
  this.timeout(60000);

  it("reads a provider's account from its allowed accounts or the role it assumes", () => {
    assert.equal(providerAccount({ allowedAccountIds: JSON.stringify(["123456789012"]) }), "123456789012");
    assert.equal(providerAccount({ assumeRoles: JSON.stringify([{ roleArn: "arn:aws:iam::210987654321:role/x" }]) }), "210987654321");
    assert.equal(providerAccount({}), undefined);
  });

  for (const [tenant, account] of [["acme", "444455556666"], ["globex", "777788889999"]] as const) {
    it(`tenant ${tenant}: its Slurm keys live in central's account, its roles in its own (plan and committed fleet)`, async function () {
      const p = await plan(`tenant-${tenant}-dev`);
      const secrets = byType(p, "aws:secretsmanager/secret:Secret").map((s) => String(s.outputs?.arn));
      assert.ok(secrets.length >= 4);
      for (const a of secrets) assert.equal(a.split(":")[4], CENTRAL, a);
      // Its key delivery as ArgoCD renders it from the committed facts (skipped without Helm).
      const objects = clusterObjects(tenant);
      if (!objects) return skipWithoutHelm(this);
      const text = JSON.stringify(objects.filter((o) => o.kind === "SecretStore" || o.kind === "ExternalSecret"));
      const arns = text.match(/arn:aws:[a-z]+:[a-z0-9-]*:\d{12}:[^\s"]+/g) ?? [];
      for (const a of arns) assert.equal(a.split(":")[4], a.includes(":secretsmanager:") ? CENTRAL : account, a);
    });
  }
});
