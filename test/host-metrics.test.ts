/**
 * Hosts' disk use: the publishing script run against a stand-in `aws` that records its
 * arguments, and the planned roles evaluated with the IAM simulator: a tenant's server
 * publishes into central's account through its own role, in its own namespace only.
 */
import * as assert from "node:assert/strict";
import { execFileSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { diskMetricsScript } from "../components/observability/host-metrics";
import { hostMetricsNamespace, HOST_BOOT, HOST_COUNTS, HOST_DISK } from "../facts/alarms";
import { BOOT } from "../facts/host-boot";
import { plan } from "./helpers";
import { simulate } from "./sim-request";
import { plannedHostFiles } from "../components/host/host-files";
import { hostFilesPrefix } from "../components/central/k3s-host";
import { clusterParameterNames } from "../facts/tenant-cluster";

type Resource = { type: string; name?: string; urn: string; inputs: Record<string, any>; outputs?: Record<string, any> };
const resources = (p: Awaited<ReturnType<typeof plan>>) => p.deployment.deployment.resources as unknown as Resource[];

/** Runs the script with a stand-in aws on the PATH (`before`: shell run first, in a mount namespace of its own); returns its arguments, one per line, and its environment's profile. */
function run(script: string, before?: string): { args: string[]; profile: string; config: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "disk-metrics-"));
  try {
    const out = path.join(dir, "args");
    fs.writeFileSync(path.join(dir, "aws"), `#!/bin/sh\nprintf '%s\\n' "$@" > ${out}\nprintf '%s %s\\n' "$AWS_PROFILE" "$AWS_CONFIG_FILE" >> ${out}.env\n`, { mode: 0o755 });
    fs.writeFileSync(path.join(dir, "script"), script, { mode: 0o755 });
    const env = { ...process.env, PATH: `${dir}:${process.env.PATH}` };
    if (before) execFileSync("unshare", ["--mount", "--propagation", "private", "bash", "-c", `${before}\nexec bash ${path.join(dir, "script")}`], { env });
    else execFileSync("bash", [path.join(dir, "script")], { env });
    const [profile, config] = fs.readFileSync(`${out}.env`, "utf8").trim().split(" ");
    return { args: fs.readFileSync(out, "utf8").trim().split("\n"), profile: profile ?? "", config: config ?? "" };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe("hosts' disk metrics", function () {
  this.timeout(60000);

  it("publishes each mounted file system's used percent and the boot's state in one call, and skips a file system that is not mounted", () => {
    const r = run(diskMetricsScript({ region: "us-east-1", namespace: "Clusterra/dev/central", mounts: ["/", "/nonexistent-mount"] }));
    assert.deepEqual(r.args.slice(0, 6), ["cloudwatch", "put-metric-data", "--region", "us-east-1", "--namespace", "Clusterra/dev/central"]);
    assert.equal(r.args[6], "--metric-data");
    const data = r.args.slice(7);
    assert.equal(data.length, 2, data.join(" "));
    assert.match(data[0], new RegExp(`^MetricName=${HOST_DISK.metric},Dimensions=\\[\\{Name=Mount,Value=/\\}\\],Value=\\d{1,3},Unit=Percent$`));
    // This machine has no boot mark: a host here would still be booting.
    assert.equal(fs.existsSync(BOOT.done), false);
    assert.equal(data[1], `MetricName=${HOST_BOOT.metric},Value=1,Unit=Count`);
    assert.equal(r.profile, "", "central's host publishes with its own credentials");
  });

  it("publishes a count its host's script wrote (central's unlimited volumes), and nothing for it before the script has run", function () {
    const m = { region: "us-east-1", namespace: "Clusterra/dev/central", mounts: ["/"], counts: ["VolumesUnlimited"] as const };
    const file = HOST_COUNTS.VolumesUnlimited.file;
    assert.equal(fs.existsSync(file), false, `${file} on this machine`);
    assert.deepEqual(run(diskMetricsScript(m)).args.slice(7).map((d) => d.split(",")[0]), [`MetricName=${HOST_DISK.metric}`, `MetricName=${HOST_BOOT.metric}`]);
    if (process.getuid?.() !== 0) return this.skip(); // the written count needs a mount namespace: root
    const written = run(diskMetricsScript(m), `mkdir -p ${path.dirname(file)} && mount -t tmpfs count ${path.dirname(file)} && printf '3\\n' > ${file}`);
    assert.equal(written.args.at(-1), "MetricName=VolumesUnlimited,Value=3,Unit=Count");
  });

  it("publishes a tenant server's metrics through the role central made for it", () => {
    const roleArn = "arn:aws:iam::111122223333:role/clusterra-dev-acme-metrics";
    const r = run(diskMetricsScript({ region: "us-east-1", namespace: "Clusterra/dev/tenants/acme", mounts: ["/"], roleArn }));
    assert.deepEqual([r.profile, r.config], ["clusterra-metrics", "/etc/clusterra/metrics.aws-config"]);
  });

  it("lets a tenant's server publish in its own namespace in central, and nobody else, and nowhere else", async () => {
    const central = await plan("central-dev");
    const acme = await plan("tenant-acme-dev");
    const role = resources(central).find((r) => r.type === "aws:iam/role:Role" && r.inputs.name === "clusterra-dev-acme-metrics");
    assert.ok(role, "central makes acme's metrics role");
    const policy = resources(central).find((r) => r.type === "aws:iam/rolePolicy:RolePolicy" && r.urn.endsWith("tenant-acme-metrics-publish"));
    assert.ok(policy);
    const roleArn = `arn:aws:iam::111122223333:role/${role.inputs.name}`;
    const server = (tenant: string, account: string) => `arn:aws:iam::${account}:role/clusterra-dev-${tenant}-k3s-server`;
    const serverPolicy = resources(acme).find((r) => r.type === "aws:iam/policy:Policy" && String(r.inputs.description).endsWith(": disk-metrics"));
    assert.ok(serverPolicy, "acme's server may assume it");
    const assume = (principal: string, account: string, identity: unknown[]) =>
      simulate({ principal, action: "sts:AssumeRole", resource: roleArn, resourceAccount: "111122223333", identity, resourcePolicy: role.inputs.assumeRolePolicy, context: { "aws:PrincipalAccount": account } });
    assert.equal(await assume(server("acme", "444455556666"), "444455556666", [serverPolicy.inputs.policy]), "Allowed");
    // globex's server, even with a policy of its own allowing it, is not trusted.
    assert.notEqual(await assume(server("globex", "777788889999"), "777788889999", [{ Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: "sts:AssumeRole", Resource: "*" }] }]), "Allowed");
    const put = (namespace: string) => simulate({ principal: roleArn, action: "cloudwatch:PutMetricData", resource: "*", resourceAccount: "111122223333", identity: [policy.inputs.policy], context: { "cloudwatch:namespace": namespace } });
    assert.equal(await put(hostMetricsNamespace("dev", { tenantId: "acme" })), "Allowed");
    assert.notEqual(await put(hostMetricsNamespace("dev", { tenantId: "globex" })), "Allowed");
    assert.notEqual(await put(hostMetricsNamespace("dev", "central")), "Allowed");
  });

  it("reaches every host through its host files (from SSM; the sync enables the timer), with an alarm per mount", async () => {
    for (const [stack, namespace, mounts, prefix] of [["central-dev", "Clusterra/dev/central", ["/", "/var/lib/rancher"], hostFilesPrefix("dev")], ["tenant-acme-dev", "Clusterra/dev/tenants/acme", ["/", "/var/lib/rancher/k3s/server"], clusterParameterNames("dev", "acme").serverFiles]] as const) {
      const p = await plan(stack);
      const files = plannedHostFiles(p.deployment.deployment.resources, prefix);
      assert.match(files.find((f) => f.path === "/etc/systemd/system/clusterra-disk-metrics.timer")?.content ?? "", /WantedBy=timers\.target/, stack);
      assert.match(files.find((f) => f.path === "/usr/local/sbin/clusterra-disk-metrics")?.content ?? "", new RegExp(`--namespace '${namespace}'`), stack);
      const alarms = resources(p).filter((r) => r.type === "aws:cloudwatch/metricAlarm:MetricAlarm" && r.inputs.metricName === HOST_DISK.metric);
      assert.deepEqual(alarms.map((a) => [a.inputs.namespace, a.inputs.dimensions.Mount, a.inputs.threshold, a.inputs.treatMissingData]).sort(), mounts.map((m) => [namespace, m, HOST_DISK.thresholdPercent, "breaching"]).sort(), stack);
      // A first boot that never completes pages after half an hour; a host that publishes nothing is the disk alarms' to report.
      const boot = resources(p).filter((r) => r.type === "aws:cloudwatch/metricAlarm:MetricAlarm" && r.inputs.metricName === HOST_BOOT.metric);
      assert.deepEqual(boot.map((a) => [a.inputs.namespace, a.inputs.statistic, a.inputs.threshold, a.inputs.comparisonOperator, a.inputs.period * a.inputs.evaluationPeriods, a.inputs.datapointsToAlarm, a.inputs.treatMissingData]), [[namespace, "Minimum", 1, "GreaterThanOrEqualToThreshold", 1800, 5, "notBreaching"]], stack);
    }
  });
});
