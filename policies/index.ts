/**
 * The CrossGuard pack: `pulumi preview --policy-pack policies` (run `npm ci` here and at the
 * repository root first). Only the Pulumi CLI loads this file; everything else imports
 * ./rules. Its policies and their defaults: ./pack.ts.
 */
import { PolicyPack } from "@pulumi/policy";
import { packPolicies } from "./pack";
import { PACK_DESCRIPTION, PACK_NAME } from "./rules";

new PolicyPack(PACK_NAME, {
  description: PACK_DESCRIPTION,
  enforcementLevel: "mandatory",
  provider: "aws",
  policies: packPolicies(),
});
