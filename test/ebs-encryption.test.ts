/**
 * Workers' root volumes are encrypted with the tenant's stack key (the EC2NodeClass), so a
 * launch works only if the key lets EC2 use it for the principal that launches: Karpenter's
 * controller on On-Demand launches, the EC2 Spot service-linked role on Spot launches (its
 * AWS-managed policy has no KMS; only the key policy can let it). Evaluated with the
 * simulator against the planned documents.
 */
import * as assert from "node:assert/strict";
import { byType, json, named, plan } from "./helpers";
import { decide } from "../access/iam-sim";

const ACME = "444455556666";
const VIA_EC2 = { "kms:ViaService": "ec2.us-east-1.amazonaws.com" };

describe("encrypted worker volumes: who may use the stack key for a launch (simulated)", function () {
  this.timeout(60000);

  async function documents() {
    const acme = await plan("tenant-acme-dev");
    const key = byType(acme, "aws:kms/key:Key")[0];
    const keyArn = String(key.outputs?.arn);
    const keyPolicy = json(key.inputs?.policy);
    const controller = json(named(acme, "aws:iam/policy:Policy", "tenant-acme-k3s-karpenter-controller").inputs?.policy);
    return { keyArn, keyPolicy, controller };
  }
  const karpenter = `arn:aws:sts::${ACME}:assumed-role/clusterra-dev-acme-karpenter/session`;
  const spot = `arn:aws:iam::${ACME}:role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot`;

  it("Karpenter's controller may have EC2 encrypt a volume and grant it the key, through EC2 only", async () => {
    const { keyArn, keyPolicy, controller } = await documents();
    const ask = (action: string, context: Record<string, string> = {}) => decide({ identity: [controller], resourcePolicy: keyPolicy, principal: karpenter, action, resource: keyArn, context });
    assert.equal(await ask("kms:GenerateDataKeyWithoutPlaintext", VIA_EC2), "Allowed");
    assert.equal(await ask("kms:DescribeKey", VIA_EC2), "Allowed");
    assert.equal(await ask("kms:CreateGrant", { ...VIA_EC2, "kms:GrantIsForAWSResource": "true" }), "Allowed");
    // Not through EC2, or a grant for something other than an AWS resource: no.
    assert.equal(await ask("kms:GenerateDataKeyWithoutPlaintext"), "ImplicitlyDenied");
    assert.equal(await ask("kms:CreateGrant", { ...VIA_EC2, "kms:GrantIsForAWSResource": "false" }), "ImplicitlyDenied");
    assert.equal(await ask("kms:Decrypt", { "kms:ViaService": "s3.us-east-1.amazonaws.com" }), "ImplicitlyDenied");
  });

  it("Spot launches: the EC2 Spot service-linked role may use the key for volumes, by the key policy alone", async () => {
    const { keyArn, keyPolicy } = await documents();
    const ask = (action: string, context: Record<string, string> = {}) => decide({ identity: [], resourcePolicy: keyPolicy, principal: spot, action, resource: keyArn, context });
    assert.equal(await ask("kms:GenerateDataKeyWithoutPlaintext"), "Allowed");
    assert.equal(await ask("kms:Decrypt"), "Allowed");
    assert.equal(await ask("kms:CreateGrant", { "kms:GrantIsForAWSResource": "true" }), "Allowed");
    assert.equal(await ask("kms:CreateGrant", { "kms:GrantIsForAWSResource": "false" }), "ImplicitlyDenied");
    assert.equal(await ask("kms:ScheduleKeyDeletion"), "ImplicitlyDenied");
  });

  it("a tenant with no Spot shape names no Spot role in its key policy", async () => {
    const globex = await plan("tenant-globex-dev");
    const text = String(byType(globex, "aws:kms/key:Key")[0].inputs?.policy);
    const spotShapes = globex.config.kind === "tenant" && globex.config.shapes.some((s) => s.capacityType === "spot");
    assert.equal(text.includes("AWSServiceRoleForEC2Spot"), spotShapes);
  });
});
