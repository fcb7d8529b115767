/** Fleet files of a central environment: cluster-api's Application and its values. */
import { heartbeatVerification } from "./heartbeat";
import type { Partition } from "../../facts/regions";
import { CENTRAL_ADMISSION_FILE, slurmDaemonPrivilegePolicy, tenantPodDnsPolicy, tenantPodResolverRequired } from "./central-admission";
import { TENANT_DNS_FILE, tenantDnsObjects } from "./tenant-dns";
import { retiringSharedDnsObjects, retiringSharedDnsPolicy } from "./retiring-shared-dns";
import { centralHostAddress } from "../../config/subnet-layout";
import { CLUSTER_API_PORT } from "../../facts/contract";
import { ARGOCD_CHART, ARGOCD_IN_CLUSTER, PLATFORM_PROJECT } from "../../facts/versions";
import { CLUSTER_API_NAMESPACE, centralFleetPath, tenantEntriesApplicationSetPath, tenantGuardsApplicationSetPath, tenantsApplicationSetPath, tenantsSharedPath } from "../../facts/fleet";
import { tenantGuardsApplicationSet, tenantsApplicationSet, tenantsSharedFiles } from "./application-set";
import { syncRetry } from "./argo";
import { tenantChartSchemaFiles } from "./chart-schemas";
import { TENANT_ENTRY_SHARED_VALUES, tenantEntriesApplicationSet, tenantEntrySharedValues } from "./tenant-entry";
import { clusterApiTlsSecretName, FILES_SESSION_SECONDS, signingKeySecretName, slurmKeySecretNames, tenantFilesBucketName, tenantFilesExternalId, tenantFilesRoleName, UID_SESSION_TAG } from "../../facts/project";
import { EFS_MOUNT_PATH } from "../../facts/tenant-cluster";
import { userDirectory } from "../../config/users";
import type { CentralConfig } from "../../config";
import { centralAddOnFiles } from "./central-addons";
import { centralFactsPath, factsFile, type CentralCloudFacts } from "./facts";
import type { FleetFileSet } from "./writer";
import { yamlFile } from "./yaml-file";
import { STATE_TABLES, tableName } from "../../facts/state-tables";

export interface CentralFleetFacts {
  /** The central's stack: the files' header. */
  readonly stack: string;
  readonly environment: string;
  /** The central's scope (facts/project.ts centralScope): its fleet folder and platform-wide names. */
  readonly scope: string;
  readonly partition: Partition;
  readonly region: string;
  readonly repoUrl: string;
  readonly revision: string;
  readonly image: string;
  /** Role cluster-api assumes from the host's instance credentials. */
  readonly roleArn: string;
  /** By name: Secrets Manager resolves it, and the ARN's random suffix stays out of git. */
  readonly signingKeySecretName: string;
  /** Its listener's certificate and key, by name too. */
  readonly tlsSecretName: string;
  /** Logical table name -> DynamoDB table name. */
  readonly tableNames: Readonly<Record<string, string>>;
}


export { centralFleetPath } from "../../facts/fleet";

export function clusterApiValues(f: CentralFleetFacts): Record<string, unknown> {
  const [repository, tag] = splitImage(f.image);
  return {
    image: { repository, tag },
    port: CLUSTER_API_PORT,
    aws: { region: f.region, roleArn: f.roleArn },
    signingKeySecretName: f.signingKeySecretName,
    tlsSecretName: f.tlsSecretName,
    // Whose heartbeat it is: the agent's signed STS request, checked as HEARTBEAT_AUTH says.
    heartbeat: heartbeatVerification({ environment: f.environment, scope: f.scope, region: f.region, partition: f.partition }),
    // Each tenant's JWT key, to mint Slurm tokens for its slurmrestd ({tenant} is the id).
    tenantJwtKeySecretNameTemplate: slurmKeySecretNames(f.environment, "{tenant}").jwt,
    // A user's files session: the tenant's files role ({account}, {tenant}), its ExternalId, its
    // bucket; the session tagged clusterra:uid=<uid>, for at most an hour.
    files: {
      roleArnTemplate: `arn:${f.partition}:iam::{account}:role/${tenantFilesRoleName(f.environment, "{tenant}")}`,
      externalIdTemplate: tenantFilesExternalId(f.environment, "{tenant}"),
      bucketTemplate: tenantFilesBucketName(f.environment, "{tenant}", "{account}"),
      sessionTag: UID_SESSION_TAG,
      sessionSeconds: FILES_SESSION_SECONDS,
    },
    // Where a user's batch jobs run and write their output, on the tenant's EFS ({user} is
    // the Linux name; %j Slurm's job id): their own directory, made by the Prolog.
    jobs: { workingDirectoryTemplate: userDirectory(EFS_MOUNT_PATH, { name: "{user}" }), outputTemplate: `${userDirectory(EFS_MOUNT_PATH, { name: "{user}" })}/job_%j.out` },
    tables: f.tableNames,
  };
}

/** `repo:tag` or `repo@sha256:...` into chart fields. */
export function splitImage(image: string): [string, string] {
  const at = image.indexOf("@");
  if (at >= 0) return [image.slice(0, at), image.slice(at)];
  const colon = image.lastIndexOf(":");
  return [image.slice(0, colon), image.slice(colon + 1)];
}

export function centralFleetFiles(f: CentralFleetFacts): FleetFileSet {
  const dir = centralFleetPath(f.scope);
  const source = `stack ${f.stack}`;
  const application = {
    apiVersion: "argoproj.io/v1alpha1",
    kind: "Application",
    metadata: { name: "cluster-api", namespace: ARGOCD_CHART.namespace, annotations: { "argocd.argoproj.io/sync-wave": "10" } },
    spec: {
      project: PLATFORM_PROJECT,
      sources: [
        { repoURL: f.repoUrl, targetRevision: f.revision, ref: "values" },
        { repoURL: f.repoUrl, targetRevision: f.revision, path: "fleet/charts/cluster-api", helm: { valueFiles: [`$values/${dir}/values/cluster-api.yaml`] } },
      ],
      destination: { server: ARGOCD_IN_CLUSTER, namespace: CLUSTER_API_NAMESPACE },
      // Retried as every other Application: a first sync that fails (its namespace's quota,
      // a CRD not yet served) would otherwise stay failed until the next commit.
      syncPolicy: { automated: { prune: true, selfHeal: true }, syncOptions: ["CreateNamespace=true", "ServerSideApply=true"], retry: syncRetry() },
    },
  };
  return {
    [`${dir}/cluster-api.yaml`]: yamlFile(source, application),
    [`${dir}/values/cluster-api.yaml`]: yamlFile(source, clusterApiValues(f)),
  };
}

/** A central stack's whole fleet output: its facts file, cluster-api's files and the add-ons every tenant's control plane needs. */
export function centralStackFleetFiles(config: CentralConfig, facts: CentralCloudFacts): FleetFileSet {
  const source = `stack ${config.stack}`;
  const repo = { repoUrl: config.fleet.repoUrl, revision: config.fleet.revision };
  const heartbeat = { environment: config.environment, scope: config.scope, region: config.region, partition: config.partition };
  // Each tenant this central serves has its own DNS and the admission binding that points its pods at it.
  const tenantIds = config.tenants.map((t) => t.id);
  return {
    [centralFactsPath(config.scope)]: factsFile(config.stack, facts),
    ...centralFleetFiles({
      stack: config.stack,
      environment: config.environment,
      scope: config.scope,
      partition: config.partition,
      region: config.region,
      repoUrl: config.fleet.repoUrl,
      revision: config.fleet.revision,
      image: config.clusterApi.image,
      roleArn: facts.clusterApiRoleArn,
      signingKeySecretName: signingKeySecretName(config.scope),
      tlsSecretName: clusterApiTlsSecretName(config.scope),
      tableNames: Object.fromEntries(Object.keys(STATE_TABLES).map((t) => [t, tableName(config.scope, t)])),
    }),
    ...centralAddOnFiles(config.scope, source, config.fleet),
    // Applied by the root Application itself, before any operator makes a pod.
    [`${centralFleetPath(config.scope)}/${CENTRAL_ADMISSION_FILE}`]: yamlFile(source, ...slurmDaemonPrivilegePolicy(), ...tenantPodDnsPolicy(tenantIds), ...tenantPodResolverRequired(), ...retiringSharedDnsPolicy()),
    [`${centralFleetPath(config.scope)}/${TENANT_DNS_FILE}`]: yamlFile(source, ...tenantDnsObjects(centralHostAddress(config.network), tenantIds), ...retiringSharedDnsObjects(centralHostAddress(config.network))),
    ...tenantsSharedFiles(config.scope, source, config.backups, heartbeat),
    // The tenant charts' values.schema.json: derived from the stack files' and facts files' patterns.
    ...tenantChartSchemaFiles(),
    [`${tenantsSharedPath(config.scope)}/${TENANT_ENTRY_SHARED_VALUES}`]: yamlFile(source, tenantEntrySharedValues(config.environment, config.fleet.repoUrl, config.region)),
    // Each tenant's entry (its cluster Secret), and its Applications from that Secret: this central's tenants, in its scope's folder.
    [tenantEntriesApplicationSetPath(config.scope)]: yamlFile(source, tenantEntriesApplicationSet(config.scope, repo)),
    [tenantsApplicationSetPath(config.scope)]: yamlFile(source, tenantsApplicationSet(config.environment, config.scope, repo)),
    // What contains each tenant on central, in a set ArgoCD self-heals (RollingSync's cannot).
    [tenantGuardsApplicationSetPath(config.scope)]: yamlFile(source, tenantGuardsApplicationSet(config.environment, config.scope, repo)),
  };
}
