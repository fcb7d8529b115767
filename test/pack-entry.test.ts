import * as assert from "node:assert/strict";
import { tenantsFromStackFiles } from "../config";
import { packPolicies } from "../policies/pack";
import { exampleRoot } from "./helpers";

describe("policy pack entry (policies/index.ts, what `pulumi preview --policy-pack` loads)", () => {
  it("builds one mandatory pack of every policy, with tenant-isolation defaulting to the stack files' tenants", () => {
    // Stand in for @pulumi/policy's PolicyPack, which would start a gRPC server.
    const policyModule = require.resolve("@pulumi/policy");
    const real = require(policyModule) as Record<string, unknown>;
    const built: { name: string; args: { enforcementLevel: string; policies: { name: string; configSchema?: { properties: Record<string, { default?: unknown }> } }[] } }[] = [];
    const stub = { ...real, PolicyPack: class { constructor(name: string, args: never) { built.push({ name, args }); } } };
    const saved = require.cache[policyModule];
    require.cache[policyModule] = { ...saved!, exports: stub } as NodeJS.Module;
    try {
      require("../policies/index");
    } finally {
      require.cache[policyModule] = saved;
    }
    assert.equal(built.length, 1);
    const [{ name, args }] = built;
    const { POLICIES } = require("../policies/rules") as { POLICIES: { name: string }[] };
    assert.equal(name, "clusterra");
    assert.equal(args.enforcementLevel, "mandatory");
    assert.deepEqual(args.policies.map((p) => p.name), POLICIES.map((p) => p.name));
    // The repository's own stack files, whatever tenants an operator keeps there.
    const isolation = args.policies.find((p) => p.name === "tenant-isolation")!;
    assert.deepEqual(isolation.configSchema!.properties.tenants.default, tenantsFromStackFiles());
    // The examples' tenants, read from their files.
    const examples = packPolicies(exampleRoot()).find((p) => p.name === "tenant-isolation")!.configSchema!.properties as Record<string, { default?: unknown }>;
    assert.deepEqual(examples.tenants.default, ["acme", "globex"]);
    assert.deepEqual(examples.tenantAccounts.default, { acme: "444455556666", globex: "777788889999" });
    assert.deepEqual(examples.tenantCidrs.default, { acme: "10.16.0.0/20", globex: "10.16.16.0/20" });
  });
});
