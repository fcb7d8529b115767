import * as assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { identityPodParts, MERGE_SCRIPT_KEY, usersConfigMap, usersDigest } from "../components/identity/passwd";
import { DIRECTORY_MODES, userDirectoriesProlog } from "../components/identity/user-directories";
import { PROJECT_ROOT, validateStack } from "../config";
import { KUBERNETES_LIMITS } from "../facts/aws-limits";
import { groupLines, IDENTITY_CONFIGMAP_RESERVE, IDENTITY_FILES_MAX, identityFileBytes, passwdLines, SHARED_GROUP, TENANT_ID_FLOOR, userDirectory, userProblems, type TenantUser } from "../config/users";
import { exampleFile, exampleFiles, withValues } from "./helpers";

const alice: TenantUser = { name: "alice", uid: 10001, gid: 10001 };
const bob: TenantUser = { name: "bob", uid: 10002, gid: 10002 };

describe("tenant users as passwd and group files", () => {
  it("gives each user a line with their ids and a home in their own directory on the shared file system", () => {
    assert.equal(userDirectory("/mnt/efs", alice), "/mnt/efs/users/alice");
    assert.deepEqual(passwdLines([alice, bob], "/mnt/efs"), ["alice:*:10001:10001::/mnt/efs/users/alice:/bin/sh", "bob:*:10002:10002::/mnt/efs/users/bob:/bin/sh"]);
    assert.deepEqual(groupLines([alice, bob]), ["alice:x:10001:", "bob:x:10002:", "clusterra:x:10000:alice,bob"]);
  });

  it("changes the digest pods carry when, and only when, the users change", () => {
    const d = (users: TenantUser[]) => usersDigest(usersConfigMap("slurm", users, "/mnt/efs"));
    assert.equal(d([alice, bob]), d([alice, bob]));
    assert.notEqual(d([alice, bob]), d([alice]));
    assert.equal(identityPodParts({ repository: "r", tag: "t" }, d([alice])).annotations["clusterra.io/users-digest"], d([alice]));
  });
});

/** Runs `script` with sh and `args`; the machine's own /etc stands for an image's. */
function sh(script: string, args: string[], env: Record<string, string> = {}) {
  return spawnSync("/bin/sh", ["-c", script, "sh", ...args], { encoding: "utf8", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env } });
}

describe("the users' init container (its script, run with sh)", () => {
  function merge(users: TenantUser[]): { passwd: string[]; group: string[]; code: number | null } {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "identity-"));
    const [src, out] = [path.join(dir, "src"), path.join(dir, "out")];
    fs.mkdirSync(src);
    fs.mkdirSync(out);
    for (const [f, text] of Object.entries(usersConfigMap("slurm", users, "/mnt/efs").data ?? {})) fs.writeFileSync(path.join(src, f), text);
    // As the init container runs it: the script from the ConfigMap, with its two directories.
    const r = spawnSync("/bin/sh", [path.join(src, MERGE_SCRIPT_KEY), src, out], { encoding: "utf8" });
    const read = (f: string) => (fs.existsSync(path.join(out, f)) ? fs.readFileSync(path.join(out, f), "utf8").split("\n").filter(Boolean) : []);
    const result = { passwd: read("passwd"), group: read("group"), code: r.status };
    fs.rmSync(dir, { recursive: true });
    return result;
  }
  const image = (f: string) => fs.readFileSync(`/etc/${f}`, "utf8").split("\n").filter(Boolean);

  it("keeps every account of the image and adds the users and the shared group", () => {
    const m = merge([alice, bob]);
    assert.equal(m.code, 0);
    assert.deepEqual(m.passwd, [...image("passwd"), "alice:*:10001:10001::/mnt/efs/users/alice:/bin/sh", "bob:*:10002:10002::/mnt/efs/users/bob:/bin/sh"]);
    assert.deepEqual(m.group.slice(-3), ["alice:x:10001:", "bob:x:10002:", "clusterra:x:10000:alice,bob"]);
  });

  it("keeps the image's files whole when the tenant has no users yet", () => {
    const m = merge([]);
    assert.deepEqual(m.passwd, image("passwd"));
    assert.deepEqual(m.group, [...image("group"), "clusterra:x:10000:"]);
  });

  it("replaces an image line that has a user's name", () => {
    const root = image("passwd").find((l) => l.startsWith("root:"));
    assert.ok(root);
    const m = merge([{ name: "daemon", uid: 10009, gid: 10009 }]);
    assert.equal(m.passwd.filter((l) => l.startsWith("daemon:")).length, 1);
    assert.equal(m.passwd.find((l) => l.startsWith("daemon:")), "daemon:*:10009:10009::/mnt/efs/users/daemon:/bin/sh");
    assert.ok(m.passwd.includes(root));
  });
});

describe("the users' directories (the Prolog, run with sh as root)", function () {
  const root = typeof process.getuid === "function" && process.getuid() === 0;
  before(function () {
    if (!root) this.skip(); // it chowns: run the suite as root (CI does)
  });

  function prolog(efs: string, user: TenantUser & { job?: string }) {
    return sh(userDirectoriesProlog(efs), [], { SLURM_JOB_USER: user.name, SLURM_JOB_UID: String(user.uid), SLURM_JOB_GID: String(user.gid) });
  }
  const stat = (p: string) => { const s = fs.statSync(p); return `${s.uid}:${s.gid} ${(s.mode & 0o7777).toString(8).padStart(4, "0")}`; };

  it("makes the user's directory (uid, gid, 0700) and the shared one (shared group, 2770), and leaves an existing one alone", () => {
    const efs = fs.mkdtempSync(path.join(os.tmpdir(), "efs-"));
    fs.chmodSync(efs, 0o755);
    assert.equal(prolog(efs, alice).status, 0);
    assert.equal(stat(path.join(efs, "users/alice")), `10001:10001 ${DIRECTORY_MODES.user}`);
    assert.equal(stat(path.join(efs, "shared")), `0:${SHARED_GROUP.gid} ${DIRECTORY_MODES.shared}`);
    assert.equal(stat(path.join(efs, "users")), `0:0 ${DIRECTORY_MODES.users}`);
    fs.chmodSync(path.join(efs, "users/alice"), 0o750);
    assert.equal(prolog(efs, alice).status, 0);
    assert.equal(stat(path.join(efs, "users/alice")), "10001:10001 0750");
    assert.deepEqual(fs.readdirSync(path.join(efs, "users")), ["alice"], "no temporary directory is left");
    fs.rmSync(efs, { recursive: true });
  });

  it("makes nothing for root's or a system account's jobs", () => {
    const efs = fs.mkdtempSync(path.join(os.tmpdir(), "efs-"));
    assert.equal(prolog(efs, { name: "root", uid: 0, gid: 0 }).status, 0);
    assert.deepEqual(fs.readdirSync(efs), []);
    fs.rmSync(efs, { recursive: true });
  });

  it("fails (so slurmd drains the node, not the job's output) when the directory cannot be made", () => {
    const efs = fs.mkdtempSync(path.join(os.tmpdir(), "efs-"));
    fs.writeFileSync(path.join(efs, "users"), "a file where the directory goes");
    assert.notEqual(prolog(efs, alice).status, 0);
    fs.rmSync(efs, { recursive: true });
  });
});

describe("tenant users (validation)", () => {
  it("accepts distinct valid names with ids from the floor up", () => {
    assert.deepEqual(userProblems([alice, bob, { name: "svc_1-a", uid: TENANT_ID_FLOOR + 7, gid: TENANT_ID_FLOOR + 7 }]), []);
  });

  it("refuses the names of the images' accounts and groups, and the distributions' reserved prefixes", () => {
    const names = ["root", "slurm", "sshd", "mysql", "shadow", "ubuntu", "systemd-network", "_apt"];
    const problems = userProblems(names.map((name, i) => ({ name, uid: TENANT_ID_FLOOR + i, gid: TENANT_ID_FLOOR + i })));
    assert.deepEqual(problems.map((p) => [p.index, p.field, p.value]), names.map((n, i) => [i, "name", n]));
    assert.match(problems[0].problem, /account or group of the platform's images/);
    assert.match(problems[0].valid, /systemd-\.\.\. or _\.\.\./);
  });

  it("refuses every account and group of the journey's Slurm image (when install-tools has made it)", function () {
    const root = path.join(PROJECT_ROOT, ".tools", "rootfs", "slurm", "etc");
    if (!fs.existsSync(path.join(root, "passwd"))) {
      if (process.env.CI) assert.fail(`no ${root}/passwd: bash scripts/install-tools makes the Slurm image`);
      return this.skip();
    }
    const names = ["passwd", "group"].flatMap((f) => fs.readFileSync(path.join(root, f), "utf8").split("\n").filter(Boolean).map((l) => l.split(":")[0]));
    const taken = names.filter((n) => userProblems([{ name: n, uid: TENANT_ID_FLOOR, gid: TENANT_ID_FLOOR }]).every((p) => p.field !== "name"));
    assert.deepEqual(taken, [], `names of the image's accounts a user could take: ${taken.join(", ")}`);
  });

  it("keeps the shared group's name and gid for the group", () => {
    const problems = userProblems([{ name: SHARED_GROUP.name, uid: 10005, gid: SHARED_GROUP.gid }]);
    assert.deepEqual(problems.map((p) => [p.field, p.problem]), [["name", "is the tenant's shared group"], ["gid", "is the tenant's shared group"]]);
  });

  it("names every problem at once: a bad name, a duplicate name or uid, an id among system ids", () => {
    const problems = userProblems([alice, { name: "Alice Smith", uid: 5001, gid: 10003 }, { name: "alice", uid: 10001, gid: 999 }]);
    assert.deepEqual(problems.map((p) => [p.index, p.field, p.value, p.problem]), [
      [1, "name", "Alice Smith", "not a valid Linux user name"],
      [1, "uid", 5001, "collides with the images' system and default user ids"],
      [2, "name", "alice", "duplicates users[0].name"],
      [2, "gid", 999, "collides with the images' system and default user ids"],
      [2, "uid", 10001, "duplicates users[0].uid"],
    ]);
    assert.match(problems[1].valid, /from 10001 to 65533/);
  });
});

describe("tenant users in the stack file (clusterra:users)", () => {
  it("types them with the gid defaulting to the uid", () => {
    const r = validateStack(exampleFile("tenant-acme-dev"), exampleFiles());
    assert.ok(r.ok && r.config.kind === "tenant");
    assert.deepEqual(r.config.users, [alice, bob]);
  });

  it("refuses more users than the users' ConfigMap holds (Kubernetes: 1 MiB of data), and what it accepts fits", function () {
    this.timeout(20000);
    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `user${String(i).padStart(5, "0")}`, uid: TENANT_ID_FLOOR + i, gid: TENANT_ID_FLOOR + i }));
    const r = validateStack(withValues(exampleFile("tenant-acme-dev"), { "clusterra:users": many(20000) }), exampleFiles());
    assert.ok(!r.ok);
    assert.deepEqual(r.issues.map((i) => [i.key, i.value, i.problem, i.valid]), [[
      "clusterra:users", "20000 users",
      "make passwd and group files of 1,740,018 bytes, over the 1,032,192 the users' ConfigMap holds (Kubernetes refuses a ConfigMap's data over 1 MiB)",
      "fewer users in the stack file: at most 1,032,192 bytes of passwd and group (about 11,864 users of names like these)",
    ]]);
    // The most that pass: their ConfigMap, merge script and all, is within Kubernetes' limit.
    let n = 11800;
    while (identityFileBytes(many(n + 1), "/mnt/efs") <= IDENTITY_FILES_MAX) n++;
    assert.ok(validateStack(withValues(exampleFile("tenant-acme-dev"), { "clusterra:users": many(n) }), exampleFiles()).ok, `${n} users`);
    assert.equal(validateStack(withValues(exampleFile("tenant-acme-dev"), { "clusterra:users": many(n + 1) }), exampleFiles()).ok, false, `${n + 1} users`);
    const data = usersConfigMap("tenant-acme", many(n), "/mnt/efs").data ?? {};
    const size = Object.entries(data).reduce((total, [k, v]) => total + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
    assert.ok(size <= KUBERNETES_LIMITS.configMapData.max, `${size} bytes`);
    assert.ok(size - identityFileBytes(many(n), "/mnt/efs") <= IDENTITY_CONFIGMAP_RESERVE, "the merge script and keys fit the reserve");
  });

  it("rejects bad users at once, each with its key, value and what is valid, keeping the file's indexes", () => {
    const file = withValues(exampleFile("tenant-acme-dev"), { "clusterra:users": [{ name: "alice", uid: "x" }, { name: "root", uid: 0 }, { name: "bob", uid: 10002, gid: 10002 }, { name: "bob", uid: 10002 }] });
    const r = validateStack(file, exampleFiles());
    assert.ok(!r.ok);
    const users = r.issues.filter((i) => i.key.startsWith("clusterra:users")).map((i) => [i.key, i.value, i.problem]);
    assert.deepEqual(users.filter(([k]) => k !== "clusterra:users[0].uid"), [
      ["clusterra:users[1].name", "root", "is an account or group of the platform's images (it would replace the image's own entry on every pod)"],
      ["clusterra:users[1].uid", 0, "collides with the images' system and default user ids"],
      ["clusterra:users[1].gid", 0, "collides with the images' system and default user ids"],
      ["clusterra:users[3].name", "bob", "duplicates users[2].name"],
      ["clusterra:users[3].uid", 10002, "duplicates users[2].uid"],
    ]);
    assert.ok(users.some(([k]) => k === "clusterra:users[0].uid"), "the schema names the uid that is not a number");
  });
});
