import * as assert from "node:assert/strict";
import { EXAMPLE_STACKS, plan } from "./helpers";

/** Characters EC2 accepts in security-group and rule descriptions (EC2 API reference). */
const EC2_DESCRIPTION = /^[a-zA-Z0-9. _\-:/()#,@[\]+=&;{}!$*]{0,255}$/;

const DESCRIBED = [
  "aws:ec2/securityGroup:SecurityGroup",
  "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
  "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule",
];

describe("AWS naming limits in every example plan", function () {
  this.timeout(60000);

  it("security-group and rule descriptions use only the characters EC2 accepts", async () => {
    for (const stack of EXAMPLE_STACKS) {
      for (const r of (await plan(stack)).deployment.deployment.resources.filter((x) => DESCRIBED.includes(x.type))) {
        const description = r.inputs?.description;
        if (description !== undefined) assert.match(String(description), EC2_DESCRIPTION, `${r.urn}`);
      }
    }
  });

  it("load balancer and target group names fit ELB's 32 characters and do not end in a hyphen", async () => {
    for (const stack of EXAMPLE_STACKS) {
      for (const r of (await plan(stack)).deployment.deployment.resources.filter((x) => x.type.startsWith("aws:lb/") && x.inputs?.name)) {
        assert.match(String(r.inputs?.name), /^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,30}[a-zA-Z0-9])?$/, r.urn);
      }
    }
  });

  it("EventBridge rule names fit 64 characters", async () => {
    for (const r of (await plan("connector-demo")).deployment.deployment.resources.filter((x) => x.type === "aws:cloudwatch/eventRule:EventRule")) {
      assert.ok(String(r.inputs?.name).length <= 64, r.urn);
    }
  });
});
