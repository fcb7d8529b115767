/**
 * Day 2: the data volume follows the tenants, and alarms page the operator (status checks
 * with recovery, dead letters), each stack's topic encrypted and only its own alarms publishing.
 */
import * as assert from "node:assert/strict";
import { parse } from "yaml";
import { estimateCost } from "../planning/cost";
import { CENTRAL_DATA_VOLUME, dataVolumeGiB, tenantDiskGiB } from "../facts/central-host";
import { validateStack } from "../config";
import { byType, centralObjects, exampleFile, exampleFiles, exampleRoot, json, named, needHelm, plan, skipWithoutHelm, withValues } from "./helpers";
import { simulate } from "./sim-request";
import { plannedHostFiles } from "../components/host/host-files";
import { hostFilesPrefix } from "../components/central/k3s-host";

describe("the central data volume follows its tenants", function () {
  this.timeout(60000);

  it("holds the host's share and 24 GiB per tenant (slurmctld state, MariaDB, its backups), in 10 GiB steps, never below 100 GiB", () => {
    assert.equal(tenantDiskGiB(), 24);
    assert.equal(dataVolumeGiB(0), CENTRAL_DATA_VOLUME.minimumGiB);
    assert.equal(dataVolumeGiB(2), 100);
    assert.equal(dataVolumeGiB(5), 150);
    assert.equal(dataVolumeGiB(17), 440, "the 17 tenants a t4g.2xlarge holds need 30 + 408 GiB");
  });

  it("is planned at that size, and the host grows its file system online when EBS grows the volume", async () => {
    const central = await plan("central-dev");
    const volume = central.deployment.deployment.resources.find((r) => r.type === "aws:ebs/volume:Volume");
    assert.equal(volume?.inputs?.size, dataVolumeGiB(2));
    const host = central.deployment.deployment.resources.find((r) => r.type === "aws:ec2/instance:Instance");
    const files = plannedHostFiles(central.deployment.deployment.resources, hostFilesPrefix("dev"));
    const timer = files.find((f) => f.path === "/etc/systemd/system/clusterra-grow-data.timer");
    const service = files.find((f) => f.path === "/etc/systemd/system/clusterra-grow-data.service");
    assert.match(service?.content ?? "", /ExecStart=\/usr\/sbin\/xfs_growfs \/var\/lib\/rancher/);
    // A timer: the host-files sync enables and starts it (test/host-files.test.ts).
    assert.match(timer?.content ?? "", /OnUnitActiveSec=15min/);
    assert.match(timer?.content ?? "", /WantedBy=timers\.target/);
    assert.ok(host?.dependencies?.includes(byType(central, "aws:ssm/parameter:Parameter").find((r) => r.inputs?.name === `${hostFilesPrefix("dev")}${timer?.path}`)?.urn ?? "none"));
  });
});

describe("alarms", function () {
  this.timeout(60000);
  const alarmsOf = (p: Awaited<ReturnType<typeof plan>>) => p.deployment.deployment.resources.filter((r) => r.type === "aws:cloudwatch/metricAlarm:MetricAlarm").map((r) => r.inputs as Record<string, any>);

  it("recover the central host on a failed system check, and page on either check", async () => {
    for (const [stack, instance] of [["central-dev", "central-dev-host"]] as const) {
      const p = await plan(stack);
      const topic = p.deployment.deployment.resources.find((r) => r.type === "aws:sns/topic:Topic");
      const alarms = alarmsOf(p);
      assert.deepEqual(alarms.map((a) => a.metricName).sort(), ["BootIncomplete", "DiskUsedPercent", "DiskUsedPercent", "StatusCheckFailed_Instance", "StatusCheckFailed_System", "VolumesUnlimited"], stack);
      // Any local volume left without its limit pages (the host's volume-limits script counts them).
      const volumes = alarms.find((a) => a.metricName === "VolumesUnlimited");
      assert.deepEqual([volumes?.name, volumes?.threshold, volumes?.comparisonOperator, volumes?.evaluationPeriods, volumes?.treatMissingData, volumes?.alarmActions], ["clusterra-dev-alarms-host-volumes-unlimited", 1, "GreaterThanOrEqualToThreshold", 2, "notBreaching", [topic?.outputs?.arn]], stack);
      const system = alarms.find((a) => a.metricName === "StatusCheckFailed_System");
      assert.deepEqual(system?.alarmActions, ["arn:aws:automate:us-east-1:ec2:recover", topic?.outputs?.arn], stack);
      assert.equal(system?.dimensions?.InstanceId, p.deployment.deployment.resources.find((r) => r.type === "aws:ec2/instance:Instance")?.outputs?.id, `${stack}: ${instance}`);
      const key = p.deployment.deployment.resources.find((r) => r.type === "aws:kms/key:Key");
      assert.equal(topic?.inputs?.kmsMasterKeyId, key?.outputs?.arn, `${stack}: the topic is encrypted with the stack key`);
    }
  });

  it("watch each tenant server from central's account, on the metrics the tenant shares with central's sink, at the operator's cost", async () => {
    const acme = await plan("tenant-acme-dev");
    const central = await plan("central-dev");
    const alarms = alarmsOf(acme);
    assert.deepEqual(alarms.map((a) => a.name).sort(), ["clusterra-dev-acme-server-k3s-boot", "clusterra-dev-acme-server-k3s-disk-root", "clusterra-dev-acme-server-k3s-disk-var-lib-rancher-k3s-server", "clusterra-dev-acme-server-k3s-instance-check", "clusterra-dev-acme-server-k3s-system-check"]);
    const server = acme.deployment.deployment.resources.find((r) => r.type === "aws:ec2/instance:Instance");
    for (const a of alarms.filter((x) => x.metricName !== "DiskUsedPercent" && x.metricName !== "BootIncomplete")) {
      assert.equal(a.metricQueries[0].accountId, "444455556666", "the tenant's own metric, read across accounts");
      assert.equal(a.metricQueries[0].metric.dimensions.InstanceId, server?.outputs?.id);
      assert.deepEqual(a.alarmActions, [central.outputs.alarmTopicArn], "central's topic; no recover action across accounts");
    }
    const link = acme.deployment.deployment.resources.find((r) => r.type === "aws:oam/link:Link");
    assert.equal(link?.inputs?.sinkIdentifier, central.outputs.monitoringSinkArn);
    assert.deepEqual(link?.inputs?.resourceTypes, ["AWS::CloudWatch::Metric"]);
    const customer = estimateCost(acme.deployment).lines.filter((l) => l.payer === "customer" && l.basis === "idle").reduce((s, l) => s + l.monthlyUsd, 0);
    assert.ok(Math.abs(customer - 29.98) < 0.001, String(customer));
  });

  it("let a tenant's access role in central manage only its own server's alarms (simulated)", async () => {
    const central = await plan("central-dev");
    const policy = named(central, "aws:iam/rolePolicy:RolePolicy", "central-dev-tenant-acme-access-policy").inputs?.policy;
    const role = "arn:aws:sts::111122223333:assumed-role/clusterra-dev-tenant-acme/s";
    const ask = (alarm: string) => simulate({ principal: role, action: "cloudwatch:PutMetricAlarm", resource: `arn:aws:cloudwatch:us-east-1:111122223333:alarm:${alarm}`, resourceAccount: "111122223333", identity: [policy] });
    assert.equal(await ask("clusterra-dev-acme-server-k3s-system-check"), "Allowed");
    assert.equal(await ask("clusterra-dev-globex-server-k3s-system-check"), "ImplicitlyDenied");
    assert.equal(await ask("clusterra-dev-alarms-host-system-check"), "ImplicitlyDenied");
  });

  it("page on any message in the connector's dead-letter queue", async () => {
    const p = await plan("connector-demo");
    const [dlq] = alarmsOf(p);
    assert.equal(dlq.metricName, "ApproximateNumberOfMessagesVisible");
    assert.equal(dlq.dimensions.QueueName, "clusterra-demo-pcluster-events-dlq");
    assert.equal(dlq.threshold, 1);
  });

  it("let only the account's own CloudWatch alarms publish to the topic and use the key (simulated)", async () => {
    const p = await plan("central-dev");
    const topic = p.deployment.deployment.resources.find((r) => r.type === "aws:sns/topic:Topic");
    const policy = named(p, "aws:sns/topicPolicy:TopicPolicy", "central-dev-alarms").inputs?.policy;
    const key = p.deployment.deployment.resources.find((r) => r.type === "aws:kms/key:Key");
    const keyPolicy = json(key?.inputs?.policy);
    const ask = (resource: string, action: string, resourcePolicy: unknown, account: string, sourceArn: string) =>
      simulate({ principal: "cloudwatch.amazonaws.com", action, resource, resourceAccount: "111122223333", resourcePolicy, context: { "aws:SourceAccount": account, "aws:SourceArn": sourceArn } });
    const own = "arn:aws:cloudwatch:us-east-1:111122223333:alarm:clusterra-dev-alarms-host-system-check";
    const theirs = "arn:aws:cloudwatch:us-east-1:444455556666:alarm:x";
    assert.equal(await ask(String(topic?.outputs?.arn), "sns:Publish", policy, "111122223333", own), "Allowed");
    assert.equal(await ask(String(topic?.outputs?.arn), "sns:Publish", policy, "444455556666", theirs), "ImplicitlyDenied");
    assert.equal(await ask(String(key?.outputs?.arn), "kms:GenerateDataKey", keyPolicy, "111122223333", own), "Allowed");
    assert.equal(await ask(String(key?.outputs?.arn), "kms:GenerateDataKey", keyPolicy, "444455556666", theirs), "ImplicitlyDenied");
  });
});

describe("accounting backups", function () {
  this.timeout(60000);

  it("back up each tenant's accounting database daily by default, kept 14 days, on its own volume counted in central's disk", async function () {
    const docs = centralObjects("acme"); // as ArgoCD renders acme's objects on central
    if (!docs) return skipWithoutHelm(this);
    const backup = docs.find((d) => d.kind === "Backup");
    assert.deepEqual(backup?.spec?.mariaDbRef, { name: "mariadb" });
    assert.deepEqual(backup?.spec?.schedule, { cron: "15 2 * * *" });
    assert.equal(backup?.spec?.maxRetention, "336h");
    assert.deepEqual(backup?.spec?.databases, ["slurm_acct_db"]);
    assert.equal(backup?.spec?.storage?.persistentVolumeClaim?.resources?.requests?.storage, "10Gi");
    assert.equal(tenantDiskGiB(), 24, "4 GiB slurmctld state, 10 GiB MariaDB, 10 GiB its backups");
  });

  it("take the schedule and retention from central's clusterra:backups, refusing a schedule that runs less than daily", () => {
    const ok = validateStack(withValues(exampleFile("central-dev"), { "clusterra:backups": { schedule: "0 */6 * * *", retentionDays: 30 } }), exampleFiles());
    assert.ok(ok.ok && ok.config.kind === "central");
    assert.deepEqual(ok.config.backups, { schedule: "0 */6 * * *", retentionDays: 30 });
    const bad = validateStack(withValues(exampleFile("central-dev"), { "clusterra:backups": { schedule: "0 3 * * 0", retentionDays: 0 } }), exampleFiles());
    assert.ok(!bad.ok);
    const issues = bad.issues.filter((i) => i.key.startsWith("clusterra:backups")).map((i) => `${i.key}: ${i.problem}; valid: ${i.valid}`).join("\n");
    assert.match(issues, /clusterra:backups\.schedule: .*at least daily/);
    assert.match(issues, /clusterra:backups\.retentionDays: .*from 1 to 365/);
  });
});

describe("upgrades", function () {
  this.timeout(60000);

  it("keep the tenant cluster's state on a protected volume of its own, mounted before K3s starts, so a new version keeps the cluster", async () => {
    const acme = await plan("tenant-acme-dev");
    const volume = named(acme, "aws:ebs/volume:Volume", "tenant-acme-k3s-state");
    assert.equal(volume.protect, true);
    assert.equal(volume.inputs?.encrypted, true);
    assert.equal(volume.inputs?.size, 2);
    const server = acme.deployment.deployment.resources.find((r) => r.type === "aws:ec2/instance:Instance");
    const userData = String(server?.inputs?.userData);
    assert.ok(userData.includes(`nvme-Amazon_Elastic_Block_Store_${String(volume.outputs?.id).replace("-", "")}`));
    const boot = (parse(userData.replace(/^#cloud-config\n/, "")) as { write_files: { path: string; content: string }[] }).write_files.find((f) => f.path === "/usr/local/sbin/clusterra-boot")?.content ?? "";
    assert.ok(boot.indexOf("/usr/local/sbin/clusterra-mount-state") < boot.indexOf("k3s-install.sh"), "the state is mounted before K3s is installed and started");
    // Another K3s release: the server's user data changes, the state volume does not.
    const other = await plan("tenant-acme-dev", { "clusterra:k3sVersion": "v1.34.6+k3s1" });
    const otherVolume = named(other, "aws:ebs/volume:Volume", "tenant-acme-k3s-state");
    assert.deepEqual(otherVolume.inputs, volume.inputs);
    assert.notEqual(String(other.deployment.deployment.resources.find((r) => r.type === "aws:ec2/instance:Instance")?.inputs?.userData), userData);
  });

  it("keep each tenant at central's Kubernetes minor or one behind", () => {
    for (const [version, ok] of [["v1.35.1+k3s1", true], ["v1.34.6+k3s1", true], ["v1.36.0+k3s1", false], ["v1.33.9+k3s1", false]] as const) {
      const r = validateStack(withValues(exampleFile("tenant-acme-dev"), { "clusterra:k3sVersion": version }), exampleFiles());
      assert.equal(r.ok, ok, version);
      if (!r.ok) assert.match(r.issues.map((i) => `${i.key}: ${i.problem}; valid: ${i.valid}`).join("\n"), /clusterra:k3sVersion: runs Kubernetes 1\.3[36], .*central's 1\.35.*valid: a release of Kubernetes 34 or 35/);
    }
  });

  it("sync a tenant's slurmd after its control plane (slurmdbd and slurmctld first)", async function () {
    needHelm(this); // the tenants' ApplicationSet is expanded with the tenant-entry chart
    const { fleetDocuments } = await import("../fleet-tools/files");
    const generated = fleetDocuments(exampleRoot()).documents.filter((d) => d.generated);
    // Each tenant's RollingSync step: slurmd's after its control plane's, every canary step before the general wave's.
    const step = (name: string) => generated.find((d) => (d.object.metadata as { name: string }).name === name)?.generated?.step ?? -1;
    for (const t of ["acme", "globex"]) assert.ok(step(`${t}-slurm`) > step(`${t}-control-plane`) && step(`${t}-control-plane`) >= 0, t);
    assert.ok(step("acme-slurm") < step("globex-cilium"), "canary acme before general globex");
  });
});

describe("the tenant server's state snapshots", function () {
  this.timeout(60000);

  it("snapshot the state volume daily (DLM, 14 kept), priced by what a 2 GiB volume can hold", async () => {
    const acme = await plan("tenant-acme-dev");
    const policy = acme.deployment.deployment.resources.find((r) => r.type === "aws:dlm/lifecyclePolicy:LifecyclePolicy");
    const volume = named(acme, "aws:ebs/volume:Volume", "tenant-acme-k3s-state");
    const target = (policy?.inputs?.policyDetails as { targetTags: Record<string, string> }).targetTags;
    assert.ok(Object.entries(target).every(([k, v]) => (volume.inputs?.tags as Record<string, string>)[k] === v), "the policy targets the state volume");
    assert.equal((policy?.inputs?.policyDetails as { schedules: { retainRule: { count: number } }[] }).schedules[0].retainRule.count, 14);
  });
});

describe("a lost data volume", function () {
  this.timeout(60000);

  it("is rebuilt from the snapshot the stack file names, still protected, and a bad id is named with what is valid", async () => {
    const controlPlane = exampleFile("central-dev").values["clusterra:controlPlane"] as Record<string, unknown>;
    const p = await plan("central-dev", { "clusterra:controlPlane": { ...controlPlane, dataSnapshotId: "snap-0123456789abcdef0" } });
    const volume = p.deployment.deployment.resources.find((r) => r.type === "aws:ebs/volume:Volume" && r.urn.endsWith("-k3s-data"));
    assert.equal(volume?.inputs?.snapshotId, "snap-0123456789abcdef0");
    assert.equal(volume?.protect, true);
    const blank = (await plan("central-dev")).deployment.deployment.resources.find((r) => r.type === "aws:ebs/volume:Volume" && r.urn.endsWith("-k3s-data"));
    assert.equal(blank?.inputs?.snapshotId, undefined);
    const r = validateStack(withValues(exampleFile("central-dev"), { "clusterra:controlPlane": { ...controlPlane, dataSnapshotId: "vol-0123456789abcdef0" } }), exampleFiles());
    assert.equal(r.ok, false);
    if (!r.ok) assert.match(r.issues.map((i) => `${i.key}: ${i.problem}; valid: ${i.valid}`).join("\n"), /clusterra:controlPlane\.dataSnapshotId.*valid: an EBS snapshot id such as snap-/);
  });

  it("rebuilds a tenant server's state volume from the snapshot its stack file names, still protected", async () => {
    const p = await plan("tenant-acme-dev", { "clusterra:stateSnapshotId": "snap-0fedcba9876543210" });
    const volume = p.deployment.deployment.resources.find((r) => r.type === "aws:ebs/volume:Volume" && r.urn.endsWith("-k3s-state"));
    assert.equal(volume?.inputs?.snapshotId, "snap-0fedcba9876543210");
    assert.equal(volume?.protect, true);
    const r = validateStack(withValues(exampleFile("tenant-acme-dev"), { "clusterra:stateSnapshotId": "snapshot-1" }), exampleFiles());
    assert.equal(r.ok, false);
    if (!r.ok) assert.match(r.issues.map((i) => `${i.key}: ${i.problem}; valid: ${i.valid}`).join("\n"), /clusterra:stateSnapshotId.*valid: an EBS snapshot id/);
  });
});
