/**
 * A host's scripts and units from SSM (components/host/host-files.ts): the sync itself, run
 * with python3 in a mount namespace whose /etc/systemd/system, /usr/local/sbin and
 * /var/lib/clusterra are empty tmpfs (so it writes where a host's would, and nothing of this
 * machine's), AWS CLI's answer given as `aws` on PATH and systemd's calls logged by
 * `systemctl` on PATH; and the plans: which files leave user data, and that a change to one
 * replaces nothing.
 */
import * as assert from "node:assert/strict";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { parse } from "yaml";
import { HOST_FILES, hostFileParameterName, hostFileParameterValue, hostFileProblem, hostFilesScript, plannedHostFiles, type HostFile } from "../components/host/host-files";
import { clusterParameterNames } from "../facts/tenant-cluster";
import { hostFilesPrefix } from "../components/central/k3s-host";
import { AWS_LIMITS } from "../facts/aws-limits";
import { byType, plan } from "./helpers";
import * as pulumi from "@pulumi/pulumi";
import { HostFileParameters } from "../components/host/host-file-parameters";
import { runOffline } from "../planning/engine";

const PREFIX = "/clusterra/dev/acme/k3s/server-files";
const TMPFS = ["/etc/systemd/system", "/usr/local/sbin", "/var/lib/clusterra"];

/** Whether this machine can run the sync as a host would: root, unshare, python3. */
function canRun(): string | undefined {
  if (process.getuid?.() !== 0) return "needs root (a mount namespace)";
  if (spawnSync("unshare", ["--version"]).status !== 0) return "needs unshare (util-linux)";
  if (spawnSync("python3", ["--version"]).status !== 0) return "needs python3 (apt-get install python3)";
  return undefined;
}

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** systemctl's calls, one per line. */
  readonly systemctl: string[];
  /** Each file under the tmpfs mounts after the run: mode and content. */
  readonly files: Record<string, { mode: string; content: string }>;
}

/**
 * Runs the sync `runs.length` times in one mount namespace (state carried from run to run),
 * each against its own AWS answer (files, or a raw answer, or a failure).
 */
function sync(runs: readonly (readonly HostFile[] | { raw: string } | { fail: true })[]): Run[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "host-files-"));
  try {
    fs.mkdirSync(path.join(dir, "bin"));
    fs.writeFileSync(path.join(dir, "bin", "aws"), '#!/bin/sh\n[ -e "$ANSWER.fail" ] && { echo "An error occurred (AccessDeniedException)" >&2; exit 254; }\ncat "$ANSWER"\n', { mode: 0o755 });
    fs.writeFileSync(path.join(dir, "bin", "systemctl"), '#!/bin/sh\necho "$*" >> "$SYSTEMCTL"\n', { mode: 0o755 });
    fs.writeFileSync(path.join(dir, "sync"), hostFilesScript("us-east-1", PREFIX), { mode: 0o700 });
    const lines = [
      "set -e",
      ...TMPFS.map((d) => `mkdir -p ${d} && mount -t tmpfs tmpfs ${d}`),
      ...runs.map((_, i) => [
        `export ANSWER=${dir}/answer-${i} SYSTEMCTL=${dir}/systemctl-${i}`,
        `touch $SYSTEMCTL; code=0; ${dir}/sync > ${dir}/out-${i} 2> ${dir}/err-${i} || code=$?; echo $code > ${dir}/code-${i}`,
        `find ${TMPFS.join(" ")} -type f -printf '%m %p\\n' > ${dir}/files-${i}`,
        `find ${TMPFS.join(" ")} -type f | while read f; do printf '%s\\0' "$(cat "$f")"; done > ${dir}/contents-${i}`,
      ].join("\n")),
    ];
    runs.forEach((r, i) => {
      const answer = path.join(dir, `answer-${i}`);
      if ("fail" in r) fs.writeFileSync(`${answer}.fail`, "");
      else fs.writeFileSync(answer, "raw" in r ? r.raw : JSON.stringify({ Parameters: (r as readonly HostFile[]).map((f) => ({ Name: hostFileParameterName(PREFIX, f), Type: "String", Value: hostFileParameterValue(f) })) }));
    });
    const shell = spawnSync("unshare", ["--mount", "--propagation", "private", "sh", "-c", lines.join("\n")], { encoding: "utf8", env: { ...process.env, PATH: `${dir}/bin:${process.env.PATH}` } });
    assert.equal(shell.status, 0, shell.stderr);
    return runs.map((_, i) => {
      const read = (f: string) => fs.readFileSync(path.join(dir, `${f}-${i}`), "utf8");
      const listed = read("files").split("\n").filter(Boolean).map((l) => l.split(" ") as [string, string]);
      const contents = read("contents").split("\0");
      return {
        code: Number(read("code").trim()),
        stdout: read("out"),
        stderr: read("err"),
        systemctl: read("systemctl").split("\n").filter(Boolean),
        files: Object.fromEntries(listed.map(([mode, p], j) => [p, { mode, content: contents[j] }])),
      };
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const SCRIPT: HostFile = { path: "/usr/local/sbin/clusterra-disk-metrics", permissions: "0700", content: "#!/bin/bash\necho one\n" };
const SERVICE: HostFile = { path: "/etc/systemd/system/clusterra-disk-metrics.service", permissions: "0644", content: "[Service]\nExecStart=/usr/local/sbin/clusterra-disk-metrics\n" };
const TIMER: HostFile = { path: "/etc/systemd/system/clusterra-disk-metrics.timer", permissions: "0644", content: "[Timer]\nOnUnitActiveSec=5min\n\n[Install]\nWantedBy=timers.target\n" };
const OTHER_TIMER: HostFile = { path: "/etc/systemd/system/clusterra-other.timer", permissions: "0644", content: "[Timer]\nOnUnitActiveSec=1h\n\n[Install]\nWantedBy=timers.target\n" };

describe("a host's scripts and units from SSM", function () {
  this.timeout(30_000);

  it("writes what changed only, removes what is no longer delivered (its unit stopped first), and keeps every timer enabled and running", function () {
    const missing = canRun();
    if (missing) return this.skip(); // the sync runs as a host's would: root, unshare, python3
    const changed = { ...SCRIPT, content: "#!/bin/bash\necho two\n" };
    const [first, again, next] = sync([[SCRIPT, SERVICE, TIMER, OTHER_TIMER], [SCRIPT, SERVICE, TIMER, OTHER_TIMER], [changed, SERVICE, { ...TIMER, content: `${TIMER.content}# changed\n` }]]);
    assert.equal(first.code, 0, first.stderr);
    assert.deepEqual(first.files[SCRIPT.path], { mode: "700", content: SCRIPT.content.replace(/\n$/, "") });
    assert.equal(first.files[SERVICE.path]?.mode, "644");
    assert.deepEqual(JSON.parse(first.files[HOST_FILES.state].content), [SERVICE.path, OTHER_TIMER.path, TIMER.path, SCRIPT.path].sort());
    assert.deepEqual(first.systemctl, ["daemon-reload", "enable clusterra-disk-metrics.timer", "restart clusterra-disk-metrics.timer", "enable clusterra-other.timer", "restart clusterra-other.timer"]);
    // Nothing changed: nothing written, no reload; the timers kept enabled and running.
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, "");
    assert.deepEqual(again.systemctl, ["enable clusterra-disk-metrics.timer", "start clusterra-disk-metrics.timer", "enable clusterra-other.timer", "start clusterra-other.timer"]);
    // A changed script and timer, a timer no longer delivered.
    assert.equal(next.code, 0, next.stderr);
    assert.equal(next.files[SCRIPT.path]?.content, "#!/bin/bash\necho two");
    assert.equal(next.files[OTHER_TIMER.path], undefined);
    assert.deepEqual(next.systemctl, ["disable --now clusterra-other.timer", "daemon-reload", "enable clusterra-disk-metrics.timer", "restart clusterra-disk-metrics.timer"]);
    assert.deepEqual(next.stdout.split("\n").filter(Boolean), [`wrote ${TIMER.path}`, `wrote ${SCRIPT.path}`, `removed ${OTHER_TIMER.path}`]);
  });

  it("fails, writing and removing nothing, when SSM refuses, answers nothing, or names a path outside the host's files", function () {
    if (canRun()) return this.skip(); // the sync runs as a host's would: root, unshare, python3
    const answer = (name: string) => ({ raw: JSON.stringify({ Parameters: [{ Name: name, Type: "String", Value: hostFileParameterValue(SCRIPT) }] }) });
    const [first, refused, empty, escaping] = sync([[SCRIPT, TIMER], { fail: true }, { raw: '{"Parameters": []}' }, answer(`${PREFIX}/usr/local/sbin/../../../etc/shadow`)]);
    assert.equal(first.code, 0, first.stderr);
    for (const [run, why] of [[refused, /AccessDenied/], [empty, /no parameter under \/clusterra\/dev\/acme\/k3s\/server-files: nothing written, nothing removed/], [escaping, /not a file path below/]] as const) {
      assert.notEqual(run.code, 0);
      assert.match(run.stderr, why);
      assert.deepEqual(run.files, first.files);
      assert.deepEqual(run.systemctl, []);
    }
  });

  it("reloads systemd for the units it wrote even when a later file fails, so the next run (which finds them unchanged) need not", function () {
    if (canRun()) return this.skip(); // the sync runs as a host's would: root, unshare, python3
    // The script's path then a file below it: the second write cannot make its directory.
    const [broken] = sync([[TIMER, SCRIPT, { ...SCRIPT, path: `${SCRIPT.path}/below` }]]);
    assert.notEqual(broken.code, 0);
    assert.equal(broken.files[TIMER.path]?.content, TIMER.content.replace(/\n$/, ""));
    assert.deepEqual(broken.systemctl, ["daemon-reload"]);
    assert.equal(broken.files[HOST_FILES.state], undefined, "no state: the next run takes every file again");
  });

  it("refuses a file it cannot deliver: a relative or dotted path, one of its own files, a mode that is not octal", () => {
    assert.equal(hostFileProblem(PREFIX, SCRIPT), undefined);
    assert.match(hostFileProblem(PREFIX, { ...SCRIPT, path: "usr/local/sbin/x" }) ?? "", /not an absolute path/);
    assert.match(hostFileProblem(PREFIX, { ...SCRIPT, path: "/usr/local/../sbin/x" }) ?? "", /not an absolute path/);
    assert.match(hostFileProblem(PREFIX, { ...SCRIPT, path: "/usr/local/sbin/my script" }) ?? "", /not an absolute path/);
    assert.match(hostFileProblem(PREFIX, { ...SCRIPT, path: HOST_FILES.script }) ?? "", /user data writes it/);
    assert.match(hostFileProblem(PREFIX, { ...SCRIPT, permissions: "755" }) ?? "", /not four octal digits/);
    assert.match(hostFileProblem(PREFIX, { ...SCRIPT, path: "/a/b/c/d/e/f/g/h/i/j/k" }) ?? "", /more than 15 levels/);
    assert.match(hostFileProblem(PREFIX, { ...SCRIPT, content: "x".repeat(4100) }) ?? "", /its parameter's value is 41\d\d characters, over 4096 .*: split the file/);
  });

  it("leaves in user data what the instance needs to start, and delivers every other script and unit from its own prefix, each in the Standard tier", async () => {
    for (const [stack, prefix] of [["tenant-acme-dev", clusterParameterNames("dev", "acme").serverFiles], ["central-dev", hostFilesPrefix("dev")]] as const) {
      const result = await plan(stack);
      const [instance] = byType(result, "aws:ec2/instance:Instance");
      const written = (parse(String(instance.inputs?.userData).replace(/^#cloud-config\n/, "")) as { write_files: { path: string }[] }).write_files.map((f) => f.path);
      const delivered = plannedHostFiles(result.deployment.deployment.resources, prefix);
      assert.ok(delivered.some((f) => f.path === "/usr/local/sbin/clusterra-disk-metrics"), stack);
      assert.deepEqual(delivered.filter((f) => written.includes(f.path)), [], `${stack}: a file both in user data and delivered`);
      assert.ok(written.includes(HOST_FILES.script) && written.includes(`/etc/systemd/system/${HOST_FILES.timer}`), stack);
      for (const f of delivered) assert.equal(hostFileProblem(prefix, f), undefined);
      const parameters = byType(result, "aws:ssm/parameter:Parameter").filter((p) => String(p.inputs?.name).startsWith(`${prefix}/`));
      for (const p of parameters) {
        assert.equal(p.inputs?.tier, "Standard", String(p.inputs?.name));
        assert.ok([...String(p.inputs?.insecureValue)].length <= AWS_LIMITS.ssmStandardParameter.max);
        assert.equal(p.inputs?.value, undefined, "insecureValue: a plan shows what a host will run");
      }
      // The instance boots once they exist, and its role reads them, by path.
      assert.ok(parameters.every((p) => (instance.dependencies ?? []).includes(p.urn)), `${stack}: the instance does not wait for its files`);
      assert.match(JSON.stringify(result.deployment.deployment.resources.filter((r) => r.type.startsWith("aws:iam/")).map((r) => r.inputs)), new RegExp(`ssm:GetParametersByPath.{0,80}:parameter${prefix}\\\\"`));
    }
  });

  describe("a file over the Standard tier", () => {
    /** Plans one host's files: `size` characters before the deploy's values, 100 more with them. */
    const planFiles = (size: number) =>
      runOffline("central-dev", {}, { region: "us-east-1", partition: "aws", accountId: "111122223333", stackOutputs: new Map() }, async () => {
        const files = (value: string): HostFile[] => [{ ...SCRIPT, content: "x".repeat(size) + value }];
        new HostFileParameters("host", { prefix: PREFIX, shape: files(""), files: pulumi.output("i".repeat(100)).apply(files), host: "test host" });
        return {};
      });

    it("stops the plan naming the file and the tier when it is over before the deploy's values go in", async () => {
      await assert.rejects(planFiles(4100), (e: Error) => /^test host: \/usr\/local\/sbin\/clusterra-disk-metrics: its parameter's value is 41\d\d characters, over 4096 .*: split the file$/.test(e.message));
    });

    it("is planned when the deploy's values push it over, for the policy pack's AWS limits check to refuse (never an error inside an output)", async () => {
      const run = await planFiles(4000);
      const values = run.deployment.deployment.resources.filter((r) => r.type === "aws:ssm/parameter:Parameter").map((r) => [...String(r.inputs?.insecureValue)].length);
      assert.equal(values.length, 1);
      assert.ok(values[0] > 4096, `${values[0]} characters`);
    });
  });
});
