import * as assert from "node:assert/strict";
import { clearTriggersInitContainer, controlPlaneExtraConf, controlPlaneManifestsSharedValues, controlPlaneQuota, controlPlaneSharedValues, controllerConfProblems } from "../components/fleet/control-plane";
import { LOGIN_CAPABILITIES, TENANT_DNS, LOGIN_CONTAINER, CONTROLLER_PROGRAM_KEYS, HARDENED_READ_ONLY_CONTAINER, MAX_SCRIPT_BYTES, maxJobCount, SLURMCTLD_TRIGGER_STATE, tenantControlPlaneRequest } from "../facts/control-plane";
import { SLINKY_IMAGES, SLURMCTLD_STATE_GIB } from "../facts/fleet";
import { SRUN_PORT_BLOCK_SIZE } from "../facts/contract";
import { ARGOCD_IN_CLUSTER } from "../facts/versions";
import { tenantControllerProblems, tenantHardeningProblems } from "../fleet-tools/validate";
import { tenantEgressProblems } from "../fleet-tools/egress";

const facts = {
  nodeSets: [{ name: "cpu-4", shape: { name: "cpu" } }] as unknown as Parameters<typeof controlPlaneExtraConf>[0]["nodeSets"],
  srunPortBlock: { from: 30100, to: 30109 },
};
const contained = `SlurmctldParameters=disable_triggers\nMaxJobCount=${maxJobCount(SLURMCTLD_STATE_GIB)}\nSchedulerParameters=max_script_size=${MAX_SCRIPT_BYTES}\n`;

describe("a tenant's controller on central runs nothing the tenant names", () => {
  it("gives every tenant's controller disable_triggers, and the fleet's own lines pass the check", () => {
    const conf = controlPlaneExtraConf(facts);
    assert.match(conf, /^SlurmctldParameters=disable_triggers$/m);
    assert.deepEqual(controllerConfProblems(conf), []);
  });

  it("refuses a slurm.conf without disable_triggers, saying why", () => {
    const problems = controllerConfProblems(contained.replace("disable_triggers", "enable_configless"));
    assert.equal(problems.length, 1);
    assert.match(problems[0], /lacks disable_triggers.*SlurmUser through its own slurm\.key/);
  });

  it("refuses every key that makes slurmctld run a program, in any case, and names it as typed", () => {
    for (const key of CONTROLLER_PROGRAM_KEYS) {
      const line = key === "Include" ? "include /etc/slurm/more.conf" : `${key.toLowerCase()}=/tmp/x`;
      const problems = controllerConfProblems(`${contained}${line}\n`);
      assert.equal(problems.length, 1, `${key}: ${problems.join("; ")}`);
      assert.ok(problems[0].startsWith(line), problems[0]);
      assert.match(problems[0], new RegExp(`what ${key} names on central`));
    }
  });

  it("refuses reboot_from_controller, and reads no program in comments or PartitionName and NodeSet lines", () => {
    assert.match(controllerConfProblems("SlurmctldParameters=disable_triggers, reboot_from_controller\n").join(), /reboot_from_controller: slurmctld would run a program/);
    assert.deepEqual(controllerConfProblems(`${contained}# PrologSlurmctld=/tmp/x\nNodeSet=n1 Feature=MailProg=1\nPartitionName=p Nodes=ALL\n`), []);
  });

  it("allows one plain SlurmctldParameters line, the form the operator merges, and reads the program flags on every line", () => {
    assert.match(controllerConfProblems(`${contained}SlurmctldParameters=enable_configless\n`).join(), /set 2 times.*one line only/);
    assert.match(controllerConfProblems(`${contained}SlurmctldParameters=enable_configless\n`).join(), /lacks disable_triggers in its last line \(SlurmctldParameters=enable_configless\), the one slurmctld keeps/);
    const split = controllerConfProblems(contained.replace("SlurmctldParameters=disable_triggers\n", "SlurmctldParameters=reboot_from_controller\nSlurmctldParameters+=disable_triggers\n")).join("\n");
    assert.match(split, /set 2 times/);
    assert.match(split, /SlurmctldParameters\+=disable_triggers: SlurmctldParameters as plain Key=a,b,c only/);
    assert.match(split, /reboot_from_controller: slurmctld would run a program/);
    assert.match(controllerConfProblems(contained.replace("=disable_triggers", '="x,disable_triggers,y z"')).join(), /no operator, quotes or spaces/);
  });

  it("requires the job limits, no looser than the state volume holds", () => {
    assert.deepEqual(controllerConfProblems(contained), []);
    const loose = controllerConfProblems(contained.replace(/MaxJobCount=\d+/, "MaxJobCount=99999999").replace(/max_script_size=\d+/, "max_script_size=536870912"));
    assert.match(loose[0], /MaxJobCount=99999999: MaxJobCount at most \d+, what slurmctld's 4 GiB state volume holds/);
    assert.match(loose[1], /max_script_size at most 262144 \(max_script_size=536870912\)/);
    const none = controllerConfProblems("SlurmctldParameters=disable_triggers\n");
    assert.match(none.join("\n"), /no MaxJobCount/);
    assert.match(none.join("\n"), /none set: Slurm's default is 4 MiB/);
  });

  it("reads the lines as Slurm's parser does: operators, backslashes, continuations", () => {
    for (const line of ["PrologSlurmctld+=/x", "Prolog\\Slurmctld=/x", "PrologSl\\\nurmctld=/x", "Inc\\lude /etc/x.conf", "PowerAction=1 Location=slurmctld Program=/x", "CertmgrType=certmgr/script"]) {
      const problems = controllerConfProblems(`${contained}${line}\n`);
      assert.equal(problems.length, 1, `${JSON.stringify(line)}: ${problems.join("; ")}`);
      assert.match(problems[0], /slurmctld would run what \w+ names on central/, line);
    }
  });

  it("refuses any key outside the tenant controller's few, naming them", () => {
    const problems = controllerConfProblems(`${contained}MinJobAge=1\nSrunPortRange=30100-30109\n`);
    assert.deepEqual(problems, ["MinJobAge=1: not a key a tenant's controller may set (NodeSet, PartitionName, SrunPortRange, SlurmctldParameters, MaxJobCount, SchedulerParameters)"]);
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
      controller(ARGOCD_IN_CLUSTER, { extraConf: `${contained.replace("SlurmctldParameters=disable_triggers\n", "")}EpilogSlurmctld=/x\n`, prologSlurmctldScriptRefs: [{ name: "p" }] }),
      controller("https://10.1.0.10:6443", { extraConf: "" }),
      { kind: "NodeSet", name: "cpu", render: render(ARGOCD_IN_CLUSTER), object: { spec: {} } },
    ]);
    assert.deepEqual(problems.map((p) => p.reason.split(":")[0]), ["EpilogSlurmctld=/x", "SlurmctldParameters lacks disable_triggers", "prologSlurmctldScriptRefs"]);
    assert.ok(problems.every((p) => p.at === "Application/acme-slurm renders Controller/slurm" && p.file === "fleet/central/dev/tenants.yaml"));
  });
});

describe("egress of a tenant's namespace on central", () => {
  const cidr = "10.16.0.0/20";
  const ns = "tenant-acme";
  const srunBlock = { from: 32730, to: 32739 };
  const rendered = (name: string, spec: Record<string, unknown>) => ({ file: "fleet/central/dev/tenants.yaml", application: "acme-control-plane-manifests", namespace: ns, kind: "NetworkPolicy", object: { metadata: { name }, spec }, tenantCidr: cidr, srunBlock });
  const ctld = { matchLabels: { "app.kubernetes.io/name": "slurmctld", "app.kubernetes.io/instance": "slurm" } };
  const dbd = { matchLabels: { "app.kubernetes.io/name": "slurmdbd", "app.kubernetes.io/instance": "slurm" } };
  const deny = rendered("egress-none-by-default", { podSelector: {}, policyTypes: ["Egress"] });
  const egress = (rules: unknown[]) => rendered("slurmctld-egress", { podSelector: ctld, policyTypes: ["Egress"], egress: rules });

  it("refuses a tenant namespace whose pods are not egress-isolated, naming the namespace", () => {
    const problems = tenantEgressProblems([{ ...deny, kind: "ConfigMap", object: {} }, egress([{ to: [{ podSelector: dbd }], ports: [{ protocol: "TCP", port: 6819 }] }])]);
    assert.deepEqual(problems.map((p) => p.at), ["namespace tenant-acme"]);
    assert.match(problems[0].reason, /not egress-isolated/);
  });

  it("refuses every egress beyond the pod's listed flows, each named", () => {
    const problems = tenantEgressProblems([deny, egress([
      { to: [{ podSelector: dbd }], ports: [{ protocol: "TCP", port: 6819 }] },
      { to: [{ podSelector: dbd }], ports: [{ protocol: "TCP", port: 3306 }] },
      { to: [{ ipBlock: { cidr: "10.0.0.0/8" } }], ports: [{ protocol: "TCP", port: 6818 }] },
      { to: [{ ipBlock: { cidr } }], ports: [{ protocol: "TCP", port: 6443 }] },
      { to: [{ ipBlock: { cidr: "169.254.169.254/32" } }], ports: [{ protocol: "TCP", port: 80 }] },
      { to: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "tenant-globex" } } }], ports: [{ protocol: "TCP", port: 6817 }] },
      { to: [{ podSelector: { matchLabels: { "app.kubernetes.io/name": "mariadb", "app.kubernetes.io/instance": "mariadb" } } }], ports: [{ protocol: "TCP", port: 3306 }] },
      { ports: [{ protocol: "TCP", port: 443 }] },
      { to: [{ ipBlock: { cidr } }] },
    ])]);
    assert.deepEqual(problems.map((p) => p.at.replace(/.* egress/, "egress")), ["egress[1]", "egress[2]", "egress[3]", "egress[4]", "egress[5]", "egress[6]", "egress[7]", "egress[8]"]);
    assert.match(problems[0].reason, /slurmctld to slurmdbd on TCP\/3306: slurmdbd is reached by slurmctld on 6819 only/);
    assert.match(problems[1].reason, /only the tenant's own VPC \(10\.16\.0\.0\/20\)/);
    assert.match(problems[2].reason, /only TCP\/6818 \(slurmd\)/);
    assert.match(problems[4].reason, /to another namespace .*tenant-globex.*only the namespace's own DNS \(clusterra-dns pods .*, which forwards nothing\)/);
    assert.match(problems[5].reason, /not a peer of slurmctld/);
    assert.match(problems[6].reason, /every destination/);
    assert.match(problems[7].reason, /every port/);
  });

  it("refuses DNS to K3s's own CoreDNS, which forwards every name it does not hold out of central: only the namespace's own DNS, on its port", () => {
    const dns = (namespace: string, labels: Record<string, string>, port: number) => ({ to: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": namespace } }, podSelector: { matchLabels: labels } }], ports: [{ protocol: "UDP", port }] });
    const own = { ...TENANT_DNS.labels, [TENANT_DNS.answersLabel]: "tenant-acme" };
    const problems = tenantEgressProblems([deny, egress([dns("kube-system", { "k8s-app": "kube-dns" }, 53), dns(TENANT_DNS.namespace, own, 53), dns(TENANT_DNS.namespace, own, 5353)])]);
    assert.deepEqual(problems.map((p) => p.at.replace(/.* egress/, "egress")), ["egress[0]", "egress[2]"]);
    assert.match(problems[0].reason, /to another namespace \(\{"kubernetes.io\/metadata.name":"kube-system"\} pods \{"k8s-app":"kube-dns"\}\): only the namespace's own DNS/);
    assert.match(problems[1].reason, /to its DNS on UDP\/5353: only port 53/);
  });

  it("takes no policy with an empty egress list and no policyTypes for egress isolation, as Kubernetes does not", () => {
    const problems = tenantEgressProblems([rendered("looks-isolating", { podSelector: {}, egress: [] })]);
    assert.deepEqual(problems.map((p) => p.at), ["namespace tenant-acme"]);
  });

  it("reads a policy without policyTypes as Kubernetes does (egress rules make it an egress policy), and checks the srun block's own ports", () => {
    const login = { matchLabels: { "app.kubernetes.io/name": "login", "app.kubernetes.io/instance": "slurm-login-login" } };
    const problems = tenantEgressProblems([deny,
      rendered("open", { podSelector: {}, egress: [{ to: [{ ipBlock: { cidr: "0.0.0.0/0" } }], ports: [{ port: 443 }] }] }),
      egress([{ to: [{ podSelector: login }], ports: [{ protocol: "TCP", port: 32730, endPort: 32739 }] }, { to: [{ podSelector: login }], ports: [{ protocol: "TCP", port: 22, endPort: 31 }] }, { to: [{ podSelector: login }], ports: [{ protocol: "TCP", port: 6818 }] }]),
    ]);
    assert.deepEqual(problems.map((p) => p.at.replace(/^Application\/\S+ /, "")), ["NetworkPolicy tenant-acme/open", "NetworkPolicy tenant-acme/slurmctld-egress egress[1]"]);
    assert.match(problems[1].reason, /on TCP\/22-31: login is reached by slurmctld on 32730-32739 \(the tenant's srun block\), 6818 only/);
  });

  it("refuses egress for pods the fleet lists none for, and any for MariaDB", () => {
    const mariadb = rendered("mariadb-egress", { podSelector: { matchLabels: { "app.kubernetes.io/name": "mariadb", "app.kubernetes.io/instance": "mariadb" } }, policyTypes: ["Egress"], egress: [{ to: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } }, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } }], ports: [{ protocol: "UDP", port: 53 }] }] });
    const all = rendered("all-egress", { podSelector: {}, policyTypes: ["Egress"], egress: [{ to: [{ ipBlock: { cidr: "0.0.0.0/0" } }], ports: [{ protocol: "TCP", port: 443 }] }] });
    const problems = tenantEgressProblems([deny, mariadb, all]);
    assert.equal(problems.length, 2);
    assert.match(problems[0].reason, /mariadb to another namespace.*only nothing outside the namespace/);
    assert.match(problems[1].reason, /the fleet lists no egress for/);
  });
});

describe("a tenant's share of central, enforced", () => {
  it("sizes MaxJobCount so pending jobs at the largest script fill half the state volume, and writes it with max_script_size", () => {
    assert.equal(maxJobCount(4), Math.floor((4 * 1024 ** 3) / 2 / (MAX_SCRIPT_BYTES + 64 * 1024)));
    assert.ok(maxJobCount(4) * MAX_SCRIPT_BYTES < 4 * 1024 ** 3 / 2);
    const conf = controlPlaneExtraConf(facts);
    assert.match(conf, new RegExp(`^MaxJobCount=${maxJobCount(SLURMCTLD_STATE_GIB)}$`, "m"));
    assert.match(conf, new RegExp(`^SchedulerParameters=max_script_size=${MAX_SCRIPT_BYTES}$`, "m"));
  });

  it("gives each tenant namespace a ResourceQuota from the capacity facts and a LimitRange defaulting what the charts leave unset", () => {
    const [quota, limits] = controlPlaneQuota() as { kind: string; spec: { hard?: Record<string, string>; limits?: Record<string, unknown>[] } }[];
    const sum = tenantControlPlaneRequest();
    assert.equal(quota.kind, "ResourceQuota");
    assert.equal(quota.spec.hard?.["requests.cpu"], `${2 * sum.cpuMillis}m`);
    assert.equal(quota.spec.hard?.["requests.memory"], `${2 * sum.memoryMiB}Mi`);
    assert.equal(quota.spec.hard?.["requests.storage"], `${SLURMCTLD_STATE_GIB + 10 + 10}Gi`);
    assert.equal(quota.spec.hard?.persistentvolumeclaims, "3");
    assert.equal(quota.spec.hard?.["services.nodeports"], String(1 + SRUN_PORT_BLOCK_SIZE));
    assert.equal(quota.spec.hard?.["services.loadbalancers"], "0");
    assert.ok(quota.spec.hard?.["limits.ephemeral-storage"], "ephemeral storage is bounded");
    assert.equal(limits.kind, "LimitRange");
    const container = limits.spec.limits?.find((l) => l.type === "Container") as { defaultRequest: Record<string, string>; default: Record<string, string> };
    for (const r of Object.keys(quota.spec.hard ?? {}).filter((k) => /^(requests|limits)\.(cpu|memory|ephemeral-storage)$/.test(k))) {
      const [kind, name] = r.split(".");
      assert.ok((kind === "requests" ? container.defaultRequest : container.default)[name], `a container without ${r} gets a default (the quota would refuse its pod)`);
    }
    assert.deepEqual(limits.spec.limits?.find((l) => l.type === "PersistentVolumeClaim"), { type: "PersistentVolumeClaim", max: { storage: "10Gi" } });
  });
});

describe("a tenant's pods on central hold no privilege", () => {
  it("runs Slurm's daemons, their sidecar and init containers without capabilities, privilege gain or a writable image, and MariaDB without capabilities", () => {
    type C = { name?: string; securityContext?: unknown };
    const v = controlPlaneSharedValues() as { controller: { slurmctld: C; logfile: C; podSpec: { initContainers: C[] } }; restapi: { slurmrestd: C }; accounting: { slurmdbd: C } };
    for (const c of [v.controller.slurmctld, v.controller.logfile, v.restapi.slurmrestd, v.accounting.slurmdbd]) assert.deepEqual(c.securityContext, HARDENED_READ_ONLY_CONTAINER);
    for (const init of v.controller.podSpec.initContainers) assert.deepEqual(init.securityContext, HARDENED_READ_ONLY_CONTAINER, init.name);
    // Under a read-only image: slurmctld's supervisord and slurmdbd's ArchiveDir need a writable /tmp, each from a volume of its pod.
    const tmp = (c: unknown, pod: unknown) => {
      const mount = ((c as { volumeMounts?: { name: string; mountPath: string }[] }).volumeMounts ?? []).find((m) => m.mountPath === "/tmp");
      return !!mount && ((pod as { volumes?: { name: string; emptyDir?: unknown }[] }).volumes ?? []).some((vol) => vol.name === mount.name && vol.emptyDir);
    };
    const all = controlPlaneSharedValues() as { controller: { slurmctld: unknown; podSpec: unknown }; accounting: { slurmdbd: unknown; podSpec: unknown } };
    assert.ok(tmp(all.controller.slurmctld, all.controller.podSpec), "slurmctld has a /tmp volume");
    assert.ok(tmp(all.accounting.slurmdbd, all.accounting.podSpec), "slurmdbd has a /tmp volume");
    const db = controlPlaneManifestsSharedValues({ schedule: "15 2 * * *", retentionDays: 14 } as Parameters<typeof controlPlaneManifestsSharedValues>[0]) as { namespaced: { kind: string; spec: { securityContext?: unknown; podSecurityContext?: { runAsNonRoot?: boolean; seccompProfile?: unknown } } }[] };
    const mariadb = db.namespaced.find((o) => o.kind === "MariaDB");
    assert.deepEqual(mariadb?.spec.securityContext, { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } });
    assert.equal(mariadb?.spec.podSecurityContext?.runAsNonRoot, true);
    assert.deepEqual(mariadb?.spec.podSecurityContext?.seccompProfile, { type: "RuntimeDefault" });
  });
});

describe("fleet check: a tenant's rendered namespace is hardened and bounded", () => {
  const render = { file: "fleet/central/dev/tenants.yaml", application: "acme-control-plane" };
  const o = (kind: string, object: Record<string, unknown>) => ({ kind, name: "slurm", namespace: "tenant-acme", render, object });
  const bounds = [o("ResourceQuota", {}), o("LimitRange", {})];
  it("passes the fleet's own contexts, and names a capability a tenant's values add, a root user, or a missing quota", () => {
    const hard = { ...HARDENED_READ_ONLY_CONTAINER };
    assert.deepEqual(tenantHardeningProblems([...bounds, o("Controller", { spec: { slurmctld: { securityContext: hard }, logfile: { securityContext: hard } } }), o("MariaDB", { spec: { securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } } } })]), []);
    const problems = tenantHardeningProblems([
      o("Controller", { spec: { slurmctld: { securityContext: { ...hard, capabilities: { drop: ["ALL"], add: ["SYS_ADMIN"] } } }, logfile: { securityContext: { ...hard, runAsUser: 0 } } } }),
      o("RestApi", { spec: { slurmrestd: {} } }),
    ]);
    assert.deepEqual(problems.map((p) => `${p.at}: ${p.reason.replace(/ \(HARDENED_CONTAINER\)$/, "")}`), [
      "Application/acme-control-plane Controller/tenant-acme/slurm slurmctld: its container is not hardened: capabilities added: SYS_ADMIN",
      "Application/acme-control-plane Controller/tenant-acme/slurm logfile: its container is not hardened: runs as root",
      "Application/acme-control-plane RestApi/tenant-acme/slurm slurmrestd: its container is not hardened: allowPrivilegeEscalation is not false",
      "Application/acme-control-plane RestApi/tenant-acme/slurm slurmrestd: its container is not hardened: capabilities are not all dropped",
      "namespace tenant-acme: no ResourceQuota: the tenant's pods would take what they like of central",
      "namespace tenant-acme: no LimitRange: the tenant's pods would take what they like of central",
    ]);
  });

  it("holds the login's sshd to what it needs: root's capabilities beyond LOGIN_CAPABILITIES are named", () => {
    assert.deepEqual(tenantHardeningProblems([...bounds, o("LoginSet", { spec: { login: { securityContext: LOGIN_CONTAINER } } })]), []);
    const problems = tenantHardeningProblems([...bounds, o("LoginSet", { spec: { login: { securityContext: { capabilities: { drop: ["ALL"], add: [...LOGIN_CAPABILITIES, "NET_RAW"] } } } } }), o("LoginSet", { spec: { login: {} } })]);
    assert.deepEqual(problems.map((p) => p.reason), [
      "capabilities added beyond what sshd needs: NET_RAW (LOGIN_CONTAINER)",
      "capabilities are not all dropped (LOGIN_CONTAINER)",
    ]);
  });
});
