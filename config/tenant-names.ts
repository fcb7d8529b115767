/**
 * The names a tenant's id goes into and the limit each binds it to (S3 bucket names, IAM role
 * names, Kubernetes namespaces): an id is too long exactly when one of them would be. The
 * longest id an environment allows follows from the table. Pure.
 */
import { tenantNamespace } from "../facts/fleet";
import { tenantAccessRoleName, tenantDeployerRoleName, tenantExternalSecretsRoleName, tenantFilesBucketName, tenantFilesRoleName, tenantServerRoleName } from "../facts/project";
import { tenantClusterName, workerRoleName } from "../facts/tenant-cluster";

/** An account id's length: the files bucket's name ends with it. */
const ACCOUNT_ID_LENGTH = 12;

export const TENANT_NAME_LIMITS: readonly { readonly what: string; readonly limit: number; readonly name: (environment: string, id: string) => string }[] = [
  { what: "the files bucket's name (S3: 63)", limit: 63, name: (e, id) => tenantFilesBucketName(e, id, "0".repeat(ACCOUNT_ID_LENGTH)) },
  { what: "the External Secrets role's name (IAM: 64)", limit: 64, name: tenantExternalSecretsRoleName },
  { what: "the K3s server role's name (IAM: 64)", limit: 64, name: tenantServerRoleName },
  { what: "the files role's name (IAM: 64)", limit: 64, name: tenantFilesRoleName },
  { what: "the deploy identity's role name (IAM: 64)", limit: 64, name: tenantDeployerRoleName },
  { what: "central's access role name (IAM: 64)", limit: 64, name: tenantAccessRoleName },
  { what: "the workers' role name (IAM: 64)", limit: 64, name: (e, id) => workerRoleName(tenantClusterName(e, id)) },
  { what: "the tenant's namespace on central (Kubernetes: 63)", limit: 63, name: (_, id) => tenantNamespace(id) },
];

/** The longest tenant id an environment allows, and the name that binds it. */
export function maxTenantIdLength(environment: string): { length: number; what: string } {
  return TENANT_NAME_LIMITS.map((l) => ({ length: l.limit - l.name(environment, "").length, what: l.what })).reduce((a, b) => (b.length < a.length ? b : a));
}

/** The names an id makes too long in an environment, each with its length. */
export function tenantNameProblems(environment: string, id: string): string[] {
  return TENANT_NAME_LIMITS.filter((l) => l.name(environment, id).length > l.limit).map((l) => `makes ${l.what} ${l.name(environment, id).length} characters`);
}
