/**
 * Policy checker benchmark: `npx tsc -b && node dist/bench/policy-bench.js [resources] [--show]`
 * (--show prints the violations found).
 *
 * Builds a synthetic deployment of 10,000 resources (default) from the resources a tenant
 * stack and its connector create (VPC, subnets, security groups and flow-tagged peering
 * rules, instance and launch template, buckets with their public access blocks, policies
 * and encryption, tables, queues, roles and policies, Lambda functions, keys, secrets, file
 * systems), serializes it as a deployment file would be, and times, median of 5:
 *
 * - baseline: JSON.parse of the file + one pass reading every input value (the cost any
 *   checker pays to look at the deployment at all);
 * - checkDeployment on the parsed deployment (every policy of the pack);
 * - parse + checkDeployment, end to end.
 *
 * Target: checkDeployment under 2 s for 10,000 resources.
 */
import type { Deployment, DeploymentResource } from "../planning/deployment";
import { checkDeployment, formatReport, type PolicyReport } from "../planning/policy-check";
import { flowPorts, PEERING_FLOWS } from "../facts/contract";
import { portsAtSlot } from "../config/tenant-ports";
import { stackTags, TAG_KEYS } from "../facts/project";
import { keepToLoopback } from "../test/loopback-only";

// Benchmarks keep every packet on this machine (test/loopback-only.ts).
keepToLoopback();

const RUNS = 5;
const TARGET_MS = 2000;

const STACK = "urn:pulumi:tenant-acme-dev::clusterra::pulumi:pulumi:Stack::clusterra-tenant-acme-dev";
const PROVIDER = "urn:pulumi:tenant-acme-dev::clusterra::pulumi:pulumi:Stack$pulumi:providers:aws::aws";
const ACCOUNT = "444455556666";

function urn(type: string, name: string): string {
  return `urn:pulumi:tenant-acme-dev::clusterra::clusterra:tenant:TenantEnvironment$${type}::${name}`;
}

function doc(...statements: Record<string, unknown>[]): string {
  return JSON.stringify({ Version: "2012-10-17", Statement: statements });
}

/** One tenant-sized group of resources, `i` making every name and id unique. */
function unit(i: number): DeploymentResource[] {
  const out: DeploymentResource[] = [];
  const add = (type: string, name: string, inputs: Record<string, unknown>, extra: Partial<DeploymentResource> & { outputs?: Record<string, unknown> } = {}): DeploymentResource => {
    const n = `${name}-${i}`;
    const r: DeploymentResource = {
      urn: urn(type, n),
      custom: true,
      type,
      id: `${n}-id`,
      inputs,
      outputs: { ...inputs, id: `${n}-id`, ...(extra.outputs ?? {}) },
      parent: STACK,
      provider: `${PROVIDER}::prov-1`,
      protect: false,
      retainOnDelete: false,
      dependencies: [],
      ...extra,
    };
    out.push(r);
    return r;
  };
  const kmsArn = `arn:aws:kms:us-east-1:${ACCOUNT}:key/k-${i}`;
  const vpcId = `vpc-${i}`;
  const vpc = add("aws:ec2/vpc:Vpc", "vpc", { cidrBlock: `10.${16 + (i % 200)}.0.0/20`, enableDnsHostnames: true, enableDnsSupport: true }, { outputs: { id: vpcId } });
  for (const az of ["a", "b", "c"]) add("aws:ec2/subnet:Subnet", `private-${az}`, { vpcId, cidrBlock: `10.${16 + (i % 200)}.${az === "a" ? 0 : az === "b" ? 4 : 8}.0/22`, availabilityZone: `us-east-1${az}`, mapPublicIpOnLaunch: false, tags: { "karpenter.sh/discovery": `acme-${i}` } }, { propertyDependencies: { vpcId: [vpc.urn] }, dependencies: [vpc.urn] });
  add("aws:ec2/defaultSecurityGroup:DefaultSecurityGroup", "default-sg", { vpcId, ingress: [], egress: [] }, { dependencies: [vpc.urn] });
  const sgId = `sg-${i}`;
  const sg = add("aws:ec2/securityGroup:SecurityGroup", "workers", { vpcId, description: "slurmd nodes" }, { outputs: { id: sgId }, propertyDependencies: { vpcId: [vpc.urn] }, dependencies: [vpc.urn] });
  // As allocation gives them (config/tenant-ports.ts).
  const ports = portsAtSlot(i);
  for (const f of PEERING_FLOWS.filter((x) => x.side === "tenant")) {
    add("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", f.id, { securityGroupId: sgId, cidrIpv4: "10.0.0.10/32", ipProtocol: f.protocol, ...flowPorts(f, ports), description: f.purpose, tags: { [TAG_KEYS.flow]: f.id } }, { dependencies: [sg.urn], propertyDependencies: { securityGroupId: [sg.urn] } });
  }
  const toSlurmctld = PEERING_FLOWS.find((x) => x.id === "slurmd-to-slurmctld")!;
  add("aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule", "egress", { securityGroupId: sgId, cidrIpv4: "10.0.0.10/32", ipProtocol: toSlurmctld.protocol, ...flowPorts(toSlurmctld, ports), tags: { [TAG_KEYS.flow]: toSlurmctld.id, [TAG_KEYS.tenant]: `acme-${i}` } }, { dependencies: [sg.urn] });
  const userData = "#!/bin/bash\nset -euo pipefail\nK3S_TOKEN=$(aws secretsmanager get-secret-value --secret-id clusterra/acme/k3s --query SecretString --output text)\ncurl -sfL https://get.k3s.io | INSTALL_K3S_EXEC=server sh -\n";
  add("aws:ec2/instance:Instance", "k3s", {
    ami: "ami-0abcdef", instanceType: "t4g.medium", subnetId: `subnet-${i}`, vpcSecurityGroupIds: [sgId], associatePublicIpAddress: false,
    metadataOptions: { httpTokens: "required", httpPutResponseHopLimit: 2, httpEndpoint: "enabled" },
    rootBlockDevice: { encrypted: true, volumeSize: 40, volumeType: "gp3", kmsKeyId: kmsArn }, userData,
  }, { dependencies: [sg.urn] });
  add("aws:ec2/launchTemplate:LaunchTemplate", "nodes", {
    imageId: "ami-0abcdef", metadataOptions: { httpTokens: "required", httpPutResponseHopLimit: 2 },
    blockDeviceMappings: [{ deviceName: "/dev/xvda", ebs: { encrypted: "true", volumeSize: 100, kmsKeyId: kmsArn } }],
    networkInterfaces: [{ associatePublicIpAddress: "false", securityGroups: [sgId] }], userData: Buffer.from(userData).toString("base64"),
  });
  const bucketName = `clusterra-acme-files-${i}`;
  const bucketArn = `arn:aws:s3:::${bucketName}`;
  const bucket = add("aws:s3/bucket:Bucket", "files", { bucket: bucketName, forceDestroy: false }, { protect: true, outputs: { arn: bucketArn, bucket: bucketName } });
  const onBucket = { dependencies: [bucket.urn], propertyDependencies: { bucket: [bucket.urn] } };
  add("aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", "files-pab", { bucket: bucketName, blockPublicAcls: true, blockPublicPolicy: true, ignorePublicAcls: true, restrictPublicBuckets: true }, onBucket);
  add("aws:s3/bucketPolicy:BucketPolicy", "files-policy", {
    bucket: bucketName,
    policy: doc({ Sid: "TlsOnly", Effect: "Deny", Principal: "*", Action: "s3:*", Resource: [bucketArn, `${bucketArn}/*`], Condition: { Bool: { "aws:SecureTransport": "false" } } }),
  }, onBucket);
  add("aws:s3/bucketVersioningV2:BucketVersioningV2", "files-versioning", { bucket: bucketName, versioningConfiguration: { status: "Enabled" } }, onBucket);
  add("aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration", "files-sse", { bucket: bucketName, rules: [{ applyServerSideEncryptionByDefault: { sseAlgorithm: "aws:kms", kmsMasterKeyId: kmsArn }, bucketKeyEnabled: true }] }, onBucket);
  add("aws:kms/key:Key", "key", { description: "acme stack key", enableKeyRotation: true, deletionWindowInDays: 30 }, { protect: true, outputs: { arn: kmsArn } });
  add("aws:dynamodb/table:Table", "jobs", {
    name: `clusterra-acme-jobs-${i}`, billingMode: "PAY_PER_REQUEST", hashKey: "pk", rangeKey: "sk", attributes: [{ name: "pk", type: "S" }, { name: "sk", type: "S" }],
    pointInTimeRecovery: { enabled: true }, serverSideEncryption: { enabled: true, kmsKeyArn: kmsArn }, deletionProtectionEnabled: true,
  }, { protect: true });
  add("aws:efs/fileSystem:FileSystem", "efs", { encrypted: true, kmsKeyId: kmsArn, performanceMode: "generalPurpose", throughputMode: "elastic" }, { protect: true });
  add("aws:secretsmanager/secret:Secret", "jwt", { name: `clusterra/acme/slurm-jwt-${i}`, kmsKeyId: kmsArn, recoveryWindowInDays: 7 }, { protect: true });
  const queueArn = `arn:aws:sqs:us-east-1:${ACCOUNT}:clusterra-acme-events-${i}`;
  add("aws:sqs/queue:Queue", "events-dlq", { name: `clusterra-acme-events-${i}-dlq`, kmsMasterKeyId: kmsArn, messageRetentionSeconds: 604800 }, { outputs: { arn: `${queueArn}-dlq` } });
  const queue = add("aws:sqs/queue:Queue", "events", {
    name: `clusterra-acme-events-${i}`, kmsMasterKeyId: kmsArn, visibilityTimeoutSeconds: 60, messageRetentionSeconds: 86400, receiveWaitTimeSeconds: 20,
    redrivePolicy: JSON.stringify({ deadLetterTargetArn: `${queueArn}-dlq`, maxReceiveCount: 3 }),
  }, { outputs: { arn: queueArn } });
  const roleName = `clusterra-acme-shipper-${i}`;
  const roleArn = `arn:aws:iam::${ACCOUNT}:role/${roleName}`;
  const role = add("aws:iam/role:Role", "shipper", {
    name: roleName,
    assumeRolePolicy: doc({ Effect: "Allow", Principal: { Service: "lambda.amazonaws.com" }, Action: "sts:AssumeRole" }),
  }, { outputs: { arn: roleArn, name: roleName } });
  add("aws:iam/rolePolicy:RolePolicy", "shipper-queue", {
    role: roleName,
    policy: doc(
      { Effect: "Allow", Action: ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"], Resource: queueArn },
      { Effect: "Allow", Action: ["logs:CreateLogStream", "logs:PutLogEvents"], Resource: `arn:aws:logs:us-east-1:${ACCOUNT}:log-group:/aws/lambda/shipper-${i}:*` },
      { Effect: "Allow", Action: ["ec2:DescribeInstances", "ec2:DescribeInstanceTypes"], Resource: "*" },
    ),
  }, { dependencies: [role.urn], propertyDependencies: { role: [role.urn] } });
  add("aws:iam/rolePolicyAttachment:RolePolicyAttachment", "shipper-ssm", { role: roleName, policyArn: "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore" }, { dependencies: [role.urn] });
  add("aws:lambda/function:Function", "shipper", { role: roleArn, runtime: "nodejs22.x", handler: "index.handler", memorySize: 256, timeout: 30, reservedConcurrentExecutions: 2, environment: { variables: { API_URL: "https://api.dev.clusterra.example" } } }, { dependencies: [role.urn], propertyDependencies: { role: [role.urn] } });
  add("aws:lambda/eventSourceMapping:EventSourceMapping", "shipper-events", { eventSourceArn: queueArn, functionName: `shipper-${i}`, batchSize: 10 }, { dependencies: [queue.urn], propertyDependencies: { eventSourceArn: [queue.urn] } });
  add("aws:lambda/permission:Permission", "events-invoke", { action: "lambda:InvokeFunction", function: `shipper-${i}`, principal: "events.amazonaws.com", sourceArn: `arn:aws:events:us-east-1:${ACCOUNT}:rule/r-${i}` });
  add("aws:cloudwatch/logGroup:LogGroup", "logs", { name: `/aws/lambda/shipper-${i}`, retentionInDays: 30, kmsKeyId: kmsArn });
  // A few findings, so reporting is part of what is timed.
  if (i % 50 === 0) add("aws:ec2/subnet:Subnet", "public", { vpcId, cidrBlock: `10.${16 + (i % 200)}.12.0/24`, mapPublicIpOnLaunch: true });
  return out;
}

function syntheticDeployment(target: number): Deployment {
  const resources: DeploymentResource[] = [
    { urn: STACK, custom: false, type: "pulumi:pulumi:Stack" },
    {
      urn: PROVIDER, custom: true, type: "pulumi:providers:aws", id: "prov-1",
      inputs: { region: "us-east-1", allowedAccountIds: JSON.stringify([ACCOUNT]), defaultTags: JSON.stringify({ tags: stackTags("dev", "tenant", "acme") }) },
    },
  ];
  for (let i = 0; resources.length < target; i++) resources.push(...unit(i));
  resources.length = target;
  return { version: 3, deployment: { resources } };
}

/** Reads every input value, depth first: the unavoidable cost of looking at a deployment. */
function touchAll(v: unknown): number {
  if (v === null || typeof v !== "object") return 1;
  let n = 0;
  if (Array.isArray(v)) for (const x of v) n += touchAll(x);
  else for (const k in v as Record<string, unknown>) n += touchAll((v as Record<string, unknown>)[k]);
  return n;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function time<T>(fn: () => T): { ms: number; value: T } {
  const start = process.hrtime.bigint();
  const value = fn();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, value };
}

function main(): void {
  const show = process.argv.includes("--show");
  const target = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 10000);
  const text = JSON.stringify(syntheticDeployment(target));
  const tenants = Array.from({ length: 20 }, (_, i) => (i === 0 ? "acme" : `tenant${i}`));

  const baseline: number[] = [];
  const check: number[] = [];
  const endToEnd: number[] = [];
  let last: PolicyReport | undefined;
  for (let run = 0; run < RUNS; run++) {
    baseline.push(
      time(() => {
        const d = JSON.parse(text) as Deployment;
        let n = 0;
        for (const r of d.deployment.resources) n += touchAll(r.inputs);
        return n;
      }).ms,
    );
    const parsed = JSON.parse(text) as Deployment;
    const c = time(() => checkDeployment(parsed, { tenants }));
    check.push(c.ms);
    last = c.value;
    endToEnd.push(time(() => checkDeployment(JSON.parse(text) as Deployment, { tenants })).ms);
  }
  const b = median(baseline);
  const c = median(check);
  const e = median(endToEnd);
  console.log(`policy check of a synthetic deployment: ${last!.resources} resources, ${(text.length / 1e6).toFixed(1)} MB JSON, ${last!.violations.length} violations, median of ${RUNS}`);
  console.log(`  baseline (JSON.parse + read every input): ${b.toFixed(1)} ms`);
  console.log(`  checkDeployment:                          ${c.toFixed(1)} ms  (${(c / b).toFixed(2)}x baseline)`);
  console.log(`  JSON.parse + checkDeployment:             ${e.toFixed(1)} ms  (${(e / b).toFixed(2)}x baseline)`);
  console.log(`  target: checkDeployment < ${TARGET_MS} ms for 10,000 resources: ${c < TARGET_MS ? "met" : "MISSED"}`);
  if (show) console.log(formatReport(last!));
  if (c >= TARGET_MS && target <= 10000) process.exitCode = 1;
}

main();
