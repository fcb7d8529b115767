/**
 * The names a tenant's id goes into and the limit each binds it to (S3 bucket names, IAM role
 * names, EventBridge rules, SQS queues, Kubernetes namespaces; AWS's limits from
 * facts/aws-limits.ts): an id is too long exactly when one of them would be. The
 * longest id an environment allows follows from the table. Pure.
 */
import { tenantNamespace } from "../facts/fleet";
import { tenantAccessRoleName, tenantDeployerRoleName, tenantExternalSecretsRoleName, tenantFilesBucketName, tenantFilesRoleName, tenantServerRoleName } from "../facts/project";
import { tenantClusterName, workerRoleName } from "../facts/tenant-cluster";
import { nameLimit } from "../facts/aws-limits";
import { INTERRUPTION_RULES, karpenterQueueName, karpenterRuleName } from "../facts/karpenter";

/** An account id's length: the files bucket's name ends with it. */
const ACCOUNT_ID_LENGTH = 12;

const S3 = nameLimit("aws:s3/bucket:Bucket", "bucket");
const IAM = nameLimit("aws:iam/role:Role");
const EVENTBRIDGE = nameLimit("aws:cloudwatch/eventRule:EventRule");
const SQS = nameLimit("aws:sqs/queue:Queue");
/** Kubernetes: a namespace is a DNS label. */
const DNS_LABEL = 63;
/** Karpenter's interruption rule with the longest id: its name is the longest a rule takes. */
const LONGEST_RULE = INTERRUPTION_RULES.reduce((a, b) => (b.id.length > a.id.length ? b : a));

export const TENANT_NAME_LIMITS: readonly { readonly what: string; readonly limit: number; readonly name: (environment: string, id: string) => string }[] = [
  { what: `the files bucket's name (S3: ${S3})`, limit: S3, name: (e, id) => tenantFilesBucketName(e, id, "0".repeat(ACCOUNT_ID_LENGTH)) },
  { what: `the External Secrets role's name (IAM: ${IAM})`, limit: IAM, name: tenantExternalSecretsRoleName },
  { what: `the K3s server role's name (IAM: ${IAM})`, limit: IAM, name: tenantServerRoleName },
  { what: `the files role's name (IAM: ${IAM})`, limit: IAM, name: tenantFilesRoleName },
  { what: `the deploy identity's role name (IAM: ${IAM})`, limit: IAM, name: tenantDeployerRoleName },
  { what: `central's access role name (IAM: ${IAM})`, limit: IAM, name: tenantAccessRoleName },
  { what: `the workers' role name (IAM: ${IAM})`, limit: IAM, name: (e, id) => workerRoleName(tenantClusterName(e, id)) },
  { what: `Karpenter's ${LONGEST_RULE.id} rule name (EventBridge: ${EVENTBRIDGE})`, limit: EVENTBRIDGE, name: (e, id) => karpenterRuleName(tenantClusterName(e, id), LONGEST_RULE) },
  { what: `Karpenter's interruption queue name (SQS: ${SQS})`, limit: SQS, name: (e, id) => karpenterQueueName(tenantClusterName(e, id)) },
  { what: `the tenant's namespace on central (Kubernetes: ${DNS_LABEL})`, limit: DNS_LABEL, name: (_, id) => tenantNamespace(id) },
];

/** The longest tenant id an environment allows, and the name that binds it. */
export function maxTenantIdLength(environment: string): { length: number; what: string } {
  return TENANT_NAME_LIMITS.map((l) => ({ length: l.limit - l.name(environment, "").length, what: l.what })).reduce((a, b) => (b.length < a.length ? b : a));
}

/** The names an id makes too long in an environment, each with its length. */
export function tenantNameProblems(environment: string, id: string): string[] {
  return TENANT_NAME_LIMITS.filter((l) => l.name(environment, id).length > l.limit).map((l) => `makes ${l.what} ${l.name(environment, id).length} characters`);
}
