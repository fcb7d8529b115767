import * as assert from "node:assert/strict";
import { asContainer, containerArgv, securityLimits, volumeFiles, type Volume } from "../journey/kube/pods";
import { HARDENED_READ_ONLY_CONTAINER } from "../facts/control-plane";
import { slurmctldNames } from "../journey/kube/tenant-slurm";
import { runAlive } from "../journey/host/network";

describe("the journey's tenant Slurm behind the real operators (pure parts)", () => {
  const objects = {
    configMaps: new Map([["slurm-config", { "slurm.conf": "ClusterName=clusterra-dev-acme\n", "cgroup.conf": "CgroupPlugin=autodetect\n" }]]),
    secrets: new Map([["slurm-auth-slurm", { "slurm.key": Buffer.from("k".repeat(64)).toString("base64") }]]),
  };

  it("writes a projected volume as the kubelet does: every ConfigMap key, a Secret's items decoded, the default mode with fsGroup's read bits", () => {
    const volume: Volume = {
      name: "slurm-etc",
      projected: { defaultMode: 0o600, sources: [{ configMap: { name: "slurm-config" } }, { secret: { name: "slurm-auth-slurm", items: [{ key: "slurm.key", path: "slurm.key" }] } }] },
    };
    const plain = volumeFiles(volume, objects, undefined);
    assert.deepEqual(plain.missing, []);
    assert.deepEqual(plain.files.map((f) => [f.path, f.mode.toString(8)]), [["slurm.conf", "600"], ["cgroup.conf", "600"], ["slurm.key", "600"]]);
    assert.equal(plain.files[2].content.toString(), "k".repeat(64));
    // slurmrestd runs as nobody with fsGroup 65534: the group may read what is 0600.
    assert.deepEqual(volumeFiles(volume, objects, 65534).files.map((f) => f.mode.toString(8)), ["640", "640", "640"]);
  });

  it("names what the kubelet would not find: an absent source, a missing key", () => {
    const volume: Volume = { name: "v", projected: { sources: [{ configMap: { name: "gone" } }, { secret: { name: "slurm-auth-slurm", items: [{ key: "jwt.key", path: "jwt.key" }] } }] } };
    assert.deepEqual(volumeFiles(volume, objects, undefined).missing, ["ConfigMap gone (absent)", "Secret slurm-auth-slurm key jwt.key"]);
  });

  it("reads the names slurmctld answers to from SlurmctldHost", () => {
    assert.deepEqual(slurmctldNames("slurm-controller-0(slurm-controller.tenant-acme)"), ["slurm-controller-0", "slurm-controller.tenant-acme"]);
    assert.deepEqual(slurmctldNames("slurm-controller.tenant-acme"), ["slurm-controller.tenant-acme"]);
    assert.deepEqual(slurmctldNames(""), []);
  });

  it("runs a container's command in place of the image's entrypoint, and its args after either", () => {
    assert.deepEqual(containerArgv({ args: ["0.0.0.0:6820"] }, ["slurmrestd"]), ["slurmrestd", "0.0.0.0:6820"]);
    assert.deepEqual(containerArgv({ command: ["sh", "/etc/clusterra/users/merge"], args: ["x"] }, ["slurmctld", "-D"]), ["sh", "/etc/clusterra/users/merge", "x"]);
  });

  it("runs a container as its user, groups and environment only", () => {
    const argv = asContainer({ binds: [], uid: 65534, gid: 65534, fsGroup: 65534, env: { SLURM_JWT: "daemon" }, args: [], missing: [] }, ["slurmrestd", "0.0.0.0:6820"]);
    assert.deepEqual(argv.slice(0, 2), ["env", "-i"]);
    assert.ok(argv.includes("SLURM_JWT=daemon"));
    assert.deepEqual(argv.slice(argv.indexOf("setpriv")), ["setpriv", "--reuid=65534", "--regid=65534", "--groups=65534", "--", "slurmrestd", "0.0.0.0:6820"]);
  });

  it("runs a container within its securityContext: no_new_privs, only the capabilities it adds, a read-only image", () => {
    const limits = securityLimits(HARDENED_READ_ONLY_CONTAINER);
    assert.deepEqual(limits, { noNewPrivs: true, capabilities: [], readOnlyRoot: true });
    const argv = asContainer({ binds: [], uid: 401, gid: 401, env: {}, args: [], missing: [], ...limits }, ["slurmctld", "-D"]);
    assert.deepEqual(argv.slice(argv.indexOf("setpriv")), ["setpriv", "--reuid=401", "--regid=401", "--groups=401", "--no-new-privs", "--bounding-set=-all", "--inh-caps=-all", "--", "slurmctld", "-D"]);
    assert.deepEqual(securityLimits({ capabilities: { drop: ["ALL"], add: ["NET_BIND_SERVICE", "CAP_SYS_CHROOT"] } }), { capabilities: ["net_bind_service", "sys_chroot"] });
    // A partial drop leaves the runtime's default set, which the journey does not model: no limit claimed.
    assert.deepEqual(securityLimits({ capabilities: { drop: ["NET_RAW"] }, allowPrivilegeEscalation: true }), {});
  });

  it("removes only namespaces whose run has ended: a live run's (this process) is kept", () => {
    assert.equal(runAlive(`clusterra-k8s-${process.pid}`), true);
    assert.equal(runAlive("clusterra-k8s-2147483646"), false);
    assert.equal(runAlive("clusterra-k8s-"), false);
  });
});
