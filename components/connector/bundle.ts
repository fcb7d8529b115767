/** Bundles a Lambda handler from its TypeScript source into one small, reproducible file. */
import * as path from "path";
import { buildSync } from "esbuild";
import { PROJECT_ROOT } from "../../config";

export function bundleHandler(sourceFromRoot: string): string {
  const result = buildSync({
    entryPoints: [path.join(PROJECT_ROOT, sourceFromRoot)],
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    minify: true,
    legalComments: "none",
    write: false,
    logLevel: "silent",
  });
  return result.outputFiles[0].text;
}
