/**
 * Network: nothing reachable from the internet, default security groups closed, and
 * exactly the peering contract's flows across the VPC peering.
 */
import type { PolicyResource } from "@pulumi/policy";
import { TAG_KEYS } from "../../facts/project";
import { flowPortLabel, flowPorts, isPerTenant, NODE_PORT_RANGE, PEERING_FLOWS, SRUN_PORT_BLOCK_SIZE, type PeeringFlow, type PerTenantPorts, type TenantPorts } from "../../facts/contract";
import { parsePorts } from "../../config/tenant-ports";
import { ipv4Contains, ipv4Equal, ipv4Overlaps, isAnyAddress, isPublicSource, parseIpv4Cidr, type Ipv4Cidr } from "./cidr";
import { stackIdentity, tagMap } from "./provider";
import {
  asArray,
  asRecord,
  indexTargets,
  isNonEmptyString,
  isTrue,
  known,
  ofTypes,
  referencedResources,
  resourcePolicy,
  stackPolicy,
  strings,
  type PackPolicy,
} from "./util";

/** Tag naming the contract flow an ingress rule implements. */
export const FLOW_TAG = TAG_KEYS.flow;

export const SG = "aws:ec2/securityGroup:SecurityGroup";
export const SG_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule";
export const SG_INGRESS_RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule";
export const SG_EGRESS_RULE = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule";
export const DEFAULT_SG = "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup";
const VPC = "aws:ec2/vpc:Vpc";
const VPC_CIDR_ASSOCIATION = "aws:ec2/vpcIpv4CidrBlockAssociation:VpcIpv4CidrBlockAssociation";
const VPC_IPV6_ASSOCIATION = "aws:ec2/vpcIpv6CidrBlockAssociation:VpcIpv6CidrBlockAssociation";
const INSTANCE = "aws:ec2/instance:Instance";
const LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate";
const SPOT_INSTANCE_REQUEST = "aws:ec2/spotInstanceRequest:SpotInstanceRequest";
const LAUNCH_CONFIGURATION = "aws:ec2/launchConfiguration:LaunchConfiguration";
const EIP = "aws:ec2/eip:Eip";
const PEERING_REQUEST = "aws:ec2/vpcPeeringConnection:VpcPeeringConnection";
const SPOT_FLEET_REQUEST = "aws:ec2/spotFleetRequest:SpotFleetRequest";
const EIP_ASSOCIATION = "aws:ec2/eipAssociation:EipAssociation";

type Direction = "ingress" | "egress";

/** The other end of a security-group rule: a CIDR, a security group or a prefix list. */
interface Peer {
  readonly direction: Direction;
  /** Input path, for messages. */
  readonly field: string;
  readonly cidr?: string;
  /** A referenced security group (id as written); `self` when the rule names its own group. */
  readonly group?: string;
  readonly self?: boolean;
  /** The input whose property dependencies name the referenced group. */
  readonly groupField?: string;
  readonly prefixList?: string;
}

/** Peers of an inline `ingress` / `egress` block of a security group. */
function blockPeers(b: unknown, field: string, direction: Direction): Peer[] {
  const r = asRecord(b);
  if (!r) return [];
  const out: Peer[] = [];
  for (const c of strings(r.cidrBlocks)) out.push({ direction, field: `${field}.cidrBlocks`, cidr: c });
  for (const c of strings(r.ipv6CidrBlocks)) out.push({ direction, field: `${field}.ipv6CidrBlocks`, cidr: c });
  for (const g of strings(r.securityGroups)) out.push({ direction, field: `${field}.securityGroups`, group: g });
  for (const p of strings(r.prefixListIds)) out.push({ direction, field: `${field}.prefixListIds`, prefixList: p });
  if (isTrue(r.self)) out.push({ direction, field: `${field}.self`, self: true });
  return out;
}

/** Every peer of a security-group-ish resource (inline blocks, or the rule's own fields). */
export function rulePeers(type: string, props: Record<string, unknown>): Peer[] {
  if (type === SG || type === DEFAULT_SG) {
    return [
      ...asArray(props.ingress).flatMap((b, i) => blockPeers(b, `ingress[${i}]`, "ingress")),
      ...asArray(props.egress).flatMap((b, i) => blockPeers(b, `egress[${i}]`, "egress")),
    ];
  }
  if (type === SG_RULE) {
    const direction: Direction | undefined = props.type === "ingress" ? "ingress" : props.type === "egress" ? "egress" : undefined;
    if (!direction) return [];
    const out = blockPeers(props, "rule", direction);
    if (isNonEmptyString(props.sourceSecurityGroupId)) out.push({ direction, field: "sourceSecurityGroupId", group: props.sourceSecurityGroupId, groupField: "sourceSecurityGroupId" });
    return out;
  }
  if (type === SG_INGRESS_RULE || type === SG_EGRESS_RULE) {
    const direction: Direction = type === SG_INGRESS_RULE ? "ingress" : "egress";
    const out: Peer[] = [];
    if (isNonEmptyString(props.cidrIpv4)) out.push({ direction, field: "cidrIpv4", cidr: props.cidrIpv4 });
    if (isNonEmptyString(props.cidrIpv6)) out.push({ direction, field: "cidrIpv6", cidr: props.cidrIpv6 });
    if (isNonEmptyString(props.referencedSecurityGroupId)) {
      out.push({ direction, field: "referencedSecurityGroupId", group: props.referencedSecurityGroupId, groupField: "referencedSecurityGroupId" });
    }
    if (isNonEmptyString(props.prefixListId)) out.push({ direction, field: "prefixListId", prefixList: props.prefixListId });
    return out;
  }
  return [];
}

/** The VPC CIDR blocks of the deployment, both families (VPCs and their CIDR associations). */
export function vpcCidrStrings(resources: readonly PolicyResource[]): string[] {
  const out: string[] = [];
  for (const r of ofTypes(resources, VPC, VPC_CIDR_ASSOCIATION, VPC_IPV6_ASSOCIATION)) {
    for (const f of ["cidrBlock", "ipv6CidrBlock"]) {
      const c = known(() => r.props[f] as unknown, undefined);
      if (isNonEmptyString(c) && !out.includes(c)) out.push(c);
    }
  }
  return out;
}

export const sgNoPublicIngress = stackPolicy("sg-no-public-ingress", {
  description:
    "No security group admits traffic from a public source (inline ingress, ingress rules of either kind): every source CIDR lies inside " +
    "RFC 1918 / RFC 6598 / ULA private space or one of the stack's VPC CIDRs, and none is wider than /8 (IPv4) or /16 (IPv6), " +
    "so 0.0.0.0/1 + 128.0.0.0/1 count as public like 0.0.0.0/0.",
  remediation: "admit only the peer's CIDR or security group, as the peering contract (facts/contract.ts) lists it",
  validate: (args, report) => {
    const vpcCidrs = vpcCidrStrings(args.resources);
    for (const r of ofTypes(args.resources, SG, SG_RULE, SG_INGRESS_RULE, DEFAULT_SG)) {
      for (const p of known(() => rulePeers(r.type, r.props), [])) {
        if (p.direction !== "ingress" || p.cidr === undefined) continue;
        if (isPublicSource(p.cidr, vpcCidrs) !== true) continue;
        report(`${p.field} admits ${p.cidr} (${isAnyAddress(p.cidr) ? "the whole internet" : "public address space, outside private ranges and the stack's VPCs"})`, r.urn);
      }
    }
  },
});

/** Where a public IP comes from, per type: the field that turns one on. */
const PUBLIC_IP_FIELDS: Readonly<Record<string, readonly { field: string; what: string }[]>> = {
  [INSTANCE]: [{ field: "associatePublicIpAddress", what: "associatePublicIpAddress is true" }],
  [SPOT_INSTANCE_REQUEST]: [{ field: "associatePublicIpAddress", what: "associatePublicIpAddress is true" }],
  [LAUNCH_CONFIGURATION]: [{ field: "associatePublicIpAddress", what: "associatePublicIpAddress is true" }],
  [EIP]: [
    { field: "instance", what: "the Elastic IP is attached to instance" },
    { field: "networkInterface", what: "the Elastic IP is attached to network interface" },
  ],
  [EIP_ASSOCIATION]: [
    { field: "instanceId", what: "an Elastic IP is associated with instance" },
    { field: "networkInterfaceId", what: "an Elastic IP is associated with network interface" },
  ],
};

export const ec2NoPublicIp = resourcePolicy("ec2-no-public-ip", {
  description:
    "Instances, spot requests, spot fleets, launch configurations and launch templates do not get public (or carrier) IP addresses, and no Elastic IP is attached " +
    "to an instance or network interface (the NAT gateway's Elastic IP is fine).",
  remediation: "set associatePublicIpAddress: false, attach no Elastic IP to hosts, and reach them through the peering or SSM",
  types: [...Object.keys(PUBLIC_IP_FIELDS), LAUNCH_TEMPLATE, SPOT_FLEET_REQUEST],
  validate: (args, report) => {
    if (args.type === LAUNCH_TEMPLATE) {
      asArray(args.props.networkInterfaces).forEach((ni, i) => {
        for (const f of ["associatePublicIpAddress", "associateCarrierIpAddress"]) if (isTrue(asRecord(ni)?.[f])) report(`networkInterfaces[${i}].${f} is true`);
      });
      return;
    }
    if (args.type === SPOT_FLEET_REQUEST) {
      asArray(args.props.launchSpecifications).forEach((spec, i) => {
        if (isTrue(asRecord(spec)?.associatePublicIpAddress)) report(`launchSpecifications[${i}].associatePublicIpAddress is true`);
      });
      return;
    }
    for (const { field, what } of PUBLIC_IP_FIELDS[args.type] ?? []) {
      const v = args.props[field];
      if (field === "associatePublicIpAddress" ? isTrue(v) : isNonEmptyString(v)) report(field === "associatePublicIpAddress" ? what : `${what} ${String(v)}`);
    }
  },
});

export const subnetNoAutoPublicIp = resourcePolicy("subnet-no-auto-public-ip", {
  description: "Subnets do not hand out public addresses at launch: no public IPv4 (mapPublicIpOnLaunch) and no IPv6 address (assignIpv6AddressOnCreation; a VPC's IPv6 addresses are globally routable).",
  remediation: "set mapPublicIpOnLaunch: false and assignIpv6AddressOnCreation: false (the project has no public subnets)",
  types: ["aws:ec2/subnet:Subnet"],
  validate: (args, report) => {
    for (const f of ["mapPublicIpOnLaunch", "assignIpv6AddressOnCreation"]) if (isTrue(args.props[f])) report(`${f} is true`);
  },
});

const LOAD_BALANCERS = ["aws:lb/loadBalancer:LoadBalancer", "aws:alb/loadBalancer:LoadBalancer", "aws:elb/loadBalancer:LoadBalancer"];

export const lbNotInternetFacing = resourcePolicy("lb-not-internet-facing", {
  description: "Load balancers (ALB, NLB, Gateway and Classic) are internal: internal is true (AWS's default is internet-facing).",
  remediation: "set internal: true and reach the service across the peering or through a VPC endpoint",
  types: LOAD_BALANCERS,
  validate: (args, report) => {
    if (!isTrue(args.props.internal)) report(`internal is ${args.props.internal === undefined ? "not set (internet-facing)" : String(args.props.internal)}`);
  },
});

/** Database types with a publiclyAccessible flag, and whether AWS turns it on when unset. */
const PUBLIC_DATABASES: Readonly<Record<string, boolean>> = {
  "aws:rds/instance:Instance": false,
  "aws:rds/clusterInstance:ClusterInstance": false,
  "aws:redshift/cluster:Cluster": true,
  "aws:dms/replicationInstance:ReplicationInstance": false,
};

export const rdsNotPubliclyAccessible = resourcePolicy("rds-not-publicly-accessible", {
  description: "Databases (RDS instances, Aurora cluster instances, Redshift clusters, DMS replication instances) are not publicly accessible.",
  remediation: "set publiclyAccessible: false and put the database in private subnets",
  types: Object.keys(PUBLIC_DATABASES),
  validate: (args, report) => {
    const v = args.props.publiclyAccessible;
    if (isTrue(v) || (v === undefined && PUBLIC_DATABASES[args.type])) report(`publiclyAccessible is ${v === undefined ? "not set (AWS makes it public)" : "true"}`);
  },
});

export const eksEndpointNotPublic = resourcePolicy("eks-endpoint-not-public", {
  description: "EKS cluster API endpoints are private: vpcConfig.endpointPublicAccess is false (AWS's default is public) and endpointPrivateAccess true.",
  remediation: "set vpcConfig: { endpointPublicAccess: false, endpointPrivateAccess: true } and reach the API across the peering",
  types: ["aws:eks/cluster:Cluster"],
  validate: (args, report) => {
    const vpc = asRecord(args.props.vpcConfig);
    if (vpc?.endpointPublicAccess !== false && !(typeof vpc?.endpointPublicAccess === "string" && vpc.endpointPublicAccess === "false")) {
      report(`vpcConfig.endpointPublicAccess is ${vpc?.endpointPublicAccess === undefined ? "not set (public)" : String(vpc.endpointPublicAccess)}`);
    }
    if (!isTrue(vpc?.endpointPrivateAccess)) report("vpcConfig.endpointPrivateAccess is not true");
  },
});

/** Whether an allowed-principal ARN of an endpoint service lets in any account: "*", or a wildcard account. */
function anyPrincipalArn(arn: string): boolean {
  return arn.trim() === "*" || /^arn:[^:]*:iam::[^:]*[*?][^:]*:/.test(arn.trim());
}

export const vpcEndpointServiceRestricted = resourcePolicy("vpc-endpoint-service-restricted", {
  description: 'VPC endpoint services (PrivateLink) allow named principals only: no "*" (or any-account ARN) in allowedPrincipals or an allowed-principal resource.',
  remediation: "list the consumer accounts' or roles' ARNs in allowedPrincipals, and keep acceptanceRequired: true",
  types: ["aws:ec2/vpcEndpointService:VpcEndpointService", "aws:ec2/vpcEndpointServiceAllowedPrinciple:VpcEndpointServiceAllowedPrinciple"],
  validate: (args, report) => {
    const field = args.type === "aws:ec2/vpcEndpointService:VpcEndpointService" ? "allowedPrincipals" : "principalArn";
    for (const arn of strings(args.props[field])) if (anyPrincipalArn(arn)) report(`${field} allows ${arn}: any AWS account may connect`);
  },
});

export const defaultSgClosed = stackPolicy("default-sg-closed", {
  description:
    "Each VPC's default security group is adopted (aws.ec2.DefaultSecurityGroup in the same deployment) with no ingress and no egress rules, " +
    "and no separate rule (SecurityGroupRule, SecurityGroupIngressRule, SecurityGroupEgressRule) reopens it.",
  remediation: "declare aws.ec2.DefaultSecurityGroup for the VPC with ingress: [] and egress: [], and attach rules only to the project's own security groups",
  validate: (args, report) => {
    const defaults = ofTypes(args.resources, DEFAULT_SG);
    const defaultUrns = new Set(defaults.map((d) => d.urn));
    const defaultIds = new Set<string>();
    for (const d of defaults) {
      const id = known(() => d.props.id as unknown, undefined);
      if (isNonEmptyString(id)) defaultIds.add(id);
      const ingress = known(() => asArray(d.props.ingress).length, 0);
      const egress = known(() => asArray(d.props.egress).length, 0);
      if (ingress > 0 || egress > 0) report(`the default security group keeps ${ingress} ingress and ${egress} egress rule(s)`, d.urn);
    }
    const vpcs = ofTypes(args.resources, VPC);
    for (const v of vpcs) {
      const id = known(() => v.props.defaultSecurityGroupId as unknown, undefined);
      if (isNonEmptyString(id)) defaultIds.add(id);
    }
    for (const r of ofTypes(args.resources, SG_RULE, SG_INGRESS_RULE, SG_EGRESS_RULE)) {
      // propertyDependencies are known even when the value is not (preview).
      const target = known(() => r.props.securityGroupId as unknown, undefined);
      const byValue = isNonEmptyString(target) && defaultIds.has(target);
      const byDependency = (r.propertyDependencies?.securityGroupId ?? []).some((d) => defaultUrns.has(d.urn));
      if (byValue || byDependency) report(`the rule opens the VPC's default security group${isNonEmptyString(target) ? ` ${target}` : ""}`, r.urn);
    }
    const vpcIndex = indexTargets(vpcs, ["id"]);
    const adopted = new Set<string>();
    for (const d of defaults) for (const v of referencedResources(d, "vpcId", vpcIndex, false)) adopted.add(v.urn);
    for (const v of vpcs) {
      if (!adopted.has(v.urn)) report("the VPC's default security group is not adopted by an aws.ec2.DefaultSecurityGroup, so it keeps AWS's allow-within-group rules", v.urn);
    }
  },
});

// ---------------------------------------------------------------------------------------
// Peering contract

const FLOWS_BY_ID = new Map(PEERING_FLOWS.map((f) => [f.id, f] as const));
/** Endpoints that are one host: a rule naming them names a /32. */
const HOST_ENDPOINTS = new Set<PeeringFlow["from"]>(["tenant-host", "central-host"]);

function protocolMatches(actual: unknown, flow: PeeringFlow): boolean {
  const p = String(actual ?? "").toLowerCase();
  return p === flow.protocol || (flow.protocol === "tcp" && p === "6");
}

/** The local VPC CIDRs of the deployment (IPv4: VPCs and their secondary CIDR associations). */
function localCidrs(resources: readonly PolicyResource[]): Ipv4Cidr[] {
  return vpcCidrStrings(resources).flatMap((c) => parseIpv4Cidr(c) ?? []);
}

type Side = "local" | "remote";
/** Where a rule's peer lies: one side, straddling both, unknowable (a prefix list), or the internet. */
type PeerSide = Side | "both" | "unknown" | "internet";

function otherKind(kind: "central" | "tenant"): "central" | "tenant" {
  return kind === "central" ? "tenant" : "central";
}

function crosses(group: Side | undefined, peer: PeerSide | undefined): boolean {
  if (group === undefined || peer === undefined || peer === "internet") return false;
  if (peer === "both" || peer === "unknown") return true;
  return peer !== group;
}

function describePeer(p: Peer): string {
  if (p.cidr !== undefined) return p.cidr;
  if (p.self) return "its own group";
  if (p.group !== undefined) return `security group ${p.group}`;
  return `prefix list ${p.prefixList ?? "?"}`;
}

/** Whether a rule opens what a per-tenant port set is shaped like: one NodePort, or one whole srun block, inside the NodePort range. */
function perTenantShapeMatches(kind: PerTenantPorts, from: unknown, to: unknown): boolean {
  if (!Number.isInteger(from) || !Number.isInteger(to)) return false;
  const [a, b] = [from as number, to as number];
  const width = kind === "per-tenant" ? 1 : SRUN_PORT_BLOCK_SIZE;
  return a >= NODE_PORT_RANGE.from && b <= NODE_PORT_RANGE.to && b - a + 1 === width;
}

export const peeringFlowsMatchContract = stackPolicy("peering-flows-match-contract", {
  description:
    `Security-group traffic across the VPC peering is exactly the contract's flows ` +
    `(${PEERING_FLOWS.map((f) => `${f.id} ${flowPortLabel(f)}`).join(", ")}): ` +
    `each such ingress or egress rule is an aws.vpc.SecurityGroupIngressRule / SecurityGroupEgressRule tagged "${FLOW_TAG}" with a known flow id and ` +
    `that flow's ports and protocol (a per-tenant port: exactly the port its stack file records for the tenant the rule is for, named by its "${TAG_KEYS.tenant}" tag or the stack's; without the tenant's ports in the config, one NodePort or one whole srun block), ` +
    `on the side the contract says, naming its peer by CIDR: the tenant's own VPC CIDR for tenant-VPC flows ` +
    `(checked in tenant stacks), a /32 for host flows. A rule crosses the peering when its group and its peer (CIDR, referenced security group, ` +
    `prefix list) lie on different sides: a group is local when it is in one of the stack's VPCs, and on the peer's side when it is in another VPC ` +
    `or not in the deployment at all; 0.0.0.0/0 egress is internet egress, not peering.`,
  remediation: `derive the rule from PEERING_FLOWS in facts/contract.ts: one SecurityGroupIngressRule (and its SecurityGroupEgressRule) per flow with tags["${FLOW_TAG}"] = flow.id, the ports flowPorts(flow, the tenant's recorded ports) gives, the flow's ipProtocol and the peer's exact CIDR`,
  configSchema: {
    properties: {
      tenantPorts: {
        type: "object",
        additionalProperties: { type: "object", properties: { slurmctld: { type: "integer" }, srun: { type: "integer" } } },
        default: {},
        description: "<environment>/<tenant id> -> the tenant's ports on central as its stack file records them (clusterra:ports: slurmctld, the first port of srun); a per-tenant rule for a tenant not listed fails when any is",
      },
    },
  },
  validate: (args, report) => {
    const portsConfig = asRecord((args.getConfig<{ tenantPorts?: unknown }>() ?? {}).tenantPorts) ?? {};
    const cidrs = localCidrs(args.resources);
    const vpcs = indexTargets(ofTypes(args.resources, VPC), ["id"]);
    const groups = indexTargets(ofTypes(args.resources, SG, DEFAULT_SG), ["id"]);
    const identity = stackIdentity(args.resources);
    const kind = identity.kind === "central" || identity.kind === "tenant" ? identity.kind : undefined;

    // A VPC the stack adopts rather than creates is named by its peering's requester side.
    const adoptedVpcIds = new Set(
      ofTypes(args.resources, PEERING_REQUEST).flatMap((r) => strings(known(() => r.props.vpcId as unknown, undefined))).filter((id) => !vpcs.byId.has(id)),
    );
    /** Which side of the peering a security group is on: in a VPC of this stack, or in another one. */
    const sideOfGroup = (sg: PolicyResource): Side | undefined => {
      if (referencedResources(sg, "vpcId", vpcs, false).length > 0) return "local";
      if (strings(known(() => sg.props.vpcId as unknown, undefined)).some((id) => adoptedVpcIds.has(id))) return "local";
      return isNonEmptyString(known(() => sg.props.vpcId as unknown, undefined)) ? "remote" : undefined;
    };
    /** The side of a group a resource names in `field` (a group outside the deployment is the peer's). */
    const sideOfReference = (from: PolicyResource, field: string | undefined, value: unknown): Side | undefined => {
      const found: PolicyResource[] = [];
      for (const v of strings(value)) found.push(...(groups.byId.get(v) ?? []));
      if (field) for (const d of from.propertyDependencies?.[field] ?? []) {
        const g = groups.byUrn.get(d.urn);
        if (g) found.push(g);
      }
      if (found.length > 0) return sideOfGroup(found[0]);
      return isNonEmptyString(value) ? "remote" : undefined;
    };
    const sideOfCidr = (cidr: string, direction: Direction): PeerSide | undefined => {
      if (cidrs.length === 0) return undefined; // no VPC in this stack: local and peer cannot be told apart
      const c = parseIpv4Cidr(cidr);
      if (c === undefined) return undefined; // IPv6 is not peered here
      if (direction === "egress" && c.prefix === 0) return "internet";
      if (cidrs.some((v) => ipv4Contains(v, c))) return "local";
      return cidrs.some((v) => ipv4Overlaps(v, c)) ? "both" : "remote";
    };
    const sideOfPeer = (r: PolicyResource, groupSide: Side | undefined, p: Peer): PeerSide | undefined => {
      if (p.cidr !== undefined) return sideOfCidr(p.cidr, p.direction);
      if (p.self) return groupSide;
      if (p.group !== undefined) return sideOfReference(r, p.groupField, p.group);
      // A prefix list's entries are not in the deployment: admitting one may open anything.
      return p.direction === "ingress" ? "unknown" : undefined;
    };

    for (const r of args.resources) {
      if (r.type !== SG && r.type !== DEFAULT_SG && r.type !== SG_RULE && r.type !== SG_INGRESS_RULE && r.type !== SG_EGRESS_RULE) continue;
      const peers = known(() => rulePeers(r.type, r.props), []);
      const groupSide =
        r.type === SG || r.type === DEFAULT_SG ? sideOfGroup(r) : sideOfReference(r, "securityGroupId", known(() => r.props.securityGroupId as unknown, undefined));
      const crossing = peers.filter((p) => crosses(groupSide, sideOfPeer(r, groupSide, p)));

      if (r.type !== SG_INGRESS_RULE && r.type !== SG_EGRESS_RULE) {
        for (const p of crossing) {
          report(
            `${p.field} ${p.direction === "ingress" ? "admits" : "lets out to"} ${describePeer(p)} across the peering; cross-peering rules must be ` +
              `SecurityGroupIngressRule / SecurityGroupEgressRule resources tagged "${FLOW_TAG}"`,
            r.urn,
          );
        }
        continue;
      }

      const direction: Direction = r.type === SG_INGRESS_RULE ? "ingress" : "egress";
      const verb = direction === "ingress" ? "ingress from" : "egress to";
      const props = known(() => ({
        tags: tagMap(r.props.tags),
        fromPort: r.props.fromPort as unknown,
        toPort: r.props.toPort as unknown,
        ipProtocol: r.props.ipProtocol as unknown,
      }), undefined);
      if (!props) continue;
      const flowId = props.tags[FLOW_TAG];
      if (flowId === undefined) {
        for (const p of crossing) report(`${verb} ${describePeer(p)} crosses the peering but carries no "${FLOW_TAG}" tag naming a contract flow`, r.urn);
        continue;
      }
      const flow = FLOWS_BY_ID.get(flowId);
      if (!flow) {
        report(`"${FLOW_TAG}" tag "${flowId}" is not a flow of the peering contract (known: ${[...FLOWS_BY_ID.keys()].join(", ")})`, r.urn);
        continue;
      }
      const tenant = props.tags[TAG_KEYS.tenant] ?? identity.tenant;
      if (isPerTenant(flow.ports) && tenant === undefined) {
        report(`flow ${flow.id} opens ports of its own per tenant, but the rule names no tenant (tag "${TAG_KEYS.tenant}")`, r.urn);
      } else {
        // A tenant's ports as its stack file records them (config `tenantPorts`); without them, a
        // per-tenant rule must still open one NodePort, or one whole srun block.
        const recorded = tenant !== undefined ? portsConfig[`${identity.environment ?? ""}/${tenant}`] : undefined;
        const ports = parsePorts(recorded);
        if (isPerTenant(flow.ports) && !ports && Object.keys(portsConfig).length > 0) {
          // The stack files record other tenants' ports but not this one's: no port of it can be right.
          report(`flow ${flow.id} opens ports for tenant ${tenant} in environment ${identity.environment ?? "(unknown)"}, whose stack file records none (config tenantPorts)`, r.urn);
          continue;
        }
        const mismatch = isPerTenant(flow.ports) && !ports
          ? !perTenantShapeMatches(flow.ports, props.fromPort, props.toPort) || !protocolMatches(props.ipProtocol, flow)
          : ((expected) => props.fromPort !== expected.fromPort || props.toPort !== expected.toPort || !protocolMatches(props.ipProtocol, flow))(flowPorts(flow, ports as TenantPorts));
        if (mismatch) {
          report(
            `flow ${flow.id} allows ${flowPortLabel(flow, ports)}${isPerTenant(flow.ports) ? ` for tenant ${tenant}` : ""} but the rule opens ${String(props.ipProtocol)} ` +
              `${String(props.fromPort)}-${String(props.toPort)}`,
            r.urn,
          );
        }
      }
      if (kind !== undefined && groupSide !== undefined) {
        const groupKind = groupSide === "local" ? kind : otherKind(kind);
        if (direction === "ingress" && groupKind !== flow.side) {
          report(`flow ${flow.id} is admitted on the ${flow.side} side, but this rule's security group is on the ${groupKind} side`, r.urn);
        }
        if (direction === "egress" && groupKind !== otherKind(flow.side)) {
          report(`flow ${flow.id} leaves from the ${otherKind(flow.side)} side, but this rule's security group is on the ${groupKind} side`, r.urn);
        }
      }
      const cidrPeers = peers.filter((p) => p.cidr !== undefined && parseIpv4Cidr(p.cidr) !== undefined);
      for (const p of peers) {
        if (!cidrPeers.includes(p)) report(`flow ${flow.id} names its peer by ${p.field} (${describePeer(p)}); a contract flow names the peer's IPv4 CIDR in cidrIpv4`, r.urn);
      }
      const endpoint = direction === "ingress" ? flow.from : flow.to;
      for (const p of cidrPeers) {
        const cidr = p.cidr!;
        const c = parseIpv4Cidr(cidr)!;
        const toward = direction === "ingress" ? "comes from" : "goes to";
        if (endpoint === "tenant-vpc" && kind === "tenant" && cidrs.length > 0) {
          // A tenant stack knows the tenant VPC: the flow's peer is exactly its CIDR.
          if (!cidrs.some((v) => ipv4Equal(v, c))) {
            const own = vpcCidrStrings(args.resources).filter((x) => parseIpv4Cidr(x) !== undefined).join(", ");
            report(`flow ${flow.id} ${toward} this tenant's VPC (${own}), but the rule names ${cidr}`, r.urn);
            continue;
          }
        }
        const peerSide = sideOfCidr(cidr, direction);
        if (peerSide !== undefined && !crosses(groupSide, peerSide)) {
          report(`flow ${flow.id} crosses the peering, but ${verb} ${cidr} stays on this rule's side`, r.urn);
          continue;
        }
        if (HOST_ENDPOINTS.has(endpoint) && c.prefix !== 32) {
          report(`flow ${flow.id} ${toward} one host (${endpoint}), but the rule names ${cidr} rather than a /32`, r.urn);
        }
        if (endpoint === "tenant-vpc" && kind !== "tenant" && (c.prefix < 16 || c.prefix > 28)) {
          report(`flow ${flow.id} ${toward} one tenant VPC, but ${cidr} is not a VPC-sized block (/16 to /28)`, r.urn);
        }
      }
    }
  },
});

export const NETWORK_POLICIES: readonly PackPolicy[] = [
  sgNoPublicIngress,
  ec2NoPublicIp,
  subnetNoAutoPublicIp,
  defaultSgClosed,
  peeringFlowsMatchContract,
  lbNotInternetFacing,
  rdsNotPubliclyAccessible,
  eksEndpointNotPublic,
  vpcEndpointServiceRestricted,
];
