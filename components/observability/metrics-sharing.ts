import * as pulumi from "@pulumi/pulumi";
import * as oam from "@pulumi/aws/oam";
import { SHARED_METRICS } from "../../facts/alarms";
import { policyDocument, toJson } from "../security/iam";

export interface MonitoringSinkArgs {
  /** The sink's name. */
  readonly name: string;
  /** Tenant accounts that may link to it, sharing only metrics. */
  readonly sourceAccountIds: readonly string[];
}

/**
 * Central's CloudWatch sink (cross-account observability): tenant accounts link to it and
 * share their EC2 metrics only, so central's alarms watch each tenant's server and the
 * operator pays for them. Free; nothing but metrics crosses.
 */
export class MonitoringSink extends pulumi.ComponentResource {
  public readonly sinkArn: pulumi.Output<string>;

  constructor(name: string, args: MonitoringSinkArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:observability:MonitoringSink", name, {}, opts);
    const sink = new oam.Sink(`${name}-sink`, { name: args.name }, { parent: this });
    // No tenant yet: no one may link.
    if (args.sourceAccountIds.length > 0) new oam.SinkPolicy(
      `${name}-sink`,
      {
        sinkIdentifier: sink.arn,
        policy: toJson(
          policyDocument({
            Sid: "TenantAccountsShareMetricsOnly",
            Effect: "Allow",
            Principal: { AWS: [...args.sourceAccountIds] },
            Action: ["oam:CreateLink", "oam:UpdateLink"],
            Resource: "*",
            Condition: { "ForAllValues:StringEquals": { "oam:ResourceTypes": [SHARED_METRICS.resourceType] } },
          }),
        ),
      },
      { parent: this },
    );
    this.sinkArn = sink.arn;
    this.registerOutputs({ sinkArn: this.sinkArn });
  }
}

/** A tenant account's link to central's sink: its EC2 metrics, nothing else. */
export class MetricsLink extends pulumi.ComponentResource {
  constructor(name: string, args: { readonly sinkArn: pulumi.Input<string>; readonly label: string }, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:observability:MetricsLink", name, {}, opts);
    new oam.Link(
      `${name}-link`,
      {
        sinkIdentifier: args.sinkArn,
        labelTemplate: args.label,
        resourceTypes: [SHARED_METRICS.resourceType],
        linkConfiguration: { metricConfiguration: { filter: SHARED_METRICS.filter } },
      },
      { parent: this },
    );
    this.registerOutputs({});
  }
}
