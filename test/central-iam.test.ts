import * as assert from "node:assert/strict";
import { clusterApiPolicy } from "../components/central/cluster-api-access";
import { simulate } from "./sim-request";
import { named, plan } from "./helpers";

const ACCOUNT = "111122223333";
const TABLE = `arn:aws:dynamodb:us-east-1:${ACCOUNT}:table/clusterra-dev-tenants`;

describe("central IAM, evaluated by the simulator", function () {
  this.timeout(60000);
  it("cluster-api may scan the tenants table (its documented listing) but not administer tables", async () => {
    const policy = clusterApiPolicy({ partition: "aws", region: "us-east-1", accountId: ACCOUNT, environment: "dev", tenants: [], tableArns: [TABLE], signingKeyArn: `arn:aws:secretsmanager:us-east-1:${ACCOUNT}:secret:s-AbCdEf`, kmsKeyArn: `arn:aws:kms:us-east-1:${ACCOUNT}:key/k` });
    const as = (action: string, resource = TABLE) => simulate({ principal: `arn:aws:iam::${ACCOUNT}:role/clusterra-dev-cluster-api`, action, resource, resourceAccount: ACCOUNT, identity: [policy] });
    assert.equal(await as("dynamodb:Scan"), "Allowed");
    assert.equal(await as("dynamodb:Query", `${TABLE}/index/byEmail`), "Allowed");
    assert.equal(await as("dynamodb:DeleteTable"), "ImplicitlyDenied");
  });
});

describe("cluster-api mints Slurm tokens: it reads each tenant's JWT key, and no other tenant secret (simulated on the plan)", function () {
  this.timeout(60000);
  it("reads acme's and globex's JWT keys; not their slurm.key, database password or ArgoCD credential; not another environment's", async () => {
    const p = await plan("central-dev");
    const policy = named(p, "aws:iam/rolePolicy:RolePolicy", "central-dev-cluster-api-access").inputs?.policy;
    const secret = (name: string) => `arn:aws:secretsmanager:us-east-1:${ACCOUNT}:secret:${name}-Ab12Cd`;
    const as = (resource: string) => simulate({ principal: `arn:aws:sts::${ACCOUNT}:assumed-role/clusterra-dev-cluster-api/s`, action: "secretsmanager:GetSecretValue", resource, resourceAccount: ACCOUNT, identity: [policy] });
    assert.equal(await as(secret("clusterra/dev/acme/jwt-key")), "Allowed");
    assert.equal(await as(secret("clusterra/dev/globex/jwt-key")), "Allowed");
    for (const other of ["clusterra/dev/acme/slurm-key", "clusterra/dev/acme/mariadb-password", "clusterra/dev/acme/argocd-cluster", "clusterra/prod/acme/jwt-key", "clusterra/dev/acme/jwt-key-extra"]) {
      assert.equal(await as(secret(other)), "ImplicitlyDenied", other);
    }
  });
});

describe("central service roles, evaluated by the simulator", function () {
  this.timeout(60000);
  it("flow-log delivery may create and describe its log group, as AWS documents", async () => {
    const { flowLogDeliveryPolicy } = await import("../components/network/private-network");
    const group = `arn:aws:logs:us-east-1:${ACCOUNT}:log-group:/clusterra/vpc/x/flow-logs`;
    const as = (action: string, resource: string) => simulate({ principal: `arn:aws:iam::${ACCOUNT}:role/flow`, action, resource, resourceAccount: ACCOUNT, identity: [flowLogDeliveryPolicy(group)] });
    assert.equal(await as("logs:CreateLogGroup", group), "Allowed");
    assert.equal(await as("logs:DescribeLogGroups", "*"), "Allowed");
    assert.equal(await as("logs:PutLogEvents", `${group}:log-stream:eni-1`), "Allowed");
    assert.equal(await as("logs:DeleteLogGroup", group), "ImplicitlyDenied");
  });

  it("DLM may assume its role as AWS documents it (DLM sends no source account)", async () => {
    const p = await plan("central-dev");
    const role = named(p, "aws:iam/role:Role", "central-dev-snapshots-role");
    const verdict = await simulate({
      principal: "dlm.amazonaws.com",
      action: "sts:AssumeRole",
      resource: String(role.outputs?.arn),
      resourceAccount: ACCOUNT,
      resourcePolicy: role.inputs?.assumeRolePolicy,
    });
    assert.equal(verdict, "Allowed");
  });

  it("the host role publishes its kubeconfig without tagging rights it never uses", async () => {
    const p = await plan("central-dev");
    const policy = named(p, "aws:iam/rolePolicy:RolePolicy", "central-dev-k3s-host").inputs?.policy;
    const parameter = `arn:aws:ssm:us-east-1:${ACCOUNT}:parameter/clusterra/dev/central/kubeconfig`;
    const as = (action: string) => simulate({ principal: `arn:aws:iam::${ACCOUNT}:role/host`, action, resource: parameter, resourceAccount: ACCOUNT, identity: [policy] });
    assert.equal(await as("ssm:PutParameter"), "Allowed");
    assert.equal(await as("ssm:AddTagsToResource"), "ImplicitlyDenied");
  });
});
