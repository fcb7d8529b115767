/**
 * The tenants' DNS on central (components/fleet/tenant-dns.ts) and the admission policy that
 * points every tenant pod at it: what it serves, that it forwards nothing, how its pod runs,
 * its fixed address. The journey runs it (CoreDNS built by install-tools, against central's
 * API server) and asks it from a tenant pod's resolver.
 */
import * as assert from "node:assert/strict";
import { TENANT_POD_DNS_POLICY, tenantPodDnsPolicy } from "../components/fleet/central-admission";
import { tenantDnsCorefile, tenantDnsObjects } from "../components/fleet/tenant-dns";
import { accountingDatabase, controlPlaneManifestsSharedValues, controlPlaneSharedValues } from "../components/fleet/control-plane";
import { LOGIN_SET } from "../facts/fleet";
import { hostAddress } from "../config/cidr";
import { CENTRAL_K3S_RANGES } from "../facts/contract";
import { TENANT_DNS } from "../facts/control-plane";
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
const objects = tenantDnsObjects(API_SERVER) as Obj[];
const byKind = (kind: string) => objects.find((o) => o.kind === kind) as Obj;
const egressPolicy = objects.find((o) => o.kind === "NetworkPolicy" && o.metadata.name.endsWith("-egress")) as Obj;

describe("the tenants' DNS on central", () => {
  it("answers only the cluster's zone, from tenant namespaces' records, and forwards nothing (no reverse zones: a PTR would name any namespace's Service)", () => {
    const corefile = tenantDnsCorefile();
    // One server block: a name outside its zones is refused by CoreDNS itself.
    assert.equal(corefile.match(/\{\s*$/gm)?.length, 3, corefile);
    assert.match(corefile, /^cluster\.local:53 \{$/m);
    assert.match(corefile, /^ {4}kubernetes cluster\.local \{$/m);
    assert.doesNotMatch(corefile, /^\.:|^\. |forward|proxy|grpc|\bfile\b|hosts|template|arpa/m);
    assert.match(corefile, new RegExp(`namespace_labels ${LABEL_KEYS.tenant.replace(/\./g, "\\.")}$`, "m"));
    assert.equal(byKind("ConfigMap").data.Corefile, corefile);
  });

  it("runs as the image's non-root user with every capability dropped, binding 53 through its own network namespace's sysctl, and rolls when its Corefile changes", () => {
    const pod = byKind("Deployment").spec.template;
    const [container] = pod.spec.containers;
    assert.deepEqual(pod.spec.securityContext.sysctls, [{ name: "net.ipv4.ip_unprivileged_port_start", value: "53" }]);
    assert.equal(pod.spec.securityContext.runAsNonRoot, true);
    assert.equal(pod.spec.securityContext.runAsUser, TENANT_DNS.user);
    assert.equal(pod.spec.securityContext.seccompProfile.type, "RuntimeDefault");
    assert.deepEqual(container.securityContext, { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] }, readOnlyRootFilesystem: true });
    assert.equal(container.image, `${TENANT_DNS.image.repository}:${TENANT_DNS.image.tag}`);
    assert.match(pod.metadata.annotations["clusterra.io/corefile-sha256"], /^[0-9a-f]{64}$/);
    assert.equal(byKind("Namespace").metadata.labels["pod-security.kubernetes.io/enforce"], "restricted");
    assert.equal(container.resources.requests.cpu, `${TENANT_DNS.request.cpuMillis}m`);
  });

  it("reads the API server for Services, EndpointSlices and namespaces only, list and watch", () => {
    const role = byKind("ClusterRole");
    assert.deepEqual(role.rules.flatMap((r: Obj) => r.verbs), ["list", "watch", "list", "watch"]);
    assert.deepEqual(role.rules.flatMap((r: Obj) => r.resources).sort(), ["endpointslices", "namespaces", "services"]);
    assert.deepEqual(byKind("ClusterRoleBinding").subjects, [{ kind: "ServiceAccount", name: TENANT_DNS.name, namespace: TENANT_DNS.namespace }]);
  });

  it("holds a fixed Service address in the service range's lower band, which dynamic allocation leaves to named addresses", () => {
    const service = byKind("Service");
    assert.equal(service.spec.clusterIP, TENANT_DNS.clusterIp);
    assert.notEqual(TENANT_DNS.clusterIp, CENTRAL_K3S_RANGES.clusterDns);
    // Kubernetes' lower band: min(max(16, size / 16), 256) addresses from the range's start.
    const size = 2 ** (32 - Number(CENTRAL_K3S_RANGES.serviceCidr.split("/")[1]));
    const band = Math.min(Math.max(16, size / 16), 256);
    const offset = [...Array(band).keys()].slice(1).find((n) => hostAddress(CENTRAL_K3S_RANGES.serviceCidr, n) === TENANT_DNS.clusterIp);
    assert.ok(offset !== undefined, `${TENANT_DNS.clusterIp} is not among the first ${band} addresses of ${CENTRAL_K3S_RANGES.serviceCidr}`);
  });

  it("reaches central's API server alone, on the host's address the fleet computes as the host's instance has it", async () => {
    assert.deepEqual(egressPolicy.spec, { podSelector: { matchLabels: TENANT_DNS.labels }, policyTypes: ["Egress"], egress: [{ to: [{ ipBlock: { cidr: `${API_SERVER}/32` } }], ports: [{ protocol: "TCP", port: K3S_API_PORT }] }] });
    const central = await plan("central-dev");
    const address = central.deployment.deployment.resources.find((r) => r.type === "aws:ec2/instance:Instance")?.inputs?.privateIp;
    const written = parseAllDocuments(fs.readFileSync(path.join(exampleRoot(), "fleet/central/dev/dns.yaml"), "utf8")).map((d) => d.toJS() as Obj).find((o) => o.metadata?.name === egressPolicy.metadata.name);
    assert.equal(written?.spec.egress[0].to[0].ipBlock.cidr, `${address}/32`);
    assert.equal(centralHostAddress((central.config as { network: Parameters<typeof centralHostAddress>[0] }).network), address);
  });

  it("admits queries from tenant namespaces, and metrics from the monitoring namespace, only", () => {
    const policy = objects.find((o) => o.kind === "NetworkPolicy" && o.metadata.name.endsWith("-ingress")) as Obj;
    assert.deepEqual(policy.spec.policyTypes, ["Ingress"]);
    assert.deepEqual(policy.spec.ingress[0].from, [{ namespaceSelector: { matchExpressions: [{ key: LABEL_KEYS.tenant, operator: "Exists" }] } }]);
    assert.deepEqual(policy.spec.ingress[0].ports, [{ protocol: "UDP", port: 53 }, { protocol: "TCP", port: 53 }]);
    assert.deepEqual(policy.spec.ingress[1].from, [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } }]);
  });
});

describe("central admission: every tenant pod asks the tenants' DNS", () => {
  const [policy, binding] = tenantPodDnsPolicy() as [Obj, Obj];

  it("gives every pod created in a tenant's namespace for the tenants' DNS dnsPolicy None and that DNS as its only nameserver, with ClusterFirst's search path", () => {
    assert.deepEqual(policy.spec.matchConstraints.resourceRules, [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] }]);
    // Only pods whose template names this resolver: the rollout that brings them brings the egress that reaches it.
    assert.deepEqual(policy.spec.matchConditions.map((c: Obj) => c.expression), [`has(object.metadata.annotations) && object.metadata.annotations.exists(k, k == '${TENANT_DNS.resolverAnnotation}') && object.metadata.annotations['${TENANT_DNS.resolverAnnotation}'] == '${TENANT_DNS.clusterIp}'`]);
    assert.equal(policy.spec.failurePolicy, "Fail");
    assert.equal(policy.spec.mutations[0].patchType, "JSONPatch");
    const expression: string = policy.spec.mutations[0].jsonPatch.expression;
    assert.ok(expression.includes("JSONPatch{op: 'add', path: '/spec/dnsPolicy', value: 'None'}"));
    assert.ok(expression.includes(`nameservers: ['${TENANT_DNS.clusterIp}']`));
    assert.ok(expression.includes("searches: [request.namespace + '.svc.cluster.local', 'svc.cluster.local', 'cluster.local']"));
    assert.equal(binding.spec.policyName, TENANT_POD_DNS_POLICY);
    assert.deepEqual(binding.spec.matchResources.namespaceSelector, { matchExpressions: [{ key: LABEL_KEYS.tenant, operator: "Exists" }] });
  });
});

describe("a tenant's Slurm pods and their resolver", () => {
  const BACKUPS = { schedule: "15 2 * * *", retentionDays: 14 } as Parameters<typeof controlPlaneManifestsSharedValues>[0];
  it("name the resolver they are made for in every pod template of the namespace, so a new one restarts them with the release that brings it", () => {
    const values = controlPlaneSharedValues() as Obj;
    const annotations = { [TENANT_DNS.resolverAnnotation]: TENANT_DNS.clusterIp };
    for (const template of [values.controller, values.restapi, values.accounting, values.loginsets[LOGIN_SET]]) assert.deepEqual(template.metadata.annotations, annotations);
    assert.deepEqual(accountingDatabase().spec.podMetadata.annotations, annotations);
    const backup = (controlPlaneManifestsSharedValues(BACKUPS).namespaced as Obj[]).find((o) => o.kind === "Backup");
    assert.deepEqual(backup?.spec.podMetadata.annotations, annotations);
  });
});

describe("the journey's tenant pod resolver", () => {
  it("writes resolv.conf as the kubelet does: dnsPolicy None takes the pod's dnsConfig alone, ClusterFirst the cluster's DNS and search path with it", () => {
    const admitted = { dnsPolicy: "None", dnsConfig: { nameservers: [TENANT_DNS.clusterIp], searches: ["tenant-acme.svc.cluster.local", "svc.cluster.local", "cluster.local"], options: [{ name: "ndots", value: "5" }] } };
    assert.equal(kubeletResolvConf(admitted, "tenant-acme"), `nameserver ${TENANT_DNS.clusterIp}\nsearch tenant-acme.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n`);
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
