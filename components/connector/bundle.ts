/** Bundles a Lambda handler from its TypeScript source into one small, reproducible file. */
import { createHash } from "crypto";
import * as fs from "fs";
import * as path from "path";
import type { BuildOptions } from "esbuild";
import { PROJECT_ROOT } from "../../config";
import { cacheDir } from "../../facts/project";

/** Lambda's Node.js runtime, and the language level the bundle targets to match it. */
export const LAMBDA_NODE_RUNTIME = "nodejs22.x";
const BUNDLE_TARGET = "node22";

/** The event shipper's source, and where `npm run build` writes its bundle. */
export const EVENT_SHIPPER = {
  source: "components/connector/event-shipper/handler.ts",
  bundle: "dist/event-shipper/index.js",
} as const;

const OPTIONS: BuildOptions = {
  bundle: true,
  platform: "node",
  target: BUNDLE_TARGET,
  format: "cjs",
  minify: true,
  legalComments: "none",
  write: false,
  logLevel: "silent",
  // The Node.js runtime ships AWS SDK v3; bundling it would add 450 KB to every deploy.
  external: ["@aws-sdk/*"],
};

const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

/** What else decides a bundle: TypeScript's settings esbuild reads, the packages' versions. */
const SETTINGS_FILES = ["tsconfig.json", "package-lock.json"];

/**
 * The fingerprint of one thing a bundle was made from, relative to root: a file's SHA-256 (or
 * "absent"), or for `dir:<folder>` its listing (a new file beside an input, x.tsx by x.ts,
 * could be resolved instead).
 */
function fingerprint(root: string, input: string): string {
  if (input.startsWith("dir:")) {
    const dir = path.join(root, input.slice(4));
    return fs.existsSync(dir) ? sha256(fs.readdirSync(dir).sort().join("\0")) : "absent";
  }
  const file = path.join(root, input);
  return fs.existsSync(file) ? sha256(fs.readFileSync(file)) : "absent";
}

/**
 * The bundle of a handler. Kept (node_modules/.cache/clusterra/lambda) with the SHA-256 of
 * every file esbuild read and of their folders' listings, of tsconfig.json and the lockfile,
 * esbuild's version and the options: a plan bundles again only when one of them changed (a
 * central's plan plans its connectors, each bundling the shipper).
 */
export function bundleHandler(sourceFromRoot: string, root = PROJECT_ROOT): string {
  const esbuildVersion = (JSON.parse(fs.readFileSync(require.resolve("esbuild/package.json"), "utf8")) as { version: string }).version;
  const key = sha256(JSON.stringify([sourceFromRoot, esbuildVersion, OPTIONS]));
  const saved = path.join(cacheDir(root, "lambda"), `${key}.json`);
  try {
    const entry = JSON.parse(fs.readFileSync(saved, "utf8")) as { inputs: Record<string, string>; text: string };
    if (Object.entries(entry.inputs).every(([input, print]) => fingerprint(root, input) === print)) return entry.text;
  } catch {
    // Not kept yet, or unreadable: bundle.
  }
  // esbuild loads its binary only when a bundle is made.
  const { buildSync } = require("esbuild") as typeof import("esbuild");
  const result = buildSync({ ...OPTIONS, entryPoints: [path.join(root, sourceFromRoot)], absWorkingDir: root, metafile: true });
  const text = result.outputFiles?.[0]?.text;
  if (text === undefined) throw new Error(`esbuild wrote no bundle of ${sourceFromRoot}`);
  const read = Object.keys(result.metafile.inputs);
  const inputs = Object.fromEntries([...read, ...SETTINGS_FILES, ...[...new Set(read.map((f) => path.dirname(f)))].map((d) => `dir:${d}`)].map((input) => [input, fingerprint(root, input)]));
  fs.mkdirSync(path.dirname(saved), { recursive: true });
  const temporary = `${saved}.${process.pid}`;
  fs.writeFileSync(temporary, JSON.stringify({ inputs, text }));
  fs.renameSync(temporary, saved);
  return text;
}

/** Writes the shipper's bundle (what the Lambda runs) and returns its path. */
export function writeShipperBundle(root = PROJECT_ROOT): string {
  const out = path.join(root, EVENT_SHIPPER.bundle);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, bundleHandler(EVENT_SHIPPER.source));
  return out;
}

if (require.main === module) console.log(`wrote ${path.relative(PROJECT_ROOT, writeShipperBundle())}`);
