/** The central stack: one per environment. */
import * as pulumi from "@pulumi/pulumi";
import { getCallerIdentityOutput } from "@pulumi/aws/getCallerIdentity";
import type { CentralConfig } from "../../config/types";
import { stackProvider } from "../security/provider";
import { CentralEnvironment } from "./environment";

/** What tenant stacks read through their StackReference. */
export interface CentralOutputs {
  readonly accountId: string;
  readonly region: string;
  readonly environment: string;
  readonly vpcId: string;
  readonly vpcCidr: string;
  readonly privateSubnetIds: string[];
  readonly routeTableIds: string[];
  readonly hostInstanceId: string;
  readonly hostPrivateIp: string;
  readonly hostSecurityGroupId: string;
  readonly peeringRoleArn: string;
  readonly slurmctldEndpoint: { readonly subnetIds: string[]; readonly targetInstanceId: string; readonly port: number };
  readonly heartbeatEndpoint: string;
  readonly kmsKeyArn: string;
}

export function centralStack(config: CentralConfig): Record<string, unknown> {
  const provider = stackProvider("aws", config);
  const accountId = getCallerIdentityOutput({}, { provider }).accountId;
  const env = new CentralEnvironment(`central-${config.environment}`, { config, accountId }, { providers: { aws: provider } });
  const outputs: { [K in keyof CentralOutputs]: pulumi.Input<CentralOutputs[K]> } = env.outputs;
  return outputs;
}
