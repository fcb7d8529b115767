/**
 * "What Clusterra deploys in your account", generated from a tenant's or a connector's plan:
 * every resource the customer's account will hold, grouped by the component that makes it,
 * with its monthly cost (the same estimate as cost.json), its encryption and its retention;
 * every role the platform creates there, who may assume it and on which condition, and what
 * it may do; and what the platform's own principals (central's roles) cannot do there, each
 * line the IAM simulator's verdict over the planned documents. Nothing in it is written by
 * hand: `plan` writes inventory.md and inventory.json beside cost.json.
 */
import * as fs from "fs";
import * as path from "path";
import type { StackConfig } from "../config";
import { clusterApiRoleName, controlPlaneSecretsRoleName, tenantAccessRoleName, tenantMetricsRoleName } from "../facts/project";
import { connectorBridgeRoleName } from "../facts/connector-network";
import { estimateCost, type CostEstimate } from "../planning/cost";
import { urnName, type Deployment, type DeploymentResource } from "../planning/deployment";
import { buildDeployRole, customerResources, proveDeployRole, type DeployVerdict } from "./deploy-role";
import { decide } from "./iam-sim";
import { securityGroupRules, securityGroups, type SecurityGroupRule } from "./security-groups";

type Doc = { Statement?: Stmt[] | Stmt };
type Stmt = { Sid?: string; Effect: string; Principal?: unknown; Action?: string | string[]; NotAction?: string | string[]; Resource?: string | string[]; Condition?: Record<string, Record<string, unknown>> };

export interface InventoryResource {
  readonly type: string;
  readonly name: string;
  readonly monthlyUsd: number;
  readonly encryption: string;
  readonly retention: string;
}

export interface InventoryRole {
  readonly name: string;
  /** Who may assume it, each with its condition. */
  readonly trust: readonly string[];
  /** Each statement of each policy, in words. */
  readonly permissions: readonly string[];
}

/** One security-group rule in the customer's account, as a reviewer reads it. */
export interface InventoryRule {
  /** The group's name in the plan. */
  readonly group: string;
  readonly direction: "in" | "out";
  /** "tcp 6818", "udp 53", "tcp 60000-60009", "all". */
  readonly ports: string;
  /** The other end: a CIDR said in words where the plan knows whose it is, or a group by name. */
  readonly peer: string;
  /** Why it is there: the rule's own description. */
  readonly why: string;
}

export interface InventoryVerdict {
  readonly principal: string;
  readonly what: string;
  readonly action: string;
  readonly resource: string;
  readonly verdict: string;
}

export interface Inventory {
  readonly stack: string;
  readonly kind: "tenant" | "connector";
  readonly account: string;
  readonly resourceCount: number;
  readonly idleUsd: number;
  readonly usageUsd: number;
  readonly groups: readonly { readonly purpose: string; readonly resources: readonly InventoryResource[] }[];
  readonly roles: readonly InventoryRole[];
  /** Every rule of every security group in the customer's account. */
  readonly network: readonly InventoryRule[];
  /** Requests by the platform's principals the customer's documents refuse. */
  readonly cannot: readonly InventoryVerdict[];
  /** Requests they allow: the platform's designed access, with its condition. */
  readonly can: readonly InventoryVerdict[];
  /** The one role the customer creates (deploy-role.yaml), and the simulator's proof of it; absent when the plan's reads were not given. */
  readonly deployRole?: {
    readonly name: string;
    readonly statements: number;
    readonly policies: number;
    /** Calls of the planned creates, every one allowed. */
    readonly allowedCalls: number;
    readonly deniedCalls: readonly DeployVerdict[];
    /** The outside sample, each refused. */
    readonly outside: readonly DeployVerdict[];
  };
}

const list = (v: unknown): string[] => (v === undefined ? [] : Array.isArray(v) ? v.map(String) : [String(v)]);
const parse = (v: unknown): Doc | undefined => (typeof v === "string" ? (JSON.parse(v) as Doc) : (v as Doc | undefined));
const statements = (d: Doc | undefined): Stmt[] => (d?.Statement === undefined ? [] : Array.isArray(d.Statement) ? d.Statement : [d.Statement]);

/** A rule's ports in words: protocol and port or range ("all" for every protocol). */
export function portsOf(r: Pick<SecurityGroupRule, "protocol" | "fromPort" | "toPort">): string {
  if (r.protocol === "all") return "all";
  // ICMP's "ports" are its type and code.
  if (r.protocol === "icmp") return r.fromPort === undefined || r.fromPort < 0 ? "icmp, any type" : `icmp type ${r.fromPort}${r.toPort === undefined || r.toPort < 0 ? "" : ` code ${r.toPort}`}`;
  const name = typeof r.protocol === "number" ? `protocol ${r.protocol}` : r.protocol;
  if (r.fromPort === undefined || r.fromPort < 0) return `${name}, any port`;
  return r.fromPort === r.toPort || r.toPort === undefined ? `${name} ${r.fromPort}` : `${name} ${r.fromPort}-${r.toPort}`;
}

/** Every rule of the customer's groups, the peer named from what the stack knows (its VPC, central's). */
function networkOf(config: StackConfig, held: readonly DeploymentResource[], central: Deployment | undefined): InventoryRule[] {
  const groups = new Map(securityGroups(held).map((g) => [g.id, g.name]));
  const known = new Map<string, string>([["0.0.0.0/0", "anywhere"]]);
  if (config.kind === "tenant") {
    known.set(config.network.vpcCidr, `this VPC (${config.network.vpcCidr})`);
    known.set(config.central.vpcCidr, `central's VPC (${config.central.vpcCidr}), over the peering`);
  }
  // Central's host, by the address central's plan gives it.
  for (const host of central?.deployment.resources.filter((r) => r.type === "aws:ec2/instance:Instance") ?? []) {
    const ip = host.inputs?.privateIp ?? host.outputs?.privateIp;
    if (typeof ip === "string") known.set(`${ip}/32`, `central's host (${ip}), over the peering`);
  }
  const peer = (r: SecurityGroupRule): string =>
    r.peer.kind === "cidr" ? (known.get(r.peer.cidr) ?? r.peer.cidr) : r.peer.kind === "group" ? `group ${groups.get(r.peer.groupId) ?? r.peer.groupId}` : r.peer.what;
  return securityGroupRules(held)
    .map((r) => ({ group: groups.get(r.groupId) ?? r.groupId, direction: r.direction === "ingress" ? ("in" as const) : ("out" as const), ports: portsOf(r), peer: peer(r), why: r.description ?? "" }))
    .sort((a, b) => a.group.localeCompare(b.group) || a.direction.localeCompare(b.direction) || a.ports.localeCompare(b.ports, undefined, { numeric: true }) || a.peer.localeCompare(b.peer));
}

/** "clusterra:tenant:SharedFileSystem" -> "Shared file system". */
export function purposeOf(urn: string): string {
  const types = urn.split("::")[2].split("$");
  const component = types.length > 1 ? types[types.length - 2] : "the stack itself";
  const last = component.split(":").pop() as string;
  const words = last.replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2").toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** How a resource's data is encrypted at rest, from its planned inputs (and a bucket's encryption configuration). */
export function encryptionOf(r: DeploymentResource, all: readonly DeploymentResource[]): string {
  const i = (r.inputs ?? {}) as Record<string, any>;
  const key = (k: unknown) => (k ? `KMS key ${String(k).split("/").pop()}` : "an AWS-owned key");
  switch (r.type) {
    case "aws:ec2/instance:Instance": return i.rootBlockDevice?.encrypted ? `root volume encrypted (${key(i.rootBlockDevice?.kmsKeyId)})` : "root volume NOT encrypted";
    case "aws:ebs/volume:Volume": return i.encrypted ? `encrypted (${key(i.kmsKeyId)})` : "NOT encrypted";
    case "aws:efs/fileSystem:FileSystem": return i.encrypted ? `encrypted (${key(i.kmsKeyId)}); clients must use TLS` : "NOT encrypted";
    case "aws:sqs/queue:Queue": return i.kmsMasterKeyId ? `encrypted (${key(i.kmsMasterKeyId)})` : i.sqsManagedSseEnabled ? "encrypted (SQS-managed key)" : "NOT encrypted";
    case "aws:sns/topic:Topic": return i.kmsMasterKeyId ? `encrypted (${key(i.kmsMasterKeyId)})` : "NOT encrypted";
    case "aws:ssm/parameter:Parameter": return i.type === "SecureString" ? `SecureString (${key(i.keyId)})` : "plain text (no secret)";
    case "aws:cloudwatch/logGroup:LogGroup": return i.kmsKeyId ? `encrypted (${key(i.kmsKeyId)})` : "encrypted (CloudWatch Logs' own key)";
    case "aws:secretsmanager/secret:Secret": return `encrypted (${key(i.kmsKeyId)})`;
    case "aws:kms/key:Key": return `the stack's key; rotation ${i.enableKeyRotation ? "yearly" : "off"}`;
    case "aws:s3/bucket:Bucket": {
      const sse = all.find((x) => x.type.startsWith("aws:s3/bucketServerSideEncryptionConfiguration") && (x.inputs as { bucket?: unknown } | undefined)?.bucket === (r.outputs?.id ?? i.bucket));
      const rule = ((sse?.inputs as { rules?: { applyServerSideEncryptionByDefault?: { sseAlgorithm?: string; kmsMasterKeyId?: string } }[] } | undefined)?.rules ?? [])[0]?.applyServerSideEncryptionByDefault;
      return rule ? `${rule.sseAlgorithm === "aws:kms" ? `SSE-KMS (${key(rule.kmsMasterKeyId)})` : String(rule.sseAlgorithm)}` : "SSE-S3 (S3's default)";
    }
    default: return "—";
  }
}

/** How long it and its data last: protected from `pulumi destroy`, log and message retention, deletion windows. */
export function retentionOf(r: DeploymentResource): string {
  const i = (r.inputs ?? {}) as Record<string, any>;
  const parts: string[] = [];
  if (r.protect) parts.push("protected: kept when the stack is destroyed");
  if (r.type === "aws:cloudwatch/logGroup:LogGroup") parts.push(i.retentionInDays ? `logs kept ${i.retentionInDays} days` : "logs kept forever");
  if (r.type === "aws:sqs/queue:Queue") parts.push(`messages kept ${Math.round(Number(i.messageRetentionSeconds ?? 345600) / 86400)} days`);
  if (r.type === "aws:kms/key:Key") parts.push(`deleted after a ${i.deletionWindowInDays ?? 30}-day window`);
  if (r.type === "aws:dlm/lifecyclePolicy:LifecyclePolicy") {
    const retain = i.policyDetails?.schedules?.[0]?.retainRule?.count;
    if (retain) parts.push(`${retain} daily snapshots kept`);
  }
  return parts.join("; ") || "—";
}

/** A condition block in words: `aws:PrincipalArn = arn:...; sts:ExternalId = ...`. */
function conditionWords(c: Stmt["Condition"]): string {
  return Object.entries(c ?? {})
    .flatMap(([op, kv]) => Object.entries(kv).map(([k, v]) => (op === "Null" ? `${k} is ${String(v) === "false" ? "set" : "not set"}` : `${k} ${/Not/.test(op) ? "is not" : /Like/.test(op) ? "matches" : "is"} ${list(v).join(" or ")}`)))
    .join("; ");
}

function statementWords(s: Stmt): string {
  const actions = s.Action !== undefined ? list(s.Action).join(", ") : `everything but ${list(s.NotAction).join(", ")}`;
  const resources = list(s.Resource).join(", ");
  const condition = conditionWords(s.Condition);
  return `${s.Effect === "Deny" ? "DENY" : "allow"} ${actions}${resources ? ` on ${resources}` : ""}${condition ? ` when ${condition}` : ""}`;
}

function principalWords(p: unknown): string {
  if (p === "*") return "anyone";
  return Object.entries((p ?? {}) as Record<string, unknown>).map(([kind, v]) => `${kind === "AWS" ? "" : `${kind} `}${list(v).join(", ")}`).join(", ");
}

/** Each role the stack creates in the customer's account: its trust and its policies, in words. */
function rolesOf(resources: readonly DeploymentResource[]): InventoryRole[] {
  const policies = new Map(resources.filter((r) => r.type === "aws:iam/policy:Policy").map((p) => [String(p.outputs?.arn ?? ""), p]));
  return resources.filter((r) => r.type === "aws:iam/role:Role").map((role) => {
    // An auto-named role gets Pulumi's random suffix when it is created.
    const name = String(role.inputs?.name ?? `${urnName(role.urn)}-*`);
    const roleName = String(role.outputs?.name ?? name);
    const trust = statements(parse(role.inputs?.assumeRolePolicy)).map((s) => `${s.Effect === "Deny" ? "DENY " : ""}${principalWords(s.Principal)}${s.Condition ? `, when ${conditionWords(s.Condition)}` : ""}`);
    const inline = resources.filter((r) => r.type === "aws:iam/rolePolicy:RolePolicy" && r.inputs?.role === roleName).map((r) => parse(r.inputs?.policy));
    const attached = resources.filter((r) => r.type === "aws:iam/rolePolicyAttachment:RolePolicyAttachment" && r.inputs?.role === roleName).map((r) => String(r.inputs?.policyArn));
    const permissions = [
      ...inline.flatMap((d) => statements(d).map(statementWords)),
      ...attached.flatMap((a) => {
        const p = policies.get(a);
        return p ? statements(parse(p.inputs?.policy)).map(statementWords) : [`AWS managed policy ${a.split("/").pop()}`];
      }),
    ];
    return { name, trust, permissions };
  });
}

/** A platform principal: a role in central's account, by name. */
interface PlatformPrincipal {
  readonly name: string;
  readonly arn: string;
}

/** What a request means, in the words the document uses. */
const ACTION_WORDS: Readonly<Record<string, string>> = {
  "s3:GetObject": "read the files bucket",
  "s3:PutObject": "write into the files bucket",
  "elasticfilesystem:ClientMount": "mount the shared file system (EFS)",
  "elasticfilesystem:ClientRootAccess": "mount EFS as root",
  "kms:Decrypt": "decrypt with the stack's key",
  "sts:AssumeRole": "assume a role",
  "ssm:StartSession": "start a shell session on an instance",
  "ec2:CreateRoute": "change a route table",
  "ec2:ModifyVpcAttribute": "change the VPC",
  "sqs:ReceiveMessage": "read a queue",
  "vpc-lattice-svcs:Invoke": "call the cluster's API through VPC Lattice",
  "secretsmanager:GetSecretValue": "read a secret",
};

/** One request to ask the simulator: an action on a resource, under the resource's own policy if it has one. */
interface Request {
  readonly action: string;
  readonly resource: string;
  readonly resourcePolicy?: unknown;
  readonly context?: Record<string, string>;
  /** The resource, in the document's words. */
  readonly on: string;
}

/** The requests worth asking of each resource the customer holds: its resource policy, or none. */
function requestsOf(resources: readonly DeploymentResource[], scope: { partition: string; region: string; account: string }): Request[] {
  const out: Request[] = [];
  const ec2 = (resource: string) => `arn:${scope.partition}:ec2:${scope.region}:${scope.account}:${resource}`;
  const arnOf = (r: DeploymentResource) => String(r.outputs?.arn ?? "");
  for (const r of resources) {
    const i = (r.inputs ?? {}) as Record<string, any>;
    const name = urnName(r.urn);
    switch (r.type) {
      case "aws:s3/bucketPolicy:BucketPolicy": {
        const bucket = resources.find((b) => b.type === "aws:s3/bucket:Bucket" && (b.outputs?.id ?? b.outputs?.bucket) === i.bucket);
        const arn = bucket ? arnOf(bucket) : `arn:aws:s3:::${i.bucket}`;
        for (const action of ["s3:GetObject", "s3:PutObject"]) out.push({ action, resource: `${arn}/users/any/file`, resourcePolicy: parse(i.policy), context: { "aws:SecureTransport": "true" }, on: `bucket ${String(i.bucket)}` });
        break;
      }
      case "aws:efs/fileSystemPolicy:FileSystemPolicy": {
        const fs = resources.find((f) => f.type === "aws:efs/fileSystem:FileSystem" && f.outputs?.id === i.fileSystemId);
        for (const action of ["elasticfilesystem:ClientMount", "elasticfilesystem:ClientRootAccess"]) out.push({ action, resource: fs ? arnOf(fs) : String(i.fileSystemId), resourcePolicy: parse(i.policy), context: { "aws:SecureTransport": "true" }, on: `file system ${String(i.fileSystemId)}` });
        break;
      }
      case "aws:kms/key:Key": out.push({ action: "kms:Decrypt", resource: arnOf(r), resourcePolicy: parse(i.policy), on: `key ${name}` }); break;
      case "aws:iam/role:Role": out.push({ action: "sts:AssumeRole", resource: arnOf(r), resourcePolicy: parse(i.assumeRolePolicy), on: `role ${String(i.name ?? name)}` }); break;
      case "aws:ec2/instance:Instance": out.push({ action: "ssm:StartSession", resource: ec2(`instance/${r.outputs?.id}`), on: `instance ${name}` }); break;
      case "aws:ec2/vpc:Vpc": out.push({ action: "ec2:ModifyVpcAttribute", resource: ec2(`vpc/${r.outputs?.id}`), on: `VPC ${name}` }); break;
      case "aws:ec2/routeTable:RouteTable": out.push({ action: "ec2:CreateRoute", resource: ec2(`route-table/${r.outputs?.id}`), on: `route table ${name}` }); break;
      case "aws:sqs/queuePolicy:QueuePolicy": {
        const q = resources.find((x) => x.type === "aws:sqs/queue:Queue" && (x.outputs?.url ?? x.outputs?.id) === i.queueUrl);
        out.push({ action: "sqs:ReceiveMessage", resource: q ? arnOf(q) : String(i.queueUrl), resourcePolicy: parse(i.policy), on: `queue ${q ? urnName(q.urn) : String(i.queueUrl)}` });
        break;
      }
      case "aws:vpclattice/authPolicy:AuthPolicy": out.push({ action: "vpc-lattice-svcs:Invoke", resource: `${String(i.resourceIdentifier)}/*`, resourcePolicy: parse(i.policy), on: "the cluster's VPC Lattice service" }); break;
    }
  }
  return out;
}

/** What a trust's conditions ask the caller for (an ExternalId, a session tag), to ask again as the platform's designed path does, and in words. */
function designedContext(policy: unknown): { context: Record<string, string | string[]>; words: string[] } {
  const context: Record<string, string | string[]> = {};
  const words: string[] = [];
  for (const s of statements(parse(policy))) {
    for (const [op, kv] of Object.entries(s.Condition ?? {})) {
      for (const [k, v] of Object.entries(kv)) {
        if (k === "sts:ExternalId") (context[k] = list(v)[0]), words.push(`ExternalId ${list(v)[0]}`);
        else if (op === "Null" && String(v) === "false" && k.startsWith("aws:RequestTag/")) (context[k] = "10001"), words.push(`a ${k.slice("aws:RequestTag/".length)} session tag`);
        else if (k === "aws:TagKeys") context[k] = list(v);
      }
    }
  }
  return { context, words };
}

/**
 * Every request of every platform principal, evaluated as AWS would with the most the
 * platform could grant itself in its own account (an identity policy allowing everything):
 * what is denied then is denied by the customer's documents alone.
 */
async function verdicts(principals: readonly PlatformPrincipal[], requests: readonly Request[], account: string): Promise<{ cannot: InventoryVerdict[]; can: InventoryVerdict[] }> {
  const everything = { Version: "2012-10-17", Statement: [{ Effect: "Allow", Action: "*", Resource: "*" }] };
  const cannot: InventoryVerdict[] = [];
  const can: InventoryVerdict[] = [];
  for (const p of principals) {
    for (const q of requests) {
      const ask = (context: Record<string, string | string[]> = {}) => decide({ principal: p.arn, action: q.action, resource: q.resource, resourceAccount: account, identity: [everything], resourcePolicy: q.resourcePolicy, context: { ...q.context, ...context } });
      const verdict = await ask();
      const what = `${ACTION_WORDS[q.action] ?? q.action}: ${q.on}`;
      if (verdict === "Allowed") can.push({ principal: p.name, what, action: q.action, resource: q.resource, verdict });
      else {
        // Refused as asked; the designed path (the ExternalId or tag the trust names) may still open it.
        const designed = designedContext(q.resourcePolicy);
        const withCondition = designed.words.length ? await ask(designed.context) : undefined;
        if (withCondition === "Allowed") can.push({ principal: p.name, what: `${what}, only with ${designed.words.join(" and ")}`, action: q.action, resource: q.resource, verdict: withCondition });
        cannot.push({ principal: p.name, what, action: q.action, resource: q.resource, verdict });
      }
    }
  }
  return { cannot, can };
}

/** The platform's principals that can reach a customer's account: central's roles. */
function platformPrincipals(config: StackConfig, central: Deployment | undefined): PlatformPrincipal[] {
  if (config.kind === "tenant") {
    const a = config.central.accountId;
    const role = (name: string) => ({ name, arn: `arn:${config.partition}:iam::${a}:role/${name}` });
    const host = central?.deployment.resources.find((r) => r.type === "aws:iam/role:Role" && r.urn.includes("clusterra:central:K3sHost$aws:iam/role:Role"));
    return [
      ...(host ? [{ name: "central's K3s host", arn: String(host.outputs?.arn) }] : []),
      role(clusterApiRoleName(config.central.scope)),
      role(tenantAccessRoleName(config.environment, config.tenant.id)),
      role(controlPlaneSecretsRoleName(config.environment, config.tenant.id)),
      role(tenantMetricsRoleName(config.environment, config.tenant.id)),
    ];
  }
  if (config.kind === "connector") {
    const a = config.central.accountId;
    return [connectorBridgeRoleName(config.central.scope), clusterApiRoleName(config.central.scope)].map((name) => ({ name, arn: `arn:${config.partition}:iam::${a}:role/${name}` }));
  }
  return [];
}

/** The inventory of a tenant or connector plan. */
export async function buildInventory(config: StackConfig, deployment: Deployment, central?: Deployment, estimate: CostEstimate = estimateCost(deployment), invokes?: readonly string[]): Promise<Inventory | undefined> {
  if (config.kind !== "tenant" && config.kind !== "connector") return undefined;
  const account = config.kind === "tenant" ? config.tenant.accountId : String(config.allowedAccountIds?.[0] ?? "");
  // What the customer's account holds is what bills the customer: not what the stack makes in central.
  const held = customerResources(deployment);
  const costOf = (urn: string) => Math.round(estimate.lines.filter((l) => l.urn === urn && l.basis === "idle").reduce((a, l) => a + l.monthlyUsd, 0) * 100) / 100;
  const byPurpose = new Map<string, InventoryResource[]>();
  for (const r of held) {
    const purpose = purposeOf(r.urn);
    byPurpose.set(purpose, [...(byPurpose.get(purpose) ?? []), { type: r.type, name: urnName(r.urn), monthlyUsd: costOf(r.urn), encryption: encryptionOf(r, held), retention: retentionOf(r) }]);
  }
  const { cannot, can } = await verdicts(platformPrincipals(config, central), requestsOf(held, { partition: config.partition, region: config.region, account }), account);
  const role = invokes ? buildDeployRole(config, deployment, invokes) : undefined;
  const proof = role ? await proveDeployRole(config, deployment, role) : undefined;
  return {
    stack: config.stack,
    kind: config.kind,
    account,
    resourceCount: held.length,
    idleUsd: estimate.idle.byPayer.customer,
    usageUsd: estimate.byPayer.customer,
    groups: [...byPurpose.entries()].sort((a, b) => a[0].localeCompare(b[0])).map(([purpose, resources]) => ({ purpose, resources })),
    roles: rolesOf(held),
    network: networkOf(config, held, central),
    cannot,
    can,
    ...(role && proof
      ? {
          deployRole: {
            name: role.roleName,
            statements: role.statements.length,
            policies: role.policies.length,
            allowedCalls: proof.creates.filter((c) => c.verdict === "Allowed").length,
            deniedCalls: proof.creates.filter((c) => c.verdict !== "Allowed"),
            outside: proof.outside,
          },
        }
      : {}),
  };
}

const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");
const usd = (n: number) => `$${n.toFixed(2)}`;

/** inventory.md. */
export function inventoryMarkdown(inv: Inventory): string {
  const lines = [
    `# What Clusterra deploys in account ${inv.account} (${inv.stack})`,
    "",
    `Generated by \`clusterra plan --stack ${inv.stack}\` from the plan; nothing here is written by hand.`,
    "",
    `${inv.resourceCount} resources in your account, ${inv.groups.length} components; ${inv.roles.length} IAM roles; ${usd(inv.idleUsd)} a month idle, ${usd(inv.usageUsd)} with the plan's usage assumptions (cost.json).`,
    "",
    "## Resources, by component",
    "",
  ];
  for (const g of inv.groups) {
    lines.push(`### ${g.purpose}`, "", "| resource | type | monthly, idle | encryption at rest | retention |", "|---|---|---|---|---|");
    for (const r of g.resources) lines.push(`| ${cell(r.name)} | ${cell(r.type)} | ${r.monthlyUsd ? usd(r.monthlyUsd) : "—"} | ${cell(r.encryption)} | ${cell(r.retention)} |`);
    lines.push("");
  }
  lines.push(
    "## Network: every rule of every security group",
    "",
    `${inv.network.length} rules; a group allows only what a rule says (in: who may connect to its members; out: where they may connect).`,
    "",
    "| group | direction | protocol and ports | peer | why |",
    "|---|---|---|---|---|",
    ...inv.network.map((r) => `| ${cell(r.group)} | ${r.direction} | ${cell(r.ports)} | ${cell(r.peer)} | ${cell(r.why)} |`),
    "",
  );
  lines.push("## Roles the platform creates in your account", "");
  for (const r of inv.roles) {
    lines.push(`### ${r.name}`, "", `Who may assume it: ${r.trust.map(cell).join("; ") || "nobody"}.`, "", "What it may do:", "", ...r.permissions.map((p) => `- ${p}`), "");
  }
  lines.push(
    "## What the platform cannot do in your account",
    "",
    "Each line is a request by one of the platform's roles in its own account, asked with an identity policy allowing everything there (the most the platform could grant itself), and evaluated by an IAM simulator against the documents this plan puts in your account: a refusal here is your documents' alone.",
    "",
    "| platform role | cannot | action | verdict |",
    "|---|---|---|---|",
    ...inv.cannot.map((c) => `| ${cell(c.principal)} | ${cell(c.what)} | \`${c.action}\` | ${c.verdict} |`),
    "",
    "## What the platform can do, and on which condition",
    "",
    "| platform role | can | action | verdict |",
    "|---|---|---|---|",
    ...inv.can.map((c) => `| ${cell(c.principal)} | ${cell(c.what)} | \`${c.action}\` | ${c.verdict} |`),
    "",
  );
  const d = inv.deployRole;
  if (d) {
    lines.push(
      "## The one role you create",
      "",
      `\`${d.name}\`: \`clusterra plan\` writes it as deploy-role.yaml (CloudFormation) and deploy-role.json (${d.policies} managed policies, ${d.statements} statements). It allows the calls \`pulumi up\` makes for the resources above: by name prefix, by the stack's tags, exactly for what the stack adopts, in the stack's region.`,
      "",
      "One grant reaches beyond the stack's resources, because AWS makes a VPC's default security group before the stack can tag it: the role may add the stack's own tags (never clusterra:owner) to a security group, and remove rules from a group carrying them. It can close traffic, never open it: only a group the stack created carries clusterra:owner, and only such a group can gain a rule.",
      "",
      `The IAM simulator allows ${d.allowedCalls} of the ${d.allowedCalls + d.deniedCalls.length} calls the planned creates make (with the plan's names, tags and region)${d.deniedCalls.length ? `; it REFUSES ${d.deniedCalls.length}: ${d.deniedCalls.map((c) => `${c.what} (${c.action})`).join("; ")}` : ""}, and refuses everything below:`,
      "",
      "| the deploy role cannot | action | verdict |",
      "|---|---|---|",
      ...d.outside.map((c) => `| ${cell(c.what)} | \`${c.action}\` | ${c.verdict} |`),
      "",
    );
  }
  return lines.join("\n");
}

/** Writes inventory.md and inventory.json into the plan's folder; returns their names (none for a central stack). */
export function writeInventory(outDir: string, inv: Inventory | undefined): string[] {
  if (!inv) return [];
  fs.writeFileSync(path.join(outDir, "inventory.json"), JSON.stringify(inv, null, 2) + "\n");
  fs.writeFileSync(path.join(outDir, "inventory.md"), inventoryMarkdown(inv));
  return ["inventory.md", "inventory.json"];
}
