/** Bundles a Lambda handler from its TypeScript source into one small, reproducible file. */
import * as fs from "fs";
import * as path from "path";
import { buildSync } from "esbuild";
import { PROJECT_ROOT } from "../../config";

/** Lambda's Node.js runtime, and the language level the bundle targets to match it. */
export const LAMBDA_NODE_RUNTIME = "nodejs22.x";
const BUNDLE_TARGET = "node22";

/** The event shipper's source, and where `npm run build` writes its bundle. */
export const EVENT_SHIPPER = {
  source: "components/connector/event-shipper/handler.ts",
  bundle: "dist/event-shipper/index.js",
} as const;

export function bundleHandler(sourceFromRoot: string): string {
  const result = buildSync({
    entryPoints: [path.join(PROJECT_ROOT, sourceFromRoot)],
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
  });
  return result.outputFiles[0].text;
}

/** Writes the shipper's bundle (what the Lambda runs) and returns its path. */
export function writeShipperBundle(root = PROJECT_ROOT): string {
  const out = path.join(root, EVENT_SHIPPER.bundle);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, bundleHandler(EVENT_SHIPPER.source));
  return out;
}

if (require.main === module) console.log(`wrote ${path.relative(PROJECT_ROOT, writeShipperBundle())}`);
