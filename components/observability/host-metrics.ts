/**
 * Disk use of the platform's hosts, and whether their first boot completed, as CloudWatch
 * metrics the operator's alarms watch: a systemd timer on each host runs `aws cloudwatch
 * put-metric-data` with the used percent of each of its file systems and its boot state (no
 * agent to install: AL2023 ships the AWS CLI).
 *
 * Central's host publishes into its own account. A tenant's server publishes into central's
 * account too, through a role central makes for it (`TenantMetricsRole`, here): custom metrics
 * are billed where they are published, and the customer's idle bill has no room for them.
 * Each tenant has its own namespace, and its role may publish in that namespace only.
 */
import * as pulumi from "@pulumi/pulumi";
import * as iam from "@pulumi/aws/iam";
import { HOST_BOOT, HOST_COUNTS, HOST_DISK, type HostCount } from "../../facts/alarms";
import { BOOT } from "../../facts/host-boot";
import { tenantMetricsRoleName, tenantServerRoleName } from "../../facts/project";
import { policyDocument, principalTrust, toJson, type Statement } from "../security/iam";

/** What a host publishes: its namespace, its file systems by mount point, and (tenant servers) the role it publishes through. */
export interface HostMetrics {
  readonly region: string;
  readonly namespace: string;
  readonly mounts: readonly string[];
  /** A role in another account (central's) to publish through; the host's own credentials otherwise. */
  readonly roleArn?: string;
  /** Counts its scripts write (facts/alarms.ts HOST_COUNTS), published with the rest. */
  readonly counts?: readonly HostCount[];
}

const CONFIG = "/etc/clusterra/metrics.aws-config";
const SCRIPT = "/usr/local/sbin/clusterra-disk-metrics";

/**
 * The publishing script: one put-metric-data call with each mount's used percent (dimension
 * Mount) and the boot's state (1 until the boot unit has left its mark). A mount that is not
 * mounted is skipped, so its alarm sees missing data, which it treats as breaching.
 */
export function diskMetricsScript(m: HostMetrics): string {
  return [
    "#!/bin/bash",
    "set -euo pipefail",
    ...(m.roleArn ? [`export AWS_CONFIG_FILE=${CONFIG} AWS_PROFILE=clusterra-metrics`] : []),
    "data=()",
    `for mount in ${m.mounts.map((x) => `'${x}'`).join(" ")}; do`,
    '  mountpoint -q "$mount" || continue',
    '  used=$(df --output=pcent "$mount" | tail -n 1 | tr -dc 0-9)',
    `  data+=("MetricName=${HOST_DISK.metric},Dimensions=[{Name=Mount,Value=$mount}],Value=$used,Unit=Percent")`,
    "done",
    `if [ -e ${BOOT.done} ]; then boot=0; else boot=1; fi`,
    `data+=("MetricName=${HOST_BOOT.metric},Value=$boot,Unit=Count")`,
    // A count whose file is not written yet is not published (its alarm takes no data as fine).
    ...(m.counts ?? []).map((c) => `if [ -r ${HOST_COUNTS[c].file} ]; then data+=("MetricName=${c},Value=$(tr -dc 0-9 < ${HOST_COUNTS[c].file}),Unit=Count"); fi`),
    `aws cloudwatch put-metric-data --region ${m.region} --namespace '${m.namespace}' --metric-data "\${data[@]}"`,
    "",
  ].join("\n");
}

/** cloud-init write_files entries: the script, its timer, and the AWS profile of the role it publishes through. */
export function diskMetricsFiles(m: HostMetrics): { path: string; permissions: string; content: string }[] {
  return [
    { path: SCRIPT, permissions: "0700", content: diskMetricsScript(m) },
    ...(m.roleArn ? [{ path: CONFIG, permissions: "0644", content: `[profile clusterra-metrics]\nrole_arn = ${m.roleArn}\ncredential_source = Ec2InstanceMetadata\n` }] : []),
    {
      path: "/etc/systemd/system/clusterra-disk-metrics.service",
      permissions: "0644",
      content: ["[Unit]", "Description=Publish disk use and boot state to CloudWatch", "After=network-online.target", "", "[Service]", "Type=oneshot", `ExecStart=${SCRIPT}`, ""].join("\n"),
    },
    {
      path: "/etc/systemd/system/clusterra-disk-metrics.timer",
      permissions: "0644",
      // AccuracySec: systemd's default minute of slack would leave a period without data now and then.
      content: ["[Unit]", "Description=Publish disk use to CloudWatch", "", "[Timer]", "OnBootSec=2min", `OnUnitActiveSec=${HOST_DISK.periodSeconds}s`, "AccuracySec=1s", "", "[Install]", "WantedBy=timers.target", ""].join("\n"),
    },
  ];
}

/** The statement that lets a host (or a tenant's metrics role) publish in one namespace only. */
export function putMetricsStatement(namespace: string): Statement {
  // PutMetricData has no resource type: the namespace condition is its scope.
  return { Sid: "PublishDiskMetrics", Effect: "Allow", Action: "cloudwatch:PutMetricData", Resource: "*", Condition: { StringEquals: { "cloudwatch:namespace": namespace } } };
}

export interface TenantMetricsRoleArgs {
  readonly partition: string;
  readonly environment: string;
  readonly tenantId: string;
  readonly tenantAccountId: string;
  /** The tenant's namespace in central's CloudWatch. */
  readonly namespace: string;
}

/**
 * The role in central's account a tenant's server publishes its disk metrics through:
 * trusted by that server's role alone (exact ARN, its account), allowed PutMetricData in
 * the tenant's own namespace only.
 */
export class TenantMetricsRole extends pulumi.ComponentResource {
  public readonly roleArn: pulumi.Output<string>;

  constructor(name: string, args: TenantMetricsRoleArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:observability:TenantMetricsRole", name, {}, opts);
    const server = `arn:${args.partition}:iam::${args.tenantAccountId}:role/${tenantServerRoleName(args.environment, args.tenantId)}`;
    const role = new iam.Role(
      `${name}-role`,
      {
        name: tenantMetricsRoleName(args.environment, args.tenantId),
        description: `Tenant ${args.tenantId}'s server publishes its disk use into namespace ${args.namespace}`,
        assumeRolePolicy: toJson(principalTrust(args.partition, args.tenantAccountId, [server])),
        maxSessionDuration: 3600,
      },
      { parent: this },
    );
    new iam.RolePolicy(`${name}-publish`, { role: role.name, policy: toJson(policyDocument(putMetricsStatement(args.namespace))) }, { parent: this });
    this.roleArn = role.arn;
    this.registerOutputs({ roleArn: this.roleArn });
  }
}
