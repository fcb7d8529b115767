/** A central stack: the first of an environment, or a cell of it (its scope: facts/project.ts centralScope). */
import * as pulumi from "@pulumi/pulumi";
import { getCallerIdentityOutput } from "@pulumi/aws/getCallerIdentity";
import type { CentralConfig } from "../../config/types";
import { stackProvider } from "../security/provider";
import { CentralEnvironment } from "./environment";
import type { CentralOutputs } from "./outputs";
import { refuseStrandedTenants } from "./live-tenants";

export async function centralStack(config: CentralConfig): Promise<Record<string, unknown>> {
  // First: a checkout without a live tenant's stack file must not remove that tenant's part.
  await refuseStrandedTenants(config);
  const provider = stackProvider("aws", config);
  const accountId = getCallerIdentityOutput({}, { provider }).accountId;
  const env = new CentralEnvironment(`central-${config.scope}`, { config, accountId }, { providers: { aws: provider } });
  const outputs: { [K in keyof CentralOutputs]: pulumi.Input<CentralOutputs[K]> } = env.outputs;
  return outputs;
}
