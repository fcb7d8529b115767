/**
 * The tenant's EFS: the nodes mount it through the access point with root access (the
 * Prolog makes users' directories as root), and nothing else does. Evaluated with the
 * simulator on the planned file-system policy.
 */
import * as assert from "node:assert/strict";
import { named, plan } from "./helpers";
import { simulate } from "./sim-request";

const ACME = "444455556666";

describe("EFS root access for the Prolog (simulated on the plan)", function () {
  this.timeout(60000);

  it("lets the worker and server roles mount with root access through the access point over TLS, and nothing else", async () => {
    const acme = await plan("tenant-acme-dev");
    const fileSystem = String(named(acme, "aws:efs/fileSystem:FileSystem", "tenant-acme-efs").outputs?.arn);
    const accessPoint = String(named(acme, "aws:efs/accessPoint:AccessPoint", "tenant-acme-efs-ap").outputs?.arn);
    const policy = named(acme, "aws:efs/fileSystemPolicy:FileSystemPolicy", "tenant-acme-efs-policy").inputs?.policy;
    const role = (name: string) => `arn:aws:iam::${ACME}:role/${name}`;
    // Each node role's own grant (the server's managed policy, the workers' inline one): EFS needs both sides.
    const grants: Record<string, unknown> = {
      "clusterra-dev-acme-k3s-server": named(acme, "aws:iam/policy:Policy", "tenant-acme-k3s-node").inputs?.policy,
      "clusterra-dev-acme-worker": named(acme, "aws:iam/rolePolicy:RolePolicy", "tenant-acme-karpenter-node").inputs?.policy,
    };
    const mount = { "elasticfilesystem:AccessPointArn": accessPoint, "elasticfilesystem:AccessedViaMountTarget": "true", "aws:SecureTransport": "true" };
    const ask = (principal: string, action: string, context: Record<string, string> = mount) => {
      const grant = grants[principal.split("/").pop() ?? ""];
      return simulate({ principal, action, resource: fileSystem, resourceAccount: ACME, identity: grant ? [grant] : [], resourcePolicy: policy, context: { "aws:PrincipalArn": principal, ...context } });
    };
    for (const node of ["clusterra-dev-acme-worker", "clusterra-dev-acme-k3s-server"]) {
      assert.equal(await ask(role(node), "elasticfilesystem:ClientRootAccess"), "Allowed", node);
      assert.equal(await ask(role(node), "elasticfilesystem:ClientWrite"), "Allowed", node);
    }
    const worker = role("clusterra-dev-acme-worker");
    // Not around the access point, not without TLS, not another role of the account, never the file system's management.
    assert.equal(await ask(worker, "elasticfilesystem:ClientRootAccess", { ...mount, "elasticfilesystem:AccessPointArn": `${accessPoint}x` }), "ImplicitlyDenied");
    assert.equal(await ask(worker, "elasticfilesystem:ClientRootAccess", { ...mount, "aws:SecureTransport": "false" }), "ExplicitlyDenied");
    // Another role of the account, even one whose own policy allows every EFS client action.
    grants["clusterra-dev-acme-edge-agent"] = { Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: "elasticfilesystem:Client*", Resource: "*" }] };
    assert.equal(await ask(role("clusterra-dev-acme-edge-agent"), "elasticfilesystem:ClientRootAccess"), "ExplicitlyDenied");
    assert.equal(await ask(worker, "elasticfilesystem:DeleteFileSystem"), "ImplicitlyDenied");
  });
});
