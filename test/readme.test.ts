import * as assert from "node:assert/strict";
import * as fs from "fs";
import * as path from "path";
import { PROJECT_ROOT } from "../config";
import { contractTable } from "../facts/contract";

describe("README", () => {
  const readme = fs.readFileSync(path.join(PROJECT_ROOT, "README.md"), "utf8");

  it("shows the peering contract exactly as facts/contract.ts defines it", () => {
    assert.ok(readme.includes(contractTable()), `README's contract table is out of date; expected:\n${contractTable()}`);
  });

  it("has the two quick-start commands", () => {
    assert.ok(readme.includes("npm ci && npm run plan -- --stack tenant-acme-dev"));
    assert.ok(readme.includes("npm ci && npm test"));
  });
});
