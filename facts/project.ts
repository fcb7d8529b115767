/** Names every stack, tag and file of the project derives from. */
export const PROJECT = "clusterra";
/** The organization a DIY (self-managed) Pulumi backend gives every stack; the offline plan runs as one. */
export const DIY_ORGANIZATION = "organization";

/** A platform resource name: `clusterra-<environment>-<parts...>`. */
export function platformName(environment: string, ...parts: string[]): string {
  return [PROJECT, environment, ...parts].join("-");
}

/** The longest cell name (`clusterra:cell`): a cell's central names stay within AWS's limits as its environment's do. */
export const CELL_NAME_MAX = 6;

/**
 * A central's scope: what its platform-wide names (`platformName`) and its fleet folders take
 * where one central per environment took the environment. The environment's first central has
 * no cell and keeps the environment's names; a cell's central adds its cell (`dev-b`). Tenant
 * names stay per environment (ids are unique in it), whichever central a tenant joins.
 */
export function centralScope(environment: string, cell?: string): string {
  return cell === undefined ? environment : `${environment}-${cell}`;
}

/**
 * Where the project keeps what it can compute again (the IAM simulator's verdicts, compiled
 * CRD validators, Lambda bundles; bin/clusterra.js's compile cache beside them): under the
 * repository's node_modules/.cache, beside other tools' caches, so it is never committed and
 * `npm ci` starts it afresh.
 */
export function cacheDir(root: string, name: string): string {
  return [root, "node_modules", ".cache", PROJECT, name].join("/");
}

/** Config namespace of the project's own keys (`clusterra:<key>`). */
export const CONFIG_NAMESPACE = PROJECT;

/** The project's example environment, its stack files as the suite's fixtures (test/helpers.ts). */
export const EXAMPLE_STACKS_DIR = "test/fixtures/stacks";

/** Folder of the stack files, as Pulumi.yaml's `stackConfigDir` says. */
export const STACK_CONFIG_DIR = "stacks";

/** Kubernetes labels the platform puts on nodes, namespaces and ArgoCD cluster Secrets. */
export const LABEL_KEYS = {
  tenant: "clusterra.io/tenant",
  role: "clusterra.io/role",
  /** On a tenant's ArgoCD cluster Secret and the Applications generated from it. */
  environment: "clusterra.io/environment",
  wave: "clusterra.io/wave",
  stage: "clusterra.io/stage",
} as const;

/** Kubernetes annotations the platform puts on pod templates: a digest of what the pods read at start, so a change rolls them. */
export const ANNOTATION_KEYS = { users: "clusterra.io/users-digest" } as const;

/** Daily snapshots of a stateful volume kept (DLM): central's data volume, each tenant server's state. */
export const SNAPSHOT_RETAIN_DAYS = 14;

/** Tag keys every taggable resource carries (set through the provider's defaultTags). */
export const TAG_KEYS = {
  managedBy: "managed-by",
  environment: "clusterra:environment",
  tenant: "clusterra:tenant",
  stackKind: "clusterra:stack-kind",
  /** On security-group rules that cross the peering: the contract flow they implement. */
  flow: "clusterra:flow",
  /** A connector stack's resources: the ParallelCluster they attach (its name). */
  connector: "clusterra:connector",
  /**
   * On security groups a stack creates, its name prefix: set only when the group is made, so
   * the deploy role adds rules to (or deletes) only groups the stack made itself.
   */
  owner: "clusterra:owner",
  /** On volumes a snapshot policy targets. */
  backup: "clusterra:backup",
  /**
   * A named, reviewed exception to one policy of the pack, on the one resource that needs
   * it (value: the policy's name); the reason tag must say why. Policies are never weakened.
   */
  policyException: "clusterra:policy-exception",
  /** Why the resource carries its policy exception. */
  policyExceptionReason: "clusterra:policy-exception-reason",
} as const;

/** The tag a security group gets when a stack creates it: the stack's name prefix. */
export function ownerTag(namePrefix: string): Record<string, string> {
  return { [TAG_KEYS.owner]: namePrefix };
}

/** Value of the managed-by tag. */
export const MANAGED_BY = PROJECT;

/**
 * In a tenant stack, the name of the AWS provider that acts in the central account and of
 * the StackReference to central: what it creates there is billed to the operator.
 */
export const CENTRAL_PROVIDER_NAME = "central";

/** The three kinds of stack one program builds. */
export const STACK_KINDS = ["central", "tenant", "connector"] as const;
export type StackKind = (typeof STACK_KINDS)[number];

/** Tags for a stack: what the provider's defaultTags carry. */
export function stackTags(environment: string, kind: StackKind, tenantId?: string, connector?: string): Record<string, string> {
  const tags: Record<string, string> = {
    [TAG_KEYS.managedBy]: MANAGED_BY,
    [TAG_KEYS.environment]: environment,
    [TAG_KEYS.stackKind]: kind,
  };
  if (tenantId !== undefined) tags[TAG_KEYS.tenant] = tenantId;
  if (connector !== undefined) tags[TAG_KEYS.connector] = connector;
  return tags;
}

/**
 * Operators run `pulumi up` as IAM roles whose names start with this prefix: central stacks
 * as `clusterra-deployer`, each tenant stack as its own `clusterra-deployer-<env>-<tenant>`.
 */
export const DEPLOYER_ROLE_PREFIX = "clusterra-deployer";

/** The identity a tenant stack's run uses in the central account: the only one its tenant role trusts. */
export function tenantDeployerRoleName(environment: string, tenantId: string): string {
  return [DEPLOYER_ROLE_PREFIX, environment, tenantId].join("-");
}

/** The role central creates for one tenant: what that tenant's stack may do in the central account. */
export function tenantAccessRoleName(environment: string, tenantId: string): string {
  return platformName(environment, "tenant", tenantId);
}

/** The tenant cluster's External Secrets role (in the tenant's account): reads its Slurm keys in central. */
export function tenantExternalSecretsRoleName(environment: string, tenantId: string): string {
  return platformName(environment, tenantId, "external-secrets");
}

/** The tenant cluster's K3s server role (in the tenant's account): it publishes ArgoCD's credential to central. */
export function tenantServerRoleName(environment: string, tenantId: string): string {
  return platformName(environment, tenantId, "k3s-server");
}

/** The role in the central account a tenant's server publishes its disk metrics through. */
export function tenantMetricsRoleName(environment: string, tenantId: string): string {
  return platformName(environment, tenantId, "metrics");
}

/** cluster-api's role in the central account. */
export function clusterApiRoleName(environment: string): string {
  return platformName(environment, "cluster-api");
}

/** The files bucket of a tenant (the account keeps the global name unique). */
export function tenantFilesBucketName(environment: string, tenantId: string, accountId: string): string {
  return `${PROJECT}-${environment}-${tenantId}-files-${accountId}`;
}

/** The role cluster-api assumes in a tenant's account for a user's files session (the files bucket, that user's prefix). */
export function tenantFilesRoleName(environment: string, tenantId: string): string {
  return platformName(environment, tenantId, "files");
}

/** The ExternalId cluster-api presents for a tenant's files role. */
export function tenantFilesExternalId(environment: string, tenantId: string): string {
  return platformName(environment, tenantId, "files");
}

/** A files session's lifetime: IAM's minimum for a role's maximum, and what cluster-api asks for. */
export const FILES_SESSION_SECONDS = 3600;

/** The secret (under the tenant's prefix) that holds central ArgoCD's credential for the tenant cluster. */
export const ARGOCD_CLUSTER_SECRET = "argocd-cluster";

/** A tenant stack key's alias suffix (alias/clusterra/<it>). */
export function tenantKeyAliasName(environment: string, tenantId: string): string {
  return `${environment}/tenant-${tenantId}`;
}

/** A connector stack key's alias suffix (alias/clusterra/<it>). */
export function connectorKeyAliasName(clusterName: string): string {
  return `connector/${clusterName}`;
}

/** Prefix of the Secrets Manager names a tenant stack owns in the central account. */
export function tenantSecretPrefix(environment: string, tenantId: string): string {
  return `${PROJECT}/${environment}/${tenantId}/`;
}

/** Secrets Manager names of a tenant's Slurm keys in the central account. */
export function slurmKeySecretNames(environment: string, tenantId: string): { slurm: string; jwt: string } {
  const prefix = tenantSecretPrefix(environment, tenantId);
  return { slurm: `${prefix}slurm-key`, jwt: `${prefix}jwt-key` };
}

/** Secrets only central reads: slurmdbd's database password and ArgoCD's credential for the tenant cluster. */
export function centralOnlySecretNames(environment: string, tenantId: string): { mariadb: string; argocdCluster: string } {
  const prefix = tenantSecretPrefix(environment, tenantId);
  return { mariadb: `${prefix}mariadb-password`, argocdCluster: `${prefix}${ARGOCD_CLUSTER_SECRET}` };
}

/** The role central's control plane of a tenant reads its secrets with (tenant stacks name it in their secrets' policies, by ARN). */
export function controlPlaneSecretsRoleName(environment: string, tenantId: string): string {
  return `${platformName(environment, tenantId)}-control-plane`;
}

/**
 * The role a customer creates once in its account for one tenant stack to deploy through
 * (`clusterra plan` generates it: deploy-role.yaml). One per tenant stack: its policy names
 * that stack's resources only.
 */
export function tenantDeployRoleName(environment: string, tenantId: string): string {
  return [PROJECT, "deploy", environment, tenantId].join("-");
}

/** The role whoever runs a connector stack assumes (generated like a tenant's); outside the connector's own name prefix, so it cannot change itself. */
export function connectorDeployRoleName(clusterName: string): string {
  return [PROJECT, "deploy", "connector", clusterName].join("-");
}

/** The SSM parameter path a central's host parameters live under (no trailing slash). */
export function centralParameterPath(scope: string): string {
  return `/${PROJECT}/${scope}/central`;
}

/** The SSM parameter path a tenant stack's parameters live under (no trailing slash). */
export function tenantParameterPath(environment: string, tenantId: string): string {
  return `/${PROJECT}/${environment}/${tenantId}`;
}

/**
 * The ExternalId the tenant deploy role requires. Unique per tenant of an environment
 * (validation rejects duplicate ids), so one customer's stack cannot be pointed at another
 * customer's account: that account's role expects a different id.
 */
export function tenantExternalId(environment: string, tenantId: string): string {
  return platformName(environment, tenantId);
}

/** Session tag that carries a user's Slurm uid (the API tags the sessions it hands out). */
export const UID_SESSION_TAG = "clusterra:uid";

/** Where cluster-api finds its listener's key pair in Secrets Manager. */
export function clusterApiTlsSecretName(environment: string): string {
  return `${PROJECT}/${environment}/cluster-api-tls`;
}

/** Secrets Manager name of the session signing key. */
export function signingKeySecretName(environment: string): string {
  return `${PROJECT}/${environment}/session-signing-key`;
}
