/**
 * The CrossGuard pack: `pulumi preview --policy-pack policies` (run `npm install` in this
 * folder first). Only the Pulumi CLI loads this file; everything else imports ./rules.
 */
import { PolicyPack } from "@pulumi/policy";
import { PACK_DESCRIPTION, PACK_NAME, POLICIES } from "./rules";

new PolicyPack(PACK_NAME, {
  description: PACK_DESCRIPTION,
  enforcementLevel: "mandatory",
  provider: "aws",
  policies: [...POLICIES],
});
