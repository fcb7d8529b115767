/**
 * The Slurm journey's pure parts: security-group rules read from a plan in any of AWS's
 * shapes, their translation to nftables (stateful, default deny, drops recorded), the NAT
 * Kubernetes does, and the slurm.conf the daemons read (the operator's, with the journey's
 * overrides). The Slurm part itself runs in `npm run journey` (root, namespaces, real daemons),
 * or alone with `node dist/journey/slurm/main.js` on a kept run's operator files.
 */
import * as assert from "node:assert/strict";
import { spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import type { DeploymentResource } from "../planning/deployment";
import { SLURM_PORTS } from "../facts/contract";
import { LOGIN_SSHD_CONFIG } from "../facts/control-plane";
import { centralHostNat, ciliumNodeNat, clusterIpNat } from "../journey/slurm/nat";
import { parseCounter, parseDroppedFlows, parseRuleHits, protocolMatch, securityGroupRuleset } from "../journey/host/nft";
import { groupsSelectedByTags, securityGroupRules, securityGroups, type SecurityGroupRule } from "../access/security-groups";
import { journeyEtcSlurm, journeySlurmdbdConf, journeySshdConfig, nodeSetOf, partitionsOf, SSHD_STAND_INS } from "../journey/slurm/slurm-config";
import { slurmConfValues } from "../journey/kube/slurm-operator";
import { findSlurmImage, SLURM_IMAGE_DIR } from "../journey/host/image";
import { planTopology } from "../journey/slurm/topology";
import { shellWords, SLINKY_NODESET_POD, slurmdFromPod, type OperatorPod } from "../journey/slurm/slurmd-pod";
import { capabilitySet } from "../journey/slurm/journey";
import { networkPolicyRuleset, policyTypes, selects, type NetworkPolicyObject, type PolicyPod } from "../journey/host/network-policy";
import { journeyWorld, srunPortRangeOf, srunProblems, worldProblems, type TenantSide } from "../journey/slurm/world";
import { examplePorts, exampleRoot, needHelm, plan } from "./helpers";

function resource(type: string, name: string, outputs: Record<string, unknown>): DeploymentResource {
  return { urn: `urn:pulumi:s::clusterra::${type}::${name}`, custom: true, type, outputs };
}

const INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule";
const EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule";


/**
 * nft's own check of a ruleset, in a throwaway network namespace (as root: the journey's
 * case). Root without nftables: a failure in CI, else the test is skipped
 * (`apt-get install nftables`).
 */
/** The return rules of slurmctld's egress chain in a policy ruleset's text. */
function ctldOutOf(text: string): string {
  return new RegExp("chain egress_slurmctld \\{([\\s\\S]*?)\\n  \\}").exec(text)?.[1] ?? "";
}

function kernelAccepts(ctx: Mocha.Context, text: string): void {
  if (process.getuid?.() !== 0) return;
  if (spawnSync("nft", ["--version"]).status !== 0) {
    if (process.env.CI) throw new Error("nft is not installed: CI runs the journey's rulesets through it (apt-get install nftables)");
    return ctx.skip();
  }
  const check = spawnSync("unshare", ["--net", "nft", "-c", "-f", "-"], { input: text, encoding: "utf8" });
  assert.equal(check.status, 0, check.stderr);
}

describe("Slurm journey: security groups as nftables", () => {
  it("reads rules from the standalone, legacy and inline shapes", () => {
    const rules = securityGroupRules([
      resource(INGRESS, "in-6818", { securityGroupId: "sg-w", ipProtocol: "tcp", fromPort: 6818, toPort: 6818, cidrIpv4: "10.0.0.10/32" }),
      resource(EGRESS, "self-out", { securityGroupId: "sg-w", ipProtocol: "-1", referencedSecurityGroupId: "sg-w" }),
      resource(EGRESS, "v6", { securityGroupId: "sg-w", ipProtocol: "tcp", fromPort: 443, toPort: 443, cidrIpv6: "::/0" }),
      resource("aws:ec2/securityGroupRule:SecurityGroupRule", "legacy", { type: "ingress", securityGroupId: "sg-h", protocol: "6", fromPort: 22, toPort: 22, cidrBlocks: ["10.1.0.0/16", "10.2.0.0/16"], self: true }),
      resource("aws:ec2/securityGroup:SecurityGroup", "inline", { id: "sg-i", egress: [{ protocol: "udp", fromPort: 53, toPort: 53, securityGroups: ["sg-h"] }] }),
    ]);
    const brief = rules.map((r) => `${r.name} ${r.groupId} ${r.direction} ${r.protocol} ${r.fromPort ?? ""}-${r.toPort ?? ""} ${r.peer.kind === "cidr" ? r.peer.cidr : r.peer.kind === "group" ? r.peer.groupId : r.peer.what}`);
    assert.deepEqual(brief, [
      "in-6818 sg-w ingress tcp 6818-6818 10.0.0.10/32",
      "self-out sg-w egress all - sg-w",
      "v6 sg-w egress tcp 443-443 IPv6 ::/0",
      "legacy sg-h ingress tcp 22-22 10.1.0.0/16",
      "legacy sg-h ingress tcp 22-22 10.2.0.0/16",
      "legacy sg-h ingress tcp 22-22 sg-h",
      "inline/egress-0 sg-i egress udp 53-53 sg-h",
    ]);
  });

  it("matches ports, ranges, ICMP type and code, and any protocol as AWS reads them", () => {
    assert.equal(protocolMatch({ protocol: "tcp", fromPort: 6818, toPort: 6818 }), "tcp dport 6818");
    assert.equal(protocolMatch({ protocol: "tcp", fromPort: 60001, toPort: 63000 }), "tcp dport 60001-63000");
    assert.equal(protocolMatch({ protocol: "udp", fromPort: 0, toPort: 65535 }), "meta l4proto udp");
    assert.equal(protocolMatch({ protocol: "icmp", fromPort: 8, toPort: 0 }), "meta l4proto icmp icmp type 8 icmp code 0");
    assert.equal(protocolMatch({ protocol: "icmp", fromPort: -1, toPort: -1 }), "meta l4proto icmp");
    assert.equal(protocolMatch({ protocol: "all" }), "");
    assert.equal(protocolMatch({ protocol: 47 }), "meta l4proto 47");
  });

  it("writes one stateful, default-deny table per ENI, only the ENI's groups, drops counted and recorded", function () {
    const rules: SecurityGroupRule[] = [
      { name: "slurmctld-to-slurmd", groupId: "sg-w", direction: "ingress", protocol: "tcp", fromPort: 6818, toPort: 6818, peer: { kind: "cidr", cidr: "10.0.0.10/32" } },
      { name: "self", groupId: "sg-w", direction: "egress", protocol: "all", peer: { kind: "group", groupId: "sg-w" } },
      { name: "https", groupId: "sg-w", direction: "egress", protocol: "tcp", fromPort: 443, toPort: 443, peer: { kind: "cidr", cidr: "0.0.0.0/0" } },
      { name: "to-efs", groupId: "sg-w", direction: "egress", protocol: "tcp", fromPort: 2049, toPort: 2049, peer: { kind: "group", groupId: "sg-efs" } },
      { name: "someone-else", groupId: "sg-x", direction: "ingress", protocol: "all", peer: { kind: "cidr", cidr: "0.0.0.0/0" } },
    ];
    const t = securityGroupRuleset({ eni: { label: "acme node 1", device: "eth0", groupIds: ["sg-w"] }, rules, members: new Map([["sg-w", ["10.16.0.41", "10.16.0.21"]]]) });
    assert.equal(t.translated, 3);
    assert.deepEqual(t.skipped, [{ rule: "to-efs", why: "group sg-efs has no member in the topology" }]);
    const ingress = t.text.slice(t.text.indexOf("chain ingress"), t.text.indexOf("chain egress"));
    const egress = t.text.slice(t.text.indexOf("chain egress"));
    // Ingress is judged before DNAT (a NodePort by its own port), after conntrack.
    assert.match(ingress, /hook prerouting priority -150;/);
    assert.match(ingress, /iifname != "eth0" accept/);
    assert.match(ingress, /ct state established,related accept/);
    assert.match(ingress, /ip saddr 10\.0\.0\.10\/32 tcp dport 6818 counter accept comment "slurmctld-to-slurmd"/);
    assert.match(ingress, /add @dropped_ingress \{ ip saddr \. ip daddr \. meta l4proto \. th dport \}\n\s+counter name "dropped_ingress" drop/);
    assert.doesNotMatch(t.text, /someone-else/);
    assert.match(egress, /ip daddr \{ 10\.16\.0\.21, 10\.16\.0\.41 \} counter accept comment "self"/);
    assert.match(egress, /meta nfproto ipv4 tcp dport 443 counter accept comment "https"/);
    assert.match(egress, /counter name "dropped_egress" drop/);
    // The kernel accepts it (checked in a throwaway network namespace when root).
    kernelAccepts(this, t.text);
  });

  it("reads drops, counters and per-rule hits from nft's JSON", () => {
    const meta = { metainfo: { version: "1.0.6" } };
    const set = JSON.stringify({ nftables: [meta, { set: { name: "dropped_egress", elem: [{ concat: ["10.16.0.41", "10.0.0.10", "tcp", 40123] }, { elem: { val: { concat: ["10.16.0.41", "10.0.0.10", 17, 53] } } }] } }] });
    assert.deepEqual(parseDroppedFlows("egress", set), [
      { direction: "egress", source: "10.16.0.41", destination: "10.0.0.10", protocol: "tcp", port: 40123 },
      { direction: "egress", source: "10.16.0.41", destination: "10.0.0.10", protocol: "udp", port: 53 },
    ]);
    assert.deepEqual(parseCounter(JSON.stringify({ nftables: [meta, { counter: { name: "dropped_egress", packets: 19, bytes: 1140 } }] })), { packets: 19, bytes: 1140 });
    const table = JSON.stringify({ nftables: [meta, { rule: { comment: "x", expr: [{ counter: { packets: 2, bytes: 120 } }, { accept: null }] } }, { rule: { comment: "default", expr: [{ counter: "dropped_egress" }, { drop: null }] } }] });
    assert.deepEqual([...parseRuleHits(table)], [["x", 2]]);
  });
});

describe("Slurm journey: NetworkPolicies as nftables", () => {
  const pods: PolicyPod[] = [
    { name: "ctld", namespace: "t-a", address: "100.64.0.10", labels: { app: "ctld" } },
    { name: "db", namespace: "t-a", address: "100.64.0.11", labels: { app: "db", tier: "data" } },
    { name: "free", namespace: "t-a", address: "100.64.0.12", labels: { app: "free" } },
    { name: "dns", namespace: "kube-system", address: "100.64.0.53", labels: { "k8s-app": "kube-dns" } },
  ];
  const policy = (name: string, spec: NetworkPolicyObject["spec"], namespace = "t-a"): NetworkPolicyObject => ({ metadata: { name, namespace }, spec });

  it("selects as Kubernetes does: matchLabels and matchExpressions ANDed, empty selects all", () => {
    assert.ok(selects({}, { a: "1" }));
    assert.ok(selects(undefined, {}));
    assert.ok(selects({ matchLabels: { app: "db" }, matchExpressions: [{ key: "tier", operator: "In", values: ["data"] }] }, pods[1].labels));
    assert.ok(!selects({ matchLabels: { app: "db" }, matchExpressions: [{ key: "tier", operator: "NotIn", values: ["data"] }] }, pods[1].labels));
    assert.ok(selects({ matchExpressions: [{ key: "tier", operator: "DoesNotExist" }] }, pods[0].labels));
    assert.ok(!selects({ matchExpressions: [{ key: "tier", operator: "Exists" }] }, pods[0].labels));
    assert.ok(!selects({ matchExpressions: [{ key: "tier", operator: "Bogus" }] }, pods[1].labels));
    // policyTypes as the API server defaults them.
    assert.deepEqual(policyTypes(policy("x", { podSelector: {} })), ["Ingress"]);
    assert.deepEqual(policyTypes(policy("x", { podSelector: {}, egress: [{}] })), ["Ingress", "Egress"]);
  });

  it("isolates what a policy selects, allows only its rules' peers and ports, and leaves the rest alone", function () {
    const t = networkPolicyRuleset([
      policy("deny-egress", { podSelector: {}, policyTypes: ["Egress"] }),
      policy("ctld-out", {
        podSelector: { matchLabels: { app: "ctld" } },
        policyTypes: ["Egress"],
        egress: [
          { to: [{ podSelector: { matchLabels: { app: "db" } } }], ports: [{ protocol: "TCP", port: 6819 }] },
          { to: [{ ipBlock: { cidr: "10.16.0.0/20", except: ["10.16.0.10/32"] } }], ports: [{ port: 6818 }, { port: 30000, endPort: 30009 }] },
          { to: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } }, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } }], ports: [{ protocol: "UDP", port: 53 }] },
          { to: [{ podSelector: { matchLabels: { app: "nobody" } } }] },
        ],
      }),
      policy("db-in", { podSelector: { matchLabels: { app: "db" } }, ingress: [{ from: [{ podSelector: {} }] }] }),
      policy("elsewhere", { podSelector: {}, policyTypes: ["Egress"] }, "t-b"),
    ], pods.slice(0, 3).concat(pods[3]));
    // Every pod of t-a is egress-isolated; kube-system's is not (no policy of its namespace); t-b's policy touches nobody here.
    assert.deepEqual(t.isolated, { egress: ["ctld", "db", "free"], ingress: ["db"] });
    const chain = (name: string) => new RegExp(`chain ${name} \\{([\\s\\S]*?)\\n  \\}`).exec(t.text)?.[1] ?? "";
    const ctld = chain("egress_ctld");
    assert.match(ctld, /ip daddr 100\.64\.0\.11 tcp dport 6819 counter return comment "ctld-out"/);
    assert.match(ctld, /ip daddr 10\.16\.0\.0\/20 ip daddr != \{ 10\.16\.0\.10\/32 \} tcp dport 6818 counter return/);
    assert.match(ctld, /tcp dport 30000-30009 counter return/);
    // A namespaceSelector reaches the other namespace's pod, on its protocol.
    assert.match(ctld, /ip daddr 100\.64\.0\.53 udp dport 53 counter return/);
    assert.match(ctld, /counter name "dropped_egress" drop comment "ctld: egress no policy allows \(deny-egress, ctld-out\)"/);
    // A pod only the default-deny selects may open nothing.
    assert.doesNotMatch(chain("egress_free"), /return/);
    // Ingress: only from the namespace's own pods, judged after the sender's egress.
    assert.match(chain("ingress_db"), /ip saddr \{ 100\.64\.0\.10, 100\.64\.0\.11, 100\.64\.0\.12 \} counter return comment "db-in"/);
    const forward = chain("forward");
    assert.ok(forward.indexOf("ip saddr 100.64.0.10 jump egress_ctld") < forward.indexOf("ip daddr 100.64.0.11 jump ingress_db"));
    assert.match(forward, /ct state established,related accept/);
    // What a pod sends to the node itself passes its egress chain too.
    assert.match(chain("input"), /ip saddr 100\.64\.0\.12 jump egress_free/);
    assert.doesNotMatch(chain("input"), /ingress_/);
    assert.deepEqual(t.skipped.map((s) => s.policy), ["ctld-out"]);
    kernelAccepts(this, t.text);
  });
});

describe("Slurm journey: a namespace's own labels in NetworkPolicies", () => {
  it("selects a peer namespace by its labels as well as its name (a policy may admit namespaces labelled with a tenant)", function () {
    const pods: PolicyPod[] = [
      { name: "dns", namespace: "clusterra-dns", address: "100.64.0.30", labels: { app: "dns" } },
      { name: "ctld", namespace: "tenant-acme", address: "100.64.0.10", labels: { app: "ctld" }, namespaceLabels: { "clusterra.io/tenant": "acme" } },
      { name: "argo", namespace: "argocd", address: "100.64.0.40", labels: { app: "argo" } },
    ];
    const t = networkPolicyRuleset([{ metadata: { name: "dns-in", namespace: "clusterra-dns" }, spec: { podSelector: {}, policyTypes: ["Ingress"], ingress: [{ from: [{ namespaceSelector: { matchExpressions: [{ key: "clusterra.io/tenant", operator: "Exists" }] } }], ports: [{ protocol: "UDP", port: 53 }] }] } }], pods);
    assert.match(t.text, /ip saddr 100\.64\.0\.10 udp dport 53 counter return comment "dns-in"/);
    assert.doesNotMatch(t.text, /100\.64\.0\.40 udp/);
    kernelAccepts(this, t.text);
  });
});

describe("Slurm journey: a process's capabilities", () => {
  it("reads a capability mask from /proc/<pid>/status by bit", () => {
    // chown (0), setuid (7), net_bind_service (10), sys_chroot (18), audit_write (29).
    const status = "Name:\tsshd\nCapInh:\t0000000000000000\nCapBnd:\t0000000020040481\n";
    assert.deepEqual(capabilitySet(status, "CapBnd"), ["chown", "setuid", "net_bind_service", "sys_chroot", "audit_write"]);
    assert.deepEqual(capabilitySet(status, "CapEff"), []);
  });
});

describe("Slurm journey: Kubernetes NAT", () => {
  const slurmctld = { name: "slurmctld", nodePorts: { from: 32191, to: 32191 }, podAddress: "100.64.0.10", podPort: SLURM_PORTS.slurmctld };
  const srun = { name: "srun", nodePorts: { from: 32730, to: 32739 }, podAddress: "100.64.0.13", externalTrafficPolicy: "Local" };
  const base = { device: "eth0", hostAddress: "10.0.0.10", podCidr: "100.64.0.0/16" };

  it("DNATs the NodePort to slurmctld keeping the client with externalTrafficPolicy Local, SNATs it with Cluster", () => {
    const local = centralHostNat({ ...base, forwards: [{ ...slurmctld, externalTrafficPolicy: "Local" }] });
    assert.match(local, /iifname "eth0" ip daddr 10\.0\.0\.10 tcp dport 32191 dnat to 100\.64\.0\.10:6817/);
    assert.match(local, /oifname "eth0" ip saddr 100\.64\.0\.0\/16 masquerade/);
    assert.doesNotMatch(local, /ct status dnat/);
    assert.match(centralHostNat({ ...base, forwards: [{ ...slurmctld, externalTrafficPolicy: "Cluster" }] }), /ct status dnat ip daddr 100\.64\.0\.10 tcp dport 6817 masquerade/);
  });

  it("forwards the srun block port by port to the login pod, keeping the slurmstepd's address", () => {
    const nat = centralHostNat({ ...base, forwards: [{ ...slurmctld, externalTrafficPolicy: "Local" }, srun] });
    assert.match(nat, /tcp dport 32730-32739 dnat to 100\.64\.0\.13 comment "srun NodePort"/);
    assert.doesNotMatch(nat, /ct status dnat/);
    assert.match(centralHostNat({ ...base, forwards: [{ ...srun, externalTrafficPolicy: "Cluster" }] }), /ct status dnat ip daddr 100\.64\.0\.13 tcp dport 32730-32739 masquerade/);
  });

  it("sends the tenant's Service address to its EndpointSlice, and masquerades only outside Cilium's native routing range", () => {
    assert.match(clusterIpNat({ serviceAddress: "100.65.0.200", servicePort: 6817, endpointAddress: "10.0.0.10", endpointPort: 32191 }), /ip daddr 100\.65\.0\.200 tcp dport 6817 dnat to 10\.0\.0\.10:32191/);
    assert.match(ciliumNodeNat({ device: "eth0", podAddresses: ["10.16.0.41"], nativeRoutingCidr: "10.0.0.0/11", masquerade: true }), /ip saddr 10\.16\.0\.41 ip daddr != 10\.0\.0\.0\/11 masquerade/);
    assert.doesNotMatch(ciliumNodeNat({ device: "eth0", podAddresses: ["10.16.0.41"], nativeRoutingCidr: "10.0.0.0/11", masquerade: false }), /masquerade/);
  });
});

describe("Slurm journey: the world from the plans and the fleet", function () {
  this.timeout(120000);

  it("derives addresses, groups and slurm.conf from central-dev, tenant-acme-dev and tenant-globex-dev", async function () {
    needHelm(this); // the world renders the tenants' objects from their facts
    const world = journeyWorld({ central: await plan("central-dev"), tenant: await plan("tenant-acme-dev"), other: await plan("tenant-globex-dev") }, exampleRoot(), needHelm(this));
    assert.deepEqual(worldProblems(world), []);
    assert.equal(world.tenant.nodePort, examplePorts("acme").slurmctld);
    assert.equal(world.tenant.controllerService.endpointAddress, world.central.hostAddress);
    assert.equal(world.tenant.externalTrafficPolicy, "Local");

    // The slurmd pods as the tenant's operator made its NodeSet's pod (a pod slurm-operator v1.2.1 made in the journey).
    const slurmd = must(slurmdFromPod(operatorPod()).slurmd);
    const topology = planTopology(world, "sjtest", { count: 2, hostname: slurmd.hostname, features: slurmd.features });
    assert.deepEqual(topology.slurmd.map((s) => s.hostname), [operatorPod().spec.hostname, slurmd.hostname(1)]);
    assert.ok(topology.commands.every((c) => !(c[0] === "link" && c[1] === "add" && !c.includes("netns"))), "every veth is made inside the journey's namespaces");
    const node = topology.firewalls.find((f) => f.ns.name === topology.slurmd[0].node.name);
    assert.ok(node);
    // The contract: central reaches slurmd on 6818 from the host's /32; slurmd leaves for central only on its NodePort.
    assert.match(node.translation.text, new RegExp(`ip saddr ${world.central.hostAddress}/32 tcp dport ${SLURM_PORTS.slurmd} counter accept`));
    const egressToHost = node.translation.text.split("\n").filter((l) => l.includes(`ip daddr ${world.central.hostAddress}/32`));
    // ... and on its own srun block (slurmstepd calling back interactive srun on central's login).
    assert.deepEqual(egressToHost.map((l) => /tcp dport (\S+)/.exec(l)?.[1]).sort(), [String(world.tenant.nodePort), `${examplePorts("acme").srunBlock.from}-${examplePorts("acme").srunBlock.to}`].sort());
    assert.deepEqual(world.tenant.srun.block, examplePorts("acme").srunBlock);
    assert.deepEqual(srunPortRangeOf(world.controlPlane.extraConf), examplePorts("acme").srunBlock);
    assert.equal(world.tenant.srun.externalTrafficPolicy, "Local");
    const moved: TenantSide = { ...world.tenant, srun: { ...world.tenant.srun, ports: world.tenant.srun.ports.map((p, i) => (i === 0 ? { ...p, targetPort: 22 } : p)), selector: {} } };
    assert.deepEqual(srunProblems(moved).map((p) => p.split(":")[1].trim().split(" ").slice(0, 3).join(" ")), ["srun ports not", "the srun Service"]);

    // The Slurm part's daemons read the operator's files (the Kubernetes part hands them over),
    // keys left out, with the journey's overrides after the operator's lines.
    const operator = ["ClusterName=clusterra-dev-acme", "SlurmctldHost=slurm-controller-0(slurm-controller.tenant-acme)", "AuthType=auth/slurm", "CredType=cred/slurm", "Prolog=prolog-user-directories", world.controlPlane.extraConf.trim()].join("\n");
    const etc = journeyEtcSlurm({ "slurm.conf": `${operator}\n`, "cgroup.conf": "CgroupPlugin=cgroup/v2\nIgnoreSystemd=yes\n", "prolog-user-directories": "#!/bin/sh\n", "slurm.key": "k", "jwt.key": "j" }, 15);
    assert.deepEqual(Object.keys(etc).sort(), ["cgroup.conf", "prolog-user-directories", "slurm.conf"]);
    assert.ok(etc["slurm.conf"].startsWith(operator));
    const values = slurmConfValues(etc["slurm.conf"]);
    for (const [key, value] of Object.entries({ ClusterName: "clusterra-dev-acme", AuthType: "auth/slurm", CredType: "cred/slurm", Prolog: "prolog-user-directories" })) assert.equal(values[key], value, key);
    for (const [key, value] of Object.entries({ ProctrackType: "proctrack/linuxproc", TaskPlugin: "task/none", SlurmdTimeout: "15" })) assert.equal(values[key], value, key);
    assert.doesNotMatch(etc["slurm.conf"], /munge/);
    assert.match(etc["cgroup.conf"], /^CgroupPlugin=disabled$/m);
    // Both tenant namespaces' NetworkPolicies on the host: every pod egress-isolated, slurmctld
    // allowed its slurmdbd and its own VPC on slurmd's port, nothing to anywhere else (globex's
    // control plane on the same host among it).
    const policy = topology.central.policy;
    assert.deepEqual([...policy.isolated.egress].sort(), ["globex-mariadb", "globex-slurmctld", "globex-slurmdbd", "login", "mariadb", "shared-dns", "slurmctld", "slurmdbd", "tenant-dns-acme", "tenant-dns-globex"]);
    // Each tenant's DNS pod: queries in from its own tenant's pods alone, out to central's API server alone.
    const dnsOut = new RegExp("chain egress_tenant_dns_acme \\{([\\s\\S]*?)\\n  \\}").exec(policy.text)?.[1] ?? "";
    assert.deepEqual(dnsOut.split("\n").filter((l) => /return/.test(l)).map((l) => l.trim().replace(/ counter return.*/, "")), [`ip daddr ${world.central.hostAddress}/32 tcp dport 6443`]);
    const dnsIn = (id: string) => new RegExp(`chain ingress_tenant_dns_${id} \\{([\\s\\S]*?)\\n  \\}`).exec(policy.text)?.[1] ?? "";
    const saddrs = (chain: string) => chain.split("\n").filter((l) => /udp dport 53 counter return/.test(l)).flatMap((l) => /ip saddr (?:\{ ([^}]*) \}|(\S+))/.exec(l)?.slice(1).filter(Boolean).join(", ").split(", ") ?? []);
    assert.ok(saddrs(dnsIn("acme")).includes(topology.central.slurmctld.address), dnsIn("acme"));
    assert.ok(!saddrs(dnsIn("globex")).includes(topology.central.slurmctld.address), "acme's slurmctld may not ask globex's DNS");
    assert.ok(saddrs(dnsIn("globex")).length > 0, dnsIn("globex"));
    assert.match(ctldOutOf(policy.text), new RegExp(`ip daddr ${topology.central.dns.tenant.address.replace(/\./g, "\\.")} udp dport 53`));
    assert.doesNotMatch(ctldOutOf(policy.text), new RegExp(`ip daddr ${topology.central.dns.other.address.replace(/\./g, "\\.")} `), "acme's slurmctld egress reaches globex's DNS");
    assert.deepEqual(topology.central.other.map((p) => `${p.name}:${p.port}`), ["globex's slurmctld:6817", "globex's slurmdbd:6819", "globex's mariadb:3306"]);
    const ctldOut = new RegExp("chain egress_slurmctld \\{([\\s\\S]*?)\\n  \\}").exec(policy.text)?.[1] ?? "";
    assert.match(ctldOut, new RegExp(`ip daddr ${topology.central.slurmdbd.address} tcp dport ${SLURM_PORTS.slurmdbd} counter return`));
    assert.match(ctldOut, new RegExp(`ip daddr ${world.tenant.vpcCidr.replace(/\./g, "\\.")} tcp dport ${SLURM_PORTS.slurmd} counter return`));
    assert.deepEqual(ctldOut.split("\n").filter((l) => /return/.test(l) && !l.includes(world.tenant.vpcCidr) && !/ip daddr 100\.64\./.test(l)), [], "slurmctld's pod may reach only its namespace's pods and its VPC");
    // No pod of acme's may open a connection to one of globex's, nor globex's accept one from acme's.
    const chain = (name: string) => {
      const body = new RegExp(`chain ${name} \\{([\\s\\S]*?)\\n  \\}`).exec(policy.text)?.[1];
      assert.ok(body !== undefined, `no chain ${name}`);
      return body;
    };
    for (const p of topology.central.other) for (const own of ["slurmctld", "slurmdbd", "mariadb", "login"]) assert.ok(!chain(`egress_${own}`).includes(p.address), `${p.name} ${p.address} in ${own}'s egress`);
    for (const own of [topology.central.slurmctld, topology.central.slurmdbd, topology.central.mariadb, topology.central.login]) for (const g of ["slurmctld", "slurmdbd", "mariadb"]) assert.ok(!chain(`ingress_globex_${g}`).includes(own.address), `acme's ${own.address} in globex's ${g} ingress`);
    // The operator's features put the node in a NodeSet line of central's slurm.conf, and so in its partitions.
    const nodeSet = nodeSetOf(etc["slurm.conf"], topology.slurmd[0].features);
    assert.ok(world.tenant.nodeSets.some((n) => n.name === nodeSet), `${topology.slurmd[0].features.join(",")} in no NodeSet`);
    assert.ok(partitionsOf(etc["slurm.conf"], nodeSet ?? "").length > 0);

    // With the other tenant's NodeSet pod, its own Slurm runs too: its login beside its control
    // plane, its NodePort and srun block forwarded to its pods, its slurmd named as its operator names it.
    assert.equal(topology.other.controlPlane, undefined, "without its slurmd pod nothing of the other tenant's Slurm runs");
    const withOther = planTopology(world, "sjtest", { count: 2, hostname: slurmd.hostname, features: slurmd.features }, { count: 1, hostname: (i) => `compute-8-${i}`, features: ["compute-8"] });
    const g = must(withOther.other.controlPlane);
    assert.deepEqual([g.slurmctld.address, g.slurmdbd.address, g.mariadb.address], withOther.central.other.map((p) => p.address));
    assert.deepEqual(g.slurmd.map((x) => [x.hostname, x.address]), [["compute-8-0", withOther.other.address]]);
    const nat = (withOther.rulesets.get(withOther.central.host.name) ?? []).join("\n");
    assert.match(nat, new RegExp(`tcp dport ${world.other.nodePort} dnat to ${g.slurmctld.address}:${SLURM_PORTS.slurmctld} comment "globex slurmctld NodePort"`));
    assert.match(nat, new RegExp(`tcp dport ${world.other.srun.block.from}-${world.other.srun.block.to} dnat to ${g.login.address}`));
    assert.match(withOther.hosts.get(g.login.ns.name) ?? "", new RegExp(`^${g.slurmctld.address.replace(/\./g, "\\.")} slurm-controller-0 ${world.other.controllerService.host}$`, "m"));
    assert.match(withOther.hosts.get(withOther.other.pod.name) ?? "", /compute-8-0/);
    // Its login is held to its namespace's policies too, and acme's pods reach none of its pods.
    assert.ok(withOther.central.policy.isolated.egress.includes("globex-login"));
    for (const own of ["slurmctld", "slurmdbd", "mariadb", "login"]) assert.ok(!new RegExp(`chain egress_${own} \\{[^}]*${g.login.address.replace(/\./g, "\\.")}`).test(withOther.central.policy.text), `globex's login in acme's ${own} egress`);
  });

  it("finds the groups Karpenter's selector picks by tag", () => {
    const groups = securityGroups([
      resource("aws:ec2/securityGroup:SecurityGroup", "workers", { id: "sg-w", tags: { "karpenter.sh/discovery": "c" } }),
      resource("aws:ec2/securityGroup:SecurityGroup", "server", { id: "sg-s", tags: { Name: "s" } }),
    ]);
    assert.deepEqual(groupsSelectedByTags(groups, [{ "karpenter.sh/discovery": "c" }]).map((g) => g.id), ["sg-w"]);
  });
});

/** A slurmd pod slurm-operator v1.2.1 made in the journey (the tenant's NodeSet raised by the scaling loop), kept as the API server returned it. */
function operatorPod(): OperatorPod {
  return JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "test", "fixtures", "slurm-operator", "slurmd-pod.json"), "utf8")) as OperatorPod;
}

function must<T>(v: T | undefined): T {
  assert.ok(v !== undefined);
  return v;
}

describe("Slurm journey: slurmd as the tenant's operator made its pod", () => {
  it("splits the image's SLURMD_OPTIONS as its shell would, and refuses what that shell would expand", () => {
    assert.deepEqual(shellWords(`-Z --conf-server h.ns:6817 --conf 'Features=a,b Weight=1'`), { words: ["-Z", "--conf-server", "h.ns:6817", "--conf", "Features=a,b Weight=1"], problems: [] });
    assert.deepEqual(shellWords(`--conf 'A=$HOME'`), { words: ["--conf", "A=$HOME"], problems: [] });
    assert.match(shellWords(`--conf "A=\$HOME"`).problems.join(), /\$HOME .* would be expanded/);
    assert.match(shellWords("-Z; touch /x").problems.join(), /is not a plain word/);
    assert.match(shellWords("--conf Gres=gpu:*").problems.join(), /is not a plain word/);
  });

  it("reads the node name, NodeSet, features, --conf-server and options from the operator's pod", () => {
    const pod = operatorPod();
    const r = slurmdFromPod(pod);
    assert.deepEqual(r.problems, []);
    const s = must(r.slurmd);
    assert.equal(s.pod, pod.metadata.name);
    assert.equal(s.nodeSet, pod.metadata.ownerReferences?.[0].name);
    assert.equal(s.hostname(0), pod.spec.hostname);
    assert.equal(s.hostname(1), `${pod.spec.hostname?.replace(/0$/, "")}1`);
    assert.equal(s.hostname(12), `${pod.spec.hostname?.replace(/0$/, "")}12`);
    assert.equal(s.options[0], "-Z");
    // Its first feature is its NodeSet's Slurm name (the node name's stem), which central's slurm.conf puts in a partition.
    assert.equal(s.features[0], s.hostname(0).replace(/-0$/, ""));
    // No quote survives: slurmd reads `Features=...` as the image's supervisord hands it over.
    assert.ok(s.options.every((o) => !/^'|'$/.test(o)), s.options.join(" "));
    assert.match(`${s.confServer.host}:${s.confServer.port}`, /^[a-z0-9.-]+:\d+$/);
  });

  it("names every reason a pod cannot run, at once", () => {
    const pod = operatorPod();
    const broken: OperatorPod = {
      metadata: { name: "x-0", labels: {} },
      spec: { containers: pod.spec.containers.map((c) => (c.name === "slurmd" ? { ...c, command: ["sleep"], args: ["--conf", "'Weight=1'"] } : c)) },
    };
    const r = slurmdFromPod(broken);
    assert.equal(r.slurmd, undefined);
    for (const want of [/replaces the image's entrypoint/, /no --conf-server/, /not dynamic/, /no NodeSet owns it/, /gives no Features/, /does not end with its ordinal/]) assert.ok(r.problems.some((p) => want.test(p)), `${want}: ${r.problems.join(" | ")}`);
    assert.deepEqual(slurmdFromPod({ ...pod, spec: { ...pod.spec, containers: [] } }).problems, [`pod ${pod.metadata.name} has no slurmd container`]);
    // What the image would do that the journey does not model is refused, not guessed.
    const labels = pod.metadata.labels ?? {};
    const tenth: OperatorPod = { ...pod, metadata: { ...pod.metadata, labels: { ...labels, [SLINKY_NODESET_POD.hostnameLabel]: "cpu-4-10", [SLINKY_NODESET_POD.indexLabel]: "10" } } };
    assert.match(slurmdFromPod(tenth).problems.join(), /does not show the NodeSet's ordinal padding/);
    const padded: OperatorPod = { ...pod, metadata: { ...pod.metadata, labels: { ...labels, [SLINKY_NODESET_POD.hostnameLabel]: "cpu-4-007", [SLINKY_NODESET_POD.indexLabel]: "007" } } };
    assert.equal(must(slurmdFromPod(padded).slurmd).hostname(12), "cpu-4-012");
    const placed: OperatorPod = { ...pod, metadata: { ...pod.metadata, annotations: { [SLINKY_NODESET_POD.topologyAnnotation]: "rack1" } } };
    assert.match(slurmdFromPod(placed).problems.join(), /Topology=rack1/);
  });
});

describe("Slurm journey: slurmdbd on the operator's slurmdbd.conf", () => {
  it("keeps every line the operator wrote but StoragePass, which becomes the part's own database password", () => {
    const operator = fs.readFileSync(path.join(__dirname, "..", "..", "test", "fixtures", "slurm-operator", "slurmdbd.conf"), "utf8");
    const conf = journeySlurmdbdConf(operator, "p4ss");
    const without = (text: string) => text.trimEnd().split("\n").filter((l) => !l.startsWith("StoragePass="));
    assert.deepEqual(without(conf), without(operator));
    assert.deepEqual(conf.split("\n").filter((l) => l.startsWith("StoragePass=")), ["StoragePass=p4ss"]);
    const values = slurmConfValues(conf);
    for (const [key, value] of Object.entries({ AuthType: "auth/slurm", AuthAltTypes: "auth/jwt", DbdHost: "slurm-accounting-0", StorageHost: "mariadb", StorageLoc: "slurm_acct_db" })) assert.equal(values[key], value, key);
    assert.match(journeySlurmdbdConf("DbdPort=6819\n", "x"), /^DbdPort=6819\nStoragePass=x\n$/);
    assert.equal(journeySlurmdbdConf("StoragePass=a\nDbdPort=6819\nStoragePass=b\n", "x"), "StoragePass=x\nDbdPort=6819\n");
  });
});

describe("Slurm journey: the login's sshd on the operator's sshd_config", () => {
  it("puts the journey's stand-in keywords first (sshd keeps a keyword's first value), then every line the operator wrote", () => {
    const operator = fs.readFileSync(path.join(__dirname, "..", "..", "test", "fixtures", "slurm-operator", "sshd_config"), "utf8");
    const conf = journeySshdConfig(operator, { address: "100.64.0.13", dir: "/etc/journey-ssh" });
    const keywords = conf.split("\n").filter((l) => /^[A-Za-z]/.test(l)).map((l) => l.split(/\s+/)[0]);
    assert.deepEqual(keywords.slice(0, SSHD_STAND_INS.length), [...SSHD_STAND_INS]);
    assert.ok(conf.endsWith(`${operator.trimEnd()}\n`));
    // The operator's own keywords stay its own: the journey sets none of them.
    assert.match(conf, /^UsePAM yes$/m);
    // The fleet's extraSshdConfig, after the operator's own lines (a pod slurm-operator v1.2.1 made in the journey).
    for (const [k, v] of Object.entries(LOGIN_SSHD_CONFIG)) assert.match(conf, new RegExp(`^${k} ${v}$`, "m"));
    assert.deepEqual(keywords.filter((k) => SSHD_STAND_INS.includes(k as (typeof SSHD_STAND_INS)[number])).length, SSHD_STAND_INS.length);
  });
});

describe("Slurm journey: the image", () => {
  it("is found by install-tools' stamp, and refused when missing or not Slurm 26.05, saying how to make it", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "slurm-image-"));
    try {
      assert.match(findSlurmImage(root).missing ?? "", /not made: run `sudo bash scripts\/install-tools`/);
      const dir = path.join(root, SLURM_IMAGE_DIR);
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, ".clusterra-stamp"), "sid 22.05.* slurmctld\nslurm 22.05.8-4, mariadb 1:10.11\n");
      assert.match(findSlurmImage(root).missing ?? "", /holds slurm 22\.05\.8-4, mariadb 1:10\.11, not Slurm 26\.05/);
      fs.writeFileSync(path.join(dir, ".clusterra-stamp"), "sid 26.05.* slurmctld\nslurm 26.05.5-1, mariadb 1:11.8.9+ds-4\n");
      assert.deepEqual(findSlurmImage(root), { image: { dir, versions: "slurm 26.05.5-1, mariadb 1:11.8.9+ds-4" } });
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
