/**
 * Tenant ids are DNS labels and nothing more: English words the platform itself writes
 * ("data", "cloud", "security"...) pass the pack, because isolation reads ownership from the
 * platform's names, accounts, addresses and tags, never from words. The example tenants'
 * plans with their ids renamed stand for plans of tenants so named: every name derives
 * from the id.
 */
import * as assert from "node:assert/strict";
import type { Deployment } from "../planning/deployment";
import { checkDeployment } from "../planning/policy-check";
import { plan } from "./helpers";

const WORDS = ["data", "cloud", "security", "health-data", "genomics"];

/** A plan with one tenant id replaced everywhere it is written as an id. */
function renamed(d: Deployment, from: string, to: string): Deployment {
  return JSON.parse(JSON.stringify(d).replace(new RegExp(`(?<![a-z0-9])${from}(?![a-z0-9])`, "g"), to)) as Deployment;
}

describe("tenants named by English words", function () {
  this.timeout(60000);

  it("pass the pack, every word a tenant", async () => {
    const accounts = { data: "444455556666", "health-data": "777788889999" };
    for (const [stack, from, to] of [["tenant-acme-dev", "acme", "data"], ["tenant-globex-dev", "globex", "health-data"]] as const) {
      const d = renamed((await plan(stack)).deployment, from, to);
      const report = checkDeployment(d, { tenants: WORDS, tenantAccounts: accounts });
      // (Ports derive from the id too: the contract's policy sees the renamed plan's ports move, which is its business.)
      assert.deepEqual(report.violations.filter((v) => v.policy !== "peering-flows-match-contract").map((v) => `${v.policy}: ${v.message}`), [], `${stack} as ${to}`);
    }
  });

  it("still catch a reference to another tenant so named", async () => {
    const d = renamed((await plan("tenant-acme-dev")).deployment, "acme", "data");
    const text = JSON.stringify(d).replace(/clusterra-dev-data-files-444455556666/g, "clusterra-dev-security-files-777788889999");
    assert.notEqual(text, JSON.stringify(d));
    const report = checkDeployment(JSON.parse(text) as Deployment, { tenants: WORDS });
    assert.ok(report.violations.some((v) => v.policy === "tenant-isolation" && /tenant "security"/.test(v.message)), JSON.stringify(report.violations.map((v) => v.message)));
  });
});
