/**
 * The pack's second wave (issue 13), through `clusterra policy check` on deployment files:
 * each violation in several spellings, named by its own policy on its own resource, and
 * each corrected twin (and each shape the platform must deploy) with no violation at all.
 * Two deployment files (a central-account stack and tenant acme's stack) hold every case,
 * so the whole suite costs two CLI runs.
 */
import * as assert from "node:assert/strict";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as zlib from "zlib";
import type { Deployment, DeploymentResource } from "../planning/deployment";
import { main } from "../cli/main";
import type { PolicyReport, PolicyViolation } from "../planning/policy-check";
import { tenantVpcCidrsFromStackFiles } from "../config";
import { exampleRoot } from "./helpers";
import { stackTags, TAG_KEYS } from "../facts/project";
import type { PolicyName } from "../policies/rules";

const CENTRAL = "111122223333";
const ACME = "444455556666";
const OTHER = "999988887777";
const REGION = "us-east-1";

/** One deployment file's worth of cases, each a few resources named after the case. */
class Scenario {
  readonly resources: DeploymentResource[] = [];
  readonly failing: { id: string; policy: PolicyName; urn: string }[] = [];
  readonly passing: { id: string; urns: string[] }[] = [];
  private readonly prefix: string;
  readonly provider: string;

  constructor(readonly stack: string, tags: Record<string, string>, account: string) {
    this.prefix = `urn:pulumi:${stack}::clusterra`;
    const providerUrn = `${this.prefix}::pulumi:providers:aws::aws`;
    this.provider = `${providerUrn}::prov-1`;
    const inputs = { region: REGION, allowedAccountIds: JSON.stringify([account]), defaultTags: JSON.stringify({ tags }) };
    this.resources.push(
      { urn: `${this.prefix}::pulumi:pulumi:Stack::clusterra-${stack}`, custom: false, type: "pulumi:pulumi:Stack" },
      { urn: providerUrn, custom: true, type: "pulumi:providers:aws", id: "prov-1", inputs, outputs: inputs },
    );
  }

  /** An AWS resource through the stack's provider; `protect` as given (stateful cases set it). */
  res(id: string, type: string, name: string, inputs: Record<string, unknown>, more: Partial<DeploymentResource> = {}): DeploymentResource {
    const urn = `${this.prefix}::${type}::${id}-${name}`;
    return { urn, custom: true, type, id: `${id}-${name}-id`, inputs, outputs: { ...inputs, id: `${id}-${name}-id` }, provider: this.provider, ...more };
  }

  /** The case fails `policy` on the resource at `at` (default: the last one). */
  fail(id: string, policy: PolicyName, resources: DeploymentResource[], at = resources.length - 1): void {
    this.resources.push(...resources);
    this.failing.push({ id, policy, urn: resources[at].urn });
  }

  /** The case passes every policy: no violation names any of its resources. */
  pass(id: string, resources: DeploymentResource[]): void {
    this.resources.push(...resources);
    this.passing.push({ id, urns: resources.map((r) => r.urn) });
  }

  deployment(): Deployment {
    return { version: 3, deployment: { resources: this.resources } };
  }
}

function doc(...statements: Record<string, unknown>[]): string {
  return JSON.stringify({ Version: "2012-10-17", Statement: statements });
}

const allow = (Action: unknown, Resource: unknown, Condition?: Record<string, unknown>) => ({ Effect: "Allow", Action, Resource, ...(Condition ? { Condition } : {}) });

/** An identity policy (managed policy) of one document. */
function policy(s: Scenario, id: string, ...statements: Record<string, unknown>[]): DeploymentResource {
  return s.res(id, "aws:iam/policy:Policy", "policy", { policy: doc(...statements) });
}

const kmsKey = (account: string) => `arn:aws:kms:${REGION}:${account}:key/0b1c2d3e-0000-4000-8000-000000000001`;

/** What `clusterra policy check --json` says about a scenario's deployment file. */
async function checkThroughCli(s: Scenario, dir: string): Promise<{ code: number; report: PolicyReport }> {
  const file = path.join(dir, `${s.stack}.json`);
  fs.writeFileSync(file, JSON.stringify(s.deployment()));
  const out: string[] = [];
  const code = await main(["policy", "check", file, "--json"], (x) => out.push(x), () => undefined, exampleRoot());
  return { code, report: JSON.parse(out.join("\n")) as PolicyReport };
}

function describeScenario(build: () => Scenario): void {
  const s = build();
  describe(`${s.stack}: ${s.failing.length} failing and ${s.passing.length} passing cases in one deployment file`, () => {
    let result: { code: number; report: PolicyReport };
    before(async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "clusterra-wave-"));
      result = await checkThroughCli(s, dir);
    });
    it("exits 1 (a mandatory policy failed)", () => assert.equal(result.code, 1));
    for (const f of s.failing) {
      it(`fails ${f.id} with ${f.policy}`, () => {
        const v = result.report.violations.find((x) => x.policy === f.policy && x.urn === f.urn);
        const onIt = result.report.violations.filter((x) => x.urn === f.urn).map((x) => `${x.policy}: ${x.message}`);
        assert.ok(v, `${f.policy} did not fire on ${f.id}; on it: ${JSON.stringify(onIt, null, 1)}`);
        assert.equal(v.level, "mandatory");
        assert.match(v.message, /\. Fix: /);
      });
    }
    for (const p of s.passing) {
      it(`passes ${p.id}`, () => {
        const found: PolicyViolation[] = result.report.violations.filter((v) => p.urns.includes(v.urn));
        assert.deepEqual(found.map((v) => `${v.policy} on ${v.urn.split("::").pop()}: ${v.message}`), []);
      });
    }
  });
}

// ---------------------------------------------------------------------------------------
// A stack in the central account: IAM spellings, cross-account grants, ways to the internet, data

function centralScenario(): Scenario {
  const s = new Scenario("central-wave", stackTags("dev", "central"), CENTRAL);

  // 1. Wildcards inside ARNs, however the document is spelled.
  const table = `arn:aws:dynamodb:${REGION}:${CENTRAL}:table`;
  s.fail("every-table", "iam-no-wildcard-resource", [policy(s, "every-table", allow("dynamodb:PutItem", `${table}/*`))]);
  s.fail("every-role-any-account", "iam-no-wildcard-resource", [policy(s, "every-role-any-account", allow("iam:GetRole", "arn:aws:iam::*:role/*"))]);
  s.fail("one-queue-any-account", "iam-no-wildcard-resource", [policy(s, "one-queue-any-account", allow("sqs:SendMessage", `arn:aws:sqs:${REGION}:*:clusterra-events`))]);
  s.fail("any-partition-every-secret", "iam-no-wildcard-resource", [policy(s, "any-partition-every-secret", allow("secretsmanager:GetSecretValue", "arn:*:secretsmanager:*:*:secret:*"))]);
  s.fail("every-object", "iam-no-wildcard-resource", [policy(s, "every-object", allow("s3:GetObject", "arn:aws:s3:::*/*"))]);
  s.fail("pretty-lowercase", "iam-no-wildcard-resource", [
    s.res("pretty-lowercase", "aws:iam/rolePolicy:RolePolicy", "policy", {
      role: "r",
      policy: JSON.stringify({ version: "2012-10-17", statement: [{ effect: "allow", action: ["DYNAMODB:DeleteItem"], resource: `${table}/*` }] }, null, 2),
    }),
  ]);
  s.fail("object-form-single-statement", "iam-no-wildcard-resource", [
    s.res("object-form-single-statement", "aws:iam/policy:Policy", "policy", { policy: { Version: "2012-10-17", Statement: { Effect: "Allow", Action: "dynamodb:Query", Resource: [`${table}/*`] } } }),
  ]);
  s.fail("json-text-of-json-text", "iam-no-wildcard-resource", [
    s.res("json-text-of-json-text", "aws:iam/policy:Policy", "policy", { policy: JSON.stringify(doc(allow("dynamodb:GetItem", `${table}/*`))) }),
  ]);
  s.fail("inline-role-policy", "iam-no-wildcard-resource", [
    s.res("inline-role-policy", "aws:iam/role:Role", "role", {
      assumeRolePolicy: doc({ Effect: "Allow", Principal: { Service: "ec2.amazonaws.com" }, Action: "sts:AssumeRole" }),
      inlinePolicies: [{ name: "kms", policy: doc(allow(["kms:Decrypt"], `arn:aws:kms:${REGION}:${CENTRAL}:key/*`)) }],
    }),
  ]);
  s.pass("named-tables-and-secrets", [
    policy(
      s,
      "named-tables-and-secrets",
      allow(["dynamodb:PutItem", "dynamodb:Query"], [`${table}/clusterra-dev-tenants`, `${table}/clusterra-dev-tenants/index/*`]),
      allow("secretsmanager:GetSecretValue", `arn:aws:secretsmanager:${REGION}:${CENTRAL}:secret:clusterra/dev/slurm-jwt-??????`),
      allow("s3:GetObject", "arn:aws:s3:::clusterra-dev-files/*"),
    ),
  ]);

  // 1. Privilege escalation through IAM on any role or policy, sts:AssumeRole on any role.
  const roles = `arn:aws:iam::${CENTRAL}:role`;
  s.fail("attach-any-role", "iam-no-privilege-escalation", [policy(s, "attach-any-role", allow("iam:AttachRolePolicy", `${roles}/*`))]);
  s.fail("put-role-policy-anywhere", "iam-no-privilege-escalation", [policy(s, "put-role-policy-anywhere", allow("iam:PutRolePolicy", "*"))]);
  s.fail("assume-any-role", "iam-no-privilege-escalation", [policy(s, "assume-any-role", allow("sts:AssumeRole", "*"))]);
  s.fail("assume-role-any-account", "iam-no-privilege-escalation", [policy(s, "assume-role-any-account", allow("sts:AssumeRole", "arn:aws:iam::*:role/deployer"))]);
  s.fail("pass-role-prefix", "iam-no-privilege-escalation", [policy(s, "pass-role-prefix", allow("iam:PassRole", `${roles}/clusterra-*`))]);
  s.fail("iam-service-wildcard", "iam-no-privilege-escalation", [policy(s, "iam-service-wildcard", allow("iam:*", `${roles}/app-*`))]);
  s.fail("policy-version-not-resource", "iam-no-privilege-escalation", [
    policy(s, "policy-version-not-resource", { Effect: "Allow", Action: "iam:CreatePolicyVersion", NotResource: `arn:aws:iam::${CENTRAL}:policy/admin` }),
  ]);
  s.pass("named-role-and-tagged-profiles", [
    policy(
      s,
      "named-role-and-tagged-profiles",
      allow("sts:AssumeRole", `${roles}/clusterra-dev-reader`),
      allow("iam:PassRole", `${roles}/clusterra-dev-karpenter-node`, { StringEquals: { "iam:PassedToService": "ec2.amazonaws.com" } }),
      allow(["iam:AddRoleToInstanceProfile", "iam:RemoveRoleFromInstanceProfile"], `arn:aws:iam::${CENTRAL}:instance-profile/*`, {
        StringEquals: { "aws:ResourceTag/kubernetes.io/cluster/clusterra-dev": "owned" },
      }),
    ),
  ]);

  // 1. Conditions that look restrictive but are not.
  const queueArn = `arn:aws:sqs:${REGION}:${CENTRAL}:clusterra-events`;
  const anyoneSends = (id: string, Condition: Record<string, unknown>) =>
    s.res(id, "aws:sqs/queuePolicy:QueuePolicy", "queue-policy", { queueUrl: "q", policy: doc({ Effect: "Allow", Principal: "*", Action: "sqs:SendMessage", Resource: queueArn, Condition }) });
  s.fail("stringlike-star-account", "iam-no-wildcard-principal", [anyoneSends("stringlike-star-account", { StringLike: { "aws:SourceAccount": "*" } })]);
  s.fail("org-id-prefix", "iam-no-wildcard-principal", [anyoneSends("org-id-prefix", { StringLike: { "aws:PrincipalOrgID": "o-*" } })]);
  s.fail("any-vpc-endpoint", "iam-no-wildcard-principal", [anyoneSends("any-vpc-endpoint", { StringLike: { "aws:SourceVpce": "vpce-*" } })]);
  s.fail("truncated-source-arn", "iam-no-wildcard-principal", [anyoneSends("truncated-source-arn", { ArnLike: { "aws:SourceArn": "arn:aws:sns:*" } })]);
  s.fail("any-bucket-source-arn", "iam-no-wildcard-principal", [anyoneSends("any-bucket-source-arn", { ArnLike: { "aws:SourceArn": "arn:aws:s3:::clusterra-*" } })]);
  s.fail("key-that-limits-nobody", "iam-no-wildcard-principal", [anyoneSends("key-that-limits-nobody", { Bool: { "aws:SecureTransport": "true" } })]);
  s.pass("pinned-endpoint-and-org", [
    anyoneSends("pinned-endpoint", { StringEquals: { "aws:SourceVpce": "vpce-0123456789abcdef0" } }),
    anyoneSends("pinned-org", { StringEquals: { "aws:PrincipalOrgID": "o-a1b2c3d4e5" } }),
  ]);
  const github = "arn:aws:iam::111122223333:oidc-provider/token.actions.githubusercontent.com";
  const githubTrust = (id: string, sub: string) =>
    s.res(id, "aws:iam/role:Role", "deployer", {
      assumeRolePolicy: doc({
        Effect: "Allow",
        Principal: { Federated: github },
        Action: "sts:AssumeRoleWithWebIdentity",
        Condition: { StringEquals: { "token.actions.githubusercontent.com:aud": "sts.amazonaws.com" }, StringLike: { "token.actions.githubusercontent.com:sub": sub } },
      }),
    });
  s.fail("oidc-any-repository", "iam-cross-account-trust-condition", [githubTrust("oidc-any-repository", "repo:clusterra/*")]);
  s.fail("oidc-any-owner", "iam-cross-account-trust-condition", [githubTrust("oidc-any-owner", "repo:*")]);
  s.pass("oidc-one-repository", [githubTrust("oidc-one-branch", "repo:clusterra/infra:ref:refs/heads/main"), githubTrust("oidc-one-repo", "repo:clusterra/infra:*")]);

  // 2. Cross-account grants in resource policies.
  const other = `arn:aws:iam::${OTHER}:root`;
  const grant = (Principal: unknown, Action: unknown, Resource: unknown, Condition?: Record<string, unknown>) => doc({ Effect: "Allow", Principal, Action, Resource, ...(Condition ? { Condition } : {}) });
  s.fail("kms-key-to-account", "iam-resource-policy-cross-account", [
    s.res("kms-key-to-account", "aws:kms/key:Key", "key", { enableKeyRotation: true, policy: grant({ AWS: other }, "kms:Decrypt", "*") }, { protect: true }),
  ]);
  s.fail("kms-caller-account", "iam-resource-policy-cross-account", [
    s.res("kms-caller-account", "aws:kms/keyPolicy:KeyPolicy", "key-policy", {
      keyId: "k",
      policy: grant("*", ["kms:Decrypt", "kms:GenerateDataKey*"], "*", { StringEquals: { "kms:CallerAccount": OTHER, "kms:ViaService": `ec2.${REGION}.amazonaws.com` } }),
    }),
  ]);
  s.fail("secret-to-account-id", "iam-resource-policy-cross-account", [
    s.res("secret-to-account-id", "aws:secretsmanager/secretPolicy:SecretPolicy", "secret-policy", { secretArn: "s", policy: grant({ AWS: OTHER }, "secretsmanager:GetSecretValue", "*") }),
  ]);
  s.fail("ecr-to-account", "iam-resource-policy-cross-account", [
    s.res("ecr-to-account", "aws:ecr/repositoryPolicy:RepositoryPolicy", "repo-policy", { repository: "r", policy: grant({ AWS: [other] }, ["ecr:BatchGetImage", "ecr:GetDownloadUrlForLayer"], "*") }),
  ]);
  s.fail("s3-principal-account-only", "iam-resource-policy-cross-account", [
    s.res("s3-principal-account-only", "aws:s3/bucketPolicy:BucketPolicy", "bucket-policy", {
      bucket: "clusterra-dev-files",
      policy: grant("*", "s3:GetObject", "arn:aws:s3:::clusterra-dev-files/*", { StringEquals: { "aws:PrincipalAccount": OTHER } }),
    }),
  ]);
  s.fail("efs-to-account", "iam-resource-policy-cross-account", [
    s.res("efs-to-account", "aws:efs/fileSystemPolicy:FileSystemPolicy", "fs-policy", { fileSystemId: "fs-1", policy: grant({ AWS: other }, "elasticfilesystem:ClientMount", "*") }),
  ]);
  s.fail("sqs-to-account", "iam-resource-policy-cross-account", [
    s.res("sqs-to-account", "aws:sqs/queuePolicy:QueuePolicy", "queue-policy", { queueUrl: "q", policy: grant({ AWS: OTHER }, "sqs:SendMessage", queueArn) }),
  ]);
  s.fail("lambda-to-account", "iam-resource-policy-cross-account", [
    s.res("lambda-to-account", "aws:lambda/permission:Permission", "permission", { action: "lambda:InvokeFunction", function: "f", principal: OTHER }),
  ]);
  s.pass("pinned-cross-account-grants", [
    // External Secrets in tenant acme reads central's secret: one role ARN of the other account.
    s.res("pinned-eso", "aws:secretsmanager/secretPolicy:SecretPolicy", "secret-policy", {
      secretArn: "s",
      policy: grant({ AWS: `arn:aws:iam::${ACME}:role/clusterra-dev-acme-external-secrets` }, ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"], "*"),
    }),
    s.res("pinned-principal-arn", "aws:s3/bucketPolicy:BucketPolicy", "bucket-policy", {
      bucket: "clusterra-dev-files",
      policy: grant({ AWS: other }, "s3:GetObject", "arn:aws:s3:::clusterra-dev-files/*", { ArnEquals: { "aws:PrincipalArn": `arn:aws:iam::${OTHER}:role/reader` } }),
    }),
    s.res("pinned-lambda", "aws:lambda/permission:Permission", "permission", { action: "lambda:InvokeFunction", function: "f", principal: OTHER, sourceArn: `arn:aws:events:${REGION}:${OTHER}:rule/r` }),
  ]);

  // 3. Ways to the internet beyond EC2 and security groups.
  s.fail("nlb-internet-facing", "lb-not-internet-facing", [s.res("nlb-internet-facing", "aws:lb/loadBalancer:LoadBalancer", "nlb", { internal: false, loadBalancerType: "network" })]);
  s.fail("alb-default-scheme", "lb-not-internet-facing", [s.res("alb-default-scheme", "aws:alb/loadBalancer:LoadBalancer", "alb", { loadBalancerType: "application" })]);
  s.fail("classic-elb", "lb-not-internet-facing", [s.res("classic-elb", "aws:elb/loadBalancer:LoadBalancer", "elb", { listeners: [] })]);
  s.fail("rds-public", "rds-not-publicly-accessible", [s.res("rds-public", "aws:rds/instance:Instance", "db", { publiclyAccessible: true, storageEncrypted: true, kmsKeyId: kmsKey(CENTRAL) }, { protect: true })]);
  s.fail("redshift-default", "rds-not-publicly-accessible", [s.res("redshift-default", "aws:redshift/cluster:Cluster", "dw", { clusterIdentifier: "dw" })]);
  s.fail("eks-public-endpoint", "eks-endpoint-not-public", [s.res("eks-public-endpoint", "aws:eks/cluster:Cluster", "eks", { vpcConfig: { endpointPublicAccess: true, endpointPrivateAccess: true, subnetIds: ["s"] } })]);
  s.fail("eks-default-endpoint", "eks-endpoint-not-public", [s.res("eks-default-endpoint", "aws:eks/cluster:Cluster", "eks", { vpcConfig: { subnetIds: ["s"] } })]);
  s.fail("endpoint-service-anyone", "vpc-endpoint-service-restricted", [
    s.res("endpoint-service-anyone", "aws:ec2/vpcEndpointService:VpcEndpointService", "svc", { acceptanceRequired: false, allowedPrincipals: ["*"], networkLoadBalancerArns: ["arn"] }),
  ]);
  s.fail("endpoint-service-any-account", "vpc-endpoint-service-restricted", [
    s.res("endpoint-service-any-account", "aws:ec2/vpcEndpointServiceAllowedPrinciple:VpcEndpointServiceAllowedPrinciple", "principal", { vpcEndpointServiceId: "vpce-svc-1", principalArn: "arn:aws:iam::*:root" }),
  ]);
  s.fail("bucket-acl-public-read", "s3-no-public-acl", [s.res("bucket-acl-public-read", "aws:s3/bucketAclV2:BucketAclV2", "acl", { bucket: "b", acl: "public-read" })]);
  s.fail("bucket-acl-all-users-grant", "s3-no-public-acl", [
    s.res("bucket-acl-all-users-grant", "aws:s3/bucketAclV2:BucketAclV2", "acl", {
      bucket: "b",
      accessControlPolicy: { owner: { id: "o" }, grants: [{ permission: "READ", grantee: { type: "Group", uri: "http://acs.amazonaws.com/groups/global/AllUsers" } }] },
    }),
  ]);
  s.fail("bucket-inline-authenticated-read", "s3-no-public-acl", [s.res("bucket-inline-authenticated-read", "aws:s3/bucket:Bucket", "bucket", { bucket: "x", acl: "authenticated-read" }, { protect: true })]);
  s.fail("object-public-read", "s3-no-public-acl", [s.res("object-public-read", "aws:s3/bucketObjectv2:BucketObjectv2", "object", { bucket: "b", key: "k", acl: "public-read" })]);
  s.fail("subnet-ipv6-auto", "subnet-no-auto-public-ip", [s.res("subnet-ipv6-auto", "aws:ec2/subnet:Subnet", "subnet", { vpcId: "vpc-x", ipv6CidrBlock: "2600:1f18::/64", assignIpv6AddressOnCreation: true })]);
  s.fail("spot-fleet-public", "ec2-no-public-ip", [
    s.res("spot-fleet-public", "aws:ec2/spotFleetRequest:SpotFleetRequest", "fleet", {
      iamFleetRole: "r",
      targetCapacity: 1,
      launchSpecifications: [{ ami: "ami-1", instanceType: "t4g.small", associatePublicIpAddress: true }],
    }),
  ]);
  s.fail("launch-template-public-string", "ec2-no-public-ip", [
    s.res("launch-template-public-string", "aws:ec2/launchTemplate:LaunchTemplate", "lt", {
      metadataOptions: { httpTokens: "required" },
      blockDeviceMappings: [{ deviceName: "/dev/xvda", ebs: { encrypted: "true" } }],
      networkInterfaces: [{ associatePublicIpAddress: "true" }],
    }),
  ]);
  s.pass("internal-and-private", [
    s.res("internal-nlb", "aws:lb/loadBalancer:LoadBalancer", "nlb", { internal: true, loadBalancerType: "network" }),
    s.res("private-db", "aws:rds/instance:Instance", "db", { publiclyAccessible: false, storageEncrypted: true, kmsKeyId: kmsKey(CENTRAL) }, { protect: true }),
    s.res("private-eks", "aws:eks/cluster:Cluster", "eks", { vpcConfig: { endpointPublicAccess: false, endpointPrivateAccess: true, subnetIds: ["s"] } }),
    s.res("named-endpoint-service", "aws:ec2/vpcEndpointService:VpcEndpointService", "svc", { acceptanceRequired: true, allowedPrincipals: [`arn:aws:iam::${ACME}:root`] }),
    s.res("private-acl", "aws:s3/bucketAclV2:BucketAclV2", "acl", { bucket: "b", acl: "private" }),
  ]);

  // 4. Data at rest and credentials.
  s.fail("dynamodb-managed-alias", "dynamodb-encrypted-with-cmk", [
    s.res("dynamodb-managed-alias", "aws:dynamodb/table:Table", "table", {
      pointInTimeRecovery: { enabled: true },
      deletionProtectionEnabled: true,
      serverSideEncryption: { enabled: true, kmsKeyArn: `arn:aws:kms:${REGION}:${CENTRAL}:alias/aws/dynamodb` },
    }, { protect: true }),
  ]);
  s.fail("log-group-no-key", "encryption-uses-cmk", [s.res("log-group-no-key", "aws:cloudwatch/logGroup:LogGroup", "logs", { retentionInDays: 30 })]);
  s.fail("sqs-managed-sse", "encryption-uses-cmk", [s.res("sqs-managed-sse", "aws:sqs/queue:Queue", "queue", { sqsManagedSseEnabled: true })]);
  s.fail("sqs-aws-alias", "encryption-uses-cmk", [s.res("sqs-aws-alias", "aws:sqs/queue:Queue", "queue", { kmsMasterKeyId: "alias/aws/sqs" })]);
  s.fail("efs-default-key", "encryption-uses-cmk", [s.res("efs-default-key", "aws:efs/fileSystem:FileSystem", "efs", { encrypted: true }, { protect: true })]);
  s.fail("ebs-default-key", "encryption-uses-cmk", [s.res("ebs-default-key", "aws:ebs/volume:Volume", "data", { encrypted: true, size: 10 }, { protect: true })]);
  s.fail("ecr-aes256", "encryption-uses-cmk", [s.res("ecr-aes256", "aws:ecr/repository:Repository", "repo", { encryptionConfigurations: [{ encryptionType: "AES256" }] })]);
  s.fail("sns-no-key", "encryption-uses-cmk", [s.res("sns-no-key", "aws:sns/topic:Topic", "topic", {})]);
  s.fail("ebs-data-volume-unprotected", "stateful-resources-protected", [
    s.res("ebs-data-volume-unprotected", "aws:ebs/volume:Volume", "data", { encrypted: true, kmsKeyId: kmsKey(CENTRAL), size: 10 }),
  ]);
  s.fail("ebs-default-encryption-off", "ebs-default-encryption-on", [s.res("ebs-default-encryption-off", "aws:ebs/encryptionByDefault:EncryptionByDefault", "default", { enabled: false })]);
  s.fail("user-access-key", "iam-no-user-access-keys", [s.res("user-access-key", "aws:iam/accessKey:AccessKey", "key", { user: "ci" })]);
  for (const [id, variables] of [
    ["lambda-env-access-key", { AWS_ACCESS_KEY_ID: "AKIAABCDEFGHIJKLMNOP" }],
    ["lambda-env-password", { DB_PASSWORD: "correct-horse-battery" }],
    ["lambda-env-token", { SLURM_JWT_TOKEN: "eyJhbGciOiJIUzI1NiJ9abcdef" }],
  ] as const) {
    s.fail(id, "lambda-no-secrets-in-env", [s.res(id, "aws:lambda/function:Function", "fn", { role: "arn:aws:iam::1:role/x", reservedConcurrentExecutions: 1, environment: { variables } })]);
  }
  const bucket = (id: string) => s.res(id, "aws:s3/bucket:Bucket", "bucket", { bucket: `clusterra-dev-${id}` }, { protect: true, outputs: { arn: `arn:aws:s3:::clusterra-dev-${id}` } });
  s.fail("bucket-unversioned", "s3-versioning-enabled", [bucket("bucket-unversioned")]);
  s.fail("bucket-versioning-suspended", "s3-versioning-enabled", [
    s.res("bucket-versioning-suspended", "aws:s3/bucketVersioningV2:BucketVersioningV2", "versioning", { bucket: "clusterra-dev-x", versioningConfiguration: { status: "Suspended" } }),
  ]);
  const files = "clusterra-dev-complete-files";
  s.pass("complete-data-stores", [
    s.res("complete-files", "aws:s3/bucket:Bucket", "bucket", { bucket: files }, { protect: true, outputs: { arn: `arn:aws:s3:::${files}` } }),
    s.res("complete-files", "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", "pab", { bucket: files, blockPublicAcls: true, blockPublicPolicy: true, ignorePublicAcls: true, restrictPublicBuckets: true }),
    s.res("complete-files", "aws:s3/bucketVersioningV2:BucketVersioningV2", "versioning", { bucket: files, versioningConfiguration: { status: "Enabled" } }),
    s.res("complete-files", "aws:s3/bucketServerSideEncryptionConfigurationV2:BucketServerSideEncryptionConfigurationV2", "sse", {
      bucket: files,
      rules: [{ applyServerSideEncryptionByDefault: { sseAlgorithm: "aws:kms", kmsMasterKeyId: kmsKey(CENTRAL) }, bucketKeyEnabled: true }],
    }),
    s.res("complete-files", "aws:s3/bucketPolicy:BucketPolicy", "tls", {
      bucket: files,
      policy: doc({ Effect: "Deny", Principal: "*", Action: "s3:*", Resource: [`arn:aws:s3:::${files}`, `arn:aws:s3:::${files}/*`], Condition: { Bool: { "aws:SecureTransport": "false" } } }),
    }),
    s.res("complete-logs", "aws:cloudwatch/logGroup:LogGroup", "logs", { kmsKeyId: kmsKey(CENTRAL), retentionInDays: 30 }),
    s.res("complete-queue", "aws:sqs/queue:Queue", "queue", { kmsMasterKeyId: kmsKey(CENTRAL) }),
    s.res("complete-volume", "aws:ebs/volume:Volume", "data", { encrypted: true, kmsKeyId: kmsKey(CENTRAL), size: 10 }, { protect: true }),
    s.res("complete-ebs-default", "aws:ebs/encryptionByDefault:EncryptionByDefault", "default", { enabled: true }),
    s.res("complete-fn", "aws:iam/role:Role", "role", {
      assumeRolePolicy: doc({ Effect: "Allow", Principal: { Service: "lambda.amazonaws.com" }, Action: "sts:AssumeRole" }),
      inlinePolicies: [{ name: "secret", policy: doc(allow("secretsmanager:GetSecretValue", `arn:aws:secretsmanager:${REGION}:${CENTRAL}:secret:clusterra/dev/slurm-jwt-??????`)) }],
    }, { outputs: { arn: `arn:aws:iam::${CENTRAL}:role/complete-fn` } }),
    s.res("complete-fn", "aws:lambda/function:Function", "fn", {
      role: `arn:aws:iam::${CENTRAL}:role/complete-fn`,
      reservedConcurrentExecutions: 1,
      environment: { variables: { JWT_SECRET_ARN: `arn:aws:secretsmanager:${REGION}:${CENTRAL}:secret:clusterra/dev/slurm-jwt`, TABLE: "clusterra-dev-tenants" } },
    }),
  ]);

  // 1. User data: every part of a MIME multipart document, however encoded.
  const boundary = "==CLUSTERRA==";
  const mime = (...parts: { type: string; body: string; base64?: boolean }[]) =>
    [
      `Content-Type: multipart/mixed; boundary="${boundary}"`,
      "MIME-Version: 1.0",
      "",
      ...parts.flatMap((p) => [
        `--${boundary}`,
        `Content-Type: ${p.type}; charset="us-ascii"`,
        ...(p.base64 ? ["Content-Transfer-Encoding: base64"] : []),
        "",
        p.base64 ? Buffer.from(p.body).toString("base64") : p.body,
      ]),
      `--${boundary}--`,
      "",
    ].join("\n");
  const config = { type: "text/cloud-config", body: "#cloud-config\npackages: [amazon-efs-utils]\n" };
  const leaky = "#!/bin/bash\nexport K3S_TOKEN=K10abcdef0123456789abcdef::server:0123456789\n";
  const host = (id: string, field: "userData" | "userDataBase64", value: string) =>
    s.res(id, "aws:ec2/instance:Instance", "host", {
      ami: "ami-1",
      instanceType: "t4g.small",
      metadataOptions: { httpTokens: "required" },
      rootBlockDevice: { encrypted: true },
      [field]: value,
    });
  s.fail("mime-second-part", "ec2-no-secrets-in-user-data", [host("mime-second-part", "userData", mime(config, { type: "text/x-shellscript", body: leaky }))]);
  s.fail("mime-base64-part", "ec2-no-secrets-in-user-data", [host("mime-base64-part", "userData", mime(config, { type: "text/x-shellscript", body: leaky, base64: true }))]);
  s.fail("mime-gzip-whole", "ec2-no-secrets-in-user-data", [
    host("mime-gzip-whole", "userDataBase64", zlib.gzipSync(mime(config, { type: "text/x-shellscript", body: leaky })).toString("base64")),
  ]);
  s.fail("mime-gzip-part", "ec2-no-secrets-in-user-data", [
    host(
      "mime-gzip-part",
      "userData",
      mime(config).replace(`--${boundary}--`, `--${boundary}\nContent-Type: application/x-shellscript\nContent-Transfer-Encoding: base64\n\n${zlib.gzipSync(leaky).toString("base64")}\n--${boundary}--`),
    ),
  ]);
  s.pass("mime-references-only", [
    host("mime-references-only", "userData", mime(config, { type: "text/x-shellscript", body: "#!/bin/bash\nexport K3S_TOKEN=$(aws secretsmanager get-secret-value --secret-id x --query SecretString --output text)\n", base64: true })),
  ]);
  return s;
}

// ---------------------------------------------------------------------------------------
// Karpenter's controller policy for tenant acme, scoped as far as AWS allows

const ec2 = (resource: string) => `arn:aws:ec2:${REGION}:${ACME}:${resource}`;
const interruptionQueue = `arn:aws:sqs:${REGION}:${ACME}:clusterra-dev-acme-karpenter`;
const CLUSTER_TAG = "kubernetes.io/cluster/clusterra-dev-acme";

/** The upstream statements (reference/karpenter-v1.14.1), with the stack's own account, subnets, groups and Amazon's images. */
function karpenterController(): Record<string, unknown>[] {
  const cluster = { [`aws:RequestTag/${CLUSTER_TAG}`]: "owned" };
  const owned = { [`aws:ResourceTag/${CLUSTER_TAG}`]: "owned" };
  const nodepool = { "aws:RequestTag/karpenter.sh/nodepool": "*" };
  const created = ["fleet/*", "instance/*", "volume/*", "network-interface/*", "launch-template/*", "spot-instances-request/*"].map(ec2);
  return [
    { Sid: "UseStackSubnetsAndGroups", ...allow(["ec2:RunInstances", "ec2:CreateFleet"], [ec2("subnet/subnet-0a1b2c3d4e5f60718"), ec2("security-group/sg-0a1b2c3d4e5f60718")]) },
    { Sid: "UseAmazonImages", ...allow(["ec2:RunInstances", "ec2:CreateFleet"], [`arn:aws:ec2:${REGION}::image/*`, `arn:aws:ec2:${REGION}::snapshot/*`], { StringEquals: { "ec2:Owner": "amazon" } }) },
    { Sid: "UseOwnLaunchTemplates", ...allow(["ec2:RunInstances", "ec2:CreateFleet"], ec2("launch-template/*"), { StringEquals: owned, StringLike: { "aws:ResourceTag/karpenter.sh/nodepool": "*" } }) },
    { Sid: "CreateTagged", ...allow(["ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"], created, { StringEquals: cluster, StringLike: nodepool }) },
    { Sid: "TagOnCreate", ...allow("ec2:CreateTags", created, { StringEquals: { ...cluster, "ec2:CreateAction": ["RunInstances", "CreateFleet", "CreateLaunchTemplate"] }, StringLike: nodepool }) },
    { Sid: "DeleteOwn", ...allow(["ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"], [ec2("instance/*"), ec2("launch-template/*")], { StringEquals: owned }) },
    { Sid: "PassNodeRole", ...allow("iam:PassRole", `arn:aws:iam::${ACME}:role/clusterra-dev-acme-karpenter-node`, { StringEquals: { "iam:PassedToService": "ec2.amazonaws.com" } }) },
    { Sid: "OwnInstanceProfiles", ...allow(["iam:CreateInstanceProfile", "iam:TagInstanceProfile", "iam:AddRoleToInstanceProfile", "iam:RemoveRoleFromInstanceProfile", "iam:DeleteInstanceProfile"], `arn:aws:iam::${ACME}:instance-profile/*`, { StringEquals: owned }) },
    { Sid: "ReadInstanceProfiles", ...allow("iam:GetInstanceProfile", `arn:aws:iam::${ACME}:instance-profile/*`) },
    { Sid: "ListInstanceProfiles", ...allow("iam:ListInstanceProfiles", "*") },
    { Sid: "Discovery", ...allow(["ec2:DescribeImages", "ec2:DescribeInstances", "ec2:DescribeInstanceTypeOfferings", "ec2:DescribeInstanceTypes", "ec2:DescribeLaunchTemplates", "ec2:DescribeSecurityGroups", "ec2:DescribeSpotPriceHistory", "ec2:DescribeSubnets", "ec2:DescribeAvailabilityZones"], "*", { StringEquals: { "aws:RequestedRegion": REGION } }) },
    { Sid: "AmazonParameters", ...allow("ssm:GetParameter", `arn:aws:ssm:${REGION}::parameter/aws/service/*`) },
    { Sid: "Prices", ...allow("pricing:GetProducts", "*") },
    { Sid: "InterruptionQueue", ...allow(["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"], interruptionQueue) },
  ];
}

// ---------------------------------------------------------------------------------------
// Tenant acme's stack: the named exception on the NAT node, and the platform's legitimate IAM

function tenantScenario(): Scenario {
  const s = new Scenario("tenant-wave", stackTags("dev", "tenant", "acme"), ACME);
  const vpcCidr = "10.16.0.0/20";

  /** A VPC with its default group closed, a subnet routing 0.0.0.0/0 to an internet gateway, and the node's group. */
  const network = (id: string, ingress: { cidrIpv4?: string; prefixListId?: string }[]) => {
    const vpc = s.res(id, "aws:ec2/vpc:Vpc", "vpc", { cidrBlock: vpcCidr, enableDnsHostnames: true }, { outputs: { id: `vpc-${id}` } });
    const igw = s.res(id, "aws:ec2/internetGateway:InternetGateway", "igw", { vpcId: `vpc-${id}` }, { outputs: { id: `igw-${id}` } });
    const sg = s.res(id, "aws:ec2/securityGroup:SecurityGroup", "node-sg", { vpcId: `vpc-${id}`, description: "K3s node" }, { outputs: { id: `sg-${id}` } });
    return {
      sgId: `sg-${id}`,
      resources: [
        vpc,
        s.res(id, "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup", "default-sg", { vpcId: `vpc-${id}`, ingress: [], egress: [] }),
        igw,
        s.res(id, "aws:ec2/subnet:Subnet", "node-subnet", { vpcId: `vpc-${id}`, cidrBlock: "10.16.0.0/24", mapPublicIpOnLaunch: false }),
        s.res(id, "aws:ec2/routeTable:RouteTable", "public-rt", { vpcId: `vpc-${id}`, routes: [{ cidrBlock: "0.0.0.0/0", gatewayId: `igw-${id}` }] }),
        sg,
        s.res(id, "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule", "egress", { securityGroupId: `sg-${id}`, ipProtocol: "-1", cidrIpv4: "0.0.0.0/0" }),
        ...ingress.map((rule, i) => s.res(id, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", `ingress-${i}`, { securityGroupId: `sg-${id}`, ipProtocol: "tcp", fromPort: 443, toPort: 443, ...rule })),
      ],
    };
  };
  const natNode = (id: string, sgIds: string[], tags: Record<string, string>, metadata = "required") =>
    s.res(id, "aws:ec2/instance:Instance", "k3s-node", {
      ami: "ami-1",
      instanceType: "t4g.medium",
      associatePublicIpAddress: true,
      sourceDestCheck: false,
      vpcSecurityGroupIds: sgIds,
      metadataOptions: { httpTokens: metadata, httpPutResponseHopLimit: 2 },
      rootBlockDevice: { encrypted: true, kmsKeyId: kmsKey(ACME) },
      tags,
    });
  const exception = (policyName: string, reason = "NAT instance for the private subnets; no inbound rule from outside the VPC") => ({
    [TAG_KEYS.policyException]: policyName,
    [TAG_KEYS.policyExceptionReason]: reason,
  });

  // The lead's tenant node: a public address, no inbound path from outside the VPC.
  const good = network("nat-node", [{ cidrIpv4: vpcCidr }]);
  s.pass("nat-node-with-exception", [...good.resources, natNode("nat-node", [good.sgId], exception("ec2-no-public-ip"))]);

  const wrong = network("wrong-policy", [{ cidrIpv4: vpcCidr }]);
  s.fail("exception-names-non-exemptible-policy", "policy-exception-valid", [...wrong.resources, natNode("wrong-policy", [wrong.sgId], exception("sg-no-public-ingress"))]);
  s.fail("non-exemptible-exception-leaves-the-policy", "ec2-no-public-ip", [natNode("wrong-policy-2", [wrong.sgId], exception("sg-no-public-ingress"))]);
  s.fail("exception-names-unknown-policy", "policy-exception-valid", [natNode("unknown-policy", [wrong.sgId], exception("ec2-no-public-ips"))]);
  s.fail("exception-without-reason", "policy-exception-valid", [natNode("no-reason", [wrong.sgId], { [TAG_KEYS.policyException]: "ec2-no-public-ip" })]);
  s.fail("exception-with-blank-reason", "policy-exception-valid", [natNode("blank-reason", [wrong.sgId], exception("ec2-no-public-ip", "  "))]);
  s.fail("reasonless-exception-exempts-nothing", "ec2-no-public-ip", [natNode("no-reason-2", [wrong.sgId], { [TAG_KEYS.policyException]: "ec2-no-public-ip" })]);
  s.fail("exception-exempts-one-policy-only", "ec2-imdsv2-required", [natNode("still-imdsv2", [wrong.sgId], exception("ec2-no-public-ip"), "optional")]);

  const open = network("open-sg", [{ cidrIpv4: "0.0.0.0/0" }]);
  s.fail("exempt-node-behind-open-group", "policy-exception-valid", [...open.resources, natNode("open-sg", [open.sgId], exception("ec2-no-public-ip"))]);
  const prefix = network("prefix-sg", [{ prefixListId: "pl-0123456789abcdef0" }]);
  s.fail("exempt-node-behind-prefix-list", "policy-exception-valid", [...prefix.resources, natNode("prefix-sg", [prefix.sgId], exception("ec2-no-public-ip"))]);
  const inline = s.res("inline-sg", "aws:ec2/securityGroup:SecurityGroup", "node-sg", {
    vpcId: "vpc-nat-node",
    ingress: [{ protocol: "tcp", fromPort: 22, toPort: 22, cidrBlocks: ["0.0.0.0/1", "128.0.0.0/1"] }],
  }, { outputs: { id: "sg-inline" } });
  s.fail("exempt-node-behind-inline-halves", "policy-exception-valid", [inline, natNode("inline-sg", ["sg-inline"], exception("ec2-no-public-ip"))]);
  s.fail("exempt-node-with-unknown-group", "policy-exception-valid", [natNode("unknown-sg", ["sg-0fedcba987654321f"], exception("ec2-no-public-ip"))]);
  s.fail("exempt-node-without-groups", "policy-exception-valid", [natNode("no-sg", [], exception("ec2-no-public-ip"))]);
  s.fail("exception-in-provider-default-tags", "policy-exception-valid", [
    {
      urn: "urn:pulumi:tenant-wave::clusterra::pulumi:providers:aws::exempt-everything",
      custom: true,
      type: "pulumi:providers:aws",
      id: "prov-2",
      inputs: { region: REGION, allowedAccountIds: JSON.stringify([ACME]), defaultTags: JSON.stringify({ tags: { ...stackTags("dev", "tenant", "acme"), ...exception("ec2-no-public-ip") } }) },
    },
  ]);

  // 1. Another tenant reached through a launch template or a provider.
  s.fail("launch-template-names-globex", "tenant-isolation", [
    s.res("lt-globex", "aws:ec2/launchTemplate:LaunchTemplate", "lt", {
      metadataOptions: { httpTokens: "required" },
      blockDeviceMappings: [{ deviceName: "/dev/xvda", ebs: { encrypted: true } }],
      userData: Buffer.from("#!/bin/bash\naws s3 cp s3://clusterra-dev-globex-files/slurm.conf /etc/slurm/\n").toString("base64"),
    }),
  ]);
  // 3. The third wave's corpus: a trust open to any role of an account through a wildcard
  // aws:PrincipalArn, a Lambda permission for any S3 bucket with no source account, a deprecated
  // broad managed policy.
  s.fail("trust-any-role-of-an-account", "iam-cross-account-trust-condition", [
    s.res("trust-any-role", "aws:iam/role:Role", "role", {
      assumeRolePolicy: doc({ Effect: "Allow", Principal: { AWS: "arn:aws:iam::999988887777:root" }, Action: "sts:AssumeRole", Condition: { ArnLike: { "aws:PrincipalArn": "arn:aws:iam::999988887777:role/*" } } }),
    }),
  ]);
  s.fail("lambda-any-bucket-no-account", "lambda-permission-restricted", [
    s.res("lambda-any-bucket", "aws:lambda/permission:Permission", "from-s3", { action: "lambda:InvokeFunction", function: "f", principal: "s3.amazonaws.com", sourceArn: "arn:aws:s3:::*" }),
  ]);
  s.fail("lambda-bucket-without-account", "lambda-permission-restricted", [
    s.res("lambda-bucket-no-account", "aws:lambda/permission:Permission", "from-s3", { action: "lambda:InvokeFunction", function: "f", principal: "s3.amazonaws.com", sourceArn: "arn:aws:s3:::clusterra-dev-acme-files" }),
  ]);
  s.fail("deprecated-ec2-role-for-ssm", "iam-no-broad-managed-policy", [
    s.res("ec2-role-for-ssm", "aws:iam/rolePolicyAttachment:RolePolicyAttachment", "ssm", { role: "node", policyArn: "arn:aws:iam::aws:policy/service-role/AmazonEC2RoleforSSM" }),
  ]);
  s.fail("provider-into-globex", "tenant-isolation", [
    {
      urn: "urn:pulumi:tenant-wave::clusterra::pulumi:providers:aws::globex",
      custom: true,
      type: "pulumi:providers:aws",
      id: "prov-3",
      inputs: { region: REGION, assumeRoles: JSON.stringify([{ roleArn: "arn:aws:iam::777788889999:role/clusterra-deployer" }]) },
    },
  ]);

  // 1. Another tenant reached by address: a rule admitting globex's host, a route into globex's VPC, user data naming its host.
  s.fail("rule-admits-globex-host", "tenant-isolation", [
    s.res("globex-host", "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "rule", { securityGroupId: "sg-nat-node", ipProtocol: "tcp", fromPort: 6818, toPort: 6818, cidrIpv4: "10.16.16.5/32" }),
  ]);
  s.fail("route-into-globex-vpc", "tenant-isolation", [s.res("globex-route", "aws:ec2/route:Route", "route", { routeTableId: "rtb-1", destinationCidrBlock: "10.16.16.0/20", vpcPeeringConnectionId: "pcx-1" })]);
  s.fail("user-data-names-globex-host", "tenant-isolation", [
    s.res("globex-user-data", "aws:ec2/launchTemplate:LaunchTemplate", "lt", {
      metadataOptions: { httpTokens: "required" },
      blockDeviceMappings: [{ deviceName: "/dev/xvda", ebs: { encrypted: true } }],
      userData: Buffer.from("#!/bin/bash\necho 'SlurmctldHost=ctl(10.16.17.20)' >> /etc/slurm/slurm.conf\n").toString("base64"),
    }),
  ]);
  s.pass("own-and-central-addresses", [
    s.res("own-addresses", "aws:ec2/route:Route", "to-central", { routeTableId: "rtb-1", destinationCidrBlock: "10.0.0.0/16", vpcPeeringConnectionId: "pcx-1" }),
    s.res("own-addresses", "aws:ec2/route:Route", "native-routing", { routeTableId: "rtb-1", destinationCidrBlock: "10.0.0.0/8", vpcPeeringConnectionId: "pcx-1" }),
  ]);

  // 5. What the tenant stack deploys, scoped as far as AWS allows, and its over-broad twins.
  s.pass("karpenter-controller", [
    policy(
      s,
      "karpenter-controller",
      ...karpenterController(),
    ),
  ]);
  s.fail("karpenter-upstream-any-account-subnets", "iam-no-wildcard-resource", [
    policy(s, "karpenter-upstream", allow(["ec2:RunInstances", "ec2:CreateFleet"], [`arn:aws:ec2:${REGION}::image/*`, `arn:aws:ec2:${REGION}:*:security-group/*`, `arn:aws:ec2:${REGION}:*:subnet/*`])),
  ]);
  s.fail("karpenter-untagged-deletion", "iam-no-wildcard-resource", [policy(s, "karpenter-untagged-deletion", allow("ec2:TerminateInstances", ec2("instance/*")))]);
  s.fail("karpenter-pass-any-role", "iam-no-privilege-escalation", [policy(s, "karpenter-pass-any-role", allow("iam:PassRole", `arn:aws:iam::${ACME}:role/*`, { StringLike: { "iam:PassedToService": "*" } }))]);

  const vpcArn = ec2("vpc/vpc-0a1b2c3d4e5f60718");
  s.pass("cilium-eni-operator", [
    policy(
      s,
      "cilium-eni-operator",
      { Sid: "Inventory", ...allow(["ec2:DescribeInstanceTypes", "ec2:DescribeNetworkInterfaces", "ec2:DescribeSubnets", "ec2:DescribeVpcs", "ec2:DescribeRouteTables", "ec2:DescribeSecurityGroups", "ec2:DescribeTags", "ec2:DescribeManagedPrefixLists", "ec2:GetManagedPrefixListEntries"], "*") },
      { Sid: "CreateInOwnVpc", ...allow("ec2:CreateNetworkInterface", [ec2("network-interface/*"), ec2("subnet/*"), ec2("security-group/*")], { ArnEquals: { "ec2:Vpc": vpcArn } }) },
      { Sid: "TagOnCreate", ...allow("ec2:CreateTags", ec2("network-interface/*"), { StringEquals: { "ec2:CreateAction": "CreateNetworkInterface" } }) },
      { Sid: "ManageInOwnVpc", ...allow(["ec2:AttachNetworkInterface", "ec2:DeleteNetworkInterface", "ec2:ModifyNetworkInterfaceAttribute", "ec2:AssignPrivateIpAddresses", "ec2:UnassignPrivateIpAddresses"], [ec2("network-interface/*"), ec2("instance/*"), ec2("security-group/*")], { ArnEquals: { "ec2:Vpc": vpcArn } }) },
    ),
  ]);
  s.fail("cilium-upstream-star", "iam-no-wildcard-resource", [
    policy(s, "cilium-upstream-star", allow(["ec2:CreateNetworkInterface", "ec2:AttachNetworkInterface", "ec2:DeleteNetworkInterface", "ec2:ModifyNetworkInterfaceAttribute", "ec2:AssignPrivateIpAddresses", "ec2:CreateTags"], "*")),
  ]);

  const centralSecrets = `arn:aws:secretsmanager:${REGION}:${CENTRAL}:secret:clusterra/dev/acme/*`;
  s.pass("external-secrets-reads-central", [
    s.res("external-secrets", "aws:iam/role:Role", "role", {
      assumeRolePolicy: doc({ Effect: "Allow", Principal: { Service: "ec2.amazonaws.com" }, Action: "sts:AssumeRole" }),
      inlinePolicies: [
        {
          name: "central-secrets",
          policy: doc(
            allow(["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"], centralSecrets),
            allow("kms:Decrypt", kmsKey(CENTRAL), { StringEquals: { "kms:ViaService": `secretsmanager.${REGION}.amazonaws.com` } }),
          ),
        },
      ],
    }),
  ]);
  s.fail("external-secrets-every-secret", "iam-no-wildcard-resource", [policy(s, "external-secrets-every-secret", allow("secretsmanager:GetSecretValue", `arn:aws:secretsmanager:${REGION}:${CENTRAL}:secret:*`))]);

  const fileSystem = `arn:aws:elasticfilesystem:${REGION}:${ACME}:file-system/fs-0a1b2c3d4e5f60718`;
  s.pass("efs-host-mount-and-csi", [
    policy(
      s,
      "efs-host-mount",
      allow(["elasticfilesystem:ClientMount", "elasticfilesystem:ClientWrite"], fileSystem),
      allow("elasticfilesystem:CreateAccessPoint", fileSystem, { StringEquals: { "aws:RequestTag/efs.csi.aws.com/cluster": "true" } }),
      allow(["elasticfilesystem:TagResource", "elasticfilesystem:DeleteAccessPoint"], `arn:aws:elasticfilesystem:${REGION}:${ACME}:access-point/*`, { StringEquals: { "aws:ResourceTag/efs.csi.aws.com/cluster": "true" } }),
      allow(["elasticfilesystem:DescribeAccessPoints", "elasticfilesystem:DescribeFileSystems", "elasticfilesystem:DescribeMountTargets", "ec2:DescribeAvailabilityZones"], "*"),
    ),
    // The EFS console's default file-system policy: clients only through a mount target, TLS only.
    s.res("efs-console-default", "aws:efs/fileSystemPolicy:FileSystemPolicy", "fs-policy", {
      fileSystemId: "fs-0a1b2c3d4e5f60718",
      policy: doc(
        { Sid: "efs-statement-1", Effect: "Allow", Principal: { AWS: "*" }, Action: ["elasticfilesystem:ClientRootAccess", "elasticfilesystem:ClientWrite", "elasticfilesystem:ClientMount"], Resource: fileSystem, Condition: { Bool: { "elasticfilesystem:AccessedViaMountTarget": "true" } } },
        { Sid: "efs-statement-2", Effect: "Deny", Principal: { AWS: "*" }, Action: "*", Resource: fileSystem, Condition: { Bool: { "aws:SecureTransport": "false" } } },
      ),
    }),
  ]);
  s.fail("efs-csi-upstream-star", "iam-no-wildcard-resource", [
    policy(s, "efs-csi-upstream-star", allow("elasticfilesystem:CreateAccessPoint", "*", { StringLike: { "aws:RequestTag/efs.csi.aws.com/cluster": "true" } })),
  ]);
  s.fail("efs-clients-anyone", "iam-no-wildcard-principal", [
    s.res("efs-clients-anyone", "aws:efs/fileSystemPolicy:FileSystemPolicy", "fs-policy", { fileSystemId: "fs-1", policy: doc({ Effect: "Allow", Principal: { AWS: "*" }, Action: "elasticfilesystem:ClientMount", Resource: fileSystem }) }),
  ]);

  const filesBucket = "arn:aws:s3:::clusterra-dev-acme-files";
  s.pass("files-per-user-prefix", [
    policy(
      s,
      "files-per-user-prefix",
      allow(["s3:GetObject", "s3:PutObject", "s3:DeleteObject"], [`${filesBucket}/users/\${aws:PrincipalTag/uid}/*`, `${filesBucket}/users/\${aws:username}/*`]),
      allow("s3:ListBucket", filesBucket, { StringLike: { "s3:prefix": ["users/${aws:PrincipalTag/uid}/*"] } }),
    ),
  ]);

  s.pass("interruption-queue", [
    s.res("interruption", "aws:sqs/queue:Queue", "queue", { name: "clusterra-dev-acme-karpenter", kmsMasterKeyId: kmsKey(ACME), messageRetentionSeconds: 300 }, { outputs: { arn: interruptionQueue } }),
    s.res("interruption", "aws:sqs/queuePolicy:QueuePolicy", "queue-policy", {
      queueUrl: "https://sqs.us-east-1.amazonaws.com/444455556666/clusterra-dev-acme-karpenter",
      policy: doc(
        { Effect: "Allow", Principal: { Service: ["events.amazonaws.com", "sqs.amazonaws.com"] }, Action: "sqs:SendMessage", Resource: interruptionQueue },
        { Sid: "DenyHTTP", Effect: "Deny", Principal: "*", Action: "sqs:*", Resource: interruptionQueue, Condition: { Bool: { "aws:SecureTransport": false } } },
      ),
    }),
    s.res("interruption", "aws:cloudwatch/eventRule:EventRule", "spot-interruption", { eventPattern: JSON.stringify({ source: ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"] }) }),
    s.res("interruption", "aws:cloudwatch/eventTarget:EventTarget", "spot-interruption-target", { rule: "spot-interruption", arn: interruptionQueue }),
  ]);

  const keyPolicy = (Condition: Record<string, unknown>) =>
    doc(
      { Sid: "AccountAdministersThroughIam", Effect: "Allow", Principal: { AWS: `arn:aws:iam::${ACME}:root` }, Action: "kms:*", Resource: "*" },
      { Sid: "EbsForThisAccount", Effect: "Allow", Principal: { AWS: "*" }, Action: ["kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:CreateGrant", "kms:DescribeKey"], Resource: "*", Condition },
    );
  s.pass("kms-via-service-caller-account", [
    s.res("kms-via-ebs", "aws:kms/key:Key", "key", { enableKeyRotation: true, policy: keyPolicy({ StringEquals: { "kms:CallerAccount": ACME, "kms:ViaService": `ec2.${REGION}.amazonaws.com` } }) }, { protect: true }),
  ]);
  s.fail("kms-via-service-any-caller", "iam-no-wildcard-principal", [
    s.res("kms-any-caller", "aws:kms/key:Key", "key", { enableKeyRotation: true, policy: keyPolicy({ StringEquals: { "kms:ViaService": `ec2.${REGION}.amazonaws.com` } }) }, { protect: true }),
  ]);

  s.pass("cloudwatch-agent", [
    policy(
      s,
      "cloudwatch-agent",
      allow("cloudwatch:PutMetricData", "*", { StringEquals: { "cloudwatch:namespace": "CWAgent" } }),
      allow(["ec2:DescribeVolumes", "ec2:DescribeTags", "logs:DescribeLogStreams", "logs:DescribeLogGroups"], "*"),
      allow(["logs:CreateLogStream", "logs:PutLogEvents"], `arn:aws:logs:${REGION}:${ACME}:log-group:/clusterra/acme/*`),
      allow("ssm:GetParameter", `arn:aws:ssm:${REGION}:${ACME}:parameter/AmazonCloudWatch-clusterra-acme`),
    ),
  ]);
  s.fail("cloudwatch-agent-any-namespace", "iam-no-wildcard-resource", [policy(s, "cloudwatch-agent-any-namespace", allow("cloudwatch:PutMetricData", "*"))]);
  return s;
}

describe("policy pack, second wave, through clusterra policy check", function () {
  this.timeout(30000);
  it("reads each tenant's VPC CIDR from the stack files, for tenant isolation", () => {
    assert.deepEqual(tenantVpcCidrsFromStackFiles(exampleRoot()), { acme: "10.16.0.0/20", globex: "10.16.16.0/20" });
  });
  describeScenario(centralScenario);
  describeScenario(tenantScenario);
});

// ---------------------------------------------------------------------------------------
// The shapes the pack passes still do their job, and their scoping holds: proved by evaluating them

describe("what the scoped shapes allow, evaluated with @cloud-copilot/iam-simulate", () => {
  /** The decision for one request under one identity policy (and an optional resource policy). */
  async function decide(
    identity: Record<string, unknown>[] | undefined,
    request: { principal: string; action: string; resource: string; account: string; context?: Record<string, string | string[]> },
    resourcePolicy?: Record<string, unknown>,
  ): Promise<string> {
    const { runSimulation } = await import("@cloud-copilot/iam-simulate");
    const response = await runSimulation(
      {
        identityPolicies: identity ? [{ name: "p", policy: { Version: "2012-10-17", Statement: identity } }] : [],
        serviceControlPolicies: [],
        resourceControlPolicies: [],
        ...(resourcePolicy ? { resourcePolicy } : {}),
        request: {
          principal: request.principal,
          action: request.action,
          resource: { resource: request.resource, accountId: request.account },
          contextVariables: request.context ?? {},
        },
      },
      {},
    );
    assert.notEqual(response.resultType, "error", JSON.stringify(response));
    return response.resultType === "error" ? "error" : response.overallResult;
  }

  const controller = `arn:aws:iam::${ACME}:role/clusterra-dev-acme-karpenter`;

  it("Karpenter's scoped policy launches and terminates its own nodes, and touches nothing else", async () => {
    const statements = karpenterController();
    const tagged = { [`aws:ResourceTag/${CLUSTER_TAG}`]: "owned" };
    const terminate = (context: Record<string, string>) => decide(statements, { principal: controller, action: "ec2:TerminateInstances", resource: ec2("instance/i-0123456789abcdef0"), account: ACME, context });
    assert.equal(await terminate(tagged), "Allowed");
    assert.equal(await terminate({ [`aws:ResourceTag/${CLUSTER_TAG}`]: "shared" }), "ImplicitlyDenied");
    const launch = (context: Record<string, string>) => decide(statements, { principal: controller, action: "ec2:RunInstances", resource: ec2("instance/*"), account: ACME, context });
    assert.equal(await launch({ [`aws:RequestTag/${CLUSTER_TAG}`]: "owned", "aws:RequestTag/karpenter.sh/nodepool": "compute" }), "Allowed");
    assert.equal(await launch({ "aws:RequestTag/karpenter.sh/nodepool": "compute" }), "ImplicitlyDenied");
    const subnet = (id: string) => decide(statements, { principal: controller, action: "ec2:RunInstances", resource: ec2(`subnet/${id}`), account: ACME });
    assert.equal(await subnet("subnet-0a1b2c3d4e5f60718"), "Allowed");
    assert.equal(await subnet("subnet-0fffffffffffffff0"), "ImplicitlyDenied");
    const pass = (role: string) => decide(statements, { principal: controller, action: "iam:PassRole", resource: `arn:aws:iam::${ACME}:role/${role}`, account: ACME, context: { "iam:PassedToService": "ec2.amazonaws.com" } });
    assert.equal(await pass("clusterra-dev-acme-karpenter-node"), "Allowed");
    assert.equal(await pass("clusterra-dev-acme-admin"), "ImplicitlyDenied");
  });

  it("the snapshot role tags snapshots only as it creates them (the component fix), so it cannot mark others for deletion", async () => {
    const { snapshotPolicy } = await import("../components/storage/data-snapshots");
    const statements = (JSON.parse(snapshotPolicy({ partition: "aws", region: REGION, accountId: CENTRAL, targetTag: { key: "clusterra:backup", value: "dev-central-data" } })) as { Statement: Record<string, unknown>[] }).Statement;
    const dlm = `arn:aws:iam::${CENTRAL}:role/clusterra-dev-dlm`;
    const tag = (context: Record<string, string>) => decide(statements, { principal: dlm, action: "ec2:CreateTags", resource: `arn:aws:ec2:${REGION}::snapshot/snap-0123456789abcdef0`, account: CENTRAL, context });
    assert.equal(await tag({ "ec2:CreateAction": "CreateSnapshot" }), "Allowed");
    assert.equal(await tag({}), "ImplicitlyDenied");
  });

  it("the key policy's kms:ViaService + kms:CallerAccount statement serves this account's EBS only", async () => {
    const keyArn = kmsKey(ACME);
    const keyPolicy = {
      Version: "2012-10-17",
      Statement: [
        { Effect: "Allow", Principal: { AWS: "*" }, Action: ["kms:Decrypt", "kms:GenerateDataKey*"], Resource: "*", Condition: { StringEquals: { "kms:CallerAccount": ACME, "kms:ViaService": `ec2.${REGION}.amazonaws.com` } } },
      ],
    };
    const decrypt = (principal: string, context: Record<string, string>) => decide(undefined, { principal, action: "kms:Decrypt", resource: keyArn, account: ACME, context }, keyPolicy);
    assert.equal(await decrypt(`arn:aws:iam::${ACME}:role/node`, { "kms:CallerAccount": ACME, "kms:ViaService": `ec2.${REGION}.amazonaws.com` }), "Allowed");
    assert.equal(await decrypt(`arn:aws:iam::${ACME}:role/node`, { "kms:CallerAccount": ACME, "kms:ViaService": `s3.${REGION}.amazonaws.com` }), "ImplicitlyDenied");
    assert.equal(await decrypt(`arn:aws:iam::${OTHER}:role/node`, { "kms:CallerAccount": OTHER, "kms:ViaService": `ec2.${REGION}.amazonaws.com` }), "ImplicitlyDenied");
  });
});
