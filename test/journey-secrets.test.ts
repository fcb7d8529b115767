import * as assert from "node:assert/strict";
import { getSecretValue, plannedSecrets, policyReaders, remoteValue, SecretsManager, type PlannedResource } from "../journey/gitops/secrets-manager";
import { externalSecretStatus, externalSecretTarget, SECRET_SYNCED_ERROR, type ExternalSecret } from "../journey/gitops/external-secrets";

// A tenant plan's secrets as its deployment lists them (the shape of `clusterra plan`'s resources.json).
const CENTRAL = "111122223333";
const TENANT = "444455556666";
const arnOf = (name: string) => `arn:aws:secretsmanager:us-east-1:${CENTRAL}:secret:${name}-f71453`;
const ESO_ROLE = `arn:aws:iam::${TENANT}:role/clusterra-dev-acme-external-secrets`;
const CONTROL_PLANE_ROLE = `arn:aws:iam::${CENTRAL}:role/clusterra-dev-acme-control-plane`;
const policy = (readers: string[]) => JSON.stringify({ Version: "2012-10-17", Statement: [{ Sid: "TenantExternalSecretsReads", Effect: "Allow", Principal: { AWS: readers.length === 1 ? readers[0] : readers }, Action: ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"], Resource: "*" }] });
const secret = (name: string, readers: string[], versioned: boolean): PlannedResource[] => [
  { type: "aws:secretsmanager/secret:Secret", inputs: { name }, outputs: { arn: arnOf(name) } },
  ...(versioned ? [{ type: "aws:secretsmanager/secretVersion:SecretVersion", inputs: { secretId: name, secretString: { ciphertext: "[secret]" } } }] : []),
  { type: "aws:secretsmanager/secretPolicy:SecretPolicy", inputs: { secretArn: arnOf(name), policy: policy(readers) } },
];
const PLAN: PlannedResource[] = [
  ...secret("clusterra/dev/acme/slurm-key", [ESO_ROLE, CONTROL_PLANE_ROLE], true),
  ...secret("clusterra/dev/acme/mariadb-password", [CONTROL_PLANE_ROLE], true),
  ...secret("clusterra/dev/acme/argocd-cluster", [CONTROL_PLANE_ROLE], false),
];
const es = (key: string, property?: string): ExternalSecret => ({ metadata: { name: "slurm-auth-slurm", namespace: "tenant-acme", generation: 2 }, spec: { secretStoreRef: { name: "s" }, data: [{ secretKey: "slurm.key", remoteRef: { key, ...(property ? { property } : {}) } }] } });

describe("the journey's Secrets Manager and External Secrets (answers only what the plans create)", () => {
  it("reads the plans' secrets: name, ARN, whether a plan versions it, who its policy lets read", () => {
    const s = plannedSecrets(PLAN);
    assert.deepEqual(s.map((x) => [x.name, x.versioned, x.readers.length]), [["clusterra/dev/acme/slurm-key", true, 2], ["clusterra/dev/acme/mariadb-password", true, 1], ["clusterra/dev/acme/argocd-cluster", false, 1]]);
    assert.deepEqual(policyReaders(JSON.stringify({ Statement: { Effect: "Deny", Action: "secretsmanager:GetSecretValue", Principal: { AWS: "x" } } })), []);
    assert.deepEqual(policyReaders("not json"), []);
  });

  it("gives every cluster reading one secret the same value, by name or ARN, in the plans' password alphabet", () => {
    const sm = new SecretsManager(plannedSecrets(PLAN));
    const central = sm.get("clusterra/dev/acme/slurm-key", "us-east-1", CONTROL_PLANE_ROLE);
    const tenant = sm.get(arnOf("clusterra/dev/acme/slurm-key"), "us-east-1", ESO_ROLE);
    assert.ok("value" in central && "value" in tenant);
    assert.equal(central.value, tenant.value);
    assert.match(central.value, /^[A-Za-z0-9]{64}$/);
    assert.notEqual((new SecretsManager(plannedSecrets(PLAN)).get("clusterra/dev/acme/slurm-key", "us-east-1", CONTROL_PLANE_ROLE) as { value: string }).value, central.value);
  });

  it("refuses as AWS does: a key no plan creates, another region, another account's role the policy does not name, a secret nobody published yet", () => {
    const sm = new SecretsManager(plannedSecrets(PLAN));
    assert.deepEqual(sm.get("clusterra/dev/acme/jwt-key-unplanned", "us-east-1", CONTROL_PLANE_ROLE), { error: "ResourceNotFoundException: Secrets Manager can't find the specified secret." });
    assert.match(String((sm.get("clusterra/dev/acme/slurm-key", "eu-west-1", CONTROL_PLANE_ROLE) as { error: string }).error), /^ResourceNotFoundException/);
    const denied = sm.get(arnOf("clusterra/dev/acme/mariadb-password"), "us-east-1", ESO_ROLE);
    assert.match(String((denied as { error: string }).error), /^AccessDeniedException: User: arn:aws:sts::444455556666:assumed-role\/clusterra-dev-acme-external-secrets\/external-secrets is not authorized to perform: secretsmanager:GetSecretValue .* because no resource-based policy allows/);
    assert.match(String((sm.get("clusterra/dev/acme/argocd-cluster", "us-east-1", CONTROL_PLANE_ROLE) as { error: string }).error), /can't find the specified secret value for staging label: AWSCURRENT/);
    // Another tenant's role of central's own account: its policy does not name it (the isolation a store's role gives).
    const globex = `arn:aws:iam::${CENTRAL}:role/clusterra-dev-globex-control-plane`;
    assert.match(String((sm.get("clusterra/dev/acme/slurm-key", "us-east-1", globex) as { error: string }).error), /^AccessDeniedException: .*clusterra-dev-globex-control-plane/);
    // Another account's reader by the bare name: AWS finds another account's secret by ARN alone.
    assert.match(String((sm.get("clusterra/dev/acme/slurm-key", "us-east-1", ESO_ROLE) as { error: string }).error), /^ResourceNotFoundException/);
    // Published by the tenant's server: then read; a secret no plan creates cannot be published.
    assert.equal(sm.put("clusterra/dev/acme/argocd-cluster", JSON.stringify({ bearerToken: "t", caData: "Q0E=" })), true);
    assert.deepEqual(remoteValue(sm.get("clusterra/dev/acme/argocd-cluster", "us-east-1", CONTROL_PLANE_ROLE), "k", "bearerToken"), { value: "t" });
    assert.equal(sm.put("clusterra/dev/acme/unplanned", "x"), false);
    assert.deepEqual(getSecretValue(undefined, new Map(), "x", "us-east-1", CONTROL_PLANE_ROLE), { error: "ResourceNotFoundException: Secrets Manager can't find the specified secret." });
  });

  it("reads a property of a JSON secret as External Secrets' AWS provider does, and names a missing one", () => {
    assert.deepEqual(remoteValue({ value: '{"a":"1","b":{"c":2}}' }, "k", "b"), { value: '{"c":2}' });
    assert.deepEqual(remoteValue({ value: "plain" }, "k", "a"), { error: "key a does not exist in secret k" });
    assert.deepEqual(remoteValue({ value: "plain" }, "k"), { value: "plain" });
  });

  it("leaves an ExternalSecret naming a key no plan creates not Ready (SecretSyncedError), writing no Secret; a known key Ready, with what it synced", () => {
    const sm = new SecretsManager(plannedSecrets(PLAN));
    const read = (id: string) => sm.get(id, "us-east-1", CONTROL_PLANE_ROLE);
    const failed = externalSecretTarget(es("clusterra/dev/acme/slurm-key-unplanned"), read);
    assert.ok("error" in failed && !("secret" in failed));
    assert.match(failed.error, /key "clusterra\/dev\/acme\/slurm-key-unplanned" from ExternalSecret "slurm-auth-slurm": ResourceNotFoundException/);
    const now = new Date("2026-11-28T12:00:00.123Z");
    const status = externalSecretStatus(es("x"), failed, now).status as { conditions: { status: string; reason: string; message: string }[]; refreshTime?: string };
    assert.deepEqual([status.conditions[0].status, status.conditions[0].reason, status.conditions[0].message], ["False", SECRET_SYNCED_ERROR.reason, SECRET_SYNCED_ERROR.message]);
    assert.equal(status.refreshTime, undefined);
    const ok = externalSecretTarget(es("clusterra/dev/acme/slurm-key"), read);
    assert.ok("secret" in ok);
    assert.match(ok.secret.stringData["slurm.key"], /^[A-Za-z0-9]{64}$/);
    const synced = externalSecretStatus(es("x"), ok, now).status as { conditions: { status: string; reason: string; lastTransitionTime: string }[]; syncedResourceVersion: string };
    assert.deepEqual([synced.conditions[0].status, synced.conditions[0].reason, synced.conditions[0].lastTransitionTime], ["True", "SecretSynced", "2026-11-28T12:00:00Z"]);
    assert.match(synced.syncedResourceVersion, /^2-[0-9a-f]{32}$/);
    // A condition keeps its transition time while its status stays.
    const again = externalSecretStatus({ ...es("x"), status: { conditions: [{ type: "Ready", status: "True", lastTransitionTime: "2026-01-01T00:00:00Z" }] } }, ok, now).status as { conditions: { lastTransitionTime: string }[] };
    assert.equal(again.conditions[0].lastTransitionTime, "2026-01-01T00:00:00Z");
  });
});

describe("RollingSync's gate on External Secrets (the journey's commit)", () => {
  it("changes one secret's name in a control plane's values, keeping the rest and its comments; a file without it is named", async () => {
    const { withSecretName, UNPLANNED_SUFFIX } = await import("../journey/gitops/secret-gate");
    const text = "# Generated from stack tenant-acme-dev; edit the stack file, not this one.\ncentralRegion: us-east-1\nsecretNames:\n  slurm: clusterra/dev/acme/slurm-key\n  jwt: clusterra/dev/acme/jwt-key\n";
    const out = withSecretName(text, "jwt", (was) => `${was}${UNPLANNED_SUFFIX}`);
    assert.equal(out, text.replace("jwt-key\n", `jwt-key${UNPLANNED_SUFFIX}\n`));
    assert.throws(() => withSecretName("centralRegion: us-east-1\n", "jwt", (x) => x), /no secretNames\.jwt/);
  });
});
