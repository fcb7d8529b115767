/**
 * The two VPCs as Linux network namespaces. Each VPC's router is a namespace with one
 * bridge per subnet (AWS's router sits at a subnet's first host); a peering is a veth pair
 * between two routers with a route each way; instances and nodes hang off a subnet bridge
 * with a /32 and a route to the router, as an ENI does; pods hang off their host.
 *
 * Central: one K3s host holding the slurmctld, slurmdbd, MariaDB and login pods on a bridge
 * (flannel), the tenant namespace's NetworkPolicies enforced on it as K3s does, the instance
 * metadata address, and a way out to one host of the internet. Tenant: slurmd nodes whose pods
 * take VPC addresses routed to the node (Cilium ENI mode), and the K3s server; the other
 * tenant: one node and pod and its K3s server, to prove isolation.
 *
 * Every veth is made directly between two of these namespaces: nothing is attached to the
 * machine's own network, so no packet of the journey can leave it.
 */
import { carveSubnets, hostAddress } from "../../config/cidr";
import { CENTRAL_K3S_RANGES, SLURM_PORTS } from "../../facts/contract";
import { centralHostNat, ciliumNodeNat, clusterIpNat } from "./nat";
import { securityGroupRuleset } from "../host/nft";
import { networkPolicyRuleset } from "../host/network-policy";
import { controlPlanePodLabels, RETIRING_SHARED_DNS, TENANT_DNS, tenantDnsName } from "../../facts/control-plane";
import { tenantDnsLabels } from "../../components/fleet/tenant-dns";
import { K3S_CLUSTER_DNS } from "../../facts/central-host";
import { LABEL_KEYS } from "../../facts/project";
import { INSTANCE_METADATA } from "../../facts/instance-metadata";
import type { JourneyWorld, TenantSide } from "./world";
import { slinkyNames } from "./world";

/** The device that stands for an instance's or node's ENI, and a pod's interface. */
export const ENI_DEVICE = "eth0";
/** Cilium's per-node router address that pods use as their gateway (any link-local address works). */
const POD_GATEWAY = "169.254.1.1";
/** Host numbers in a subnet: AWS's router is the first; nodes and pods are arbitrary but fixed. */
const HOST = { router: 1, node: 20, pod: 40, centralPod: { slurmctld: 10, slurmdbd: 11, mariadb: 12, login: 13, oSlurmctld: 20, oSlurmdbd: 21, oMariadb: 22, oLogin: 23, tenantDns: 30, clusterDns: 31, otherDns: 32, sharedDns: 33 }, clusterIp: 200 } as const;
/** Link networks of the peering veths (never seen by Slurm: routers only). */
const PEERING_LINK = (n: number) => ({ a: `169.254.${100 + n}.1`, b: `169.254.${100 + n}.2` });
/** The link of the central VPC's way out (its NAT gateway and the internet gateway, as one router). */
const INTERNET_LINK = { a: "169.254.200.1", b: "169.254.200.2" } as const;
/** A host on the internet (TEST-NET-2, documentation only): what central's pods must not reach. */
export const INTERNET_HOST = { address: "198.51.100.10", port: 443 } as const;

/** The control-plane pods the Slurm part enforces a tenant namespace's NetworkPolicies on, known by the labels their operators give them (controlPlanePodLabels). */
export const SLURM_PART_POLICY_PODS = ["slurmctld", "slurmdbd", "mariadb", "login"] as const;
type SlurmPartPolicyPod = (typeof SLURM_PART_POLICY_PODS)[number];

// The shapes of the namespaces' world live beside the code that builds it (journey/host).
import type { Firewall, Namespace, SlurmdPod, Topology } from "../host/topology";
export type { Firewall, Namespace, SlurmdPod, Topology };

function prefixLength(cidr: string): string {
  return cidr.split("/")[1];
}

/** The tenant's slurmd pods: how many, and each one's Slurm node name and features (the operator's NodeSet pod: slurmd-pod.ts). */
export interface SlurmdPlan {
  readonly count: number;
  readonly hostname: (ordinal: number) => string;
  readonly features: readonly string[];
}

/**
 * Plans the namespaces, links, routes, names and rulesets. Pure: `buildTopology` carries it out.
 * With `otherSlurmd` (its operator's NodeSet pod), the other tenant's Slurm runs too: its login
 * and its names on central, its Services on the host, its slurmd pod's name.
 */
export function planTopology(world: JourneyWorld, prefix: string, slurmdPlan: SlurmdPlan, otherSlurmd?: SlurmdPlan): Topology {
  const namespaces: Namespace[] = [];
  const commands: string[][] = [];
  const hosts = new Map<string, string>();
  const rulesets = new Map<string, string[]>();
  const names = new Map<string, string>();
  const firewalls: Firewall[] = [];

  const ns = (key: string, label: string): Namespace => {
    const n = { name: `${prefix}-${key}`, label };
    namespaces.push(n);
    // IPv4 only, as the plans' rules are: no IPv6 neighbour chatter in the drop counters.
    commands.push(["netns", "add", n.name], ["netns", "exec", n.name, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"], ["-n", n.name, "link", "set", "lo", "up"]);
    return n;
  };
  const forwarding = (n: Namespace) => commands.push(["netns", "exec", n.name, "sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv4.conf.all.send_redirects=0"]);
  const veth = (a: Namespace, devA: string, b: Namespace, devB: string) => {
    commands.push(["link", "add", devA, "netns", a.name, "type", "veth", "peer", "name", devB, "netns", b.name]);
    commands.push(["-n", a.name, "link", "set", devA, "up"], ["-n", b.name, "link", "set", devB, "up"]);
  };
  const addr = (n: Namespace, dev: string, cidr: string) => commands.push(["-n", n.name, "addr", "add", cidr, "dev", dev]);
  const route = (n: Namespace, ...args: string[]) => commands.push(["-n", n.name, "route", "add", ...args]);
  const bridge = (n: Namespace, br: string, cidr: string) => commands.push(["-n", n.name, "link", "add", br, "type", "bridge"], ["-n", n.name, "addr", "add", cidr, "dev", br], ["-n", n.name, "link", "set", br, "up"]);
  const enslave = (n: Namespace, dev: string, br: string) => commands.push(["-n", n.name, "link", "set", dev, "master", br]);
  const ruleset = (n: Namespace, text: string) => rulesets.set(n.name, [...(rulesets.get(n.name) ?? []), text]);
  type Placed = { readonly ns: Namespace; readonly address: string; readonly hostname: string };
  const hostsFile = (n: Namespace, entries: Record<string, string[]>) =>
    hosts.set(n.name, ["127.0.0.1 localhost", ...Object.entries(entries).map(([a, h]) => `${a} ${h.join(" ")}`), ""].join("\n"));

  /** An instance (or node) with its ENI on a subnet bridge of its VPC's router. */
  const instance = (vpcRouter: Namespace, bridgeName: string, port: string, n: Namespace, address: string, router: string, routes: readonly string[]) => {
    veth(n, ENI_DEVICE, vpcRouter, port);
    enslave(vpcRouter, port, bridgeName);
    addr(n, ENI_DEVICE, `${address}/32`);
    route(n, router, "dev", ENI_DEVICE);
    for (const r of routes) route(n, r, "via", router);
  };

  // --- central VPC
  const c = world.central;
  const names_ = slinkyNames(world.tenant);
  const cVpc = ns("c-vpc", "central VPC router");
  forwarding(cVpc);
  const cRouter = hostAddress(c.hostSubnet, HOST.router);
  bridge(cVpc, "sn0", `${cRouter}/${prefixLength(c.hostSubnet)}`);
  const cHost = ns("c-host", `central host ${c.hostAddress}`);
  forwarding(cHost);
  instance(cVpc, "sn0", "host", cHost, c.hostAddress, cRouter, [world.tenant.vpcCidr, world.other.vpcCidr, "default"]);
  names.set(c.hostAddress, "central host");
  // The instance metadata service answers at its link-local address on the instance itself.
  addr(cHost, "lo", `${INSTANCE_METADATA.address}/32`);
  names.set(INSTANCE_METADATA.address, "instance metadata (central host)");
  // The central VPC's way out (NAT and internet gateway as one router), and one host beyond it.
  const internet = ns("inet", `the internet ${INTERNET_HOST.address}`);
  veth(cVpc, "igw", internet, ENI_DEVICE);
  addr(cVpc, "igw", `${INTERNET_LINK.a}/30`);
  addr(internet, ENI_DEVICE, `${INTERNET_LINK.b}/30`);
  addr(internet, ENI_DEVICE, `${INTERNET_HOST.address}/32`);
  route(cVpc, "default", "via", INTERNET_LINK.b);
  route(internet, c.vpcCidr, "via", INTERNET_LINK.a);
  names.set(INTERNET_HOST.address, "the internet");

  const podNet = carveSubnets(c.podCidr, 24 - Number(prefixLength(c.podCidr)), 0, 1)[0];
  const podGateway = hostAddress(podNet, 1);
  bridge(cHost, "cni0", `${podGateway}/24`);
  const centralPod = (key: keyof typeof HOST.centralPod, label: string): { ns: Namespace; address: string } => {
    const address = hostAddress(podNet, HOST.centralPod[key]);
    const n = ns(`c-${key}`, `central ${label} pod ${address}`);
    veth(n, ENI_DEVICE, cHost, `v-${key}`.slice(0, 15));
    enslave(cHost, `v-${key}`.slice(0, 15), "cni0");
    addr(n, ENI_DEVICE, `${address}/24`);
    route(n, "default", "via", podGateway);
    names.set(address, `central ${label} pod`);
    return { ns: n, address };
  };
  const slurmctld = { ...centralPod("slurmctld", "slurmctld"), hostname: names_.controllerPod };
  const slurmdbd = { ...centralPod("slurmdbd", "slurmdbd"), hostname: names_.accountingPod };
  const mariadb = centralPod("mariadb", "MariaDB");
  const login = { ...centralPod("login", "login"), hostname: "login-0" };
  // The host's DNS pods: each tenant's own (components/fleet/tenant-dns.ts) and K3s's.
  const dns = { tenant: centralPod("tenantDns", `${world.tenant.id}'s DNS`), other: centralPod("otherDns", `${world.other.id}'s DNS`), shared: centralPod("sharedDns", "retiring shared tenants' DNS"), cluster: centralPod("clusterDns", "K3s CoreDNS") };

  // --- a tenant VPC: router, peering, and its nodes
  const tenantVpc = (t: TenantSide, key: string, peering: number) => {
    const vpc = ns(`${key}-vpc`, `${t.id} VPC router`);
    forwarding(vpc);
    const link = PEERING_LINK(peering);
    veth(cVpc, `pcx-${key}`, vpc, "pcx");
    addr(cVpc, `pcx-${key}`, `${link.a}/30`);
    addr(vpc, "pcx", `${link.b}/30`);
    route(cVpc, t.vpcCidr, "via", link.b);
    route(vpc, c.vpcCidr, "via", link.a);
    const router = hostAddress(t.workerSubnet, HOST.router);
    bridge(vpc, "sn0", `${router}/${prefixLength(t.workerSubnet)}`);
    return { vpc, router };
  };
  const clusterIp = hostAddress(CENTRAL_K3S_RANGES.serviceCidr, HOST.clusterIp);
  const slurmdNode = (t: TenantSide, vpc: Namespace, router: string, key: string, i: number) => {
    const nodeAddress = hostAddress(t.workerSubnet, HOST.node + i);
    const address = hostAddress(t.workerSubnet, HOST.pod + i);
    const node = ns(`${key}-node${i}`, `${t.id} node ${i} ${nodeAddress}`);
    forwarding(node);
    instance(vpc, "sn0", `n${i}`, node, nodeAddress, router, [t.vpcCidr, c.vpcCidr]);
    route(vpc, `${address}/32`, "via", nodeAddress);
    const pod = ns(`${key}-pod${i}`, `${t.id} slurmd pod ${address}`);
    veth(pod, ENI_DEVICE, node, "pod");
    addr(node, "pod", `${POD_GATEWAY}/32`);
    route(node, `${address}/32`, "dev", "pod");
    addr(pod, ENI_DEVICE, `${address}/32`);
    route(pod, POD_GATEWAY, "dev", ENI_DEVICE);
    route(pod, "default", "via", POD_GATEWAY);
    ruleset(node, ciliumNodeNat({ device: ENI_DEVICE, podAddresses: [address], nativeRoutingCidr: t.nativeRoutingCidr, masquerade: t.masquerade }));
    ruleset(pod, clusterIpNat({ serviceAddress: clusterIp, servicePort: t.controllerService.port, endpointAddress: t.controllerService.endpointAddress, endpointPort: t.controllerService.endpointPort }));
    names.set(nodeAddress, `${t.id} node ${i}`);
    return { node, pod, nodeAddress, address };
  };

  // The tenant's K3s server sits in its own subnet (the NAT subnet in a new VPC).
  const k3sServer = (tenant: TenantSide, vpc: Namespace, key: string): Namespace => {
    const serverRouter = hostAddress(tenant.serverSubnet, HOST.router);
    bridge(vpc, "sn1", `${serverRouter}/${prefixLength(tenant.serverSubnet)}`);
    const n = ns(`${key}-server`, `${tenant.id} K3s server ${tenant.serverAddress}`);
    instance(vpc, "sn1", "srv", n, tenant.serverAddress, serverRouter, [tenant.vpcCidr, c.vpcCidr]);
    names.set(tenant.serverAddress, `${tenant.id} K3s server`);
    return n;
  };
  const t = world.tenant;
  const a = tenantVpc(t, "a", 1);
  const server = k3sServer(t, a.vpc, "a");

  const slurmd: SlurmdPod[] = [];
  for (let i = 1; i <= slurmdPlan.count; i++) {
    const n = slurmdNode(t, a.vpc, a.router, "a", i);
    const hostname = slurmdPlan.hostname(i - 1);
    names.set(n.address, `${t.id} slurmd pod ${hostname}`);
    // Cluster DNS stands in as /etc/hosts: the fleet's Service name for central's slurmctld.
    hostsFile(n.pod, { [clusterIp]: [t.controllerService.host], [n.address]: [hostname] });
    slurmd.push({ ns: n.pod, node: n.node, address: n.address, nodeAddress: n.nodeAddress, hostname, features: slurmdPlan.features });
  }

  const o = world.other;
  const g = tenantVpc(o, "g", 2);
  const gNode = slurmdNode(o, g.vpc, g.router, "g", 1);
  const gServer = k3sServer(o, g.vpc, "g");
  const gHostname = otherSlurmd?.hostname(0);
  names.set(gNode.address, `${o.id} slurmd pod${gHostname ? ` ${gHostname}` : ""}`);
  hostsFile(gNode.pod, { [clusterIp]: [o.controllerService.host], ...(gHostname ? { [gNode.address]: [gHostname] } : {}) });

  // --- names on central (cluster DNS stands in as /etc/hosts)
  // Each tenant's pods on central: its Services' names (slurmctld's, slurmdbd's, its MariaDB's) and each pod's own.
  const controlPlaneHosts = (cp: { slurmctld: Placed; slurmdbd: Placed; mariadb: Omit<Placed, "hostname">; login: Placed }, names: ReturnType<typeof slinkyNames>, accounting: string, namespace: string) => {
    const services = { [cp.slurmctld.address]: [cp.slurmctld.hostname, names.controllerService], [cp.slurmdbd.address]: [names.accountingService, names.accountingService.split(".")[0]] };
    hostsFile(cp.slurmctld.ns, services);
    hostsFile(cp.slurmdbd.ns, { [cp.slurmdbd.address]: [cp.slurmdbd.hostname], [cp.mariadb.address]: [`${accounting}.${namespace}`, accounting] });
    hostsFile(cp.login.ns, { ...services, [cp.login.address]: [cp.login.hostname] });
  };
  controlPlaneHosts({ slurmctld, slurmdbd, mariadb, login }, names_, world.controlPlane.accounting.host, t.namespace);

  // --- security groups on every ENI, and the host's Kubernetes NAT
  const members = new Map<string, string[]>();
  const member = (groups: readonly string[], ...addresses: string[]) => groups.forEach((gid) => members.set(gid, [...(members.get(gid) ?? []), ...addresses]));
  member(c.hostGroupIds, c.hostAddress);
  member(t.workerGroupIds, ...slurmd.flatMap((p) => [p.nodeAddress, p.address]));
  member(t.serverGroupIds, t.serverAddress);
  member(o.workerGroupIds, gNode.nodeAddress, gNode.address);
  member(o.serverGroupIds, o.serverAddress);
  const firewall = (n: Namespace, groupIds: readonly string[]) => {
    const translation = securityGroupRuleset({ eni: { label: n.label, device: ENI_DEVICE, groupIds }, rules: world.rules, members });
    firewalls.push({ ns: n, translation });
    ruleset(n, translation.text);
  };
  firewall(cHost, c.hostGroupIds);
  for (const p of slurmd) firewall(p.node, t.workerGroupIds);
  firewall(server, t.serverGroupIds);
  firewall(gNode.node, o.workerGroupIds);
  firewall(gServer, o.serverGroupIds);
  // The other tenant's control plane on the same host, each pod in its own namespace (its
  // operators' labels, its namespace's policies): where it listens, and with `otherSlurmd` its
  // Slurm runs there too. (None when the journey runs one tenant: the other is then the tenant itself.)
  const otherPods = (o.id === t.id ? [] : ([["slurmctld", "oSlurmctld", SLURM_PORTS.slurmctld], ["slurmdbd", "oSlurmdbd", SLURM_PORTS.slurmdbd], ["mariadb", "oMariadb", world.otherControlPlane.accounting.port]] as const))
    .map(([name, key, port]) => ({ ...centralPod(key, `${o.id} ${name}`), name, port }));
  const oNames = slinkyNames(o);
  const oPod = (name: string) => otherPods.find((p) => p.name === name);
  const [oCtld, oDbd, oDb] = [oPod("slurmctld"), oPod("slurmdbd"), oPod("mariadb")];
  const oLogin = otherSlurmd && oCtld && oDbd && oDb ? { ...centralPod("oLogin", `${o.id} login`), hostname: "login-0" } : undefined;
  const otherControlPlane = oLogin && oCtld && oDbd && oDb && gHostname && otherSlurmd
    ? {
        slurmctld: { ns: oCtld.ns, address: oCtld.address, hostname: oNames.controllerPod },
        slurmdbd: { ns: oDbd.ns, address: oDbd.address, hostname: oNames.accountingPod },
        mariadb: { ns: oDb.ns, address: oDb.address },
        login: oLogin,
        slurmd: [{ ns: gNode.pod, node: gNode.node, address: gNode.address, nodeAddress: gNode.nodeAddress, hostname: gHostname, features: otherSlurmd.features }],
      }
    : undefined;
  if (otherControlPlane) controlPlaneHosts(otherControlPlane, oNames, world.otherControlPlane.accounting.host, o.namespace);

  // Each tenant's two Services on the host, as its fleet declares them: slurmctld, and the srun block to the login pod.
  ruleset(cHost, centralHostNat({
    device: ENI_DEVICE, hostAddress: c.hostAddress, podCidr: c.podCidr,
    forwards: [
      { name: "slurmctld", nodePorts: { from: t.nodePort, to: t.nodePort }, podAddress: slurmctld.address, podPort: SLURM_PORTS.slurmctld, externalTrafficPolicy: t.externalTrafficPolicy },
      { name: "srun", nodePorts: t.srun.block, podAddress: login.address, externalTrafficPolicy: t.srun.externalTrafficPolicy },
      ...(otherControlPlane
        ? [
            { name: `${o.id} slurmctld`, nodePorts: { from: o.nodePort, to: o.nodePort }, podAddress: otherControlPlane.slurmctld.address, podPort: SLURM_PORTS.slurmctld, externalTrafficPolicy: o.externalTrafficPolicy },
            { name: `${o.id} srun`, nodePorts: o.srun.block, podAddress: otherControlPlane.login.address, externalTrafficPolicy: o.srun.externalTrafficPolicy },
          ]
        : []),
    ],
  }));

  // Both tenant namespaces' NetworkPolicies on the host, their pods known by the labels their operators give them.
  const policyPod = (name: SlurmPartPolicyPod, address: string, namespace = t.namespace) => ({ name: namespace === t.namespace ? name : `${o.id}-${name}`, namespace, address, labels: controlPlanePodLabels(name), namespaceLabels: { [LABEL_KEYS.tenant]: namespace === t.namespace ? t.id : o.id } });
  // The DNS pods' own policies too: queries in from their tenant's namespace alone, out to the API server alone.
  const policy = networkPolicyRuleset([...world.controlPlane.networkPolicies, ...world.otherControlPlane.networkPolicies, ...c.dnsPolicies], [
    policyPod("slurmctld", slurmctld.address), policyPod("slurmdbd", slurmdbd.address), policyPod("mariadb", mariadb.address), policyPod("login", login.address),
    ...otherPods.map((p) => policyPod(p.name, p.address, o.namespace)),
    ...(otherControlPlane ? [policyPod("login", otherControlPlane.login.address, o.namespace)] : []),
    { name: tenantDnsName(t.id), namespace: TENANT_DNS.namespace, address: dns.tenant.address, labels: tenantDnsLabels(t.id) },
    { name: tenantDnsName(o.id), namespace: TENANT_DNS.namespace, address: dns.other.address, labels: tenantDnsLabels(o.id) },
    { name: "shared-dns", namespace: TENANT_DNS.namespace, address: dns.shared.address, labels: RETIRING_SHARED_DNS.labels },
    { name: "cluster-dns", namespace: K3S_CLUSTER_DNS.namespace, address: dns.cluster.address, labels: K3S_CLUSTER_DNS.labels },
  ]);
  ruleset(cHost, policy.text);

  return {
    namespaces,
    commands,
    hosts,
    rulesets,
    firewalls,
    central: { host: cHost, hostAddress: c.hostAddress, slurmctld, slurmdbd, mariadb, login, other: otherPods.map((p) => ({ ns: p.ns, address: p.address, name: `${o.id}'s ${p.name}`, port: p.port })), policy, dns },
    internet: { ns: internet, address: INTERNET_HOST.address, port: INTERNET_HOST.port },
    slurmd,
    other: { pod: gNode.pod, address: gNode.address, node: gNode.node, tenantId: o.id, server: gServer, serverAddress: o.serverAddress, ...(otherControlPlane ? { controlPlane: otherControlPlane } : {}) },
    names,
  };
}
