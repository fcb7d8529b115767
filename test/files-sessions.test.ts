/**
 * A user's files session: cluster-api (central) assumes the tenant's files role with the
 * tenant's ExternalId, tagging the session with the user's uid and nothing else; the session
 * reaches users/<uid>/ and shared/ in that tenant's bucket and nothing else in the account.
 * Both sides evaluated with the simulator on the planned documents.
 */
import * as assert from "node:assert/strict";
import { json, named, plan } from "./helpers";
import { simulate } from "./sim-request";

const CENTRAL = "111122223333";
const ACME = "444455556666";
const CLUSTER_API = `arn:aws:sts::${CENTRAL}:assumed-role/clusterra-dev-cluster-api/s`;

describe("users' files sessions (simulated on the plans)", function () {
  this.timeout(60000);

  async function docs() {
    const central = await plan("central-dev");
    const acme = await plan("tenant-acme-dev");
    const role = named(acme, "aws:iam/role:Role", "tenant-acme-files-files-role");
    return {
      clusterApi: named(central, "aws:iam/rolePolicy:RolePolicy", "central-dev-cluster-api-access").inputs?.policy,
      trust: json(role.inputs?.assumeRolePolicy),
      roleArn: String(role.outputs?.arn),
      access: named(acme, "aws:iam/rolePolicy:RolePolicy", "tenant-acme-files-files-access").inputs?.policy,
    };
  }

  it("cluster-api opens a session only with acme's ExternalId and only the uid tag", async () => {
    const d = await docs();
    const ask = (action: string, context: Record<string, string | string[]>, principal = CLUSTER_API, identity = [d.clusterApi]) =>
      simulate({ principal, action, resource: d.roleArn, resourceAccount: ACME, identity, resourcePolicy: d.trust, context });
    assert.equal(await ask("sts:AssumeRole", { "sts:ExternalId": "clusterra-dev-acme-files" }), "Allowed");
    assert.equal(await ask("sts:AssumeRole", { "sts:ExternalId": "clusterra-dev-globex-files" }), "ImplicitlyDenied");
    assert.equal(await ask("sts:TagSession", { "aws:RequestTag/clusterra:uid": "10001", "aws:TagKeys": ["clusterra:uid"] }), "Allowed");
    assert.equal(await ask("sts:TagSession", { "aws:RequestTag/clusterra:uid": "10001", "aws:TagKeys": ["clusterra:uid", "clusterra:admin"] }), "ImplicitlyDenied");
    assert.equal(await ask("sts:TagSession", { "aws:TagKeys": ["team"] }), "ImplicitlyDenied");
    // Any other principal of central, with the right ExternalId: no.
    assert.equal(await ask("sts:AssumeRole", { "sts:ExternalId": "clusterra-dev-acme-files" }, `arn:aws:sts::${CENTRAL}:assumed-role/clusterra-dev-k3s-role/i`, [{ Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: "sts:AssumeRole", Resource: "*" }] }]), "ImplicitlyDenied");
  });

  it("a session tagged uid 10001 reaches users/10001/ and shared/, not users/10002/, not another bucket, not IAM", async () => {
    const d = await docs();
    const acme = await plan("tenant-acme-dev");
    const bucket = String(named(acme, "aws:s3/bucket:Bucket", "tenant-acme-files").outputs?.arn);
    const session = `arn:aws:sts::${ACME}:assumed-role/clusterra-dev-acme-files/user-10001`;
    const ask = (action: string, resource: string, context: Record<string, string> = {}) =>
      simulate({ principal: session, action, resource, resourceAccount: ACME, identity: [d.access], context: { "aws:PrincipalTag/clusterra:uid": "10001", ...context } });
    assert.equal(await ask("s3:GetObject", `${bucket}/users/10001/job_1.out`), "Allowed");
    assert.equal(await ask("s3:PutObject", `${bucket}/shared/input.csv`), "Allowed");
    assert.equal(await ask("s3:GetObject", `${bucket}/users/10002/job_2.out`), "ImplicitlyDenied");
    assert.equal(await ask("s3:GetObject", `arn:aws:s3:::clusterra-dev-globex-files-777788889999/users/10001/x`), "ImplicitlyDenied");
    assert.equal(await ask("iam:ListRoles", "*"), "ImplicitlyDenied");
    assert.equal(await ask("s3:ListBucket", bucket, { "s3:prefix": "users/" }), "ImplicitlyDenied");
  });
});
