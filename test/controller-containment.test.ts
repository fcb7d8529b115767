import * as assert from "node:assert/strict";
import { clearTriggersInitContainer, controlPlaneExtraConf, controlPlaneSharedValues, controllerConfProblems } from "../components/fleet/control-plane";
import { CONTROLLER_PROGRAM_KEYS, SLURMCTLD_TRIGGER_STATE } from "../facts/control-plane";
import { SLINKY_IMAGES } from "../facts/fleet";
import { ARGOCD_IN_CLUSTER } from "../facts/versions";
import { tenantControllerProblems } from "../cli/fleet-validate";

const facts = {
  nodeSets: [{ name: "cpu-4", shape: { name: "cpu" } }] as unknown as Parameters<typeof controlPlaneExtraConf>[0]["nodeSets"],
  srunPortBlock: { from: 30100, to: 30109 },
};
const contained = "SlurmctldParameters=disable_triggers\n";

describe("a tenant's controller on central runs nothing the tenant names", () => {
  it("gives every tenant's controller disable_triggers, and the fleet's own lines pass the check", () => {
    const conf = controlPlaneExtraConf(facts);
    assert.match(conf, /^SlurmctldParameters=disable_triggers$/m);
    assert.deepEqual(controllerConfProblems(conf), []);
  });

  it("refuses a slurm.conf without disable_triggers, saying why", () => {
    const problems = controllerConfProblems("SrunPortRange=30100-30109\nSlurmctldParameters=enable_configless\n");
    assert.equal(problems.length, 1);
    assert.match(problems[0], /lacks disable_triggers.*SlurmUser through its own slurm\.key/);
  });

  it("refuses every key that makes slurmctld run a program, in any case, and names it as typed", () => {
    for (const key of CONTROLLER_PROGRAM_KEYS) {
      const line = key === "Include" ? "include /etc/slurm/more.conf" : `${key.toLowerCase()}=/tmp/x`;
      const problems = controllerConfProblems(`${contained}${line}\n`);
      assert.equal(problems.length, 1, `${key}: ${problems.join("; ")}`);
      assert.ok(problems[0].startsWith(key === "Include" ? "include=/etc/slurm/more.conf" : `${key.toLowerCase()}=/tmp/x`), problems[0]);
      assert.match(problems[0], new RegExp(`what ${key} names on central`));
    }
  });

  it("refuses reboot_from_controller, and reads no program in comments, NodeName or PartitionName lines", () => {
    assert.match(controllerConfProblems("SlurmctldParameters=disable_triggers, reboot_from_controller\n").join(), /reboot_from_controller: slurmctld would run a program/);
    assert.deepEqual(controllerConfProblems(`${contained}# PrologSlurmctld=/tmp/x\nNodeName=n1 Feature=MailProg=1\nPartitionName=p Nodes=ALL\n`), []);
  });

  it("removes stored triggers before slurmctld starts: an init container on the state claim only", () => {
    const values = controlPlaneSharedValues() as { controller: { podSpec: { initContainers: Record<string, unknown>[] } } };
    const init = values.controller.podSpec.initContainers.find((c) => c.name === "clear-triggers");
    assert.deepEqual(init, clearTriggersInitContainer(SLINKY_IMAGES.slurmctld));
    assert.deepEqual(init?.volumeMounts, [{ name: SLURMCTLD_TRIGGER_STATE.volume, mountPath: "/statesave" }]);
    assert.deepEqual(init?.command, ["/bin/rm", "-f", "--", "/statesave/trigger_state", "/statesave/trigger_state.old"]);
  });

  it("fleet check reads each Controller rendered for central, and only those", () => {
    const render = (server: string) => ({ file: "fleet/central/dev/tenants.yaml", application: "acme-slurm", server });
    const controller = (server: string, spec: Record<string, unknown>) => ({ kind: "Controller", name: "slurm", render: render(server), object: { spec } });
    const problems = tenantControllerProblems([
      controller(ARGOCD_IN_CLUSTER, { extraConf: contained }),
      controller(ARGOCD_IN_CLUSTER, { extraConf: "EpilogSlurmctld=/x\n", prologSlurmctldScriptRefs: [{ name: "p" }] }),
      controller("https://10.1.0.10:6443", { extraConf: "" }),
      { kind: "NodeSet", name: "cpu", render: render(ARGOCD_IN_CLUSTER), object: { spec: {} } },
    ]);
    assert.deepEqual(problems.map((p) => p.reason.split(":")[0]), ["EpilogSlurmctld=/x", "SlurmctldParameters lacks disable_triggers", "prologSlurmctldScriptRefs"]);
    assert.ok(problems.every((p) => p.at === "Application/acme-slurm renders Controller/slurm" && p.file === "fleet/central/dev/tenants.yaml"));
  });
});
