/**
 * `clusterra tenant remove --stack <tenant stack>`: the order that removes a tenant without
 * stranding anything, computed from the tenant's and its central's plans (nothing runs
 * against AWS). The tenant's side goes first, while central still holds the role the tenant
 * stack acts in central through; central's part goes with its next `pulumi up` once the
 * stack file is gone and central's stack file names the tenant for removal, which also prunes
 * the tenant's fleet. Protected resources (the
 * tenant's data and keys) are retained and listed, each with how it is deleted for good.
 */
import { REMOVE_TENANTS_KEY, stackShortName, type TenantConfig } from "../config";
import { tenantEntryApplication, tenantFleetPath, tenantNamespace } from "../facts/fleet";
import { tenantAccessRoleName } from "../facts/project";
import { ARGOCD_CHART } from "../facts/versions";

import { tenantClusterName } from "../facts/tenant-cluster";
import { TENANT_ADD_ONS } from "../components/fleet/application-set";
import type { Deployment, DeploymentResource } from "./deployment";

export interface Retained {
  readonly type: string;
  readonly name: string;
  /** Who holds it: the tenant's account, or central's (created there through the access role). */
  readonly account: "tenant" | "central";
  /** What deleting it for good takes, and how long AWS keeps it after. */
  readonly forGood: string;
}

export interface RemovalPlan {
  readonly tenantId: string;
  readonly stack: string;
  readonly centralStack: string;
  /** Resources the tenant stack's destroy removes (protected ones excluded). */
  readonly destroyed: number;
  readonly retained: readonly Retained[];
  /** Central's resources for this tenant, removed by central's next `pulumi up`. */
  readonly centralSide: readonly string[];
  /** Fleet paths central's `pulumi up` prunes. */
  readonly fleetPaths: readonly string[];
  readonly steps: readonly string[];
  /** The step whose central \`pulumi up\` removes central's part (and after which the stack file is gone). */
  readonly centralUpStep: number;
}

const nameOf = (r: DeploymentResource) => r.urn.split("::").pop() ?? r.urn;

/** How a protected resource of the tenant stack is deleted for good. */
function forGood(r: DeploymentResource): string {
  const i = (r.inputs ?? {}) as Record<string, unknown>;
  switch (r.type) {
    case "aws:kms/key:Key":
      return `schedule its deletion; KMS waits ${String(i.deletionWindowInDays ?? 30)} days, and anything still encrypted with it is lost after`;
    case "aws:secretsmanager/secret:Secret":
      return `delete it; Secrets Manager keeps it recoverable ${String(i.recoveryWindowInDays ?? 30)} days`;
    case "aws:s3/bucket:Bucket":
      return "empty it (every object version: the bucket is versioned), then delete it";
    case "aws:efs/fileSystem:FileSystem":
      return "delete its mount targets, then it; its AWS Backup recovery points stay in the vault until their own retention";
    default:
      return "delete it";
  }
}

/** The removal of the tenant `config` from its two plans. */
export function removalPlan(config: TenantConfig, tenant: Deployment, central: Deployment): RemovalPlan {
  const id = config.tenant.id;
  const resources = tenant.deployment.resources.filter((r) => r.custom && !r.type.startsWith("pulumi:"));
  const centralProvider = (r: DeploymentResource) => /central/.test(String((r as { provider?: string }).provider ?? ""));
  const retained: Retained[] = resources.filter((r) => r.protect).map((r) => ({ type: r.type, name: nameOf(r), account: centralProvider(r) ? "central" : "tenant", forGood: forGood(r) }));
  const link = central.deployment.resources.find((r) => r.type === "clusterra:central:TenantLink" && r.urn.endsWith(`-tenant-${id}`));
  const parentOf = new Map(central.deployment.resources.map((r) => [r.urn, r.parent]));
  const under = (urn: string | undefined): boolean => !!link && urn !== undefined && (urn === link.urn || under(parentOf.get(urn)));
  const centralSide = central.deployment.resources.filter((r) => r.custom && under(r.urn)).map((r) => `${r.type} ${nameOf(r)}`);
  const centralStack = config.central.stack;
  const fleetPaths = [`${tenantFleetPath(config.central.scope, id)}/`];
  const role = tenantAccessRoleName(config.environment, id);
  const inCentral = retained.filter((r) => r.account === "central").map((r) => r.name);
  const onCentral = TENANT_ADD_ONS.filter((a) => a.side === "central").map((a) => `${id}-${a.addon}`);
  const onCluster = TENANT_ADD_ONS.filter((a) => a.side === "cluster").map((a) => `${id}-${a.addon}`);
  // The steps' order, by name: a step that points at another says its number from here.
  const order = ["drain", "history", "secrets", "destroy", "centralUp", "retained"] as const;
  const n = (step: (typeof order)[number]) => order.indexOf(step) + 1;
  const steps = [
    `Drain: scale every NodeSet of ${id} to 0 (cluster-api, or kubectl scale nodeset --replicas=0 on its cluster) and wait until \`squeue\` on its control plane is empty; Karpenter removes the workers.`,
    `Keep the accounting history if the customer wants it: copy the newest backup from the \`mariadb-daily\` volume in namespace ${tenantNamespace(id)} (kubectl cp from a pod mounting it) before step ${n("centralUp")} prunes it.`,
    `Decide the central-side secrets now (${inCentral.join(", ")}): they live in central's account but belong to this stack. To delete them for good, \`pulumi state unprotect\` their URNs and destroy them with \`--target\` while ${role} still exists; otherwise they are retained below and central's administrator deletes them later.`,
    `pulumi destroy -s ${config.stack} --exclude-protected: ${resources.filter((r) => !r.protect).length} resources go (the server, its network, the peering, the roles); ${retained.length} protected ones are retained. It acts in central through ${role}, which central still holds.`,
    `Remove stacks/Pulumi.${config.stack}.yaml, name ${id} in stacks/Pulumi.${stackShortName(centralStack)}.yaml under ${REMOVE_TENANTS_KEY} (central refuses to drop a tenant it serves otherwise; the entry may go once central has run) and run pulumi up -s ${centralStack}: central deletes its ${centralSide.length} resources for ${id} (its roles and their policies, rules, the route) and prunes ${fleetPaths.join(" and ")}; merge that pull request. The environment's ApplicationSets keep a tenant's Applications when its folder or its cluster Secret goes (applicationsSync create-update, so a failed refresh never deletes a tenant): delete them, central's with their finalizer, which prunes the control plane (its MariaDB, its backups and slurmctld's state): \`kubectl -n ${ARGOCD_CHART.namespace} delete application ${onCentral.join(" ")}\`; the cluster's (the cluster is gone, nothing to prune) without it: \`kubectl -n ${ARGOCD_CHART.namespace} patch application <name> --type merge -p '{"metadata":{"finalizers":null}}'\` then delete, for ${onCluster.join(", ")}; last its entry, with its finalizer, which deletes namespace ${tenantNamespace(id)}, the tenant's projects, its store and its cluster credential (External Secrets owns the cluster Secret \`cluster-${tenantClusterName(config.environment, id)}\`, which goes with it): \`kubectl -n ${ARGOCD_CHART.namespace} delete application ${tenantEntryApplication(id)}\`.`,
    `Retained data, for as long as the customer's contract says: each below. To delete it for good: \`pulumi state delete\` the central-side secrets kept in step ${n("secrets")} (central's administrator owns them now), \`pulumi state unprotect --all -s ${config.stack}\`, then \`pulumi destroy -s ${config.stack}\` (in the customer's account, with their deploy role), then \`pulumi stack rm -s ${config.stack}\`.`,
  ];
  return { tenantId: id, stack: config.stack, centralStack, destroyed: resources.filter((r) => !r.protect).length, retained, centralSide, fleetPaths, steps, centralUpStep: n("centralUp") };
}

/** The runbook as `clusterra tenant remove` prints it. */
export function formatRemoval(p: RemovalPlan): string {
  return [
    `Removing tenant ${p.tenantId} (${p.stack}) from ${p.centralStack}, in this order (keep this output: once step ${p.centralUpStep} removes the stack file, this command cannot print it again):`,
    ...p.steps.map((s, i) => `${i + 1}. ${s}`),
    `Retained (${p.retained.length}):`,
    ...p.retained.map((r) => `  - ${r.type} ${r.name} (${r.account} account): for good, ${r.forGood}`),
    `Central's resources for ${p.tenantId} (${p.centralSide.length}), removed by step ${p.centralUpStep}:`,
    ...p.centralSide.map((c) => `  - ${c}`),
  ].join("\n");
}
