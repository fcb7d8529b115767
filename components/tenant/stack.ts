/** The tenant stack: one per tenant, in the tenant's own account, joined to a central stack. */
import * as pulumi from "@pulumi/pulumi";
import { getCallerIdentityOutput } from "@pulumi/aws/getCallerIdentity";
import type { TenantConfig } from "../../config/types";
import type { CentralOutputs } from "../central/stack";
import { TAG_KEYS, TENANT_DEPLOY_ROLE_NAME, tenantExternalId } from "../../facts/project";
import { stackProvider } from "../security/provider";
import { TenantEnvironment } from "./environment";
import { isExisting, resolveExistingNetwork } from "./existing-network";

/**
 * Operators run tenant stacks as a central deployer role. The tenant side goes through the
 * deploy role the customer created (cross-account, with the tenant's ExternalId); the
 * central side through central's tenant-attachment role, tagged with the tenant.
 */
export async function tenantStack(config: TenantConfig): Promise<Record<string, unknown>> {
  const provider = stackProvider("aws", config, {
    assumeRoleArn: `arn:${config.partition}:iam::${config.tenant.accountId}:role/${TENANT_DEPLOY_ROLE_NAME}`,
    externalId: tenantExternalId(config.environment, config.tenant.id),
  });
  const central = new pulumi.StackReference("central", { name: config.central.stack });
  const out = <K extends keyof CentralOutputs>(key: K) => central.requireOutput(key) as pulumi.Output<CentralOutputs[K]>;
  // Central-account work (peering acceptance, routes, the tenant's endpoint) goes through
  // the role central publishes for it, never through the tenant's own credentials.
  const centralProvider = stackProvider("central", config, {
    assumeRoleArn: out("peeringRoleArn"),
    // The attachment role lets a session touch only resources tagged with its own tenant.
    sessionTags: { [TAG_KEYS.tenant]: config.tenant.id },
    region: config.central.region,
    allowedAccountIds: [config.central.accountId],
  });
  const accountId = getCallerIdentityOutput({}, { provider }).accountId;
  const existing = isExisting(config.network) ? await resolveExistingNetwork(config.file, config.network, provider) : undefined;
  const tenant = new TenantEnvironment(
    `tenant-${config.tenant.id}`,
    {
      config,
      accountId,
      existingRouteTableIds: existing?.routeTableIds,
      centralProvider,
      central: {
        vpcId: out("vpcId"),
        privateSubnetIds: out("privateSubnetIds"),
        routeTableIds: out("routeTableIds"),
        hostInstanceId: out("hostInstanceId"),
        hostPrivateIp: out("hostPrivateIp"),
        hostSecurityGroupId: out("hostSecurityGroupId"),
        kmsKeyArn: out("kmsKeyArn"),
        heartbeatEndpoint: out("heartbeatEndpoint"),
      },
    },
    { providers: { aws: provider } },
  );
  return tenant.outputs;
}
