/**
 * Every policy of the Clusterra CrossGuard pack, in one list. The pack's entry
 * (policies/index.ts), the offline checker (planning/policy-check.ts), tests and tools all run these
 * same objects. Import this module, never policies/index.ts: constructing the PolicyPack
 * starts a gRPC server.
 */
import { PROJECT } from "../../facts/project";
import { POLICY_FACTS, type PolicyFacts, type PolicyName } from "./catalog";
import { COMPUTE_POLICIES } from "./compute";
import { DATA_POLICIES } from "./data";
import { EXCEPTION_POLICIES } from "./exceptions";
import { IAM_POLICIES } from "./iam";
import { ISOLATION_POLICIES } from "./isolation";
import { LAMBDA_POLICIES } from "./lambda";
import { LIMIT_POLICIES } from "./limits";
import { NETWORK_POLICIES } from "./network";
import { SAFETY_POLICIES } from "./safety";
import type { PackPolicy, PackResourcePolicy, PackStackPolicy } from "./util";

export const POLICIES: readonly PackPolicy[] = [
  ...IAM_POLICIES,
  ...NETWORK_POLICIES,
  ...COMPUTE_POLICIES,
  ...LIMIT_POLICIES,
  ...DATA_POLICIES,
  ...LAMBDA_POLICIES,
  ...SAFETY_POLICIES,
  ...ISOLATION_POLICIES,
  ...EXCEPTION_POLICIES,
];

export function isStackPolicy(p: PackPolicy): p is PackStackPolicy {
  return typeof (p as PackStackPolicy).validateStack === "function";
}

export function isResourcePolicy(p: PackPolicy): p is PackResourcePolicy {
  return typeof (p as PackResourcePolicy).validateResource === "function";
}

/** The table `name -> {severity, Checkov/Trivy equivalent}`, in pack order. */
export const POLICY_TABLE: readonly ({ name: PolicyName } & PolicyFacts)[] = POLICIES.map((p) => ({ name: p.name, ...POLICY_FACTS[p.name] }));

export const PACK_NAME = PROJECT;
export const PACK_DESCRIPTION = "Clusterra's guardrails: least-privilege IAM, nothing on the internet, the peering contract, encryption, protected state, tags and tenant isolation.";

export { POLICY_FACTS, type PolicyFacts, type PolicyName } from "./catalog";
export { resourceTypesOf, type PackPolicy, type PackResourcePolicy, type PackStackPolicy } from "./util";
export type { PackResourceOptions } from "./safety";
export type { TenantIsolationConfig } from "./isolation";
export { FLOW_TAG } from "./network";
