/**
 * The tenant server's first boot, where an early failure stops everything under `set -e`:
 * packages retried until the network settles (and reachable through the S3 gateway endpoint
 * from the NAT subnet), the credential timer enabled before a first publish can fail.
 */
import * as assert from "node:assert/strict";
import { parse } from "yaml";
import { byType, clusterObjects, plan } from "./helpers";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { FORGET_PREDECESSORS, forgetPredecessorsScript, NETWORKD_DROP_IN } from "../components/host/tenant-cloud-init";
import { readK3sServer } from "../journey/kube/k3s";
import { renderedLimitProblems } from "../fleet-tools/validate";
import { userDataBytes } from "../policies/rules/compute";
import { AWS_LIMITS } from "../facts/aws-limits";
import { maxTenantIdLength } from "../config/tenant-names";
import { checkDeployment } from "../planning/policy-check";
import { bootCommand, bootUnit } from "../components/host/boot";
import { BOOT } from "../facts/host-boot";
import { plannedHostFiles } from "../components/host/host-files";
import { clusterParameterNames } from "../facts/tenant-cluster";

describe("the tenant server's first boot", function () {
  this.timeout(60000);

  async function bootScript(): Promise<string> {
    const acme = await plan("tenant-acme-dev");
    const userData = String(byType(acme, "aws:ec2/instance:Instance")[0].inputs?.userData);
    const doc = parse(userData.replace(/^#cloud-config\n/, "")) as { write_files: { path: string; content: string }[] };
    return doc.write_files.find((f) => f.path === "/usr/local/sbin/clusterra-boot")?.content ?? "";
  }

  it("forgets a predecessor once K3s answers: the publish unit runs the script with the node name the boot recorded", async () => {
    const acme = await plan("tenant-acme-dev");
    const userData = String(byType(acme, "aws:ec2/instance:Instance")[0].inputs?.userData);
    // The scripts come from the server's host-files parameters, not its user data.
    const files = plannedHostFiles(acme.deployment.deployment.resources, clusterParameterNames("dev", "acme").serverFiles);
    const text = (p: string) => files.find((f) => f.path === p)?.content ?? "";
    const publish = text("/usr/local/sbin/clusterra-publish");
    const forget = publish.split("\n").find((l) => l.startsWith(FORGET_PREDECESSORS)) ?? "";
    // The name it passes is the one the boot wrote for K3s (node-name in the node drop-in).
    const [, key, file] = /sed -n 's\/\^([a-z-]+): \/\/p' (\S+)\)"$/.exec(forget) ?? [];
    assert.ok(key && file, forget);
    assert.match(await bootScript(), new RegExp(`cat > ${file} <<EOF\\n${key}: \\$INSTANCE_ID\\n`));
    // After the kubeconfig and token are published, so a failure retries without holding them back.
    assert.ok(publish.indexOf(FORGET_PREDECESSORS) > publish.lastIndexOf("put-parameter"));
    assert.equal(text(FORGET_PREDECESSORS), forgetPredecessorsScript());
    // No local-path volume to strand on the old node: K3s's local-storage is off on a tenant server.
    assert.equal(readK3sServer(userData, "arm64", "acme-server").localStorage, false);
    assert.equal(readK3sServer(userData, "arm64", "acme-server", files).forgetPredecessors, forgetPredecessorsScript());
    assert.equal(spawnSync("bash", ["-n"], { input: forgetPredecessorsScript() }).status, 0);
  });

  it("forgets every other server Node and nothing else, and fails (so its unit retries) when the API does not answer", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "forget-"));
    try {
      // `k3s kubectl` as the script calls it: the node list (or a refusal), no Cilium CRD, deletions logged.
      fs.mkdirSync(path.join(dir, "bin"));
      fs.writeFileSync(path.join(dir, "bin", "k3s"), [
        "#!/bin/sh", "shift", 'case "$1 $2" in',
        '  "get nodes") [ -z "$REFUSE" ] || exit 1; echo "$*" > "$LOG.selector"; echo "i-0old i-0self";;',
        '  "get crd") exit 1;;',
        '  "delete node") echo "$3" >> "$LOG";;',
        "esac", "",
      ].join("\n"), { mode: 0o755 });
      fs.writeFileSync(path.join(dir, "forget"), forgetPredecessorsScript(), { mode: 0o700 });
      const runIt = (env: Record<string, string>) => spawnSync("bash", [path.join(dir, "forget"), "i-0self"], { env: { ...process.env, PATH: `${path.join(dir, "bin")}:${process.env.PATH}`, LOG: path.join(dir, "log"), ...env }, encoding: "utf8" });
      const refused = runIt({ REFUSE: "1" });
      assert.notEqual(refused.status, 0, "a failed listing must fail the script");
      assert.equal(fs.existsSync(path.join(dir, "log")), false);
      assert.equal(runIt({}).status, 0);
      assert.deepEqual(fs.readFileSync(path.join(dir, "log"), "utf8").trim().split("\n"), ["i-0old"]);
      // Both server labels select: K3s's role, which no kubelet may set on itself, and the project's.
      assert.match(fs.readFileSync(path.join(dir, "log.selector"), "utf8"), /-l node-role\.kubernetes\.io\/control-plane=true,clusterra\.io\/role=server /);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("serves mutating admission policies (beta in Kubernetes 1.35): the tenant's Slinky Controller is named through one", async () => {
    const acme = await plan("tenant-acme-dev");
    const userData = String(byType(acme, "aws:ec2/instance:Instance")[0].inputs?.userData);
    const doc = parse(userData.replace(/^#cloud-config\n/, "")) as { write_files: { path: string; content: string }[] };
    const config = parse(doc.write_files.find((f) => f.path === "/etc/rancher/k3s/config.yaml")?.content ?? "") as { "kube-apiserver-arg": string[] };
    for (const arg of ["feature-gates=MutatingAdmissionPolicy=true", "runtime-config=admissionregistration.k8s.io/v1beta1=true"]) assert.ok(config["kube-apiserver-arg"].includes(arg), arg);
  });

  it("fits EC2's user data limit, at the example tenants and at the longest tenant id config accepts", async () => {
    const longest = "t".repeat(maxTenantIdLength("dev").length);
    for (const p of [await plan("tenant-acme-dev"), await plan("tenant-globex-dev")]) {
      const instance = byType(p, "aws:ec2/instance:Instance")[0];
      const id = p.config.kind === "tenant" ? p.config.tenant.id : "";
      const userData = String(instance.inputs?.userData);
      // Every name in it is built from the tenant's id: the same user data with the longest id config accepts.
      for (const [what, text] of [[id, userData], [`${longest} (as ${id})`, userData.split(id).join(longest)]] as const) {
        const bytes = userDataBytes(instance.type, "userData", text);
        assert.ok(bytes <= AWS_LIMITS.userData.max, `${what}: ${bytes} bytes, over ${AWS_LIMITS.userData.max}`);
      }
      assert.ok(userData.split(id).length > 1, `${id}'s names are in its user data`);
      // The policy pack, which plan and CI run, finds nothing over the limit either.
      assert.deepEqual(checkDeployment(p.deployment, { tenants: [] }).violations.filter((v) => v.policy === "ec2-user-data-within-limit"), []);
    }
  });

  it("keeps networkd's hands off Cilium's routing rules and routes, on the server and on every worker, before K3s starts", async function () {
    const workers = clusterObjects("acme")?.find((o) => o.kind === "EC2NodeClass")?.spec.userData as string | undefined;
    const workerBoot = workers ? (parse(workers.replace(/^#cloud-config\n/, "")) as { write_files: { path: string; content: string }[] }).write_files.find((f) => f.path === "/usr/local/sbin/clusterra-boot")?.content : undefined;
    for (const [who, boot] of [["server", await bootScript()], ["workers", workerBoot]] as const) {
      if (boot === undefined) continue; // the workers' are rendered by Helm: bash scripts/install-tools (CI does)
      const lines = boot.split("\n");
      const write = lines.findIndex((l) => l.includes(`${NETWORKD_DROP_IN.dir}/${NETWORKD_DROP_IN.file}`));
      const restart = lines.indexOf("systemctl restart systemd-networkd");
      const install = lines.findIndex((l) => l.includes("k3s-install.sh") && l.startsWith("INSTALL_K3S_VERSION="));
      assert.ok(write >= 0 && restart > write && install > restart, `${who}: written at ${write}, networkd restarted at ${restart}, K3s installed at ${install}`);
      // What the line writes, run by the shell the boot runs in (into a folder of the test's).
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "networkd-"));
      const r = spawnSync("bash", ["-c", lines[write].split(NETWORKD_DROP_IN.dir).join(dir)], { encoding: "utf8" });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(fs.readFileSync(path.join(dir, NETWORKD_DROP_IN.file), "utf8"), "[Network]\nManageForeignRoutingPolicyRules=no\nManageForeignRoutes=no\n", who);
    }
  });

  it("fleet check holds a worker's user data (an EC2NodeClass's) to the same limit", () => {
    const render = { file: "fleet/central/dev/tenants.yaml", application: "acme-cluster-manifests" };
    const nodeClass = (userData: string) => ({ kind: "EC2NodeClass", name: "slurm-workers", render, object: { spec: { userData } } });
    assert.deepEqual(renderedLimitProblems([nodeClass("#".repeat(AWS_LIMITS.userData.max))]), []);
    assert.deepEqual(renderedLimitProblems([nodeClass("#".repeat(AWS_LIMITS.userData.max + 1))]).map((p) => p.at), ["Application/acme-cluster-manifests renders EC2NodeClass/slurm-workers spec.userData"]);
  });

  it("retries every package install instead of failing the boot at the first network error", async () => {
    const lines = (await bootScript()).split("\n");
    const installs = lines.filter((l) => /dnf -y install/.test(l));
    assert.ok(installs.length >= 2);
    for (const l of installs) assert.match(l, /^for attempt in \$\(seq 1 60\); do dnf -y install [\w-]+ && break; .*sleep 10; done$/, l);
  });

  it("writes its scripts and units (the ArgoCD credential timer among them, which the sync enables) before K3s, and starts the first publish after, which may fail without stopping the boot", async () => {
    const lines = (await bootScript()).split("\n");
    const files = lines.indexOf("systemctl start clusterra-host-files.service");
    const k3s = lines.findIndex((l) => /k3s-install\.sh server$/.test(l));
    const publish = lines.indexOf("systemctl start --no-block clusterra-publish.service");
    assert.ok(files >= 0 && k3s > files && publish > k3s, `files at ${files}, K3s at ${k3s}, publish at ${publish}`);
    assert.equal(lines.some((l) => l === "systemctl enable --now clusterra-publish.service"), false);
    const acme = await plan("tenant-acme-dev");
    const timer = plannedHostFiles(acme.deployment.deployment.resources, clusterParameterNames("dev", "acme").serverFiles).find((f) => f.path === "/etc/systemd/system/clusterra-argocd-credential.timer");
    assert.match(timer?.content ?? "", /WantedBy=timers\.target/);
  });

  it("reaches S3 (AL2023's repositories) through the gateway endpoint from the server's NAT subnet too", async () => {
    const acme = await plan("tenant-acme-dev");
    const s3 = byType(acme, "aws:ec2/vpcEndpoint:VpcEndpoint").find((e) => String(e.inputs?.serviceName).endsWith(".s3"));
    const natTable = byType(acme, "aws:ec2/routeTable:RouteTable").find((t) => t.urn.endsWith("-nat-rt"));
    assert.ok(s3 && natTable);
    assert.ok((s3.inputs?.routeTableIds as string[]).includes(String(natTable.outputs?.id ?? natTable.id)), JSON.stringify(s3.inputs?.routeTableIds));
  });
});

describe("every host's first boot", function () {
  this.timeout(60000);
  type CloudConfig = { write_files: { path: string; content: string }[]; runcmd: string[][] };
  /** What makes the unit retry the boot until it completes, and run it once per instance. */
  const RETRIED = ["Type=exec", "Restart=on-failure", `RestartSec=${BOOT.retrySeconds}`, "StartLimitIntervalSec=0", "After=network-online.target", `ConditionPathExists=!${BOOT.done}`, `ExecStart=${bootCommand()}`];
  const cloudConfig = (userData: string) => parse(userData.replace(/^#cloud-config\n/, "")) as CloudConfig;

  it("runs as a unit that starts it again until it completes: central's host, the tenant server and its workers", async function () {
    const hosts: [string, string | undefined][] = [
      ["central", String(byType(await plan("central-dev"), "aws:ec2/instance:Instance")[0].inputs?.userData)],
      ["tenant server", String(byType(await plan("tenant-acme-dev"), "aws:ec2/instance:Instance")[0].inputs?.userData)],
      ["workers", clusterObjects("acme")?.find((o) => o.kind === "EC2NodeClass")?.spec.userData],
    ];
    for (const [who, userData] of hosts) {
      if (userData === undefined) continue; // the workers' are rendered by Helm: bash scripts/install-tools (CI does)
      const doc = cloudConfig(userData);
      const script = doc.write_files.find((f) => f.path === BOOT.script)?.content ?? "";
      assert.match(script, /k3s-install\.sh (server|agent)\n/, `${who}: the boot installs K3s`);
      const unit = (doc.write_files.find((f) => f.path === `/etc/systemd/system/${BOOT.unit}`)?.content ?? "").split("\n");
      for (const line of RETRIED) assert.ok(unit.includes(line), `${who}: ${line}`);
      // cloud-init starts it and goes on; it never runs the script itself, once.
      assert.deepEqual(doc.runcmd.filter((c) => c.join(" ").includes(BOOT.script) || c.join(" ").includes(BOOT.unit)), [["systemctl", "enable", "--now", "--no-block", BOOT.unit]], who);
      assert.equal(doc.runcmd.some((c) => c.join(" ").includes("k3s-install")), false, `${who}: K3s is installed by the unit only`);
    }
  });

  it("is a unit systemd reads without a warning (systemd-analyze verify, when installed)", function () {
    if (spawnSync("systemd-analyze", ["--version"]).status !== 0) {
      if (process.env.CI) throw new Error("systemd-analyze is missing: CI runs on a machine with systemd");
      this.skip();
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "clusterra-boot-unit-"));
    // The unit as written, its script at a path of this test's own (verify checks it is executable).
    const script = path.join(dir, "clusterra-boot");
    fs.writeFileSync(script, "#!/bin/bash\nexit 0\n", { mode: 0o700 });
    const unitFile = path.join(dir, BOOT.unit);
    fs.writeFileSync(unitFile, bootUnit("a host's first boot").replace(`ExecStart=${bootCommand()}`, `ExecStart=${bootCommand(script)}`));
    const good = spawnSync("systemd-analyze", ["verify", unitFile], { encoding: "utf8" });
    assert.deepEqual([good.status, good.stderr.trim()], [0, ""]);
    // The check can fail: a misspelled directive is a warning it reports.
    fs.writeFileSync(unitFile, fs.readFileSync(unitFile, "utf8").replace("Restart=on-failure", "Restart=on-falure"));
    assert.match(spawnSync("systemd-analyze", ["verify", unitFile], { encoding: "utf8" }).stderr, /restart specifier/);
  });
});
