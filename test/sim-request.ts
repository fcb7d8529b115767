/** Planned IAM documents (JSON text, as the plan holds them) through the shared simulator helper. */
import { decide } from "../access/iam-sim";

export type Verdict = "Allowed" | "ExplicitlyDenied" | "ImplicitlyDenied";

/** One request, evaluated by the IAM simulator over planned documents (JSON text or objects). */
export async function simulate(r: { principal: string; action: string; resource: string; resourceAccount: string; identity?: readonly unknown[]; resourcePolicy?: unknown; context?: Record<string, string | string[]> }): Promise<Verdict> {
  const doc = (d: unknown) => (typeof d === "string" ? JSON.parse(d) : d);
  return (await decide({ ...r, identity: (r.identity ?? []).map(doc), resourcePolicy: r.resourcePolicy === undefined ? undefined : doc(r.resourcePolicy) })) as Verdict;
}
