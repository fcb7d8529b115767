/**
 * cluster-api's private listener has a certificate the edge-agents verify: the environment's
 * CA signs a server certificate for the central host's address (the address the agents dial),
 * cluster-api reads the key pair with its role, and every tenant's edge-agent gets that CA and
 * only that CA through the fleet.
 */
import * as assert from "node:assert/strict";
import { renderTenantAddOn } from "../fleet-tools/render";
import { byType, exampleRoot, named, needHelm, plan } from "./helpers";
import { simulate } from "./sim-request";

const ACCOUNT = "111122223333";

describe("cluster-api's listener certificate", function () {
  this.timeout(60000);

  it("is issued for the central host's address by the environment's own CA, for server authentication", async () => {
    const central = await plan("central-dev");
    const host = String(byType(central, "aws:ec2/instance:Instance")[0].outputs?.privateIp);
    const request = named(central, "tls:index/certRequest:CertRequest", "central-dev-cluster-api-tls-server");
    assert.deepEqual(request.inputs?.ipAddresses, [host]);
    const ca = named(central, "tls:index/selfSignedCert:SelfSignedCert", "central-dev-cluster-api-tls-ca");
    assert.equal(ca.inputs?.isCaCertificate, true);
    const server = named(central, "tls:index/locallySignedCert:LocallySignedCert", "central-dev-cluster-api-tls-server");
    assert.ok((server.inputs?.allowedUses as string[]).includes("server_auth"));
    assert.ok(Number(server.inputs?.earlyRenewalHours) > 0 && Number(server.inputs?.earlyRenewalHours) < Number(server.inputs?.validityPeriodHours));
    assert.equal(central.outputs.heartbeatEndpoint, `https://${host}:8443`);
  });

  it("is read by cluster-api's role and by no other tenant-facing role (simulated)", async () => {
    const central = await plan("central-dev");
    const secret = String(named(central, "aws:secretsmanager/secret:Secret", "central-dev-cluster-api-tls-secret").outputs?.arn);
    const policy = named(central, "aws:iam/rolePolicy:RolePolicy", "central-dev-cluster-api-access").inputs?.policy;
    const as = (identity: unknown[]) => simulate({ principal: `arn:aws:sts::${ACCOUNT}:assumed-role/clusterra-dev-cluster-api/s`, action: "secretsmanager:GetSecretValue", resource: secret, resourceAccount: ACCOUNT, identity });
    assert.equal(await as([policy]), "Allowed");
    const controlPlane = byType(central, "aws:iam/rolePolicy:RolePolicy").filter((p) => p.urn.includes("ControlPlaneSecrets")).map((p) => p.inputs?.policy);
    assert.ok(controlPlane.length > 0);
    assert.equal(await as(controlPlane), "ImplicitlyDenied");
  });

  it("reaches every tenant's edge-agent as its one trusted CA, from central's output", async function () {
    const helm = needHelm(this);
    const central = await plan("central-dev");
    for (const tenant of ["acme", "globex"]) {
      // The agent as ArgoCD renders it: the CA and the endpoint come from the tenant's facts file.
      const objects = renderTenantAddOn(exampleRoot(), helm, "dev", tenant, "edge-agent") as any[];
      const ca = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === "edge-agent-heartbeat-ca")?.data?.["ca.crt"];
      const env = objects.find((o) => o.kind === "Deployment")?.spec.template.spec.containers[0].env as { name: string; value?: string }[];
      assert.equal(ca, central.outputs.clusterApiCaPem, tenant);
      assert.match(String(ca), /^-----BEGIN CERTIFICATE-----\n/);
      assert.equal(env.find((e) => e.name === "HEARTBEAT_ENDPOINT")?.value, central.outputs.heartbeatEndpoint);
    }
  });
});
