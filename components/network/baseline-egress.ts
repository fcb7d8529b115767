import * as pulumi from "@pulumi/pulumi";
import * as vpc from "@pulumi/aws/vpc";
import { baselineEgressRules } from "../../facts/baseline-egress";

/** Creates the baseline egress rules (facts/baseline-egress.ts) on a security group, which otherwise has none. */
export function addBaselineEgress(name: string, securityGroupId: pulumi.Input<string>, vpcCidr: string, parent: pulumi.Resource): void {
  for (const rule of baselineEgressRules(vpcCidr)) {
    new vpc.SecurityGroupEgressRule(
      `${name}-egress-${rule.id}`,
      { securityGroupId, ipProtocol: rule.protocol, fromPort: rule.port, toPort: rule.port, cidrIpv4: rule.cidr, description: rule.description },
      { parent },
    );
  }
}
