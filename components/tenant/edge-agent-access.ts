import * as pulumi from "@pulumi/pulumi";
import * as iam from "@pulumi/aws/iam";
import { principalTrust, toJson } from "../security/iam";
import type { AccountScope } from "../security/scope";
import { edgeAgentPolicy } from "./node-iam";

export interface EdgeAgentAccessArgs extends AccountScope {
  readonly clusterName: string;
  /** The role's name (edgeAgentRoleName): cluster-api knows a tenant's heartbeats by it. */
  readonly roleName: string;
  /** The K3s server's role: the agent runs on its host network and assumes this role. */
  readonly serverRoleArn: pulumi.Input<string>;
}

/** The edge-agent's role: read instance state in this region, nothing else. */
export class EdgeAgentAccess extends pulumi.ComponentResource {
  public readonly roleArn: pulumi.Output<string>;

  constructor(name: string, args: EdgeAgentAccessArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:tenant:EdgeAgentAccess", name, {}, opts);
    const role = new iam.Role(
      `${name}`,
      {
        name: args.roleName,
        description: `edge-agent of ${args.clusterName}: node state to cluster-api`,
        assumeRolePolicy: pulumi.all([args.accountId, args.serverRoleArn]).apply(([account, server]) => toJson(principalTrust(args.partition, account, [server]))),
      },
      { parent: this },
    );
    new iam.RolePolicy(
      `${name}`,
      {
        role: role.name,
        policy: pulumi.output(args.accountId).apply((accountId) =>
          toJson(edgeAgentPolicy({ partition: args.partition, region: args.region, accountId, clusterName: args.clusterName })),
        ),
      },
      { parent: this },
    );
    this.roleArn = role.arn;
    this.registerOutputs({ roleArn: this.roleArn });
  }
}
