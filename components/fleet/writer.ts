/**
 * Writes rendered fleet files. Under `pulumi up` they land in the repository's fleet/
 * (a pull request carries them to the clusters); under `pulumi preview` nothing is
 * written; under `clusterra plan` they go to the plan's output folder.
 */
import * as fs from "fs";
import * as path from "path";
import * as pulumi from "@pulumi/pulumi";
import { PROJECT_ROOT } from "../../config";
import { FACTS_FILE, offlineFactsFile } from "./facts";

/** Path inside the repository -> file content. */
export type FleetFileSet = Record<string, string>;

let targetRoot: string | undefined = PROJECT_ROOT;
let pending: Promise<string[]>[] = [];
/** An offline run (`clusterra plan`): its facts files say so. */
let offline = false;

/**
 * Where relative fleet paths are written (the plan points this at its output folder;
 * undefined writes nothing), and whether the run is offline (its facts files are marked).
 */
export function setFleetRoot(root: string | undefined, offlineRun = false): void {
  targetRoot = root;
  offline = offlineRun;
  pending = [];
}

/** The files as this run writes them: an offline run's facts files marked offline. */
function asWritten(set: FleetFileSet): FleetFileSet {
  if (!offline) return set;
  return Object.fromEntries(Object.entries(set).map(([rel, content]) => [rel, path.basename(rel) === FACTS_FILE ? offlineFactsFile(content) : content]));
}

/** Schedules the files to be written once their values are known. */
export function emitFleetFiles(files: pulumi.Output<FleetFileSet>): void {
  pending.push(
    new Promise<string[]>((resolve, reject) => {
      files.apply((set) => {
        try {
          if (pulumi.runtime.isDryRun() || targetRoot === undefined) return resolve([]);
          resolve(writeFleetFiles(targetRoot, asWritten(set)));
        } catch (e) {
          reject(e);
        }
      });
    }),
  );
}

/**
 * Schedules a removal: `select` gets the fleet root and returns the paths to remove
 * (under `pulumi up` and `plan --write-fleet` only, like writes).
 */
export function pruneFleet(select: (root: string) => string[], remove: (root: string, rels: string[]) => string[]): void {
  pending.push(
    new Promise<string[]>((resolve, reject) => {
      try {
        if (pulumi.runtime.isDryRun() || targetRoot === undefined) return resolve([]);
        const root = targetRoot;
        remove(root, select(root));
        resolve([]);
      } catch (e) {
        reject(e);
      }
    }),
  );
}

/** Writes each file (only when its content changed) and returns the paths written. */
export function writeFleetFiles(root: string, set: FleetFileSet): string[] {
  return Object.entries(set).map(([rel, content]) => {
    const file = path.join(root, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    if (!fs.existsSync(file) || fs.readFileSync(file, "utf8") !== content) fs.writeFileSync(file, content);
    return rel;
  });
}

/** Waits for every scheduled write; returns the paths, sorted. */
export async function flushFleetFiles(): Promise<string[]> {
  const written = (await Promise.all(pending)).flat();
  pending = [];
  return written.sort();
}
