import * as pulumi from "@pulumi/pulumi";
import * as iam from "@pulumi/aws/iam";
import { DEPLOYER_ROLE_PREFIX, platformName, TAG_KEYS } from "../../facts/project";
import { arn, policyDocument, toJson, type PolicyDocument } from "../security/iam";
import type { AccountScope } from "../security/scope";

export interface TenantAttachmentArgs extends AccountScope {
  /** Environment name: role name and the tenant load-balancer name pattern. */
  readonly environment: string;
  /** Central VPC: the only one peerings may be accepted into. */
  readonly vpcId: pulumi.Input<string>;
  /** Central route tables tenants may add their routes to. */
  readonly routeTableIds: pulumi.Input<string>[];
  /** The host's group, where tenants add their NodePort and 6818 rules. */
  readonly hostSecurityGroupId: pulumi.Input<string>;
}

interface AttachmentScope {
  partition: string;
  region: string;
  accountId: string;
  environment: string;
  vpcId: string;
  routeTableIds: string[];
  hostSecurityGroupId: string;
}

const TENANT_TAG = TAG_KEYS.tenant;
/** The session's tenant, as IAM policy variable. */
const SESSION_TENANT = `\${aws:PrincipalTag/${TENANT_TAG}}`;

/**
 * Trust: the operators' deployer roles in this account, by ARN pattern, and only with a
 * `clusterra:tenant` session tag (an untagged session cannot assume the role at all).
 */
export function attachmentTrust(partition: string, accountId: string): PolicyDocument {
  return policyDocument({
    Effect: "Allow",
    Principal: { AWS: `arn:${partition}:iam::${accountId}:root` },
    Action: ["sts:AssumeRole", "sts:TagSession"],
    Condition: {
      ArnLike: { "aws:PrincipalArn": `arn:${partition}:iam::${accountId}:role/${DEPLOYER_ROLE_PREFIX}*` },
      StringLike: { [`aws:RequestTag/${TENANT_TAG}`]: "?*" },
    },
  });
}

/**
 * What a tenant stack does in the central account, and only that: accept its peering
 * into this VPC, route to it, and add or remove its own tagged security-group rules and
 * its slurmctld load balancer.
 */
export function attachmentPolicy(s: AttachmentScope): string {
  const ec2 = (resource: string) => arn(s.partition, "ec2", s.region, s.accountId, resource);
  const elb = (resource: string) => arn(s.partition, "elasticloadbalancing", s.region, s.accountId, resource);
  const vpcArn = ec2(`vpc/${s.vpcId}`);
  const tenantLbs = platformName(s.environment, "*");
  const elbResources = [elb(`loadbalancer/net/${tenantLbs}/*`), elb(`targetgroup/${tenantLbs}/*`), elb(`listener/net/${tenantLbs}/*/*`)];
  // Resources a tenant stack creates here carry its tenant tag; it may change only those.
  const ownTenant = { [`aws:ResourceTag/${TENANT_TAG}`]: SESSION_TENANT };
  const tagsOwnTenant = { [`aws:RequestTag/${TENANT_TAG}`]: SESSION_TENANT };
  return toJson(
    policyDocument(
      {
        Sid: "AcceptPeeringIntoThisVpc",
        Effect: "Allow",
        Action: ["ec2:AcceptVpcPeeringConnection", "ec2:ModifyVpcPeeringConnectionOptions"],
        Resource: ec2("vpc-peering-connection/*"),
        Condition: { ArnEquals: { "ec2:AccepterVpc": vpcArn } },
      },
      { Sid: "AcceptingVpc", Effect: "Allow", Action: "ec2:AcceptVpcPeeringConnection", Resource: vpcArn },
      {
        // The accepter tags its side of the connection after accepting, not on create.
        Sid: "TagAcceptedPeerings",
        Effect: "Allow",
        Action: ["ec2:CreateTags", "ec2:DeleteTags"],
        Resource: ec2("vpc-peering-connection/*"),
        Condition: { ArnEquals: { "ec2:AccepterVpc": vpcArn } },
      },
      { Sid: "RoutesToTenants", Effect: "Allow", Action: ["ec2:CreateRoute", "ec2:ReplaceRoute", "ec2:DeleteRoute"], Resource: s.routeTableIds.map((id) => ec2(`route-table/${id}`)) },
      {
        Sid: "TenantRulesOnHostGroup",
        Effect: "Allow",
        Action: ["ec2:AuthorizeSecurityGroupIngress", "ec2:RevokeSecurityGroupIngress", "ec2:AuthorizeSecurityGroupEgress", "ec2:RevokeSecurityGroupEgress", "ec2:ModifySecurityGroupRules"],
        Resource: [ec2(`security-group/${s.hostSecurityGroupId}`), ec2("security-group-rule/*")],
      },
      { Sid: "EndpointGroupsInThisVpc", Effect: "Allow", Action: "ec2:CreateSecurityGroup", Resource: vpcArn },
      {
        Sid: "EndpointGroupsTaggedWithOwnTenant",
        Effect: "Allow",
        Action: "ec2:CreateSecurityGroup",
        Resource: ec2("security-group/*"),
        Condition: { StringEquals: tagsOwnTenant },
      },
      {
        Sid: "ManageOnlyOwnTenantGroups",
        Effect: "Allow",
        Action: ["ec2:DeleteSecurityGroup", "ec2:AuthorizeSecurityGroupIngress", "ec2:RevokeSecurityGroupIngress", "ec2:AuthorizeSecurityGroupEgress", "ec2:RevokeSecurityGroupEgress", "ec2:ModifySecurityGroupRules"],
        Resource: ec2("security-group/*"),
        Condition: { StringEquals: ownTenant },
      },
      {
        Sid: "RetagOwnTenantGroupsAndRules",
        Effect: "Allow",
        Action: ["ec2:CreateTags", "ec2:DeleteTags"],
        Resource: [ec2("security-group/*"), ec2("security-group-rule/*")],
        Condition: { StringEquals: ownTenant },
      },
      {
        Sid: "TagOnCreate",
        Effect: "Allow",
        Action: "ec2:CreateTags",
        Resource: [ec2("security-group/*"), ec2("security-group-rule/*")],
        Condition: { StringEquals: { "ec2:CreateAction": ["CreateSecurityGroup", "AuthorizeSecurityGroupIngress", "AuthorizeSecurityGroupEgress"] } },
      },
      {
        Sid: "CreateLoadBalancersTaggedWithOwnTenant",
        Effect: "Allow",
        Action: ["elasticloadbalancing:CreateLoadBalancer", "elasticloadbalancing:CreateTargetGroup", "elasticloadbalancing:CreateListener", "elasticloadbalancing:AddTags"],
        Resource: elbResources,
        Condition: { StringEquals: tagsOwnTenant },
      },
      {
        Sid: "ManageOnlyOwnTenantLoadBalancers",
        Effect: "Allow",
        Action: [
          "elasticloadbalancing:DeleteLoadBalancer", "elasticloadbalancing:ModifyLoadBalancerAttributes", "elasticloadbalancing:SetSecurityGroups",
          "elasticloadbalancing:DeleteTargetGroup", "elasticloadbalancing:ModifyTargetGroup", "elasticloadbalancing:ModifyTargetGroupAttributes",
          "elasticloadbalancing:RegisterTargets", "elasticloadbalancing:DeregisterTargets",
          "elasticloadbalancing:DeleteListener", "elasticloadbalancing:ModifyListener", "elasticloadbalancing:AddTags", "elasticloadbalancing:RemoveTags",
        ],
        Resource: elbResources,
        Condition: { StringEquals: ownTenant },
      },
      {
        // The first load balancer of an account creates ELB's service-linked role.
        Sid: "ElbServiceLinkedRole",
        Effect: "Allow",
        Action: "iam:CreateServiceLinkedRole",
        Resource: `arn:${s.partition}:iam::${s.accountId}:role/aws-service-role/elasticloadbalancing.amazonaws.com/AWSServiceRoleForElasticLoadBalancing`,
        Condition: { StringEquals: { "iam:AWSServiceName": "elasticloadbalancing.amazonaws.com" } },
      },
      {
        // Describe calls take no resource ARNs.
        Sid: "ReadOnlyDescribe",
        Effect: "Allow",
        Action: [
          "ec2:DescribeVpcPeeringConnections", "ec2:DescribeRouteTables", "ec2:DescribeSecurityGroups", "ec2:DescribeSecurityGroupRules",
          "ec2:DescribeVpcs", "ec2:DescribeSubnets", "ec2:DescribeNetworkInterfaces", "ec2:DescribeTags", "ec2:DescribeInstances",
          "elasticloadbalancing:DescribeLoadBalancers", "elasticloadbalancing:DescribeLoadBalancerAttributes", "elasticloadbalancing:DescribeTargetGroups",
          "elasticloadbalancing:DescribeTargetGroupAttributes", "elasticloadbalancing:DescribeTargetHealth", "elasticloadbalancing:DescribeListeners",
          "elasticloadbalancing:DescribeListenerAttributes", "elasticloadbalancing:DescribeTags",
        ],
        Resource: "*",
      },
    ),
  );
}

/** The role tenant stacks assume in the central account to attach themselves. */
export class TenantAttachmentRole extends pulumi.ComponentResource {
  public readonly roleArn: pulumi.Output<string>;

  constructor(name: string, args: TenantAttachmentArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:central:TenantAttachmentRole", name, {}, opts);
    const role = new iam.Role(
      `${name}-role`,
      {
        name: platformName(args.environment, "tenant-attachment"),
        description: "Tenant stacks accept their peering, route and add their own rules here",
        maxSessionDuration: 3600,
        assumeRolePolicy: pulumi.output(args.accountId).apply((account) => toJson(attachmentTrust(args.partition, account))),
      },
      { parent: this },
    );
    new iam.RolePolicy(
      `${name}-policy`,
      {
        role: role.name,
        policy: pulumi
          .all([args.accountId, args.vpcId, pulumi.all(args.routeTableIds), args.hostSecurityGroupId])
          .apply(([accountId, vpcId, routeTableIds, hostSecurityGroupId]) =>
            attachmentPolicy({ partition: args.partition, region: args.region, accountId, environment: args.environment, vpcId, routeTableIds, hostSecurityGroupId }),
          ),
      },
      { parent: this },
    );
    this.roleArn = role.arn;
    this.registerOutputs({ roleArn: this.roleArn });
  }
}
