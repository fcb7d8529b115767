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
import { NETWORKD_DROP_IN } from "../components/tenant/cloud-init";
import { renderedLimitProblems } from "../cli/fleet-validate";
import { userDataBytes } from "../policies/rules/compute";
import { AWS_LIMITS } from "../facts/aws-limits";
import { maxTenantIdLength } from "../config/tenant-names";
import { checkDeployment } from "../cli/policy";

describe("the tenant server's first boot", function () {
  this.timeout(60000);

  async function bootScript(): Promise<string> {
    const acme = await plan("tenant-acme-dev");
    const userData = String(byType(acme, "aws:ec2/instance:Instance")[0].inputs?.userData);
    const doc = parse(userData.replace(/^#cloud-config\n/, "")) as { write_files: { path: string; content: string }[] };
    return doc.write_files.find((f) => f.path === "/usr/local/sbin/clusterra-boot")?.content ?? "";
  }

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

  it("enables the ArgoCD credential timer before starting the first publish, which may fail without stopping the boot", async () => {
    const lines = (await bootScript()).split("\n");
    const timer = lines.indexOf("systemctl enable --now clusterra-argocd-credential.timer");
    const publish = lines.indexOf("systemctl start --no-block clusterra-publish.service");
    assert.ok(timer >= 0 && publish > timer, `timer at ${timer}, publish at ${publish}`);
    assert.equal(lines.some((l) => l === "systemctl enable --now clusterra-publish.service"), false);
  });

  it("reaches S3 (AL2023's repositories) through the gateway endpoint from the server's NAT subnet too", async () => {
    const acme = await plan("tenant-acme-dev");
    const s3 = byType(acme, "aws:ec2/vpcEndpoint:VpcEndpoint").find((e) => String(e.inputs?.serviceName).endsWith(".s3"));
    const natTable = byType(acme, "aws:ec2/routeTable:RouteTable").find((t) => t.urn.endsWith("-nat-rt"));
    assert.ok(s3 && natTable);
    assert.ok((s3.inputs?.routeTableIds as string[]).includes(String(natTable.outputs?.id ?? natTable.id)), JSON.stringify(s3.inputs?.routeTableIds));
  });
});
