/**
 * Pulumi's deployment export format (`pulumi stack export`, version 3), the part the
 * project reads and writes. `clusterra plan` writes it; `clusterra policy check` reads it
 * whether it came from a plan or from a real stack.
 */
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
  return d as Deployment;
}
