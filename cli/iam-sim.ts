/** Evaluates IAM documents with an IAM simulator: the tests and the inventory ask AWS's question, not a string's. */
import { runSimulation } from "@cloud-copilot/iam-simulate";

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

/** "Allowed", "ExplicitlyDenied" or "ImplicitlyDenied"; throws on a request the simulator finds invalid. */
export async function decide(a: Ask): Promise<string> {
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
