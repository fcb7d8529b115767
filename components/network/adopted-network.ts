import * as pulumi from "@pulumi/pulumi";
import * as ec2 from "@pulumi/aws/ec2";

export interface AdoptedNetworkArgs {
  readonly vpcId: string;
  readonly vpcArn: pulumi.Input<string>;
  readonly cidr: string;
  /** The customer's private subnets, one per zone. */
  readonly subnetIds: readonly string[];
  /** Their route tables, distinct (resolved before the program builds resources). */
  readonly routeTableIds: readonly string[];
  /** Tags the platform adds to each subnet (Karpenter's discovery tag). */
  readonly subnetTags: Readonly<Record<string, string>>;
}

/**
 * A VPC the customer already has, adopted as is: its subnets and route tables stay the
 * customer's (so does its egress and its flow logs); the platform only tags the subnets
 * for Karpenter's discovery, and adds its routes and groups.
 */
export class AdoptedNetwork extends pulumi.ComponentResource {
  public readonly vpcId: pulumi.Output<string>;
  public readonly vpcArn: pulumi.Output<string>;
  public readonly cidr: string;
  public readonly privateSubnetIds: pulumi.Output<string>[];
  public readonly routeTableIds: pulumi.Output<string>[];

  constructor(name: string, args: AdoptedNetworkArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:network:AdoptedNetwork", name, {}, opts);
    args.subnetIds.forEach((subnetId, i) => {
      for (const [key, value] of Object.entries(args.subnetTags)) {
        new ec2.Tag(`${name}-subnet-${i}-${key.replace(/[^a-z0-9]+/gi, "-")}`, { resourceId: subnetId, key, value }, { parent: this });
      }
    });
    this.vpcId = pulumi.output(args.vpcId);
    this.vpcArn = pulumi.output(args.vpcArn);
    this.cidr = args.cidr;
    this.privateSubnetIds = args.subnetIds.map((id) => pulumi.output(id));
    this.routeTableIds = args.routeTableIds.map((id) => pulumi.output(id));
    this.registerOutputs({ vpcId: this.vpcId, privateSubnetIds: this.privateSubnetIds });
  }
}
