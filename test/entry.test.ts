import * as assert from "node:assert/strict";
import * as pulumi from "@pulumi/pulumi";

describe("Pulumi entry point (dist/index.js, what `pulumi up` runs)", () => {
  it("exports the program as a function and turns bad configuration into a clean RunError", async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const entry = require("../index") as () => Promise<unknown>;
    assert.equal(typeof entry, "function");
    const saved = pulumi.runtime.allConfig();
    pulumi.runtime.setAllConfig({ "aws:region": "us-east-1", "clusterra:kind": "tenant", "clusterra:environment": "dev", "clusterra:netwrok": "{}" });
    try {
      await assert.rejects(entry(), (e: unknown) => {
        assert.ok(pulumi.RunError.isInstance(e), "a RunError: Pulumi prints its message without a stack trace");
        const message = (e as Error).message;
        assert.match(message, /^invalid configuration:\n/);
        assert.match(message, /clusterra:netwrok = \{\}: unknown key \(did you mean network\?\)/);
        assert.match(message, /clusterra:tenant: missing/);
        return true;
      });
    } finally {
      pulumi.runtime.setAllConfig(saved);
    }
  });
});
