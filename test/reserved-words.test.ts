import * as assert from "node:assert/strict";
import * as fs from "fs";
import * as path from "path";
import { PROJECT_ROOT } from "../config";
import { collidesWithPlatformWords, wordsOf } from "../config/vocabulary";
import { PLATFORM_WORDS } from "../facts/reserved-words";
import { EXAMPLE_STACKS, exampleFiles, plan } from "./helpers";

function stringsOf(value: unknown, out: string[]): void {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) value.forEach((v) => stringsOf(v, out));
  else if (value && typeof value === "object") for (const [k, v] of Object.entries(value)) (out.push(k), stringsOf(v, out));
}

describe("platform words (tenant ids that would collide with generated names)", function () {
  this.timeout(60000);

  it("facts/reserved-words.ts holds every word the example plans write, tenant ids aside", async () => {
    const tenantIds = new Set(exampleFiles().flatMap((f) => (f.values["clusterra:kind"] === "tenant" ? (f.values["clusterra:tenant"] as { id: string }).id.split("-") : [])));
    const words = new Set<string>();
    for (const stack of EXAMPLE_STACKS) {
      const texts: string[] = [];
      for (const r of (await plan(stack)).deployment.deployment.resources) {
        texts.push(r.urn.split("::").pop() as string);
        stringsOf(r.inputs, texts);
      }
      for (const t of texts) for (const w of wordsOf(t)) if (!tenantIds.has(w)) words.add(w);
    }
    const expected = [...words].sort();
    if (process.env.UPDATE_RESERVED_WORDS) {
      const body = expected.map((w) => JSON.stringify(w)).join(", ");
      fs.writeFileSync(path.join(PROJECT_ROOT, "facts", "reserved-words.ts"), `/** Generated from the example plans by \`UPDATE_RESERVED_WORDS=1 npm test\`; a test fails when stale. */\nexport const PLATFORM_WORDS: readonly string[] = [${body}];\n`);
    }
    const missing = expected.filter((w) => !PLATFORM_WORDS.includes(w));
    assert.deepEqual(missing, [], "regenerate with UPDATE_RESERVED_WORDS=1 npm test");
  });

  it("refuses ids made only of platform or region words, accepts others", () => {
    for (const id of ["east", "us-east", "nat", "central", "dev"]) assert.equal(collidesWithPlatformWords(id), true, id);
    for (const id of ["acme", "globex", "acme-eu", "initech"]) assert.equal(collidesWithPlatformWords(id), false, id);
  });
});
