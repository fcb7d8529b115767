/**
 * Offline answers for the Pulumi mock engine: what AWS, Kubernetes and the command
 * provider would return, deterministic per resource name so plans are reproducible.
 * Every invoke the program makes must have an answer here; an unknown one fails the plan
 * rather than inventing data.
 */
import { createHash } from "crypto";
import type * as pulumi from "@pulumi/pulumi";
import { hostAddress } from "../config/cidr";
import { ZONE_SUFFIXES } from "../facts/regions";
import type { Partition } from "../facts/regions";

export interface MockContext {
  readonly region: string;
  readonly partition: Partition;
  readonly accountId: string;
  /** Outputs of stacks this one references, by stack name (last segment). */
  readonly stackOutputs: ReadonlyMap<string, Record<string, unknown>>;
  /** Existing VPCs the configuration names, with the CIDR the account would report. */
  readonly existingVpcs?: ReadonlyMap<string, string>;
  /** Existing subnets the program describes, with their VPC and CIDR. */
  readonly existingSubnets?: ReadonlyMap<string, { readonly vpcId: string; readonly cidrBlock: string }>;
}

/** EC2-style id prefixes by resource type token. */
const ID_PREFIX: Readonly<Record<string, string>> = {
  "aws:ec2/vpc:Vpc": "vpc",
  "aws:ec2/subnet:Subnet": "subnet",
  "aws:ec2/routeTable:RouteTable": "rtb",
  "aws:ec2/internetGateway:InternetGateway": "igw",
  "aws:ec2/natGateway:NatGateway": "nat",
  "aws:ec2/eip:Eip": "eipalloc",
  "aws:ec2/securityGroup:SecurityGroup": "sg",
  "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup": "sg",
  "aws:ec2/instance:Instance": "i",
  "aws:ec2/vpcEndpoint:VpcEndpoint": "vpce",
  "aws:ec2/flowLog:FlowLog": "fl",
  "aws:ec2/networkInterface:NetworkInterface": "eni",
  "aws:ec2/vpcPeeringConnection:VpcPeeringConnection": "pcx",
  "aws:ec2/launchTemplate:LaunchTemplate": "lt",
  "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": "sgr",
  "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": "sgr",
  "aws:efs/fileSystem:FileSystem": "fs",
  "aws:efs/mountTarget:MountTarget": "fsmt",
  "aws:efs/accessPoint:AccessPoint": "fsap",
  "aws:vpclattice/service:Service": "svc",
  "aws:vpclattice/serviceNetwork:ServiceNetwork": "sn",
  "aws:vpclattice/targetGroup:TargetGroup": "tg",
};

function digest(text: string, length: number): string {
  return createHash("sha256").update(text).digest("hex").slice(0, length);
}

/** The type token's module: `aws:ec2/vpc:Vpc` -> `ec2`. */
function moduleOf(type: string): string {
  return type.split(":")[1]?.split("/")[0] ?? "unknown";
}

export function createMocks(ctx: MockContext): pulumi.runtime.Mocks {
  // Subnet id -> CIDR, so instances get an address inside their subnet.
  const subnetCidrs = new Map<string, string>();
  // Each AWS provider acts in one account (a tenant stack has one for the customer's account
  // and one for central's): a resource's ARNs carry the account of the provider that makes it.
  const providerAccounts = new Map<string, string>();
  const accountOf = (provider: string | undefined) => providerAccounts.get(String(provider).split("::").pop() as string) ?? ctx.accountId;
  let account = ctx.accountId;
  const arn = (service: string, resource: string, regional = true) =>
    `arn:${ctx.partition}:${service}:${regional ? ctx.region : ""}:${account}:${resource}`;

  return {
    newResource(args: pulumi.runtime.MockResourceArgs): pulumi.runtime.MockResourceResult {
      const { type, name, inputs } = args;
      if (type === "pulumi:providers:aws") {
        const id = `provider-${name}`;
        const known = providerAccount(inputs);
        if (known) providerAccounts.set(id, known);
        return { id, state: { ...inputs } };
      }
      account = accountOf(args.provider);
      if (type === "pulumi:pulumi:StackReference") {
        const ref = String(inputs.name);
        const outputs = ctx.stackOutputs.get(ref.split("/").pop() as string);
        if (!outputs) throw new Error(`no offline outputs for stack reference ${ref}`);
        return { id: ref, state: { name: ref, outputs, secretOutputNames: [] } };
      }
      const prefix = ID_PREFIX[type];
      const physical = typeof inputs.name === "string" ? inputs.name : `${name}-${digest(`${type}/${name}`, 7)}`;
      const id = prefix ? `${prefix}-${digest(`${type}/${name}`, 17)}` : physical;
      const state: Record<string, unknown> = { ...inputs, id };
      const service = moduleOf(type);
      switch (type) {
        case "aws:iam/role:Role":
          Object.assign(state, { name: physical, arn: arn("iam", `role${inputs.path ?? "/"}${physical}`, false), uniqueId: `AROA${digest(name, 17).toUpperCase()}` });
          break;
        case "aws:iam/policy:Policy":
          Object.assign(state, { name: physical, arn: arn("iam", `policy/${physical}`, false) });
          break;
        case "aws:iam/instanceProfile:InstanceProfile":
          Object.assign(state, { name: physical, arn: arn("iam", `instance-profile/${physical}`, false) });
          break;
        case "aws:kms/key:Key":
          Object.assign(state, { keyId: digest(name, 32), arn: arn("kms", `key/${digest(name, 32)}`) });
          break;
        case "aws:kms/alias:Alias":
          Object.assign(state, { arn: arn("kms", String(inputs.name)) });
          break;
        case "aws:dynamodb/table:Table":
          Object.assign(state, { arn: arn("dynamodb", `table/${inputs.name ?? physical}`), streamArn: arn("dynamodb", `table/${inputs.name ?? physical}/stream/2026-01-01T00:00:00.000`) });
          break;
        case "aws:secretsmanager/secret:Secret":
          Object.assign(state, { arn: arn("secretsmanager", `secret:${inputs.name ?? physical}-${digest(name, 6)}`) });
          break;
        case "aws:sns/topic:Topic":
          Object.assign(state, { name: inputs.name ?? physical, arn: arn("sns", `${inputs.name ?? physical}`) });
          break;
        case "aws:sqs/queue:Queue":
          Object.assign(state, { arn: arn("sqs", `${inputs.name ?? physical}`), url: `https://sqs.${ctx.region}.amazonaws.com/${account}/${inputs.name ?? physical}` });
          break;
        case "aws:cloudwatch/logGroup:LogGroup":
          Object.assign(state, { name: inputs.name ?? physical, arn: arn("logs", `log-group:${inputs.name ?? physical}`) });
          break;
        case "aws:s3/bucket:Bucket":
        case "aws:s3/bucketV2:BucketV2":
          Object.assign(state, { bucket: inputs.bucket ?? physical, arn: `arn:${ctx.partition}:s3:::${inputs.bucket ?? physical}` });
          break;
        case "aws:ec2/vpc:Vpc":
          Object.assign(state, {
            arn: arn("ec2", `vpc/${id}`),
            defaultSecurityGroupId: `sg-${digest(`${name}/default-sg`, 17)}`,
            mainRouteTableId: `rtb-${digest(`${name}/main-rtb`, 17)}`,
            defaultNetworkAclId: `acl-${digest(`${name}/acl`, 17)}`,
          });
          break;
        case "aws:ec2/subnet:Subnet":
          subnetCidrs.set(id, String(inputs.cidrBlock));
          Object.assign(state, { arn: arn("ec2", `subnet/${id}`) });
          break;
        case "aws:ec2/instance:Instance": {
          const cidr = subnetCidrs.get(String(inputs.subnetId));
          Object.assign(state, {
            arn: arn("ec2", `instance/${id}`),
            privateIp: inputs.privateIp ?? (cidr ? hostAddress(cidr, 10) : undefined),
            primaryNetworkInterfaceId: `eni-${digest(`${name}/eni`, 17)}`,
            availabilityZone: inputs.availabilityZone ?? `${ctx.region}a`,
          });
          break;
        }
        case "aws:lb/loadBalancer:LoadBalancer":
          Object.assign(state, {
            arn: arn("elasticloadbalancing", `loadbalancer/net/${inputs.name ?? physical}/${digest(name, 16)}`),
            dnsName: `internal-${inputs.name ?? physical}-${digest(name, 10)}.elb.${ctx.region}.amazonaws.com`,
          });
          break;
        case "aws:lb/targetGroup:TargetGroup":
          Object.assign(state, { arn: arn("elasticloadbalancing", `targetgroup/${inputs.name ?? physical}/${digest(name, 16)}`) });
          break;
        case "aws:ec2/vpcPeeringConnection:VpcPeeringConnection":
          Object.assign(state, { acceptStatus: "pending-acceptance", arn: arn("ec2", `vpc-peering-connection/${id}`) });
          break;
        case "aws:ssm/parameter:Parameter":
          // Hierarchical names carry their own leading slash.
          Object.assign(state, { arn: arn("ssm", `parameter${physical.startsWith("/") ? "" : "/"}${physical}`) });
          break;
        case "aws:efs/accessPoint:AccessPoint":
          Object.assign(state, { arn: arn("elasticfilesystem", `access-point/${id}`) });
          break;
        case "aws:efs/fileSystem:FileSystem":
          Object.assign(state, { arn: arn("elasticfilesystem", `file-system/${id}`) });
          break;
        case "aws:vpclattice/service:Service":
          Object.assign(state, { arn: arn("vpc-lattice", `service/${id}`), dnsEntries: [{ domainName: `${physical}-${id.slice(4, 11)}.7d67968.vpc-lattice-svcs.${ctx.region}.on.aws`, hostedZoneId: "Z0OFFLINE" }] });
          break;
        case "aws:vpclattice/serviceNetwork:ServiceNetwork":
          Object.assign(state, { arn: arn("vpc-lattice", `servicenetwork/${id}`) });
          break;
        case "aws:vpclattice/targetGroup:TargetGroup":
          Object.assign(state, { arn: arn("vpc-lattice", `targetgroup/${id}`) });
          break;
        case "aws:cloudwatch/eventRule:EventRule":
          Object.assign(state, { arn: arn("events", `rule/${physical}`) });
          break;
        // TLS material: well-formed PEM blocks naming the offline plan (no real key is made).
        case "tls:index/privateKey:PrivateKey":
          Object.assign(state, { privateKeyPem: offlinePem("PRIVATE KEY", name), publicKeyPem: offlinePem("PUBLIC KEY", name) });
          break;
        case "tls:index/certRequest:CertRequest":
          Object.assign(state, { certRequestPem: offlinePem("CERTIFICATE REQUEST", name) });
          break;
        case "tls:index/selfSignedCert:SelfSignedCert":
        case "tls:index/locallySignedCert:LocallySignedCert":
          Object.assign(state, { certPem: offlinePem("CERTIFICATE", name) });
          break;
        case "command:local:Command":
        case "command:remote:Command":
          Object.assign(state, { stdout: "kubeconfig version 1", stderr: "" });
          break;
        default:
          if (type.startsWith("aws:") && state.arn === undefined) state.arn = arn(service, `${type.split(":")[2].toLowerCase()}/${id}`);
      }
      return { id, state };
    },

    call(args: pulumi.runtime.MockCallArgs): Record<string, unknown> {
      account = accountOf(args.provider);
      switch (args.token) {
        case "aws:index/getCallerIdentity:getCallerIdentity":
          return { accountId: account, arn: `arn:${ctx.partition}:iam::${account}:role/clusterra-deployer`, userId: "AROAOFFLINEPLAN", id: account };
        case "aws:index/getRegion:getRegion":
          return { name: ctx.region, region: ctx.region, id: ctx.region, endpoint: `ec2.${ctx.region}.amazonaws.com` };
        case "aws:index/getPartition:getPartition":
          return { partition: ctx.partition, dnsSuffix: ctx.partition === "aws-cn" ? "amazonaws.com.cn" : "amazonaws.com", id: ctx.partition };
        case "aws:index/getAvailabilityZones:getAvailabilityZones":
          return { names: ZONE_SUFFIXES.map((s) => `${ctx.region}${s}`), zoneIds: ZONE_SUFFIXES.map((_, i) => `use1-az${i + 1}`), id: ctx.region };
        case "aws:secretsmanager/getRandomPassword:getRandomPassword":
          // Stands in for the generated value; the plan redacts it as a secret anyway.
          return { randomPassword: digest(JSON.stringify(args.inputs), 64), id: "offline" };
        case "aws:ec2/getVpcPeeringConnections:getVpcPeeringConnections":
          // The plan shows the steady state: each tenant's peering already requested and accepted.
          return { ids: [`pcx-${digest(JSON.stringify(args.inputs.filters), 17)}`], filters: args.inputs.filters, id: ctx.region };
        case "aws:ssm/getParameter:getParameter": {
          const name = String(args.inputs.name);
          // The host's published kubeconfig, or a public AMI parameter (the latest AL2023 image id).
          if (name.endsWith("/kubeconfig")) return { name, value: offlineKubeconfig(name), type: "SecureString", id: name, version: 1 };
          return { name, value: `ami-${digest(name, 17)}`, type: "String", id: name, version: 1 };
        }
        case "aws:ec2/getVpc:getVpc": {
          const id = String(args.inputs.id);
          const cidrBlock = ctx.existingVpcs?.get(id);
          if (cidrBlock === undefined) throw new Error(`the offline plan knows no VPC ${id}`);
          return { id, cidrBlock, arn: arn("ec2", `vpc/${id}`), ownerId: account };
        }
        case "aws:ec2/getSubnet:getSubnet": {
          const id = String(args.inputs.id);
          const subnet = ctx.existingSubnets?.get(id);
          if (subnet === undefined) throw new Error(`the offline plan knows no subnet ${id}`);
          return { id, availabilityZone: `${ctx.region}a`, ...subnet, arn: arn("ec2", `subnet/${id}`), ownerId: account };
        }
        case "aws:ec2/getRouteTable:getRouteTable":
          // Each adopted subnet stands for a subnet with a route table of its own.
          return { id: `rtb-${digest(String(args.inputs.subnetId), 17)}`, routeTableId: `rtb-${digest(String(args.inputs.subnetId), 17)}`, vpcId: args.inputs.vpcId };
        default:
          throw new Error(`the offline plan has no answer for the invoke ${args.token}`);
      }
    },
  };
}

/**
 * The account an AWS provider acts in: its first allowed account, else the account of the
 * role it assumes (inputs arrive as the engine sends them: lists may be JSON text).
 */
export function providerAccount(inputs: Record<string, unknown>): string | undefined {
  const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : typeof v === "string" && v.startsWith("[") ? (JSON.parse(v) as unknown[]) : []);
  const allowed = list(inputs.allowedAccountIds)[0];
  if (typeof allowed === "string") return allowed;
  const role = list(inputs.assumeRoles)[0] as { roleArn?: unknown } | undefined;
  return typeof role?.roleArn === "string" ? /^arn:[^:]+:iam::(\d{12}):/.exec(role.roleArn)?.[1] : undefined;
}

/** A PEM block of the given label whose body says it is an offline plan's stand-in. */
function offlinePem(label: string, name: string): string {
  return `-----BEGIN ${label}-----\n${Buffer.from(`offline plan ${name} ${digest(name, 16)}`).toString("base64")}\n-----END ${label}-----\n`;
}

/** A kubeconfig shaped like K3s's (server on the loopback, reached by port forward). */
function offlineKubeconfig(name: string): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    `- name: ${name}`,
    "  cluster:",
    "    server: https://127.0.0.1:6443",
    "    certificate-authority-data: T0ZGTElORQ==",
    "contexts:",
    `- name: ${name}`,
    "  context:",
    `    cluster: ${name}`,
    `    user: ${name}`,
    `current-context: ${name}`,
    "users:",
    `- name: ${name}`,
    "  user:",
    `    client-certificate-data: ${Buffer.from("offline-plan-placeholder certificate").toString("base64")}`,
    `    client-key-data: ${Buffer.from("offline-plan-placeholder key").toString("base64")}`,
  ].join("\n");
}
