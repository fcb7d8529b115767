/**
 * The objects an Application syncs, each with its own text: a directory source's files as
 * they are in git, a Helm source's objects as `helm template` printed them. Applying the
 * original text matters: re-serialising YAML can change a value's type ("no" to false).
 */
import * as fs from "fs";
import * as path from "path";
import { parseAllDocuments } from "yaml";

export interface KubeObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  readonly spec?: Record<string, unknown>;
  readonly [key: string]: unknown;
}

export interface Manifest {
  /** The object as parsed (for decisions). */
  readonly object: KubeObject;
  /** The object's own text (for applying). */
  readonly text: string;
  /** Where it came from: a file, or `<chart> render`. */
  readonly origin: string;
}

/** Every document of a multi-document YAML text, each with its own slice of the text. */
export function splitManifests(text: string, origin: string): Manifest[] {
  const out: Manifest[] = [];
  for (const doc of parseAllDocuments(text)) {
    const object = doc.toJS() as KubeObject | null;
    if (!object || typeof object !== "object" || !object.kind) continue;
    const [start, , end] = doc.range;
    out.push({ object, text: text.slice(start, end), origin });
  }
  return out;
}

/** A directory source: its YAML and JSON files (not recursive unless asked), in file order. */
export function directoryManifests(root: string, dir: string, recurse: boolean): Manifest[] {
  const abs = path.join(root, dir);
  const files: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.isDirectory()) {
        if (recurse) walk(path.join(d, e.name));
      } else if (/\.(ya?ml|json)$/.test(e.name)) files.push(path.join(d, e.name));
    }
  };
  walk(abs);
  return files.flatMap((f) => splitManifests(fs.readFileSync(f, "utf8"), path.relative(root, f)));
}

/** group of an apiVersion ("" for the core group). */
export function groupOf(apiVersion: string): string {
  return apiVersion.includes("/") ? apiVersion.split("/")[0] : "";
}
