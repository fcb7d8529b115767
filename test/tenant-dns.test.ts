/**
 * Each tenant's DNS on central (components/fleet/tenant-dns.ts) and the admission policy that
 * points the tenant's pods at it: what it serves (its tenant's names alone), that it forwards
 * nothing, how its pod runs, who may ask it. The journey runs it (CoreDNS built by
 * install-tools, against central's API server) and asks it from a tenant pod's resolver.
 */
import * as assert from "node:assert/strict";
import { TENANT_POD_DNS_POLICY, TENANT_POD_RESOLVER_REQUIRED, tenantPodDnsPolicy, tenantPodResolverRequired } from "../components/fleet/central-admission";
import { tenantDnsCorefile, tenantDnsLabels, tenantDnsObjects } from "../components/fleet/tenant-dns";
import { tenantEgressProblems } from "../fleet-tools/egress";
import { accountingDatabase, controlPlaneManifestsSharedValues, controlPlaneSharedValues } from "../components/fleet/control-plane";
import { LOGIN_SET } from "../facts/fleet";
import { CENTRAL_K3S_RANGES } from "../facts/contract";
import { RETIRING_SHARED_DNS, TENANT_DNS, tenantDnsName } from "../facts/control-plane";
import { RETIRING_SHARED_DNS_POLICY, retiringSharedDnsObjects, retiringSharedDnsPolicy } from "../components/fleet/retiring-shared-dns";
import { LABEL_KEYS } from "../facts/project";
import { K3S_API_PORT } from "../facts/contract";
import { centralHostAddress } from "../config/subnet-layout";
import { exampleRoot, plan } from "./helpers";
import * as fs from "fs";
import * as path from "path";
import { parseAllDocuments } from "yaml";
import { kubeletResolvConf, parseQueryOutput, reverseName } from "../journey/kube/tenant-dns";

type Obj = Record<string, any>;
const API_SERVER = "10.0.0.10";
const objects = tenantDnsObjects(API_SERVER, ["globex", "acme"]) as Obj[];
const named = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name) as Obj;
const egressPolicy = named("NetworkPolicy", `${TENANT_DNS.labels["app.kubernetes.io/name"]}-egress`);

describe("each tenant's DNS on central", () => {
  it("answers only the cluster's zone, from its tenant's namespace's records, and forwards nothing (no reverse zones: a PTR would name any namespace's Service)", () => {
    const corefile = tenantDnsCorefile("acme");
    // One server block: a name outside its zones is refused by CoreDNS itself.
    assert.equal(corefile.match(/\{\s*$/gm)?.length, 3, corefile);
    assert.match(corefile, /^cluster\.local:53 \{$/m);
    assert.match(corefile, /^ {4}kubernetes cluster\.local \{$/m);
    assert.doesNotMatch(corefile, /^\.:|^\. |forward|proxy|grpc|\bfile\b|hosts|template|arpa|namespace_labels/m);
    assert.match(corefile, /^ {8}namespaces tenant-acme$/m);
    assert.equal(named("ConfigMap", tenantDnsName("acme")).data.Corefile, corefile);
    assert.match(named("ConfigMap", tenantDnsName("globex")).data.Corefile, /^ {8}namespaces tenant-globex$/m);
  });

  it("runs one per tenant, as the image's non-root user with every capability dropped, binding 53 through its own network namespace's sysctl, CPU-limited, and rolls when its Corefile changes", () => {
    assert.deepEqual(objects.filter((o) => o.kind === "Deployment").map((o) => o.metadata.name), [tenantDnsName("acme"), tenantDnsName("globex")]);
    const deployment = named("Deployment", tenantDnsName("acme"));
    assert.deepEqual(deployment.spec.selector.matchLabels, tenantDnsLabels("acme"));
    assert.deepEqual(deployment.spec.selector.matchLabels, { ...TENANT_DNS.labels, [TENANT_DNS.answersLabel]: "tenant-acme", [LABEL_KEYS.tenant]: "acme" });
    assert.deepEqual(deployment.spec.strategy.rollingUpdate, { maxUnavailable: 0, maxSurge: 1 });
    const pod = deployment.spec.template;
    const [container] = pod.spec.containers;
    assert.equal(pod.spec.serviceAccountName, TENANT_DNS.serviceAccount);
    assert.deepEqual(pod.spec.securityContext.sysctls, [{ name: "net.ipv4.ip_unprivileged_port_start", value: "53" }]);
    assert.equal(pod.spec.securityContext.runAsNonRoot, true);
    assert.equal(pod.spec.securityContext.runAsUser, TENANT_DNS.user);
    assert.equal(pod.spec.securityContext.seccompProfile.type, "RuntimeDefault");
    assert.deepEqual(container.securityContext, { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] }, readOnlyRootFilesystem: true });
    assert.equal(container.image, `${TENANT_DNS.image.repository}:${TENANT_DNS.image.tag}`);
    assert.match(pod.metadata.annotations["clusterra.io/corefile-sha256"], /^[0-9a-f]{64}$/);
    assert.notEqual(pod.metadata.annotations["clusterra.io/corefile-sha256"], named("Deployment", tenantDnsName("globex")).spec.template.metadata.annotations["clusterra.io/corefile-sha256"]);
    assert.equal(named("Namespace", TENANT_DNS.namespace).metadata.labels["pod-security.kubernetes.io/enforce"], "restricted");
    assert.deepEqual(container.resources, { requests: { cpu: `${TENANT_DNS.request.cpuMillis}m`, memory: `${TENANT_DNS.request.memoryMiB}Mi` }, limits: { cpu: `${TENANT_DNS.cpuLimitMillis}m`, memory: `${TENANT_DNS.memoryLimitMiB}Mi` } });
  });

  it("reads the API server for Services, EndpointSlices and namespaces only, list and watch", () => {
    const role = objects.find((o) => o.kind === "ClusterRole") as Obj;
    assert.deepEqual(role.rules.flatMap((r: Obj) => r.verbs), ["list", "watch", "list", "watch"]);
    assert.deepEqual(role.rules.flatMap((r: Obj) => r.resources).sort(), ["endpointslices", "namespaces", "services"]);
    assert.deepEqual((objects.find((o) => o.kind === "ClusterRoleBinding") as Obj).subjects, [{ kind: "ServiceAccount", name: TENANT_DNS.serviceAccount, namespace: TENANT_DNS.namespace }]);
  });

  it("leaves its Service's address to the API server, and selects its tenant's DNS pods alone", () => {
    const service = named("Service", tenantDnsName("acme"));
    assert.equal(service.spec.clusterIP, undefined);
    assert.deepEqual(service.spec.selector, tenantDnsLabels("acme"));
    assert.deepEqual(service.spec.ports.map((p: Obj) => `${p.protocol}/${p.port}`), ["UDP/53", "TCP/53"]);
  });

  it("reaches central's API server alone, on the host's address the fleet computes as the host's instance has it", async () => {
    assert.deepEqual(egressPolicy.spec, { podSelector: { matchLabels: TENANT_DNS.labels }, policyTypes: ["Egress"], egress: [{ to: [{ ipBlock: { cidr: `${API_SERVER}/32` } }], ports: [{ protocol: "TCP", port: K3S_API_PORT }] }] });
    const central = await plan("central-dev");
    const address = central.deployment.deployment.resources.find((r) => r.type === "aws:ec2/instance:Instance")?.inputs?.privateIp;
    const written = parseAllDocuments(fs.readFileSync(path.join(exampleRoot(), "fleet/central/dev/dns.yaml"), "utf8")).map((d) => d.toJS() as Obj);
    assert.equal(written.find((o) => o.metadata?.name === egressPolicy.metadata.name)?.spec.egress[0].to[0].ipBlock.cidr, `${address}/32`);
    assert.equal(centralHostAddress((central.config as { network: Parameters<typeof centralHostAddress>[0] }).network), address);
    // One DNS for each tenant the central stack serves.
    assert.deepEqual(written.filter((o) => o.kind === "Deployment").map((o) => o.metadata.name), [tenantDnsName("acme"), tenantDnsName("globex"), RETIRING_SHARED_DNS.name]);
  });

  it("admits queries from its tenant's namespace, and metrics from the monitoring namespace, only", () => {
    const policy = named("NetworkPolicy", `${tenantDnsName("acme")}-ingress`);
    assert.deepEqual(policy.spec.podSelector, { matchLabels: tenantDnsLabels("acme") });
    assert.deepEqual(policy.spec.policyTypes, ["Ingress"]);
    assert.deepEqual(policy.spec.ingress[0].from, [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "tenant-acme" } } }]);
    assert.deepEqual(policy.spec.ingress[0].ports, [{ protocol: "UDP", port: 53 }, { protocol: "TCP", port: 53 }]);
    assert.deepEqual(policy.spec.ingress[1].from, [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } }]);
  });
});

describe("fleet check: a tenant's DNS egress", () => {
  const dnsPeer = (labels: Record<string, string>) => ({ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": TENANT_DNS.namespace } }, podSelector: { matchLabels: labels } });
  const rendered = (peer: Obj) => [
    { file: "f", application: "acme-control-plane-manifests", namespace: "tenant-acme", kind: "NetworkPolicy", tenantCidr: "10.1.0.0/16", srunBlock: undefined, object: { metadata: { name: "deny" }, spec: { podSelector: {}, policyTypes: ["Egress"] } } },
    { file: "f", application: "acme-control-plane-manifests", namespace: "tenant-acme", kind: "NetworkPolicy", tenantCidr: "10.1.0.0/16", srunBlock: undefined, object: { metadata: { name: "slurmrestd-egress" }, spec: { podSelector: { matchLabels: { "app.kubernetes.io/name": "slurmrestd", "app.kubernetes.io/instance": "slurm" } }, policyTypes: ["Egress"], egress: [{ to: [peer], ports: [{ protocol: "UDP", port: 53 }] }] } } },
  ];

  it("accepts the namespace's own DNS and refuses another tenant's, or every tenant's", () => {
    // As the control-plane chart renders it: the tenants' DNS label and the namespace it answers.
    assert.deepEqual(tenantEgressProblems(rendered(dnsPeer({ ...TENANT_DNS.labels, [TENANT_DNS.answersLabel]: "tenant-acme" })) as never).map((p) => p.reason), []);
    for (const labels of [{ ...TENANT_DNS.labels, [TENANT_DNS.answersLabel]: "tenant-globex" }, { ...TENANT_DNS.labels }]) {
      const problems = tenantEgressProblems(rendered(dnsPeer(labels)) as never);
      assert.equal(problems.length, 1, JSON.stringify(problems));
      assert.match(problems[0].reason, /only the namespace's own DNS \(clusterra-dns pods .*"clusterra.io\/answers-namespace":"tenant-acme"/);
    }
  });
});

describe("central admission: every tenant pod asks its tenant's DNS", () => {
  const [policy, ...bindings] = tenantPodDnsPolicy(["globex", "acme"]) as Obj[];

  it("gives every pod created in a tenant's namespace for its DNS dnsPolicy None and the address of its tenant's DNS Service as its only nameserver, with ClusterFirst's search path", () => {
    assert.deepEqual(policy.spec.matchConstraints.resourceRules, [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] }]);
    // Only pods whose template names this resolver: the rollout that brings them brings the egress that reaches it.
    assert.deepEqual(policy.spec.matchConditions.map((c: Obj) => c.expression), [`has(object.metadata.annotations) && object.metadata.annotations.exists(k, k == '${TENANT_DNS.resolverAnnotation}') && object.metadata.annotations['${TENANT_DNS.resolverAnnotation}'] == '${TENANT_DNS.resolver}'`]);
    assert.equal(policy.spec.failurePolicy, "Fail");
    assert.deepEqual(policy.spec.paramKind, { apiVersion: "v1", kind: "Service" });
    assert.equal(policy.spec.mutations[0].patchType, "JSONPatch");
    const expression: string = policy.spec.mutations[0].jsonPatch.expression;
    assert.ok(expression.includes("JSONPatch{op: 'add', path: '/spec/dnsPolicy', value: 'None'}"));
    assert.ok(expression.includes("nameservers: [params.spec.clusterIP]"));
    assert.ok(expression.includes("searches: [request.namespace + '.svc.cluster.local', 'svc.cluster.local', 'cluster.local']"));
  });

  it("binds it once per tenant: its namespace alone, reading its own DNS's Service, and refusing the pod while that Service is missing", () => {
    assert.deepEqual(bindings.map((b) => b.metadata.name), [`${TENANT_POD_DNS_POLICY}-acme`, `${TENANT_POD_DNS_POLICY}-globex`]);
    const [acme] = bindings;
    assert.equal(acme.spec.policyName, TENANT_POD_DNS_POLICY);
    assert.deepEqual(acme.spec.matchResources.namespaceSelector, { matchLabels: { "kubernetes.io/metadata.name": "tenant-acme" } });
    assert.deepEqual(acme.spec.paramRef, { name: tenantDnsName("acme"), namespace: TENANT_DNS.namespace, parameterNotFoundAction: "Deny" });
  });
});

describe("central admission: a tenant pod made for no resolver", () => {
  const [policy, binding] = tenantPodResolverRequired() as Obj[];
  it("is refused in every tenant namespace unless the DNS policies gave it one nameserver with dnsPolicy None", () => {
    assert.equal(policy.kind, "ValidatingAdmissionPolicy");
    assert.equal(policy.spec.failurePolicy, "Fail");
    assert.equal(policy.spec.validations[0].expression, "object.spec.dnsPolicy == 'None' && has(object.spec.dnsConfig) && has(object.spec.dnsConfig.nameservers) && size(object.spec.dnsConfig.nameservers) == 1");
    assert.equal(binding.spec.policyName, TENANT_POD_RESOLVER_REQUIRED);
    assert.deepEqual(binding.spec.validationActions, ["Deny"]);
    assert.deepEqual(binding.spec.matchResources.namespaceSelector, { matchExpressions: [{ key: LABEL_KEYS.tenant, operator: "Exists" }] });
  });
});

describe("the retiring shared DNS (the release before's, until every tenant has rolled out)", () => {
  const shared = retiringSharedDnsObjects(API_SERVER) as Obj[];
  const [policy, binding] = retiringSharedDnsPolicy() as Obj[];

  it("keeps the release before's address, Corefile and policy for the pods that release made", () => {
    const service = shared.find((o) => o.kind === "Service") as Obj;
    assert.equal(service.spec.clusterIP, RETIRING_SHARED_DNS.clusterIp);
    assert.match((shared.find((o) => o.kind === "ConfigMap") as Obj).data.Corefile, /^ {8}namespace_labels clusterra\.io\/tenant$/m);
    assert.equal(policy.metadata.name, RETIRING_SHARED_DNS_POLICY);
    assert.ok(policy.spec.matchConditions[0].expression.endsWith(`== '${RETIRING_SHARED_DNS.resolver}'`));
    assert.ok(policy.spec.mutations[0].jsonPatch.expression.includes(`nameservers: ['${RETIRING_SHARED_DNS.clusterIp}']`));
    assert.deepEqual(binding.spec.matchResources.namespaceSelector, { matchExpressions: [{ key: LABEL_KEYS.tenant, operator: "Exists" }] });
  });

  it("is no pod this release's tenant egress selects, and its selector takes no tenant's own DNS pod", () => {
    const selects = (selector: Record<string, string>, labels: Record<string, string>) => Object.entries(selector).every(([k, v]) => labels[k] === v);
    const ownEgressPeer = { ...TENANT_DNS.labels, [TENANT_DNS.answersLabel]: "tenant-acme" };
    assert.ok(!selects(ownEgressPeer, RETIRING_SHARED_DNS.labels));
    assert.ok(!selects(RETIRING_SHARED_DNS.labels, tenantDnsLabels("acme")), "the shared Service (and the release before's egress) would take acme's own DNS pods");
    assert.ok(selects(ownEgressPeer, tenantDnsLabels("acme")));
    assert.ok(!selects(ownEgressPeer, tenantDnsLabels("globex")));
  });
});

describe("a tenant's Slurm pods and their resolver", () => {
  const BACKUPS = { schedule: "15 2 * * *", retentionDays: 14 } as Parameters<typeof controlPlaneManifestsSharedValues>[0];
  it("name the resolver they are made for in every pod template of the namespace, so a new one restarts them with the release that brings it", () => {
    const values = controlPlaneSharedValues() as Obj;
    const annotations = { [TENANT_DNS.resolverAnnotation]: TENANT_DNS.resolver };
    for (const template of [values.controller, values.restapi, values.accounting, values.loginsets[LOGIN_SET]]) assert.deepEqual(template.metadata.annotations, annotations);
    assert.deepEqual(accountingDatabase().spec.podMetadata.annotations, annotations);
    const backup = (controlPlaneManifestsSharedValues(BACKUPS).namespaced as Obj[]).find((o) => o.kind === "Backup");
    assert.deepEqual(backup?.spec.podMetadata.annotations, annotations);
  });
});

describe("the journey's tenant pod resolver", () => {
  it("writes resolv.conf as the kubelet does: dnsPolicy None takes the pod's dnsConfig alone, ClusterFirst the cluster's DNS and search path with it", () => {
    const admitted = { dnsPolicy: "None", dnsConfig: { nameservers: ["100.65.41.7"], searches: ["tenant-acme.svc.cluster.local", "svc.cluster.local", "cluster.local"], options: [{ name: "ndots", value: "5" }] } };
    assert.equal(kubeletResolvConf(admitted, "tenant-acme"), `nameserver 100.65.41.7\nsearch tenant-acme.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n`);
    assert.equal(kubeletResolvConf({}, "tenant-acme"), `nameserver ${CENTRAL_K3S_RANGES.clusterDns}\nsearch tenant-acme.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n`);
    assert.equal(kubeletResolvConf({ dnsPolicy: "ClusterFirst", dnsConfig: { options: [{ name: "ndots", value: "2" }, { name: "edns0" }] } }, "x"), `nameserver ${CENTRAL_K3S_RANGES.clusterDns}\nsearch x.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:2 edns0\n`);
  });

  it("reads a query's answer code and addresses", () => {
    assert.deepEqual(parseQueryOutput("0 100.65.12.4,100.65.12.5\n"), { rcode: "NOERROR", addresses: ["100.65.12.4", "100.65.12.5"] });
    assert.deepEqual(parseQueryOutput("5 -\n"), { rcode: "REFUSED", addresses: [] });
    assert.deepEqual(parseQueryOutput("3 -"), { rcode: "NXDOMAIN", addresses: [] });
    assert.equal(parseQueryOutput("Traceback (most recent call last):"), undefined);
    assert.equal(reverseName("100.65.0.11"), "11.0.65.100.in-addr.arpa");
  });
});
