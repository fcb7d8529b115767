import type * as pulumi from "@pulumi/pulumi";
import { Provider } from "@pulumi/aws/provider";
import type { StackConfig } from "../../config/types";
import { stackTags } from "../../facts/project";

export interface ProviderOptions {
  /** Tenant whose tag the resources carry (defaults to a tenant stack's own). */
  readonly tenantId?: string;
  /** Role the provider assumes (another account's, or a scoped one). */
  readonly assumeRoleArn?: pulumi.Input<string>;
  /** ExternalId the role's trust policy requires (cross-account roles). */
  readonly externalId?: string;
  /** Session tags on that assumption (the role's policy matches resources against them). */
  readonly sessionTags?: Readonly<Record<string, string>>;
  readonly region?: string;
  readonly allowedAccountIds?: readonly string[];
}

/** The AWS provider every resource of the stack goes through: pinned region, account guard, tags. */
export function stackProvider(name: string, config: StackConfig, options: ProviderOptions = {}): Provider {
  const tenantId = options.tenantId ?? (config.kind === "tenant" ? config.tenant.id : undefined);
  // A tenant stack is always pinned to the tenant's account, whether or not the file says so.
  const allowed = options.allowedAccountIds ?? config.allowedAccountIds ?? (config.kind === "tenant" ? [config.tenant.accountId] : undefined);
  return new Provider(name, {
    region: options.region ?? config.region,
    // An explicit provider does not read aws:* stack config: pass the profile on.
    ...(config.profile ? { profile: config.profile } : {}),
    ...(allowed ? { allowedAccountIds: [...allowed] } : {}),
    ...(options.assumeRoleArn ? { assumeRoles: [{ roleArn: options.assumeRoleArn, sessionName: `clusterra-${config.stack}`, ...(options.externalId ? { externalId: options.externalId } : {}), ...(options.sessionTags ? { tags: { ...options.sessionTags } } : {}) }] } : {}),
    defaultTags: { tags: stackTags(config.environment, config.kind, tenantId, config.kind === "connector" ? config.connector.clusterName : undefined) },
  });
}

