import * as assert from "node:assert/strict";
import * as fs from "fs";
import * as path from "path";
import { PROJECT_ROOT } from "../config";
import { EXAMPLE_STACKS, plan } from "./helpers";

describe("fleet/ in git", function () {
  this.timeout(60000);

  it("holds exactly what the example stacks render (regenerate with `npm run plan -- --stack <s> --write-fleet`)", async () => {
    for (const stack of EXAMPLE_STACKS) {
      const p = await plan(stack);
      for (const rel of p.fleetFiles) {
        const committed = path.join(PROJECT_ROOT, rel);
        assert.ok(fs.existsSync(committed), `${rel} is rendered by ${stack} but not committed`);
        assert.equal(fs.readFileSync(committed, "utf8"), fs.readFileSync(path.join(p.fleetRoot!, rel), "utf8"), `${rel} differs from what ${stack} renders`);
      }
    }
  });

  it("holds no secret material", () => {
    const walk = (dir: string): string[] => fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
    for (const file of walk(path.join(PROJECT_ROOT, "fleet"))) {
      const text = fs.readFileSync(file, "utf8");
      assert.doesNotMatch(text, /BEGIN [A-Z ]*PRIVATE KEY|AKIA[0-9A-Z]{16}|(password|secretString|jwt_hs256)\s*:\s*\S/i, file);
    }
  });
});
