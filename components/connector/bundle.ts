/** Bundles a Lambda handler from its TypeScript source into one small, reproducible file. */
import * as path from "path";
import { buildSync } from "esbuild";
import { PROJECT_ROOT } from "../../config";

/** Lambda's Node.js runtime, and the language level the bundle targets to match it. */
export const LAMBDA_NODE_RUNTIME = "nodejs22.x";
const BUNDLE_TARGET = "node22";

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
  });
  return result.outputFiles[0].text;
}
