/**
 * Synthetic tenants and operators' repositories for the benchmarks: every name, address,
 * account and port unique and as the project allocates them, so what they render and check
 * is a real fleet's work, at any size.
 */
import * as fs from "fs";
import * as path from "path";
import { stringify } from "yaml";
import { centralFactsPath, factsFile, tenantFactsPath, type TenantCloudFacts } from "../components/fleet/facts";
import { portsAtSlot } from "../config/tenant-ports";
import type { TenantPorts } from "../facts/contract";
import { tenantServerAddress } from "../config/subnet-layout";
import { centralScope, clusterApiRoleName, slurmKeySecretNames, STACK_CONFIG_DIR } from "../facts/project";
import { centralCeiling, cheapestHostFor } from "../config/capacity";
import { CENTRAL_HOST_NUMBER } from "../facts/central-host";
import { hostAddress } from "../config/cidr";
import { CLUSTER_API_PORT } from "../facts/contract";
import { tenantClusterName, TENANT_K3S_VERSION } from "../facts/tenant-cluster";

/** The central account every synthetic environment runs in. */
export const CENTRAL_ACCOUNT = "111122223333";
/** The fleet repository every synthetic central syncs. */
export const SYNTHETIC_FLEET = { repoUrl: "https://github.com/clusterra/infra.git", revision: "main" } as const;
/** The cluster-api image every synthetic central runs. */
const SYNTHETIC_CLUSTER_API_IMAGE = "ghcr.io/clusterra/cluster-api:0.9.0";

/** A tenant's cloud facts as its `pulumi up` would write them. Pure. */
export function syntheticTenantCloud(t: { readonly id: string; readonly environment: string; readonly account: string; readonly serverAddress: string; readonly ports: TenantPorts; readonly serial: number }): TenantCloudFacts {
  const clusterName = tenantClusterName(t.environment, t.id);
  const roleArn = (name: string) => `arn:aws:iam::${t.account}:role/${clusterName}-${name}`;
  const hex = t.serial.toString(16).padStart(17, "0");
  // Secrets Manager adds six random characters to a secret's name in its ARN.
  const secret = (name: string) => `arn:aws:secretsmanager:us-east-1:${CENTRAL_ACCOUNT}:secret:${name}-AbCdEf`;
  const keys = slurmKeySecretNames(t.environment, t.id);
  return {
    serverAddress: t.serverAddress,
    kmsKeyArn: `arn:aws:kms:us-east-1:${t.account}:key/${hex}`,
    fileSystemId: `fs-${hex}`,
    accessPointId: `fsap-${hex}`,
    interruptionQueueName: `${clusterName}-interruption`,
    instanceProfileName: `${clusterName}-worker`,
    slurmctld: { port: t.ports.slurmctld },
    srun: { from: t.ports.srunBlock.from, to: t.ports.srunBlock.to },
    keySecretArns: { slurm: secret(keys.slurm), jwt: secret(keys.jwt) },
    externalSecretsRoleArn: roleArn("external-secrets"),
    edgeAgentRoleArn: roleArn("edge-agent"),
    secretsRoleArn: `arn:aws:iam::${CENTRAL_ACCOUNT}:role/${clusterName}-control-plane`,
  };
}

/** What a generated repository holds. */
export interface GeneratedRepository {
  readonly centrals: readonly { readonly stack: string; readonly scope: string }[];
  readonly tenants: readonly { readonly stack: string; readonly scope: string; readonly id: string }[];
}

/** The cheapest central host for a number of tenants (never more than one central holds). */
function hostFor(tenants: number): string {
  const host = cheapestHostFor(tenants);
  if (!host) throw new Error(`no central host holds ${tenants} tenants`);
  return host;
}

/**
 * Writes into root (which holds the project's charts and Pulumi.yaml already) an environment
 * `dev` of `tenants` tenants, as an operator grows it: each central holds what one central can
 * (config/capacity.ts centralCeiling), then a cell takes the next (`c2`, `c3`, ...). Each
 * tenant with its own account, VPC (/20s from 10.16.0.0), ports (the next free on its
 * central) and the cloud facts its `pulumi up` would write; each central on the host that
 * holds its tenants. The derived fleet files are `fleet write`'s (run it after).
 */
export function generateRepository(root: string, tenants: number): GeneratedRepository {
  const perCentral = centralCeiling().tenants;
  const centralCount = Math.ceil(tenants / perCentral);
  if (centralCount > 56) throw new Error(`${tenants} tenants need ${centralCount} centrals; the generator's VPC plan holds 56 (10.200.0.0/16 to 10.255.0.0/16)`);
  const stacksDir = path.join(root, STACK_CONFIG_DIR);
  fs.mkdirSync(stacksDir, { recursive: true });
  const write = (stack: string, values: Record<string, unknown>) => fs.writeFileSync(path.join(stacksDir, `Pulumi.${stack}.yaml`), stringify({ config: values }));
  const factsAt = (rel: string, stack: string, facts: Parameters<typeof factsFile>[1]) => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), factsFile(stack, facts));
  };
  const centrals: { stack: string; scope: string }[] = [];
  const out: { stack: string; scope: string; id: string }[] = [];
  for (let c = 0; c < centralCount; c++) {
    const cell = c === 0 ? undefined : `c${c + 1}`;
    const scope = centralScope("dev", cell);
    const stack = `central-${scope}`;
    const vpcCidr = `10.${200 + c}.0.0/16`;
    const members = Math.min(perCentral, tenants - c * perCentral);
    write(stack, {
      "aws:region": "us-east-1",
      "aws:allowedAccountIds": [CENTRAL_ACCOUNT],
      "clusterra:kind": "central",
      "clusterra:environment": "dev",
      ...(cell ? { "clusterra:cell": cell } : {}),
      "clusterra:network": { vpcCidr, availabilityZones: 2 },
      "clusterra:controlPlane": { instanceType: hostFor(members), k3sVersion: TENANT_K3S_VERSION },
      "clusterra:fleet": SYNTHETIC_FLEET,
      "clusterra:clusterApi": { image: SYNTHETIC_CLUSTER_API_IMAGE },
    });
    const hostIp = hostAddress(vpcCidr, CENTRAL_HOST_NUMBER);
    factsAt(centralFactsPath(scope), stack, {
      clusterApiRoleArn: `arn:aws:iam::${CENTRAL_ACCOUNT}:role/${clusterApiRoleName(scope)}`,
      centralHostIp: hostIp,
      heartbeatEndpoint: `https://${hostIp}:${CLUSTER_API_PORT}`,
      heartbeatCaPem: "-----BEGIN CERTIFICATE-----\nc3ludGhldGljIGJlbmNoIGNlcnRpZmljYXRl\n-----END CERTIFICATE-----\n",
    });
    centrals.push({ stack, scope });
    for (let slot = 0; slot < members; slot++) {
      const i = c * perCentral + slot;
      const id = `t${i}`;
      const tenantStack = `tenant-${id}-dev`;
      const account = String(900000000000 + i);
      const network = { vpcCidr: `10.${16 + Math.floor(i / 16)}.${(i % 16) * 16}.0/20`, availabilityZones: 2 };
      const ports = portsAtSlot(slot);
      write(tenantStack, {
        "aws:region": "us-east-1",
        "aws:allowedAccountIds": [account],
        "clusterra:kind": "tenant",
        "clusterra:environment": "dev",
        "clusterra:tenant": { id, accountId: account },
        "clusterra:central": { stack, accountId: CENTRAL_ACCOUNT, vpcCidr },
        "clusterra:ports": { slurmctld: ports.slurmctld, srun: ports.srunBlock.from },
        "clusterra:network": network,
        "clusterra:shapes": [{ name: "cpu", memoryPerCpuGiB: 4, sizes: [4, 16], maxNodes: 20, capacityType: "spot" }],
        "clusterra:users": Array.from({ length: 5 }, (_, u) => ({ name: `user${u}`, uid: 10001 + u })),
      });
      const serverAddress = tenantServerAddress({ vpcCidr: network.vpcCidr, availabilityZones: { count: 2 } });
      factsAt(tenantFactsPath(scope, id), tenantStack, syntheticTenantCloud({ id, environment: "dev", account, serverAddress, ports, serial: i }));
      out.push({ stack: tenantStack, scope, id });
    }
  }
  return { centrals, tenants: out };
}
