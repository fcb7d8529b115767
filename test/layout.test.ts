import * as assert from "node:assert/strict";
import * as fs from "fs";
import * as path from "path";
import * as ts from "typescript";
import { PROJECT_ROOT } from "../config";

/**
 * The code's layout, as README's "Layout" section states it: imports point down the layers
 * (facts, config, the components and the pack, the program, the engines, the commands, then
 * what drives them), and no import circle, between files or between folders. Type-only
 * imports count: a circle of types is still a circle to read.
 */
const LAYERS: Readonly<Record<string, number>> = {
  facts: 0,
  config: 1,
  components: 2,
  policies: 2,
  "program.ts": 3,
  "index.ts": 3,
  planning: 4,
  access: 4,
  "fleet-tools": 4,
  cli: 5,
  journey: 6,
  bench: 7,
  test: 7,
};

/** Every TypeScript source of the project (of `tops`, by default every layer), relative to its root. */
function sources(root: string, tops: readonly string[] = Object.keys(LAYERS)): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (!["node_modules", "dist", "baseline", "fixtures"].includes(e.name)) walk(rel);
      } else if (e.name.endsWith(".ts") && !e.name.endsWith(".d.ts")) out.push(rel);
    }
  };
  for (const top of tops) {
    if (!fs.existsSync(path.join(root, top))) continue;
    if (top.endsWith(".ts")) out.push(top);
    else walk(top);
  }
  return out.sort();
}

/** The project files a source imports (static, dynamic and type-only; packages aside). */
function imports(root: string, file: string, known: ReadonlySet<string>): string[] {
  const info = ts.preProcessFile(fs.readFileSync(path.join(root, file), "utf8"), true, true);
  const out = new Set<string>();
  for (const ref of info.importedFiles) {
    if (!ref.fileName.startsWith(".")) continue;
    const target = path.normalize(path.join(path.dirname(file), ref.fileName));
    const found = [`${target}.ts`, path.join(target, "index.ts")].find((c) => known.has(c));
    if (found) out.add(found);
  }
  return [...out];
}

/** Strongly connected groups of more than one node (Tarjan): each is an import circle. */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(group.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** What the layout rules find in a tree: circles between files and folders, imports that point up. */
export function layoutProblems(root: string): string[] {
  const files = sources(root);
  const known = new Set(files);
  const graph = new Map(files.map((f) => [f, imports(root, f, known)]));
  const problems = circles(graph).map((c) => `import circle between files: ${c.join(", ")}`);
  const folders = new Map<string, Set<string>>();
  for (const [f, targets] of graph) {
    for (const t of targets) {
      if (path.dirname(t) === path.dirname(f)) continue;
      if (!folders.has(path.dirname(f))) folders.set(path.dirname(f), new Set());
      folders.get(path.dirname(f))!.add(path.dirname(t));
    }
  }
  problems.push(...circles(new Map([...folders].map(([k, v]) => [k, [...v]]))).map((c) => `import circle between folders: ${c.join(", ")}`));
  const layer = (f: string) => LAYERS[f.split(path.sep)[0]];
  // A folder of sources no layer names would escape every rule: name it in LAYERS.
  for (const entry of fs.readdirSync(root, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name in LAYERS || ["node_modules", "dist", "fleet", "docs", "tools", "scripts", "stacks"].includes(entry.name) || entry.name.startsWith(".")) continue;
    if (sources(root, [entry.name]).length > 0) problems.push(`${entry.name}/ holds TypeScript but has no layer (test/layout.test.ts LAYERS)`);
  }
  for (const [f, targets] of graph) {
    for (const t of targets) if (layer(t) > layer(f)) problems.push(`${f} imports ${t}, a layer above it (${t.split(path.sep)[0]} over ${f.split(path.sep)[0]})`);
  }
  return problems;
}

describe("the code's layout (README, Layout)", () => {
  it("has no import circle between files or folders, and every import points down the layers", () => {
    assert.deepEqual(layoutProblems(PROJECT_ROOT), []);
  });

  it("names a circle between folders, a circle between files, an import that points up and a folder of no layer", () => {
    const root = fs.mkdtempSync(path.join(require("os").tmpdir(), "layout-"));
    const write = (file: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      fs.writeFileSync(path.join(root, file), text);
    };
    write("components/central/a.ts", 'import { b } from "../tenant/b";\nexport const a = b;\n');
    write("components/tenant/b.ts", 'export const b = 1;\n');
    write("components/tenant/c.ts", 'import type { a } from "../central/a";\nexport type C = typeof a;\n');
    write("planning/x.ts", 'import { y } from "./y";\nexport const x = 1;\n');
    write("planning/y.ts", 'export { x as y } from "./x";\n');
    write("facts/f.ts", 'import { x } from "../planning/x";\nexport const f = x;\n');
    write("extras/e.ts", 'export const e = 1;\n');
    assert.deepEqual(layoutProblems(root).sort(), [
      "extras/ holds TypeScript but has no layer (test/layout.test.ts LAYERS)",
      "facts/f.ts imports planning/x.ts, a layer above it (planning over facts)",
      "import circle between files: planning/x.ts, planning/y.ts",
      "import circle between folders: components/central, components/tenant",
    ]);
  });
});
