/**
 * What each kind of change an operator makes replaces among the stateful resources, from two
 * plans of the same stack (issue 36): only what README's runbook table says. Stack-file
 * changes are planned as changed stack files; a chart pin, the ArgoCD RBAC list and a boot
 * script are code, so the test changes what the program reads (the module's export) for one
 * plan and puts it back.
 */
import * as assert from "node:assert/strict";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { stringify } from "yaml";
import { CHARTS } from "../facts/charts";
import { describeReplacement, replacements } from "../planning/replacement";
import { planStack, type PlanResult } from "../planning/plan";
import { PROJECT_ROOT } from "../config";
import { SECRET_SIG, SECRET_SIG_KEY, type Deployment } from "../planning/deployment";
import { exampleFile, exampleRoot, plan, withValues } from "./helpers";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const tenantCluster = require("../components/fleet/tenant-cluster") as { argocdManagerManifest: () => string };
// eslint-disable-next-line @typescript-eslint/no-require-imports
const hostMetrics = require("../components/observability/host-metrics") as { diskMetricsFiles: (...a: unknown[]) => { path: string; permissions: string; content: string }[] };

/** One plan of `stack` with its stack file changed and/or the program's code changed for the run. */
async function planChanged(stack: string, values: Record<string, unknown>, patch?: () => () => void): Promise<PlanResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "replacement-"));
  const configFile = path.join(dir, `Pulumi.${stack}.yaml`);
  fs.writeFileSync(configFile, stringify({ config: withValues(exampleFile(stack), values).values }));
  const restore = patch?.();
  try {
    return await planStack({ stack, configFile, root: exampleRoot() }, path.join(dir, "fleet"));
  } finally {
    restore?.();
  }
}

/** Replaces a property for one plan, returning what puts it back. */
function swap<T extends object, K extends keyof T>(target: T, key: K, value: T[K]): () => () => void {
  return () => {
    const original = target[key];
    target[key] = value;
    return () => {
      target[key] = original;
    };
  };
}

/** Times a patched code path whose output lands in a secret input ran: the proof that it reached the plan. */
let secretChanges = 0;

interface ChangeKind {
  readonly change: string;
  readonly stack: string;
  readonly values?: Record<string, unknown>;
  readonly patch?: () => () => void;
  /** The resource (name) that carries the change in a secret input: the plan redacts it, so the row names it. */
  readonly secretIn?: string;
}

const central = () => exampleFile("central-dev").values["clusterra:controlPlane"] as Record<string, unknown>;
const acme = () => exampleFile("tenant-acme-dev").values;

const CHANGES: readonly ChangeKind[] = [
  { change: "central's K3s version (`controlPlane.k3sVersion`)", stack: "central-dev", values: { "clusterra:controlPlane": { ...central(), k3sVersion: "v1.35.3+k3s2" } } },
  { change: "central's instance type (`controlPlane.instanceType`)", stack: "central-dev", values: { "clusterra:controlPlane": { ...central(), instanceType: "t4g.xlarge" } } },
  { change: "a tenant's K3s version (`clusterra:k3sVersion`)", stack: "tenant-acme-dev", values: { "clusterra:k3sVersion": "v1.35.3+k3s2" } },
  { change: "a user (`clusterra:users`)", stack: "tenant-acme-dev", values: { "clusterra:users": [...(acme()["clusterra:users"] as unknown[]), { name: "carol", uid: 10003 }] } },
  { change: "a shape (`clusterra:shapes`)", stack: "tenant-acme-dev", values: { "clusterra:shapes": (acme()["clusterra:shapes"] as Record<string, unknown>[]).map((s) => (s.name === "cpu" ? { ...s, maxNodes: 30, sizes: [4, 16, 32] } : s)) } },
  { change: "a chart pin (`facts/charts.ts`)", stack: "central-dev", patch: swap(CHARTS.slurm as { version: string }, "version", "1.2.2") },
  {
    change: "the ArgoCD account on a tenant cluster (its RBAC list)",
    stack: "tenant-acme-dev",
    secretIn: "tenant-acme-k3s-argocd-manager",
    patch: () =>
      swap(tenantCluster, "argocdManagerManifest", ((original) => () => {
        secretChanges++;
        return `${original()}\n`;
      })(tenantCluster.argocdManagerManifest))(),
  },
  { change: "a boot script (the disk metrics script)", stack: "tenant-acme-dev", patch: () => swap(hostMetrics, "diskMetricsFiles", ((original) => (...a: unknown[]) => original(...a).map((f) => (f.path.endsWith("/clusterra-disk-metrics") ? { ...f, content: `${f.content}# changed\n` } : f)))(hostMetrics.diskMetricsFiles))() },
];

/** Cloud resources whose inputs change without a replacement (their resource names). */
function changedInPlace(before: Deployment, after: Deployment): string[] {
  const later = new Map(after.deployment.resources.map((r) => [r.urn, r]));
  const replaced = new Set(replacements(before, after).map((r) => r.urn));
  return before.deployment.resources
    .filter((r) => r.custom && !r.type.startsWith("pulumi:") && !replaced.has(r.urn) && later.has(r.urn) && JSON.stringify(r.inputs) !== JSON.stringify(later.get(r.urn)?.inputs))
    .map((r) => `${r.type.split(":")[1].split("/")[1]} ${r.urn.split("::").pop()}`);
}

/** How many of the stack's fleet files differ between the two plans. */
function changedFleetFiles(before: PlanResult, after: PlanResult): number {
  const read = (root: string | undefined, file: string) => (root && fs.existsSync(path.join(root, file)) ? fs.readFileSync(path.join(root, file), "utf8") : undefined);
  const files = new Set([...before.fleetFiles, ...after.fleetFiles]);
  return [...files].filter((f) => read(before.fleetRoot, f) !== read(after.fleetRoot, f)).length;
}

/** The runbook's table: each change, what it replaces (nothing else is), and how the rest rolls out. */
function runbookTable(rows: readonly { change: string; replaced: string; rollout: string }[]): string {
  return ["| change | stateful resources replaced | what else changes |", "|---|---|---|", ...rows.map((r) => `| ${r.change} | ${r.replaced} | ${r.rollout} |`)].join("\n");
}

describe("what each kind of change replaces (README, Day 2)", function () {
  this.timeout(120_000);

  // Eight more plans (a tenant's plans central too): half a minute, so in the end-to-end suite.
  it("replaces only what README's runbook table says, for every kind of change an operator makes #end-to-end", async () => {
    const rows: { change: string; replaced: string; rollout: string }[] = [];
    for (const c of CHANGES) {
      const before = await plan(c.stack);
      const after = await planChanged(c.stack, c.values ?? {}, c.patch);
      const replaced = replacements(before.deployment, after.deployment).map(describeReplacement);
      const inPlace = changedInPlace(before.deployment, after.deployment);
      const fleet = changedFleetFiles(before, after);
      if (c.secretIn) {
        assert.ok(secretChanges > 0, `${c.change}: the changed code never ran in the plan`);
        const carrier = after.deployment.deployment.resources.find((r) => r.urn.endsWith(`::${c.secretIn}`));
        assert.ok(carrier && JSON.stringify(carrier.inputs).includes("[secret]"), `${c.change}: ${c.secretIn} carries no secret input`);
        inPlace.push(`${carrier.type.split(":")[1].split("/")[1]} ${c.secretIn} (its value: a secret, redacted in the plan)`);
      }
      // The change did reach the plan or the fleet: a row for a change that changes nothing would prove nothing.
      assert.ok(replaced.length + inPlace.length + fleet > 0, `${c.change}: neither the plan nor the fleet changed`);
      rows.push({ change: c.change, replaced: replaced.length ? replaced.join("; ") : "none", rollout: [...(inPlace.length ? [`in place: ${inPlace.join(", ")}`] : []), ...(fleet ? [`${fleet} fleet ${fleet === 1 ? "file" : "files"} (ArgoCD)`] : [])].join("; ") || "nothing else" });
    }
    const table = runbookTable(rows);
    const readme = fs.readFileSync(path.join(PROJECT_ROOT, "README.md"), "utf8");
    assert.ok(readme.includes(table), `README's table of what a change replaces is not what the plans show; it should read:\n${table}`);
  });

  it("names an instance replaced by a new AMI or subnet, never by an input it ignores, and a volume that is gone", () => {
    const resource = (urn: string, type: string, inputs: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ urn, type, custom: true, inputs, outputs: {}, dependencies: [], protect: false, retainOnDelete: false, ...extra });
    const deployment = (...resources: unknown[]): Deployment => ({ version: 3, deployment: { manifest: { time: "", magic: "", version: "" }, resources } }) as unknown as Deployment;
    const host = "urn:pulumi:s::p::aws:ec2/instance:Instance::host";
    const volume = "urn:pulumi:s::p::aws:ebs/volume:Volume::data";
    const before = deployment(resource(host, "aws:ec2/instance:Instance", { ami: "ami-1", subnetId: "subnet-1", userData: "a", userDataReplaceOnChange: true, instanceType: "t4g.large" }, { ignoreChanges: ["ami"] }), resource(volume, "aws:ebs/volume:Volume", { size: 100 }));
    assert.deepEqual(replacements(before, deployment(resource(host, "aws:ec2/instance:Instance", { ami: "ami-2", subnetId: "subnet-1", userData: "a", userDataReplaceOnChange: true, instanceType: "t4g.xlarge" }, { ignoreChanges: ["ami"] }), resource(volume, "aws:ebs/volume:Volume", { size: 200 }))), []);
    assert.deepEqual(replacements(before, deployment(resource(host, "aws:ec2/instance:Instance", { ami: "ami-1", subnetId: "subnet-2", userData: "b", userDataReplaceOnChange: true }, { ignoreChanges: ["ami"] }))).map(describeReplacement), ["instance host (subnetId, userData)", "volume data (removed)"]);
  });

  it("follows a replacement to what takes its ids, reads a nested input, and never calls two secrets equal", () => {
    const resource = (urn: string, type: string, inputs: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ urn, type, custom: true, inputs, outputs: {}, dependencies: [], protect: false, retainOnDelete: false, ...extra });
    const deployment = (...resources: unknown[]): Deployment => ({ version: 3, deployment: { manifest: { time: "", magic: "", version: "" }, resources } }) as unknown as Deployment;
    const key = "urn:pulumi:s::p::aws:kms/key:Key::stack";
    const volume = "urn:pulumi:s::p::aws:ebs/volume:Volume::data";
    const host = "urn:pulumi:s::p::aws:ec2/instance:Instance::host";
    const secret = { [SECRET_SIG_KEY]: SECRET_SIG, ciphertext: "[secret]" };
    const plan = (keyUsage: string, rootKey: string, size: number) =>
      deployment(
        resource(key, "aws:kms/key:Key", { keyUsage }),
        resource(volume, "aws:ebs/volume:Volume", { kmsKeyId: "arn:key", size }, { propertyDependencies: { kmsKeyId: [key] } }),
        resource(host, "aws:ec2/instance:Instance", { rootBlockDevice: { kmsKeyId: rootKey, volumeSize: size }, keyName: secret }),
      );
    // The root volume grows in place; the key's usage replaces it, and the volume encrypted with it.
    assert.deepEqual(replacements(plan("ENCRYPT_DECRYPT", "arn:key", 30), plan("ENCRYPT_DECRYPT", "arn:key", 40)).map(describeReplacement), ["instance host (keyName (a secret: not compared))"]);
    assert.deepEqual(replacements(plan("ENCRYPT_DECRYPT", "arn:key", 30), plan("SIGN_VERIFY", "arn:other", 30)).map(describeReplacement), [
      "key stack (keyUsage)",
      "instance host (keyName (a secret: not compared), rootBlockDevice.kmsKeyId)",
      "volume data (kmsKeyId (key stack is replaced))",
    ]);
  });
});
