import type * as pulumi from "@pulumi/pulumi";
import { Provider } from "@pulumi/aws/provider";
import type { StackConfig } from "../../config/types";
import { stackTags } from "../../facts/project";

export interface ProviderOptions {
  /** Tenant whose tag the resources carry (defaults to a tenant stack's own). */
  readonly tenantId?: string;
  /** Role the provider assumes (another account's, or a scoped one). */
  readonly assumeRoleArn?: pulumi.Input<string>;
  readonly region?: string;
  readonly allowedAccountIds?: readonly string[];
}

/** The AWS provider every resource of the stack goes through: pinned region, account guard, tags. */
export function stackProvider(name: string, config: StackConfig, options: ProviderOptions = {}): Provider {
  const tenantId = options.tenantId ?? (config.kind === "tenant" ? config.tenant.id : undefined);
  return new Provider(name, {
    region: options.region ?? config.region,
    ...(options.allowedAccountIds ?? config.allowedAccountIds ? { allowedAccountIds: [...(options.allowedAccountIds ?? config.allowedAccountIds ?? [])] } : {}),
    ...(options.assumeRoleArn ? { assumeRoles: [{ roleArn: options.assumeRoleArn, sessionName: `clusterra-${config.stack}` }] } : {}),
    defaultTags: { tags: stackTags(config.environment, config.kind, tenantId) },
  });
}

