/**
 * Central's local volumes held to their sizes (components/host/volume-limits.ts): the plan
 * delivers the script and its units to central's host and mounts its data volume with project
 * quotas (a tenant server's mount is left as it was); the script's own parsing, run with
 * python3; and the journey's VM (journey/host/vm.ts) pieces that need no VM: the modules'
 * order, the initramfs archive, the folders the play writes to. The play itself (a kernel
 * with XFS quotas refusing SlurmUser's write past its volume) is the journey's.
 */
import * as assert from "node:assert/strict";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parse } from "yaml";
import { VOLUME_LIMITS, volumeLimitsFiles, volumeLimitsLibrary, volumeLimitsScript } from "../components/host/volume-limits";
import { hostFileProblem, plannedHostFiles } from "../components/host/host-files";
import { CENTRAL_DATA_MOUNT, CENTRAL_MOUNT_SCRIPT } from "../components/host/central-cloud-init";
import { mountDataVolumeScript } from "../components/host/boot";
import { TENANT_STATE_MOUNT } from "../components/host/tenant-cloud-init";
import { hostFilesPrefix } from "../components/central/k3s-host";
import { K3S_LOCAL_PATH } from "../facts/central-host";
import { readK3sServer } from "../journey/kube/k3s";
import { cpioNewc, moduleOrder, vmInit } from "../journey/host/vm";
import { binaryBytes, stateFolder, vmScript } from "../journey/volume-limits";
import { byType, plan } from "./helpers";

const UNITS = "/etc/systemd/system/";

/** Skips a test that runs python3 where there is none (by hand; in CI it fails: install-tools installs it). */
function needPython(ctx: Mocha.Context): void {
  if (spawnSync("python3", ["--version"]).status === 0) return;
  if (process.env.CI) assert.fail("python3 is missing: CI runs scripts/install-tools first");
  ctx.skip(); // apt-get install python3
}

/** Calls the script's library with python3, as the script imports it. */
function python(expression: string): { code: number | null; stdout: string; stderr: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "volume-limits-"));
  try {
    fs.writeFileSync(path.join(dir, path.basename(VOLUME_LIMITS.library)), volumeLimitsLibrary());
    const r = spawnSync("python3", ["-c", `import sys; sys.path.insert(0, ${JSON.stringify(dir)}); import ${path.basename(VOLUME_LIMITS.library, ".py")} as limits; print(${expression})`], { encoding: "utf8" });
    return { code: r.status, stdout: r.stdout.trim(), stderr: r.stderr };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe("central's volume limits", () => {
  it("central's plan delivers the script, its oneshot, path unit and timer as host files, and mounts the data volume with project quotas", async () => {
    const central = await plan("central-dev");
    const instance = byType(central, "aws:ec2/instance:Instance")[0];
    const files = plannedHostFiles(byType(central, "aws:ssm/parameter:Parameter").map((r) => ({ type: r.type, inputs: r.inputs as Record<string, unknown> })), hostFilesPrefix("dev"));
    const server = readK3sServer(String(instance.inputs?.userData), "arm64", "central", files);
    assert.equal(server.volumeLimits?.script, volumeLimitsScript(CENTRAL_DATA_MOUNT.mountPoint));
    assert.equal(server.volumeLimits?.library, volumeLimitsLibrary());
    assert.deepEqual(server.volumeLimits?.mountOptions, ["defaults", "nofail", "prjquota"]);
    const paths = files.map((f) => f.path);
    for (const unit of [VOLUME_LIMITS.service, VOLUME_LIMITS.path, VOLUME_LIMITS.timer]) assert.ok(paths.includes(`${UNITS}${unit}`), `${unit} not delivered`);
    // The path unit watches the folder local-path makes volumes in; the oneshot pulls it in.
    const unit = (name: string) => files.find((f) => f.path === `${UNITS}${name}`)?.content ?? "";
    assert.match(unit(VOLUME_LIMITS.path), new RegExp(`^PathChanged=${K3S_LOCAL_PATH.hostRoot}$`, "m"));
    assert.match(unit(VOLUME_LIMITS.service), new RegExp(`^Wants=${VOLUME_LIMITS.path.replace(/\./g, "\\.")}$`, "m"));
    assert.match(unit(VOLUME_LIMITS.timer), /^WantedBy=timers\.target$/m);
  });

  it("each file fits a Standard parameter", () => {
    for (const f of volumeLimitsFiles(CENTRAL_DATA_MOUNT.mountPoint)) assert.equal(hostFileProblem(hostFilesPrefix("dev"), f), undefined);
  });

  it("central's mount script writes its fstab line afresh with prjquota; a tenant server's is the line it always was", () => {
    const central = mountDataVolumeScript("vol-0123456789abcdef0", CENTRAL_DATA_MOUNT);
    assert.match(central, /^sed -i '\\\| \/var\/lib\/rancher \|d' \/etc\/fstab$/m);
    assert.match(central, /^echo "LABEL=k3s-data \/var\/lib\/rancher xfs defaults,nofail,prjquota 0 2" >> \/etc\/fstab$/m);
    const tenant = mountDataVolumeScript("vol-0123456789abcdef0", TENANT_STATE_MOUNT);
    assert.match(tenant, /^grep -q ' \/var\/lib\/rancher\/k3s\/server ' \/etc\/fstab \|\| echo "LABEL=k3s-state \/var\/lib\/rancher\/k3s\/server xfs defaults,nofail 0 2" >> \/etc\/fstab$/m);
    // The journey reads central's options back from its user data.
    const doc = `#cloud-config\n${JSON.stringify({ write_files: [{ path: "/etc/rancher/k3s/config.yaml", content: "{}" }, { path: CENTRAL_MOUNT_SCRIPT, content: central }, { path: VOLUME_LIMITS.script, content: "x" }, { path: VOLUME_LIMITS.library, content: "y" }] })}`;
    assert.deepEqual(readK3sServer(doc, "arm64", "central").volumeLimits?.mountOptions, ["defaults", "nofail", "prjquota"]);
    assert.ok(parse(doc.replace(/^#cloud-config\n/, "")));
  });

  it("the script reads Kubernetes quantities in bytes, and none from what is not one (that folder is left unsized, the run goes on)", function () {
    needPython(this);
    const q = python(`[limits.quantity(x) for x in ["4Gi", "16Gi", "512Mi", "1.5G", "500e6", "100", "2Ti", "100m", "1E3", "1E", "+1Gi", ".5Gi", "1Pi"]]`);
    assert.equal(q.code, 0, q.stderr);
    assert.equal(q.stdout, `[${[4 * 2 ** 30, 16 * 2 ** 30, 512 * 2 ** 20, 1.5e9, 5e8, 100, 2 * 2 ** 40, 1, 1000, "1000000000000000000", 2 ** 30, 2 ** 29, "1125899906842624"].join(", ")}]`);
    const bad = python(`[limits.quantity(x) for x in ["4 GiB", "-1Gi", "", None, "Gi"]]`);
    assert.equal(bad.code, 0, bad.stderr);
    assert.equal(bad.stdout, "[None, None, None, None, None]");
  });

  it("the script reads xfs_quota's state: project quotas counted and enforced, or not", function () {
    needPython(this);
    // xfsprogs 6.1's `state -p` on a prjquota mount (as the journey's VM printed it), and on a mount without.
    const on = "Project quota state on /var/lib/rancher (/dev/vda)\n  Accounting: ON\n  Enforcement: ON\n  Inode: #131 (1 blocks, 1 extents)\nBlocks grace time: [7 days]\n";
    const off = "Project quota state on /var/lib/rancher (/dev/vda)\n  Accounting: OFF\n  Enforcement: OFF\n  Inode: N/A\n";
    const r = python(`[limits.enforced(x) for x in ${JSON.stringify([on, off, on.replace("Enforcement: ON", "Enforcement: OFF")])}]`);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "[True, False, False]");
  });

  it("the script takes a claim's uid, namespace and name from local-path's folder, and nothing else for one", function () {
    needPython(this);
    const names = ["pvc-0a1b2c3d-1111-2222-3333-444455556666_tenant-acme_statesave-slurm-controller-0", "pvc-0a1b2c3d_tenant-acme_x", "other-folder", "pvc-0a1b2c3d-1111-2222-3333-444455556666_Tenant_x"];
    const r = python(`[(m.groups() if m else None) for m in (limits.FOLDER.fullmatch(n) for n in ${JSON.stringify(names)})]`);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "[('0a1b2c3d', 'tenant-acme', 'statesave-slurm-controller-0'), None, None, None]");
  });
});

describe("the volume-limits script's library", () => {
  before(function () {
    needPython(this);
  });

  it("sizes each folder by its volume's capacity (hostPath or local), else by its claim's request", () => {
    const root = K3S_LOCAL_PATH.hostRoot;
    const volumes = [
      { spec: { capacity: { storage: "4Gi" }, hostPath: { path: `${root}/pvc-0a1b2c3d-1111-2222-3333-444455556666_tenant-acme_statesave-slurm-controller-0` } } },
      { spec: { capacity: { storage: "16Gi" }, local: { path: `${root}/pvc-11111111-1111-2222-3333-444455556666_tenant-acme_storage-mariadb-0/` } } },
      { spec: { capacity: { storage: "1Gi" }, hostPath: { path: "/elsewhere/pvc-x" } } },
      { spec: { capacity: { storage: "odd" }, hostPath: { path: `${root}/pvc-22222222-1111-2222-3333-444455556666_tenant-acme_odd` } } },
    ];
    const claims = [{ metadata: { namespace: "tenant-globex", name: "statesave-slurm-controller-0" }, spec: { resources: { requests: { storage: "4Gi" } } } }];
    const folders = [`${root}/pvc-0a1b2c3d-1111-2222-3333-444455556666_tenant-acme_statesave-slurm-controller-0`, `${root}/pvc-11111111-1111-2222-3333-444455556666_tenant-acme_storage-mariadb-0`, `${root}/pvc-33333333-1111-2222-3333-444455556666_tenant-globex_statesave-slurm-controller-0`, `${root}/pvc-22222222-1111-2222-3333-444455556666_tenant-acme_odd`, `${root}/not-a-claim`];
    const r = python(`(lambda known: [limits.size_of(f, known) for f in ${JSON.stringify(folders)}])(limits.sizes(${JSON.stringify(volumes)}, ${JSON.stringify(claims)}, ${JSON.stringify(root)}))`);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `[${4 * 2 ** 30}, ${16 * 2 ** 30}, ${4 * 2 ** 30}, None, None]`);
  });

  it("gives a new folder a project id from its claim's uid, the next free one on a clash, never 0", () => {
    const f = (uid: string) => `${K3S_LOCAL_PATH.hostRoot}/pvc-${uid}-1111-2222-3333-444455556666_tenant-acme_x`;
    const r = python(`[limits.new_id(${JSON.stringify(f("0a1b2c3d"))}, set()), limits.new_id(${JSON.stringify(f("0a1b2c3d"))}, {0x0a1b2c3d}), limits.new_id(${JSON.stringify(f("ffffffff"))}, {0x7fffffff}), limits.new_id(${JSON.stringify(f("80000000"))}, set()), limits.new_id("/x/other", {1})]`);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `[${0x0a1b2c3d}, ${0x0a1b2c3d + 1}, 1, 1, 2]`);
  });

  it("reads xfs_quota's report, xfs_io's project and xfs_quota's check as xfsprogs 6.1 prints them", () => {
    // As the journey's VM printed them (report -p -n -b -N; lsproj; project -c).
    const report = "#0                   0          0          0     00 [--------]\n#42                  0          0     102400     00 [--------]\n";
    const check = "Checking project 42 (path /m/s/d)...\n/m/s/d/f - project identifier is not set (inode=0, tree=42)\nProcessed 1 (/etc/projects and cmdline) paths for project 42 with recursion depth infinite (-1).\n";
    const r = python(`[limits.hard_limits(${JSON.stringify(report)}), limits.project_of("projid = 42"), limits.project_of(""), limits.strays(${JSON.stringify(check)}), limits.strays("Processed 1 paths")]`);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "[{0: 0, 42: 102400}, 42, 0, 1, 0]");
  });
});

describe("the journey's VM and its volume play (pure parts)", () => {
  it("loads each module after what it depends on, once, and names a module the kernel lacks", () => {
    const dep = ["kernel/fs/xfs/xfs.ko: kernel/lib/libcrc32c.ko", "kernel/lib/libcrc32c.ko:", "kernel/fs/9p/9p.ko: kernel/net/9p/9pnet.ko kernel/fs/netfs/netfs.ko", "kernel/net/9p/9pnet.ko:", "kernel/fs/netfs/netfs.ko:", "kernel/net/9p/9pnet_virtio.ko: kernel/net/9p/9pnet.ko"].join("\n");
    assert.deepEqual(moduleOrder(dep, ["9pnet_virtio", "9p", "xfs"]), ["kernel/net/9p/9pnet.ko", "kernel/net/9p/9pnet_virtio.ko", "kernel/fs/netfs/netfs.ko", "kernel/fs/9p/9p.ko", "kernel/lib/libcrc32c.ko", "kernel/fs/xfs/xfs.ko"]);
    assert.throws(() => moduleOrder(dep, ["ext4"]), /module ext4 is not in the kernel's modules.dep/);
    assert.match(vmInit(["kernel/lib/libcrc32c.ko", "kernel/fs/xfs/xfs.ko"]), /insmod \/modules\/libcrc32c\.ko [^\n]*\ninsmod \/modules\/xfs\.ko/);
  });

  it("writes an initramfs cpio (newc) that cpio itself lists and extracts", function () {
    const archive = cpioNewc([{ name: "bin", mode: 0o40755 }, { name: "bin/hello", mode: 0o100755, data: Buffer.from("#!/bin/sh\necho hi\n") }, { name: "init", mode: 0o100644, data: Buffer.from("x") }]);
    assert.equal(archive.subarray(0, 6).toString(), "070701");
    const busybox = spawnSync("busybox", ["cpio", "-t"], { input: archive, encoding: "utf8" });
    if (busybox.status === null || busybox.error) {
      if (process.env.CI) assert.fail("busybox is missing: CI runs scripts/install-tools first");
      return this.skip(); // apt-get install busybox-static
    }
    assert.deepEqual(busybox.stdout.split("\n").filter(Boolean), ["bin", "bin/hello", "init"]);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cpio-"));
    try {
      const x = spawnSync("busybox", ["cpio", "-i", "-d"], { input: archive, cwd: dir });
      assert.equal(x.status, 0, String(x.stderr));
      assert.equal(fs.readFileSync(path.join(dir, "bin", "hello"), "utf8"), "#!/bin/sh\necho hi\n");
      assert.equal(fs.statSync(path.join(dir, "bin", "hello")).mode & 0o777, 0o755);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("finds a tenant's slurmctld state volume among central's volumes, and sizes it", () => {
    const pv = (ns: string, claim: string, size: string) => ({ metadata: { name: `pvc-${claim}` }, spec: { capacity: { storage: size }, hostPath: { path: `${K3S_LOCAL_PATH.hostRoot}/pvc-x_${ns}_${claim}` }, claimRef: { namespace: ns, name: claim } } });
    const volumes = [pv("tenant-acme", "storage-mariadb-0", "16Gi"), pv("tenant-acme", "statesave-slurm-controller-0", "4Gi"), pv("tenant-globex", "statesave-slurm-controller-0", "4Gi")];
    assert.deepEqual(stateFolder(volumes, "acme"), { folder: `${K3S_LOCAL_PATH.hostRoot}/pvc-x_tenant-acme_statesave-slurm-controller-0`, size: "4Gi" });
    assert.equal(stateFolder(volumes, "initech"), undefined);
    assert.equal(binaryBytes("4Gi"), 4 * 2 ** 30);
    assert.equal(binaryBytes("4G"), undefined);
    const script = vmScript({ options: ["defaults", "nofail", "prjquota"], folders: ["/a"], bin: "/b", limits: "/l", library: "/lib/x.py", attacked: "/a", other: "/o", bytes: 4 * 2 ** 30 });
    assert.match(script, /^mount -o defaults,nofail,prjquota \/dev\/vda \/var\/lib\/rancher /m);
    assert.match(script, /setpriv --reuid 401 --regid 401 --clear-groups fallocate -l 4292870144 '\/a\/fill'/);
  });
});
