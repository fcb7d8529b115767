/**
 * Pulumi's deployment export format (`pulumi stack export`, version 3), the part the
 * project reads and writes. `clusterra plan` writes it; `clusterra policy check` reads it
 * whether it came from a plan or from a real stack.
 */
/**
 * How Pulumi marks a secret value in serialized properties: an object whose SECRET_SIG_KEY
 * holds SECRET_SIG (an export then holds it encrypted as `ciphertext`, a plan redacted).
 */
export const SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d";
export const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";

export interface DeploymentResource {
  readonly urn: string;
  readonly custom: boolean;
  readonly type: string;
  readonly id?: string;
  readonly inputs?: Record<string, unknown>;
  readonly outputs?: Record<string, unknown>;
  readonly parent?: string;
  readonly protect?: boolean;
  readonly retainOnDelete?: boolean;
  /** Plan-only (not in Pulumi's export): properties whose changes are ignored. */
  readonly ignoreChanges?: readonly string[];
  /** Plan-only (not in Pulumi's export): replacement deletes the old resource first. */
  readonly deleteBeforeReplace?: boolean;
  readonly dependencies?: readonly string[];
  readonly propertyDependencies?: Record<string, readonly string[]>;
  /** `<provider urn>::<provider id>`, as Pulumi writes it. */
  readonly provider?: string;
}

export interface Deployment {
  readonly version: 3;
  readonly deployment: {
    readonly manifest?: { readonly time: string; readonly magic: string; readonly version: string };
    readonly resources: readonly DeploymentResource[];
  };
}

/** The `type` part of a URN: `urn:pulumi:<stack>::<project>::<parent types$>type::<name>`. */
export function urnName(urn: string): string {
  return urn.split("::").pop() as string;
}

/** Reads a deployment file's JSON, rejecting anything that is not version 3 with resources. */
export function parseDeployment(text: string, file: string): Deployment {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new Error(`${file}: not JSON (${(e as Error).message})`);
  }
  const d = data as Partial<Deployment>;
  if (!d || d.version !== 3 || !Array.isArray(d.deployment?.resources)) {
    throw new Error(`${file}: not a Pulumi deployment export; expected {"version":3,"deployment":{"resources":[...]}}`);
  }
  const problems = d.deployment.resources.flatMap((r, i) => resourceProblems(r, i));
  if (problems.length > 0) throw new Error(`${file}: ${problems.slice(0, 10).join("; ")}${problems.length > 10 ? `; and ${problems.length - 10} more` : ""}`);
  return d as Deployment;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** What is wrong with one resource entry, as "resources[i].field ..." phrases. */
function resourceProblems(r: unknown, i: number): string[] {
  const at = `resources[${i}]`;
  if (!isRecord(r)) return [`${at} is not an object`];
  const problems: string[] = [];
  for (const key of ["urn", "type"]) if (typeof r[key] !== "string") problems.push(`${at}.${key} is not a string`);
  for (const key of ["inputs", "outputs", "propertyDependencies"]) if (r[key] !== undefined && !isRecord(r[key])) problems.push(`${at}.${key} is not an object`);
  for (const key of ["parent", "provider", "id"]) if (r[key] !== undefined && typeof r[key] !== "string") problems.push(`${at}.${key} is not a string`);
  if (r.dependencies !== undefined && !(Array.isArray(r.dependencies) && r.dependencies.every((x) => typeof x === "string"))) problems.push(`${at}.dependencies is not a list of URNs`);
  return problems;
}
