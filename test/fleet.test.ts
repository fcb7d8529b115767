import * as assert from "node:assert/strict";
import * as fs from "fs";
import * as path from "path";
import { exampleRoot } from "./helpers";

// That the committed fleet is what the stack files render is `fleet check --render`'s (CI runs it on the live files).
describe("the fleet the example stacks write", () => {
  it("holds no secret material", () => {
    const walk = (dir: string): string[] => fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
    const files = walk(path.join(exampleRoot(), "fleet"));
    assert.ok(files.length > 40, `${files.length} files`);
    for (const file of files) {
      const text = fs.readFileSync(file, "utf8");
      assert.doesNotMatch(text, /BEGIN [A-Z ]*PRIVATE KEY|AKIA[0-9A-Z]{16}|(password|secretString|jwt_hs256)\s*:\s*\S/i, file);
    }
  });
});
