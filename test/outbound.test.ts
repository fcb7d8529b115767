import * as assert from "node:assert/strict";
import * as dns from "dns";
import * as http from "http";
import * as net from "net";
import { apiServerArgs, readK3sServer, type K3sServer } from "../journey/kube/k3s";
import { isLoopback, outboundDials, SEALED_API_SERVER_FLAGS, WEBHOOK_ADMISSION_PLUGINS, type GuardedObject } from "../journey/kube/outbound";
import { sealedRuleset, snmpCounters } from "../journey/kube/sealed-network";
import { leakStep, seededLeakStep } from "../journey";
import { endpointOf, offMachineDial, offMachineListen, OffMachineError } from "./loopback-only";
import { byType, plan } from "./helpers";

const PATHS = { etcd: "http://127.0.0.1:18443", port: 17443, certDir: "/run/pki", admissionConfig: "/run/admission.yaml" };

/** Objects of the kinds that make an API server dial, as the fleet's charts ship them. */
const WEBHOOK_TO_SERVICE: GuardedObject = {
  kind: "ValidatingWebhookConfiguration",
  metadata: { name: "cert-manager-webhook" },
  webhooks: [{ name: "webhook.cert-manager.io", clientConfig: { service: { namespace: "cert-manager", name: "cert-manager-webhook" } } }],
};
const MUTATING_TO_SERVICE: GuardedObject = {
  kind: "MutatingWebhookConfiguration",
  metadata: { name: "slurm-operator-webhook" },
  webhooks: [{ name: "nodeset.slinky.slurm.net", clientConfig: { service: { namespace: "slinky", name: "slurm-operator-webhook" } } }],
};
const LOOPBACK_WEBHOOK: GuardedObject = {
  kind: "ValidatingWebhookConfiguration",
  metadata: { name: "local" },
  webhooks: [{ name: "local.example", clientConfig: { url: "https://127.0.0.1:9443/validate" } }],
};
const LOCAL_APISERVICE: GuardedObject = { kind: "APIService", metadata: { name: "v1.apps" }, spec: { group: "apps", version: "v1" } };
const AGGREGATED: GuardedObject = { kind: "APIService", metadata: { name: "v1beta1.metrics.k8s.io" }, spec: { service: { namespace: "kube-system", name: "metrics-server" } } };
const CONVERTED_CRD: GuardedObject = {
  kind: "CustomResourceDefinition",
  metadata: { name: "nodepools.karpenter.sh" },
  spec: { conversion: { strategy: "Webhook", webhook: { clientConfig: { service: { namespace: "kube-system", name: "karpenter" } } } } },
};

async function servers(): Promise<{ name: string; server: K3sServer }[]> {
  const out: { name: string; server: K3sServer }[] = [];
  for (const stack of ["central-dev", "tenant-acme-dev"]) {
    const instance = byType(await plan(stack), "aws:ec2/instance:Instance")[0];
    out.push({ name: stack, server: readK3sServer(String(instance.inputs?.userData), "amd64", stack) });
  }
  return out;
}

describe("the journey's API servers dial nothing outside loopback (issue 33)", function () {
  this.timeout(120_000);

  it("passes the journey's flags, from each planned server's user data, with the webhooks and APIServices the fleet ships", async () => {
    for (const { name, server } of await servers()) {
      const args = apiServerArgs(server, PATHS, SEALED_API_SERVER_FLAGS);
      assert.deepEqual(outboundDials(args, [WEBHOOK_TO_SERVICE, MUTATING_TO_SERVICE, LOOPBACK_WEBHOOK, LOCAL_APISERVICE], server.admissionConfig), [], name);
      assert.ok(args.includes(`--disable-admission-plugins=${WEBHOOK_ADMISSION_PLUGINS.join(",")}`), `${name}: webhook admission is off`);
      assert.ok(args.includes("--enable-aggregator-routing=false"), name);
    }
  });

  it("refuses a copy of the journey with K3s's enable-aggregator-routing and a webhook pointing at a Service", async () => {
    for (const { name, server } of await servers()) {
      // The K3s server's own flags, unsealed: webhook admission on, aggregator routing on.
      const unsealed = apiServerArgs(server, PATHS);
      assert.ok(unsealed.includes("--enable-aggregator-routing=true"), `${name}: K3s's default`);
      assert.deepEqual(outboundDials(unsealed, [WEBHOOK_TO_SERVICE, LOOPBACK_WEBHOOK], server.admissionConfig), [
        "--enable-aggregator-routing=true: aggregated APIs are dialed at their endpoints' pod addresses",
        "ValidatingWebhookConfiguration/cert-manager-webhook webhook webhook.cert-manager.io: ValidatingAdmissionWebhook is on and calls Service cert-manager/cert-manager-webhook",
      ], name);
    }
  });

  it("refuses each setting that dials: a remote datastore, an authentication or audit webhook, an aggregated API, a conversion webhook, a mutating webhook still on", () => {
    const sealed = Object.entries(SEALED_API_SERVER_FLAGS).map(([k, v]) => `--${k}=${v}`);
    assert.deepEqual(outboundDials(["--etcd-servers=http://127.0.0.1:2379", ...sealed], [AGGREGATED, CONVERTED_CRD, LOCAL_APISERVICE]), [
      "APIService/v1beta1.metrics.k8s.io: the aggregator proxies v1beta1.metrics.k8s.io to Service kube-system/metrics-server",
      "CustomResourceDefinition/nodepools.karpenter.sh: its versions are converted by a webhook at Service kube-system/karpenter",
    ]);
    const dials = outboundDials([
      "--etcd-servers=https://10.0.0.5:2379,http://localhost:2379",
      "--authentication-token-webhook-config-file=/etc/authn.yaml",
      "--audit-webhook-config-file=/etc/audit.yaml",
      "--disable-admission-plugins=ValidatingAdmissionWebhook",
    ], [MUTATING_TO_SERVICE, WEBHOOK_TO_SERVICE], "plugins:\n- name: ImagePolicyWebhook\n");
    assert.deepEqual(dials, [
      "--etcd-servers=https://10.0.0.5:2379: the datastore is not on loopback",
      "--authentication-token-webhook-config-file=/etc/authn.yaml: the API server calls its token review webhook",
      "--audit-webhook-config-file=/etc/audit.yaml: the API server calls its audit webhook",
      "admission configuration: ImagePolicyWebhook calls a backend",
      "MutatingWebhookConfiguration/slurm-operator-webhook webhook nodeset.slinky.slurm.net: MutatingAdmissionWebhook is on and calls Service slinky/slurm-operator-webhook",
    ]);
  });

  it("knows loopback: 127.0.0.0/8, ::1 and localhost, nothing else", () => {
    for (const h of ["127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"]) assert.ok(isLoopback(h), h);
    for (const h of ["10.43.0.1", "0.0.0.0", "::", "169.254.169.254", "kubernetes.default.svc", "example.com", "128.0.0.1"]) assert.ok(!isLoopback(h), h);
  });
});

describe("the journey's sealed namespace", () => {
  it("counts and drops whatever is addressed outside loopback, IPv4 and IPv6", () => {
    const rules = sealedRuleset();
    assert.match(rules, /ip daddr != 127\.0\.0\.0\/8 ip daddr != @own counter name outside drop/);
    assert.match(rules, /set own \{ type ipv4_addr; \}/);
    assert.match(rules, /ip6 daddr != ::1 counter name outside drop/);
  });

  it("reads /proc/net/snmp and snmp6: dials refused for want of a route, packets sent", () => {
    const snmp = "Ip: Forwarding DefaultTTL OutRequests OutNoRoutes\nIp: 2 64 120 3\nIcmp: InMsgs\nIcmp: 0\n";
    const snmp6 = "Ip6InReceives                   \t1\nIp6OutRequests                  \t10\nIp6OutNoRoutes                  \t2\n";
    const c = snmpCounters(snmp, snmp6);
    assert.equal(c.IpOutRequests, 120);
    assert.equal(c.IpOutNoRoutes, 3);
    assert.equal(c.Ip6OutNoRoutes, 2);
  });

  it("fails the journey's last step on one packet sent outside, and says what was refused", () => {
    assert.equal(leakStep({ packetsOutside: 0, noRoute: 0, sent: 9000 }).passed, true);
    // A dial refused for want of a route is a dial off the machine (the control: it was once only printed).
    assert.equal(leakStep({ packetsOutside: 0, noRoute: 4, sent: 9000 }).passed, false);
    const leaked = leakStep({ packetsOutside: 1, noRoute: 0, sent: 9000 });
    assert.equal(leaked.passed, false);
    assert.match(leaked.detail, /^1 packets addressed outside loopback/);
  });
});

describe("the sealed namespace's counters and their control", () => {
  const at = (packetsOutside: number, noRoute: number) => ({ packetsOutside, noRoute, sent: 0 });
  it("passes the control when the seeded route's dial is counted outside and the unrouted one as no route", () => {
    assert.equal(seededLeakStep({ before: at(0, 0), routed: at(1, 0), unrouted: at(1, 1) }).passed, true);
  });
  it("fails the control on counters that count nothing (a firewall rule that never matches, a no-route count never read)", () => {
    assert.equal(seededLeakStep({ before: at(0, 0), routed: at(0, 0), unrouted: at(0, 1) }).passed, false);
    assert.equal(seededLeakStep({ before: at(0, 0), routed: at(1, 0), unrouted: at(1, 0) }).passed, false);
  });
});

describe("the unit suite keeps to loopback (test/setup.ts)", () => {
  it("refuses a dial off the machine at the call, before any packet", () => {
    assert.throws(() => net.connect(443, "10.43.0.1"), OffMachineError);
    assert.throws(() => net.connect({ port: 443, host: "example.com" }), /a dial to example\.com:443: tests and benchmarks keep to loopback/);
    assert.throws(() => http.get("http://169.254.169.254/latest/meta-data/"), OffMachineError);
  });

  it("refuses a server on every interface, and a lookup of a public name", () => {
    assert.throws(() => net.createServer().listen(0), /listening on every interface/);
    assert.throws(() => net.createServer().listen(0, "0.0.0.0"), /listening on 0\.0\.0\.0/);
    assert.throws(() => dns.lookup("example.com", () => undefined), /a lookup of example\.com/);
    assert.throws(() => dns.resolve4("example.com", () => undefined), /a DNS query for example\.com/);
  });

  it("lets a server on 127.0.0.1 answer a client on loopback", async () => {
    const server = http.createServer((_, res) => res.end("ok"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as net.AddressInfo).port;
    const body = await new Promise<string>((resolve, reject) => http.get(`http://127.0.0.1:${port}/`, (res) => { let b = ""; res.on("data", (d) => (b += d)); res.on("end", () => resolve(b)); }).on("error", reject));
    server.close();
    assert.equal(body, "ok");
  });

  it("reads every spelling of connect() and listen()", () => {
    assert.deepEqual(endpointOf([8080, "127.0.0.1"]), { port: 8080, host: "127.0.0.1" });
    assert.deepEqual(endpointOf([[{ port: 1, host: "10.0.0.1" }, null]]), { port: 1, host: "10.0.0.1" });
    assert.deepEqual(endpointOf(["/run/x.sock"]), { path: "/run/x.sock" });
    assert.equal(offMachineDial({ port: 80 }), undefined, "no host is localhost");
    assert.equal(offMachineListen({ path: "/run/x.sock" }), undefined);
    assert.match(String(offMachineListen({ port: 80, host: "::" })), /listening on ::/);
  });
});
