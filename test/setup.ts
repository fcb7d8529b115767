/**
 * Mocha root hooks: every temporary file a test (or a program it runs) makes lands in one
 * folder of this process, removed when it ends, so `npm test` leaves nothing in /tmp; and
 * no test dials, listens or looks a name up off loopback (loopback-only.ts).
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { keepToLoopback } from "./loopback-only";

keepToLoopback();

const systemTmp = os.tmpdir();
/** This run's temporary folder; os.tmpdir() answers it from here on. */
export const RUN_TMP = fs.mkdtempSync(path.join(systemTmp, "clusterra-test-run-"));
process.env.TMPDIR = RUN_TMP;

export const mochaHooks = {
  /** The example repository's fleet, written once before any test reads it (helpers.ts). */
  async beforeAll(this: Mocha.Context): Promise<void> {
    this.timeout(120_000);
    const { writeExampleFleet } = await import("./helpers");
    await writeExampleFleet();
  },
};

// Removed when this process ends, not after a file: in parallel mode a worker runs many files.
process.on("exit", () => fs.rmSync(RUN_TMP, { recursive: true, force: true }));
