/** The tenant stack: one per tenant, in the tenant's own account, joined to a central stack. */
import * as pulumi from "@pulumi/pulumi";
import { getCallerIdentityOutput } from "@pulumi/aws/getCallerIdentity";
import type { TenantConfig } from "../../config/types";
import type { CentralOutputs } from "../central/outputs";
import { tenantDeployRoleName, tenantExternalId, CENTRAL_PROVIDER_NAME } from "../../facts/project";
import { stackProvider } from "../security/provider";
import { TenantEnvironment } from "./environment";
import { isExisting, resolveExistingNetwork } from "./existing-network";

/**
 * Operators run each tenant stack as that tenant's deployer role
 * (`clusterra-deployer-<env>-<tenant>`). The tenant side goes through the deploy role the
 * customer created (cross-account, with the tenant's ExternalId); the central side through
 * the role central created for this tenant alone, which trusts only that deployer role.
 */
export async function tenantStack(config: TenantConfig): Promise<Record<string, unknown>> {
  const provider = stackProvider("aws", config, {
    assumeRoleArn: `arn:${config.partition}:iam::${config.tenant.accountId}:role/${tenantDeployRoleName(config.environment, config.tenant.id)}`,
    externalId: tenantExternalId(config.environment, config.tenant.id),
  });
  const central = new pulumi.StackReference(CENTRAL_PROVIDER_NAME, { name: config.central.stack });
  const out = <K extends keyof CentralOutputs>(key: K) => central.requireOutput(key) as pulumi.Output<CentralOutputs[K]>;
  const tenantId = config.tenant.id;
  // Central-account work (accepting the peering, the tenant's secrets) goes through the role
  // central created for this tenant; central's stack must have run with this tenant's file.
  const centralProvider = stackProvider(CENTRAL_PROVIDER_NAME, config, {
    assumeRoleArn: out("tenantRoleArns").apply((roles) => {
      if (!roles?.[tenantId]) throw new Error(`central stack ${config.central.stack} has no role for tenant ${tenantId}: run \`pulumi up -s ${config.central.stack}\` with this tenant's stack file first`);
      return roles[tenantId];
    }),
    region: config.central.region,
    allowedAccountIds: [config.central.accountId],
  });
  const slurmctldEndpoint = out("slurmctldEndpoints").apply((endpoints) => {
    if (!endpoints?.[tenantId]) throw new Error(`central stack ${config.central.stack} publishes no slurmctld endpoint for tenant ${tenantId}`);
    return endpoints[tenantId];
  });
  const accountId = getCallerIdentityOutput({}, { provider }).accountId;
  const existing = isExisting(config.network) ? await resolveExistingNetwork(config.file, config.network, provider) : undefined;
  const tenant = new TenantEnvironment(
    `tenant-${config.tenant.id}`,
    {
      config,
      accountId,
      existingRouteTableIds: existing?.routeTableIds,
      existingServerZone: existing?.serverZone,
      centralProvider,
      central: {
        vpcId: out("vpcId"),
        hostPrivateIp: out("hostPrivateIp"),
        kmsKeyArn: out("kmsKeyArn"),
        heartbeatEndpoint: out("heartbeatEndpoint"),
        clusterApiCaPem: out("clusterApiCaPem"),
        alarmTopicArn: out("alarmTopicArn"),
        monitoringSinkArn: out("monitoringSinkArn"),
        slurmctldEndpoint,
      },
    },
    { providers: { aws: provider } },
  );
  return tenant.outputs;
}
