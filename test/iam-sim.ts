/** Evaluates planned IAM documents with @cloud-copilot/iam-simulate: verdicts, not string matches. */
import { runSimulation } from "@cloud-copilot/iam-simulate";

export type Verdict = "Allowed" | "ExplicitlyDenied" | "ImplicitlyDenied";

export interface SimRequest {
  /** Calling principal's ARN. */
  readonly principal: string;
  readonly action: string;
  readonly resource: string;
  /** Account owning the resource. */
  readonly resourceAccount: string;
  /** Identity policies of the principal (documents or their JSON). */
  readonly identity?: readonly unknown[];
  /** Resource policy (trust policy, key policy), if any. */
  readonly resourcePolicy?: unknown;
  readonly context?: Readonly<Record<string, string | string[]>>;
}

const doc = (d: unknown) => (typeof d === "string" ? JSON.parse(d) : d);

/** The simulator's overall verdict; a malformed request or document fails the test. */
export async function simulate(r: SimRequest): Promise<Verdict> {
  const result = await runSimulation(
    {
      request: { principal: r.principal, action: r.action, resource: { resource: r.resource, accountId: r.resourceAccount }, contextVariables: { ...(r.context ?? {}) } },
      identityPolicies: (r.identity ?? []).map((policy, i) => ({ name: `p${i}`, policy: doc(policy) })),
      serviceControlPolicies: [],
      resourceControlPolicies: [],
      ...(r.resourcePolicy ? { resourcePolicy: doc(r.resourcePolicy) } : {}),
    },
    {},
  );
  if (result.resultType === "error") throw new Error(`simulation error for ${r.action} on ${r.resource}: ${JSON.stringify(result.errors)}`);
  return result.overallResult as Verdict;
}
