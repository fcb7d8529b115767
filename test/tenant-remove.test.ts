/**
 * Removing a tenant: its side first (central still holds the role it acts through), then
 * central's part and the fleet; its data retained and listed, each with how it goes for good.
 */
import * as assert from "node:assert/strict";
import { main } from "../cli/main";
import { formatRemoval, removalPlan } from "../planning/tenant-remove";
import { exampleRoot, plan } from "./helpers";

describe("clusterra tenant remove", function () {
  this.timeout(60000);

  it("destroys the tenant's side before central's, retains exactly its protected resources, and names central's part", async () => {
    const acme = await plan("tenant-acme-dev");
    assert.ok(acme.config.kind === "tenant" && acme.central);
    const r = removalPlan(acme.config, acme.deployment, acme.central);
    const destroy = r.steps.findIndex((s) => s.startsWith("pulumi destroy -s tenant-acme-dev --exclude-protected"));
    const centralUp = r.steps.findIndex((s) => s.includes("pulumi up -s central-dev"));
    assert.ok(destroy >= 0 && centralUp > destroy, "the tenant stack is destroyed while central still holds its access role");
    assert.match(r.steps[destroy], /through clusterra-dev-tenant-acme, which central still holds/);
    const protectedOnes = acme.deployment.deployment.resources.filter((x) => x.protect).map((x) => x.urn.split("::").pop());
    assert.deepEqual(r.retained.map((x) => x.name).sort(), [...protectedOnes].sort());
    assert.deepEqual(r.retained.filter((x) => x.account === "central").map((x) => x.type), Array(4).fill("aws:secretsmanager/secret:Secret"));
    assert.match(r.retained.find((x) => x.type === "aws:kms/key:Key")?.forGood ?? "", /KMS waits 30 days/);
    assert.equal(r.centralSide.length, 13);
    assert.ok(r.centralSide.every((c) => c.includes("central-dev-tenant-acme")));
    assert.deepEqual(r.fleetPaths, ["fleet/tenants/dev/acme/"]);
    // The ApplicationSet keeps a tenant's Applications (create-update): the runbook deletes every one of them.
    for (const a of ["acme-control-plane", "acme-control-plane-manifests", "acme-guards", "acme-slurm", "acme-cilium", "acme-edge-agent"]) assert.match(r.steps[centralUp], new RegExp(`\\b${a}\\b`));
    assert.match(r.steps[centralUp], /kubectl -n argocd delete application acme-control-plane-manifests acme-guards acme-control-plane`/);
    // Central drops a tenant it serves only when its stack file names it (components/central/live-tenants.ts).
    assert.match(r.steps[centralUp], /^Remove stacks\/Pulumi\.tenant-acme-dev\.yaml, name acme in stacks\/Pulumi\.central-dev\.yaml under clusterra:removeTenants /);
    // Every step that points at another names it by its place in the printed order.
    const printed = formatRemoval(r);
    assert.equal(r.centralUpStep, centralUp + 1);
    assert.match(printed, new RegExp(`^${r.centralUpStep}\\. Remove stacks/`, "m"));
    assert.match(printed, new RegExp(`once step ${r.centralUpStep} removes the stack file[\\s\\S]*before step ${r.centralUpStep} prunes it[\\s\\S]*removed by step ${r.centralUpStep}:`));
    assert.match(printed, /^3\. Decide the central-side secrets now[\s\S]*secrets kept in step 3 /m);
  });

  it("refuses a stack that is not a tenant's, with what is valid", async () => {
    const errors: string[] = [];
    assert.equal(await main(["tenant", "remove", "--stack", "central-dev"], () => undefined, (s) => errors.push(s), exampleRoot()), 2);
    assert.match(errors.join("\n"), /central-dev is a central stack; valid: a tenant's stack/);
  });
});
