/**
 * The one role a customer creates for a tenant stack (`clusterra-deploy-<env>-<tenant>`), or
 * the policy whoever runs a connector stack needs, generated from the plan: for each
 * resource the stack puts in the customer's account, the calls `pulumi up` makes for it
 * (facts/deploy-actions.ts), each scoped as far as AWS allows:
 *
 * - by name, where a resource has a name the platform chooses (IAM, the bucket, queues,
 *   rules, log groups, parameters, the key's alias): the stack's own name prefix;
 * - by tag, where AWS names resources itself (EC2, EFS, KMS keys, DLM): created only with
 *   the stack's tags (aws:RequestTag), changed only when they carry them (aws:ResourceTag);
 * - exactly, for what the stack uses but does not own (an adopted VPC, central's VPC);
 * - to the stack's region, on every statement of a regional service.
 *
 * Security groups need one more tag: a customer could otherwise have the deploy role tag
 * any of its groups as the stack's. The provider must tag the VPC's default group after
 * AWS made it, so the role may add the stack's own tags to a group that exists; only a
 * group the stack created carries `clusterra:owner` (set at creation only), and only such a
 * group can gain a rule or be deleted. A group tagged the first way can lose its rules:
 * that is the one effect outside the stack's resources, and it can only close traffic.
 *
 * The IAM simulator then proves the role: every planned create is allowed, with the plan's
 * names, tags and region; a sample of requests outside the stack is refused.
 */
import * as fs from "fs";
import * as path from "path";
import { stringify } from "yaml";
import type { StackConfig } from "../config";
import { DEPLOY_ACTIONS, INVOKE_ACTIONS, KMS_USE_ACTIONS, type DeployActions, type ParentRef } from "../facts/deploy-actions";
import { connectorDeployRoleName, connectorKeyAliasName, PROJECT, TAG_KEYS, tenantKeyAliasName, tenantDeployerRoleName, tenantDeployRoleName, tenantExternalId, tenantParameterPath } from "../facts/project";
import { hasAccessLevel } from "../policies/rules/iam-catalog";
import { actionConditionKeys, catalogArnFormat, catalogResourceTypes } from "../policies/rules/iam-catalog";
import { payerOf } from "../planning/cost";
import type { Deployment, DeploymentResource } from "../planning/deployment";
import { decide } from "./iam-sim";

type Condition = Record<string, Record<string, string | string[]>>;
export interface Statement {
  readonly Sid: string;
  readonly Effect: "Allow";
  readonly Action: string[];
  readonly Resource: string[];
  readonly Condition?: Condition;
}

/** What the stack owns and where: names, tags, region, account. */
export interface DeployScope {
  readonly partition: string;
  readonly region: string;
  readonly account: string;
  /** The stack's name prefix (`clusterra-dev-acme`): IAM, bucket, queue, rule names start with `<it>-`. */
  readonly namePrefix: string;
  /** Tags every resource of the stack carries that no other stack's carry (environment, tenant). */
  readonly ownerTags: Readonly<Record<string, string>>;
  /** Every tag key the provider adds (defaultTags) and Name: what the role may add to the VPC's default group. */
  readonly stackTagKeys: readonly string[];
  /** Name patterns per catalog type, beyond `<namePrefix>-*`. */
  readonly names: Readonly<Record<string, readonly string[]>>;
}

export interface DeployRole {
  readonly stack: string;
  /** The role's name, in the customer's account. */
  readonly roleName: string;
  readonly trust: unknown;
  readonly statements: readonly Statement[];
  /** The statements split into managed policies, each within IAM's 6,144 characters. */
  readonly policies: readonly { readonly name: string; readonly document: { Version: string; Statement: Statement[] } }[];
}

export interface DeployVerdict {
  readonly what: string;
  readonly action: string;
  readonly resource: string;
  readonly verdict: string;
}

/** IAM's limit on a managed policy's size, whitespace excluded. */
export const MANAGED_POLICY_MAX_CHARS = 6144;
/** IAM's default quota of managed policies attached to one role. */
export const ROLE_MANAGED_POLICIES_MAX = 10;

const list = (v: unknown): string[] => (v === undefined || v === null ? [] : Array.isArray(v) ? v.map(String) : [String(v)]);
const parseJson = (v: unknown): unknown => (typeof v === "string" && /^[[{]/.test(v) ? JSON.parse(v) : v);

/** The resources of a plan that the customer's account holds (not what a tenant stack makes in central). */
export function customerResources(deployment: Deployment): DeploymentResource[] {
  return deployment.deployment.resources.filter((r) => r.custom && !r.type.startsWith("pulumi:") && payerOf(deployment, r) === "customer");
}

/** The tags a planned resource will carry: its provider's defaultTags and its own. */
export function tagsOf(deployment: Deployment, r: DeploymentResource): Record<string, string> {
  const provider = deployment.deployment.resources.find((p) => p.urn === String(r.provider ?? "").split("::").slice(0, -1).join("::"));
  const defaults = (parseJson(provider?.inputs?.defaultTags) as { tags?: Record<string, string> } | undefined)?.tags ?? {};
  return { ...defaults, ...((r.inputs?.tags as Record<string, string> | undefined) ?? {}) };
}

/** A nested input (`rootBlockDevice.kmsKeyId`). */
function inputAt(r: DeploymentResource, key: string): unknown {
  return key.split(".").reduce<unknown>((v, k) => (v && typeof v === "object" ? (parseJson((v as Record<string, unknown>)[k]) as unknown) : undefined), r.inputs);
}

/** The name part of an id or ARN as the catalog's format wants it. */
function namePart(type: string, value: string): string {
  if (value.startsWith("arn:")) {
    // An ARN names the resource already: its last part after the type's separator.
    const m = /^arn:[^:]*:[^:]*:[^:]*:[^:]*:(?:[a-z-]+[/:])?(.*)$/.exec(value);
    return m ? m[1] : value;
  }
  if (type === "kms:alias") return value.replace(/^alias\//, "");
  if (type === "ssm:parameter") return value.replace(/^\//, "");
  if (type === "sqs:queue" && value.startsWith("https://")) return value.split("/").pop() as string;
  return value;
}

/** A resource's ARN from the catalog's format for its type. */
export function arnFor(scope: Pick<DeployScope, "partition" | "region" | "account">, type: string, name: string, account = scope.account): string {
  if (name.startsWith("arn:")) return name;
  const format = catalogArnFormat(type);
  if (!format) throw new Error(`the IAM catalog has no ARN format for ${type}`);
  return format
    .replace("${Partition}", scope.partition)
    .replace("${Region}", scope.region)
    .replace("${Account}", account)
    .replace(/\$\{[A-Za-z0-9]+\}/, namePart(type, name))
    .replace(/\$\{[A-Za-z0-9]+\}/g, "*");
}

/** Types scoped by name: the platform chooses their names. */
const NAMED = new Set(["iam:role", "iam:policy", "iam:instance-profile", "s3:bucket", "sqs:queue", "events:rule-on-default-event-bus", "logs:log-group", "ssm:parameter", "kms:alias", "secretsmanager:Secret", "cloudwatch:alarm", "sns:topic"]);

/** The ARN patterns of a named type the stack owns. */
function namePatterns(scope: DeployScope, type: string): string[] {
  const patterns = scope.names[type] ?? [`${scope.namePrefix}-*`];
  return patterns.map((p) => arnFor(scope, type, p));
}

const owned = (scope: DeployScope): Record<string, string> => Object.fromEntries(Object.entries(scope.ownerTags).map(([k, v]) => [`aws:ResourceTag/${k}`, v]));
const requested = (scope: DeployScope): Record<string, string> => Object.fromEntries(Object.entries(scope.ownerTags).map(([k, v]) => [`aws:RequestTag/${k}`, v]));

/** Security-group actions that would open or remove a group: only on groups the stack created. */
const GROUP_CHANGES = /^ec2:(Authorize|DeleteSecurityGroup|ModifySecurityGroupRules|UpdateSecurityGroupRuleDescriptions|CreateSecurityGroup|RunInstances|CreateNetworkInterface|CreateVpcEndpoint|ModifyInstanceAttribute|CreateMountTarget)/;

/** A grant before merging: actions on resources under one condition. */
interface Grant {
  readonly kind: string;
  readonly action: string;
  readonly resources: readonly string[];
  readonly condition?: Condition;
}

function regional(scope: DeployScope): Condition {
  return { StringEquals: { "aws:RequestedRegion": scope.region } };
}

/** Whether a create action takes the created resource's tags in its request (tag on create). */
function tagsOnCreate(action: string, type: string): boolean {
  const keys = [...actionConditionKeys(action), ...(catalogResourceTypes(action).find((t) => `${action.split(":")[0]}:${t.name}` === type)?.conditionKeys ?? [])];
  return keys.includes("aws:RequestTag/${TagKey}");
}

/** The ec2 resource types a stack's creates tag: where ec2:CreateTags is allowed with ec2:CreateAction. */
function ownership(scope: DeployScope, type: string, action: string, securityGroupOwner: string): Grant {
  const service = type.split(":")[0];
  if (NAMED.has(type)) return { kind: `Own${cap(service)}ByName`, action, resources: namePatterns(scope, type) };
  const condition: Record<string, string> = { ...owned(scope) };
  if (type === "ec2:security-group" && GROUP_CHANGES.test(action)) condition[`aws:ResourceTag/${TAG_KEYS.owner}`] = securityGroupOwner;
  return { kind: `Own${cap(service)}ByTag${condition[`aws:ResourceTag/${TAG_KEYS.owner}`] ? "AndOwner" : ""}`, action, resources: [arnFor(scope, type, "*")], condition: { StringEquals: condition } };
}

const cap = (s: string) => s.split(/[^a-zA-Z0-9]/).map((p) => p.charAt(0).toUpperCase() + p.slice(1)).join("");

/** The planned resource an input value names (an id, a name or an ARN), if the stack makes it. */
function plannedBy(held: readonly DeploymentResource[], value: string): DeploymentResource | undefined {
  return held.find((r) => r.id === value || r.outputs?.arn === value || r.inputs?.name === value || r.outputs?.keyId === value || r.outputs?.url === value || r.inputs?.bucket === value);
}

/** The resources of one catalog type a planned resource's inputs name: each value, its account, and the planned resource when the stack makes it. */
function parentsOf(ctx: Context, r: DeploymentResource, row: DeployActions, type: string): { input: string; value: string; account: string; planned?: DeploymentResource }[] {
  const found: { input: string; value: string; account: string; planned?: DeploymentResource }[] = [];
  for (const [input, ref] of Object.entries(row.parents ?? {})) {
    const { type: parentType, accountInput } = typeof ref === "string" ? ({ type: ref } as ParentRef) : ref;
    if (parentType !== type) continue;
    for (const value of list(parseJson(inputAt(r, input)))) {
      const account = accountInput ? String(inputAt(r, accountInput)) : ctx.scope.account;
      const planned = account === ctx.scope.account ? plannedBy(ctx.held, value) : undefined;
      found.push({ input, value, account, ...(planned ? { planned } : {}) });
    }
  }
  return found;
}

interface Context {
  readonly scope: DeployScope;
  readonly deployment: Deployment;
  readonly held: readonly DeploymentResource[];
  readonly securityGroupOwner: string;
}

/** The grants one action of one planned resource needs. */
function grantsFor(ctx: Context, r: DeploymentResource, row: DeployActions, op: "create" | "read" | "update" | "delete", action: string): Grant[] {
  const { scope } = ctx;
  const service = action.split(":")[0];
  const types = catalogResourceTypes(action).map((t) => `${service}:${t.name}`);
  if ((action === "ec2:CreateTags" || action === "ec2:DeleteTags") && row.resource !== undefined) return tagGrants(ctx, r, row, action);
  if (types.length === 0) {
    if (hasAccessLevel(action, "List") || hasAccessLevel(action, "Read")) return [{ kind: "DescribeInRegion", action, resources: ["*"], condition: regional(scope) }];
    if (op === "create" && actionConditionKeys(action).includes("aws:RequestTag/${TagKey}")) return [{ kind: "CreateWithStackTags", action, resources: ["*"], condition: { StringEquals: { ...requested(scope), "aws:RequestedRegion": scope.region } } }];
    return [{ kind: "UnscopableInRegion", action, resources: ["*"], condition: regional(scope) }];
  }
  const grants: Grant[] = [];
  for (const type of types) {
    if (type === row.resource) {
      if (op === "create" && !NAMED.has(type) && tagsOnCreate(action, type)) {
        const condition: Record<string, string> = { ...requested(scope) };
        if (type === "ec2:security-group") condition[`aws:RequestTag/${TAG_KEYS.owner}`] = ctx.securityGroupOwner;
        grants.push({ kind: `Create${cap(service)}WithStackTags`, action, resources: [arnFor(scope, type, "*")], condition: { StringEquals: condition } });
      } else grants.push(ownership(scope, type, action, ctx.securityGroupOwner));
      continue;
    }
    if (row.made?.includes(type)) {
      grants.push({ kind: "NewResourcesInRegion", action, resources: [arnFor(scope, type, "*")] });
      continue;
    }
    for (const { value, account, planned } of parentsOf(ctx, r, row, type)) {
      if (planned) grants.push(ownership(scope, type, action, ctx.securityGroupOwner));
      else if (type === "ec2:image") grants.push({ kind: "AmazonImages", action, resources: [arnFor(scope, type, "*", "")], condition: { StringEquals: { "ec2:Owner": "amazon" } } });
      else grants.push({ kind: "NamedExisting", action, resources: [arnFor(scope, type, value, account)] });
    }
  }
  return grants;
}

/** ec2:CreateTags on create (ec2:CreateAction), on the stack's own resources, and the default group's adoption. */
function tagGrants(ctx: Context, r: DeploymentResource, row: DeployActions, action: string): Grant[] {
  const { scope } = ctx;
  if (row.resource === undefined) return [];
  const protectedKeys = [...Object.keys(scope.ownerTags), TAG_KEYS.owner];
  if (r.type === "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup") {
    return [
      {
        kind: "AdoptDefaultSecurityGroupTags",
        action,
        resources: [arnFor(scope, "ec2:security-group", "*")],
        condition: { StringEquals: requested(scope), "ForAllValues:StringEquals": { "aws:TagKeys": [...scope.stackTagKeys] } },
      },
    ];
  }
  return [{ kind: "RetagOwnEc2", action, resources: [arnFor(scope, row.resource, "*")], condition: { StringEquals: owned(scope), "ForAllValues:StringNotEquals": { "aws:TagKeys": protectedKeys } } }];
}

/** ec2:CreateTags as part of a tagged create: only with one of the stack's create calls. */
function tagOnCreateGrant(scope: DeployScope, creates: readonly string[], types: readonly string[]): Grant {
  return {
    kind: "TagOnCreate",
    action: "ec2:CreateTags",
    resources: [...new Set(types)].sort().map((t) => arnFor(scope, t, "*")),
    condition: { StringEquals: { "ec2:CreateAction": [...new Set(creates)].sort() } },
  };
}

/** Every grant the plan's resources and reads need. */
function grantsOf(ctx: Context, invokes: readonly string[]): Grant[] {
  const { scope } = ctx;
  const grants: Grant[] = [];
  const ec2Creates: string[] = [];
  const ec2Types: string[] = [];
  const passed = new Set<string>();
  const keyServices = new Set<string>();
  for (const r of ctx.held) {
    const row = DEPLOY_ACTIONS[r.type];
    if (!row) throw new Error(`facts/deploy-actions.ts has no row for ${r.type} (${r.urn}): the deploy role cannot be generated without its calls`);
    for (const op of ["create", "read", "update", "delete"] as const) {
      for (const action of row[op]) {
        const g = grantsFor(ctx, r, row, op, action);
        if (g.length === 0 && action !== "ec2:CreateTags" && action !== "ec2:DeleteTags") throw new Error(`facts/deploy-actions.ts: ${r.type}'s ${action} acts on none of the row's resource types (${catalogResourceTypes(action).map((t) => t.name).join(", ")})`);
        grants.push(...g);
        if (op === "create" && action.startsWith("ec2:") && row.resource?.startsWith("ec2:") && tagsOnCreate(action, row.resource)) {
          ec2Creates.push(action);
          ec2Types.push(row.resource, ...(row.made ?? []));
        }
      }
    }
    if (row.passes) passed.add(row.passes.service);
    if (row.usesKey && inputAt(r, row.usesKey.input)) keyServices.add(`${row.usesKey.service}.${scope.region}.amazonaws.com`);
  }
  if (ec2Creates.length) grants.push(tagOnCreateGrant(scope, ec2Creates, ec2Types));
  if (passed.size) {
    for (const action of ["iam:PassRole"]) grants.push({ kind: "PassOwnRoles", action, resources: namePatterns(scope, "iam:role"), condition: { StringEquals: { "iam:PassedToService": [...passed].sort() } } });
  }
  if (keyServices.size) {
    for (const action of KMS_USE_ACTIONS) grants.push({ kind: "UseOwnKeyThroughServices", action, resources: [arnFor(scope, "kms:key", "*")], condition: { StringEquals: { ...owned(scope), "kms:ViaService": [...keyServices].sort() } } });
  }
  for (const token of invokes) {
    const row = INVOKE_ACTIONS[token];
    if (!row) throw new Error(`facts/deploy-actions.ts has no row for the read ${token}`);
    for (const action of row.actions) {
      if (row.resource === "ssm:parameter") grants.push({ kind: "ReadPublicParameters", action, resources: [arnFor(scope, "ssm:parameter", "aws/service/*", "")] });
      else grants.push({ kind: "DescribeInRegion", action, resources: ["*"], condition: regional(scope) });
    }
  }
  // A policy may be attached only if it is the stack's own.
  return grants.map((g) => (g.action === "iam:AttachRolePolicy" ? { ...g, kind: "AttachOwnPolicies", condition: { ArnLike: { "iam:PolicyARN": namePatterns(scope, "iam:policy") } } } : g));
}

/** Merges grants with the same resources and condition into statements, deterministic. */
export function mergeGrants(grants: readonly Grant[]): Statement[] {
  const byKey = new Map<string, { kind: string; actions: Set<string>; resources: string[]; condition?: Condition }>();
  for (const g of grants) {
    const resources = [...new Set(g.resources)].sort();
    const key = JSON.stringify([resources, g.condition ?? null]);
    const entry = byKey.get(key) ?? { kind: g.kind, actions: new Set<string>(), resources, ...(g.condition ? { condition: g.condition } : {}) };
    entry.actions.add(g.action);
    byKey.set(key, entry);
  }
  const entries = [...byKey.values()].sort((a, b) => a.kind.localeCompare(b.kind) || JSON.stringify(a.resources).localeCompare(JSON.stringify(b.resources)));
  const seen = new Map<string, number>();
  return entries.map((e) => {
    const n = (seen.get(e.kind) ?? 0) + 1;
    seen.set(e.kind, n);
    return { Sid: n === 1 ? e.kind : `${e.kind}${n}`, Effect: "Allow" as const, Action: [...e.actions].sort(), Resource: e.resources, ...(e.condition ? { Condition: e.condition } : {}) };
  });
}

/** Splits statements into managed policies within IAM's size limit (whitespace excluded), in order. */
export function splitPolicies(name: string, statements: readonly Statement[]): DeployRole["policies"] {
  const size = (s: Statement[]) => JSON.stringify({ Version: "2012-10-17", Statement: s }).length;
  const groups: Statement[][] = [[]];
  for (const s of statements) {
    if (size([s]) > MANAGED_POLICY_MAX_CHARS) throw new Error(`statement ${s.Sid} alone is ${size([s])} characters, over IAM's ${MANAGED_POLICY_MAX_CHARS}`);
    const last = groups[groups.length - 1];
    if (size([...last, s]) > MANAGED_POLICY_MAX_CHARS) groups.push([s]);
    else last.push(s);
  }
  if (groups.length > ROLE_MANAGED_POLICIES_MAX) throw new Error(`the deploy role needs ${groups.length} managed policies, over IAM's default ${ROLE_MANAGED_POLICIES_MAX} a role`);
  return groups.map((Statement, i) => ({ name: `${name}-${i + 1}`, document: { Version: "2012-10-17", Statement } }));
}

/** What the stack owns, from its configuration. */
export function deployScope(config: StackConfig, deployment: Deployment): DeployScope | undefined {
  if (config.kind === "central") return undefined;
  const stackProvider = deployment.deployment.resources.find((r) => r.type === "pulumi:providers:aws" && !/::central$/.test(r.urn));
  const defaults = Object.keys((parseJson(stackProvider?.inputs?.defaultTags) as { tags?: Record<string, string> } | undefined)?.tags ?? {});
  const common = { partition: config.partition, region: config.region, stackTagKeys: [...defaults, "Name"].sort() };
  if (config.kind === "tenant") {
    const prefix = `${PROJECT}-${config.environment}-${config.tenant.id}`;
    return {
      ...common,
      account: config.tenant.accountId,
      namePrefix: prefix,
      ownerTags: { [TAG_KEYS.environment]: config.environment, [TAG_KEYS.tenant]: config.tenant.id },
      names: {
        "ssm:parameter": [`${tenantParameterPath(config.environment, config.tenant.id)}/*`],
        "logs:log-group": [`/${PROJECT}/vpc/${prefix}/*`],
        "kms:alias": [`alias/${PROJECT}/${tenantKeyAliasName(config.environment, config.tenant.id)}`],
      },
    };
  }
  const prefix = `${PROJECT}-${config.connector.clusterName}`;
  return {
    ...common,
    account: String(config.allowedAccountIds?.[0] ?? ""),
    namePrefix: prefix,
    ownerTags: { [TAG_KEYS.environment]: config.environment, [TAG_KEYS.connector]: config.connector.clusterName },
    names: {
      "logs:log-group": [`/aws/lambda/${prefix}-*`],
      "secretsmanager:Secret": [`${PROJECT}/${config.connector.clusterName}/*`],
      "kms:alias": [`alias/${PROJECT}/${connectorKeyAliasName(config.connector.clusterName)}`],
    },
  };
}

/** The deploy role of a tenant or connector plan. `invokes`: the reads the program made through the customer's provider. */
export function buildDeployRole(config: StackConfig, deployment: Deployment, invokes: readonly string[]): DeployRole | undefined {
  const scope = deployScope(config, deployment);
  if (!scope || config.kind === "central") return undefined;
  const held = customerResources(deployment);
  const ctx: Context = { scope, deployment, held, securityGroupOwner: scope.namePrefix };
  const statements = mergeGrants(grantsOf(ctx, [...new Set(invokes)].sort()));
  const roleName = config.kind === "tenant" ? tenantDeployRoleName(config.environment, config.tenant.id) : connectorDeployRoleName(config.connector.clusterName);
  return { stack: config.stack, roleName, trust: deployTrust(config), statements, policies: splitPolicies(roleName, statements) };
}

/**
 * Who may assume it. A tenant's: the operator's deployer role for that tenant, with the
 * tenant's ExternalId (the account as principal, so the customer can create the role before
 * the operator's role exists). A connector's: the customer's own account (its CI or admins).
 */
export function deployTrust(config: StackConfig): unknown {
  if (config.kind === "tenant") {
    const operator = config.central.accountId;
    return {
      Version: "2012-10-17",
      Statement: [
        {
          Sid: "OperatorDeployerWithExternalId",
          Effect: "Allow",
          Principal: { AWS: `arn:${config.partition}:iam::${operator}:root` },
          Action: "sts:AssumeRole",
          Condition: { StringEquals: { "sts:ExternalId": tenantExternalId(config.environment, config.tenant.id) }, ArnEquals: { "aws:PrincipalArn": `arn:${config.partition}:iam::${operator}:role/${tenantDeployerRoleName(config.environment, config.tenant.id)}` } },
        },
      ],
    };
  }
  const account = String(config.allowedAccountIds?.[0] ?? "");
  return { Version: "2012-10-17", Statement: [{ Sid: "ThisAccount", Effect: "Allow", Principal: { AWS: `arn:${config.partition}:iam::${account}:root` }, Action: "sts:AssumeRole" }] };
}

/** The CloudFormation template the customer applies once: the role and its managed policies. */
export function deployRoleTemplate(role: DeployRole): string {
  const resources: Record<string, unknown> = {};
  const refs: unknown[] = [];
  role.policies.forEach((p, i) => {
    const logical = `DeployPolicy${i + 1}`;
    resources[logical] = { Type: "AWS::IAM::ManagedPolicy", Properties: { ManagedPolicyName: p.name, PolicyDocument: p.document } };
    refs.push({ Ref: logical });
  });
  resources.DeployRole = {
    Type: "AWS::IAM::Role",
    Properties: { RoleName: role.roleName, Description: `Clusterra deploys ${role.stack} through this role; generated from the plan`, MaxSessionDuration: 3600, AssumeRolePolicyDocument: role.trust, ManagedPolicyArns: refs },
  };
  const template = {
    AWSTemplateFormatVersion: "2010-09-09",
    Description: `The role Clusterra's ${role.stack} stack deploys through, generated by \`clusterra plan\` from the plan (${role.statements.length} statements in ${role.policies.length} managed policies)`,
    Resources: resources,
    Outputs: { RoleArn: { Value: { "Fn::GetAtt": ["DeployRole", "Arn"] } } },
  };
  return `# Generated by \`clusterra plan --stack ${role.stack}\`; nothing here is written by hand.\n${stringify(template, { lineWidth: 0 })}`;
}

/** Writes deploy-role.yaml (CloudFormation) and deploy-role.json (the policies) into the plan's folder. */
export function writeDeployRole(outDir: string, role: DeployRole | undefined): string[] {
  if (!role) return [];
  fs.writeFileSync(path.join(outDir, "deploy-role.yaml"), deployRoleTemplate(role));
  fs.writeFileSync(path.join(outDir, "deploy-role.json"), JSON.stringify({ roleName: role.roleName, trust: role.trust, policies: role.policies }, null, 2) + "\n");
  return ["deploy-role.yaml", "deploy-role.json"];
}


interface Ask {
  readonly what: string;
  readonly action: string;
  readonly resource: string;
  readonly context: Record<string, string | string[]>;
  /** The resource's own policy, where AWS needs it to allow too (a KMS key's). */
  readonly resourcePolicy?: unknown;
}

/** AWS's default key policy: the account's IAM policies decide. */
const defaultKeyPolicy = (partition: string, account: string) => ({ Version: "2012-10-17", Statement: [{ Sid: "Enable IAM User Permissions", Effect: "Allow", Principal: { AWS: `arn:${partition}:iam::${account}:root` }, Action: "kms:*", Resource: "*" }] });

/** The planned policy of the resource an ARN names: a key's key policy, a bucket's, a file system's, a queue's. */
function resourcePolicyOf(ctx: Context, arn: string): unknown {
  if (/^arn:[^:]+:kms:[^:]*:[^:]*:key\//.test(arn)) {
    const key = ctx.held.find((k) => k.type === "aws:kms/key:Key" && arn.endsWith(`/${String(k.outputs?.keyId)}`));
    return key ? parseJson(key.inputs?.policy) : defaultKeyPolicy(ctx.scope.partition, ctx.scope.account);
  }
  const bucket = /^arn:[^:]+:s3:::([^/]+)$/.exec(arn)?.[1];
  if (bucket) {
    const id = ctx.held.find((b) => b.type === "aws:s3/bucket:Bucket" && b.inputs?.bucket === bucket)?.id;
    return parseJson(ctx.held.find((p) => p.type === "aws:s3/bucketPolicy:BucketPolicy" && (p.inputs?.bucket === id || p.inputs?.bucket === bucket))?.inputs?.policy);
  }
  return undefined;
}

const tagContext = (prefix: "aws:RequestTag" | "aws:ResourceTag", tags: Record<string, string>): Record<string, string | string[]> => ({
  ...Object.fromEntries(Object.entries(tags).map(([k, v]) => [`${prefix}/${k}`, v])),
  ...(prefix === "aws:RequestTag" ? { "aws:TagKeys": Object.keys(tags).sort() } : {}),
});

/** The requests a planned resource's create makes, with the plan's names, tags and region: what AWS authorizes, one resource at a time. */
function createAsks(ctx: Context, r: DeploymentResource): Ask[] {
  const { scope, deployment } = ctx;
  const row = DEPLOY_ACTIONS[r.type];
  const region = { "aws:RequestedRegion": scope.region };
  const tags = tagsOf(deployment, r);
  const name = urnNameOf(r);
  const own = row.resource ? arnFor(scope, row.resource, resourceName(r, row)) : undefined;
  const asks: Ask[] = [];
  for (const action of row.create) {
    const service = action.split(":")[0];
    const types = catalogResourceTypes(action).map((t) => `${service}:${t.name}`);
    if (action === "ec2:CreateTags" && own) {
      // The default group's adoption: its tags, on the group AWS made with the VPC.
      asks.push({ what: `${name}: tag the VPC's default group`, action, resource: own, context: { ...region, ...tagContext("aws:RequestTag", tags) } });
      continue;
    }
    if (types.length === 0) {
      asks.push({ what: `${name}: ${action}`, action, resource: "*", context: { ...region, ...(actionConditionKeys(action).includes("aws:RequestTag/${TagKey}") ? tagContext("aws:RequestTag", tags) : {}) } });
      continue;
    }
    for (const type of types) {
      if (type === row.resource && own) {
        const creating = !NAMED.has(type) && tagsOnCreate(action, type);
        asks.push({ what: `${name}: ${action}`, action, resource: own, context: { ...region, ...tagContext(creating ? "aws:RequestTag" : "aws:ResourceTag", tags) } });
        if (creating && service === "ec2") asks.push({ what: `${name}: tag on create`, action: "ec2:CreateTags", resource: own, context: { ...region, "ec2:CreateAction": action, ...tagContext("aws:RequestTag", tags) } });
      } else if (row.made?.includes(type)) {
        asks.push({ what: `${name}: ${action} makes a ${type}`, action, resource: arnFor(scope, type, "new"), context: region });
      }
      for (const { input, value, account, planned } of parentsOf(ctx, r, row, type)) {
        const parentArn = planned ? arnFor(scope, type, resourceName(planned, DEPLOY_ACTIONS[planned.type])) : type === "ec2:image" ? arnFor(scope, type, value, "") : arnFor(scope, type, value, account);
        const context: Record<string, string | string[]> = { ...region, ...(planned ? tagContext("aws:ResourceTag", tagsOf(deployment, planned)) : {}), ...(type === "ec2:image" ? { "ec2:Owner": "amazon" } : {}) };
        if (action === "iam:AttachRolePolicy") context["iam:PolicyARN"] = String(r.inputs?.policyArn);
        asks.push({ what: `${name}: ${action} on ${input} ${value}`, action, resource: parentArn, context });
      }
    }
  }
  if (row.passes) {
    const value = String(inputAt(r, row.passes.input) ?? "");
    const roleName = row.passes.via === "instance-profile" ? String(ctx.held.find((p) => p.type === "aws:iam/instanceProfile:InstanceProfile" && (p.inputs?.name === value || p.id === value))?.inputs?.role ?? value) : namePart("iam:role", value);
    asks.push({ what: `${name}: pass ${roleName} to ${row.passes.service}`, action: "iam:PassRole", resource: arnFor(scope, "iam:role", roleName), context: { "iam:PassedToService": row.passes.service } });
  }
  const key = row.usesKey ? inputAt(r, row.usesKey.input) : undefined;
  if (row.usesKey && typeof key === "string") {
    const planned = plannedBy(ctx.held, key) ?? ctx.held.find((k) => k.type === "aws:kms/key:Key" && key.endsWith(String(k.outputs?.keyId)));
    for (const action of KMS_USE_ACTIONS) {
      asks.push({ what: `${name}: ${row.usesKey.service} uses the key`, action, resource: key.startsWith("arn:") ? key : arnFor(scope, "kms:key", key), context: { ...region, "kms:ViaService": `${row.usesKey.service}.${scope.region}.amazonaws.com`, ...(planned ? tagContext("aws:ResourceTag", tagsOf(deployment, planned)) : {}) } });
    }
  }
  return asks;
}

const urnNameOf = (r: DeploymentResource) => r.urn.split("::").pop() as string;

/** The name part of a planned resource's ARN. */
function resourceName(r: DeploymentResource, row: DeployActions | undefined): string {
  const source = row?.name ?? "id";
  const value = source === "id" ? r.id : "input" in source ? r.inputs?.[source.input] : r.outputs?.[source.output];
  return String(value ?? r.id ?? urnNameOf(r));
}

/** Requests outside the stack the role must refuse: another VPC, an untagged instance, IAM users, another region, and more. */
function outsideAsks(scope: DeployScope, role: DeployRole): Ask[] {
  const region = { "aws:RequestedRegion": scope.region };
  const ours = tagContext("aws:RequestTag", scope.ownerTags);
  const ec2 = (type: string, id: string, reg = scope.region) => arnFor({ ...scope, region: reg }, type, id);
  const elsewhere = scope.region === "eu-west-1" ? "us-west-2" : "eu-west-1";
  const other = Object.fromEntries(Object.entries(scope.ownerTags).map(([k, v]) => [k, k === TAG_KEYS.environment ? v : `${v}-other`]));
  return [
    { what: "create a subnet in another VPC", action: "ec2:CreateSubnet", resource: ec2("ec2:vpc", "vpc-0c0ffee0c0ffee000"), context: region },
    { what: "create a security group in another VPC", action: "ec2:CreateSecurityGroup", resource: ec2("ec2:vpc", "vpc-0c0ffee0c0ffee000"), context: region },
    { what: "add a route to another VPC's route table", action: "ec2:CreateRoute", resource: ec2("ec2:route-table", "rtb-0c0ffee0c0ffee000"), context: region },
    { what: "terminate an untagged instance", action: "ec2:TerminateInstances", resource: ec2("ec2:instance", "i-0c0ffee0c0ffee000"), context: region },
    { what: "terminate another stack's instance", action: "ec2:TerminateInstances", resource: ec2("ec2:instance", "i-0c0ffee0c0ffee001"), context: { ...region, ...tagContext("aws:ResourceTag", other) } },
    { what: "open a group it tagged as its own but did not create", action: "ec2:AuthorizeSecurityGroupIngress", resource: ec2("ec2:security-group", "sg-0c0ffee0c0ffee000"), context: { ...region, ...tagContext("aws:ResourceTag", scope.ownerTags) } },
    { what: "mark an existing group as created by the stack", action: "ec2:CreateTags", resource: ec2("ec2:security-group", "sg-0c0ffee0c0ffee000"), context: { ...region, ...tagContext("aws:RequestTag", { ...scope.ownerTags, [TAG_KEYS.owner]: scope.namePrefix }) } },
    { what: "launch an instance in another region", action: "ec2:RunInstances", resource: ec2("ec2:instance", "*", elsewhere), context: { "aws:RequestedRegion": elsewhere, ...ours } },
    { what: "create an IAM user", action: "iam:CreateUser", resource: arnFor(scope, "iam:user", "intruder"), context: {} },
    { what: "create a role outside its prefix", action: "iam:CreateRole", resource: arnFor(scope, "iam:role", `${scope.namePrefix}x-admin`), context: {} },
    { what: "attach AdministratorAccess to its own role", action: "iam:AttachRolePolicy", resource: arnFor(scope, "iam:role", `${scope.namePrefix}-files`), context: { "iam:PolicyARN": `arn:${scope.partition}:iam::aws:policy/AdministratorAccess` } },
    { what: "change its own permissions", action: "iam:PutRolePolicy", resource: arnFor(scope, "iam:role", role.roleName), context: {} },
    { what: "pass a role of the customer's to EC2", action: "iam:PassRole", resource: arnFor(scope, "iam:role", "customer-admin"), context: { "iam:PassedToService": "ec2.amazonaws.com" } },
    { what: "read an object of the files bucket", action: "s3:GetObject", resource: `arn:${scope.partition}:s3:::${scope.namePrefix}-files-${scope.account}/home/1000/data`, context: region },
    { what: "delete another bucket", action: "s3:DeleteBucket", resource: arnFor(scope, "s3:bucket", "customer-data"), context: region },
    { what: "decrypt with its own key outside a service", action: "kms:Decrypt", resource: ec2("kms:key", "1234abcd-12ab-34cd-56ef-1234567890ab"), context: { ...region, ...tagContext("aws:ResourceTag", scope.ownerTags) } },
    { what: "schedule deletion of an untagged key", action: "kms:ScheduleKeyDeletion", resource: ec2("kms:key", "1234abcd-12ab-34cd-56ef-1234567890ac"), context: region },
    { what: "read another parameter", action: "ssm:GetParameter", resource: arnFor(scope, "ssm:parameter", "prod/db/password"), context: region },
    { what: "delete an untagged file system", action: "elasticfilesystem:DeleteFileSystem", resource: ec2("elasticfilesystem:file-system", "fs-0c0ffee0"), context: region },
  ];
}

/** The simulator's verdict on every planned create (allowed) and on the outside sample (refused). */
export async function proveDeployRole(config: StackConfig, deployment: Deployment, role: DeployRole): Promise<{ creates: DeployVerdict[]; outside: DeployVerdict[] }> {
  const scope = deployScope(config, deployment) as DeployScope;
  const held = customerResources(deployment);
  const ctx: Context = { scope, deployment, held, securityGroupOwner: scope.namePrefix };
  const identity = role.policies.map((p) => p.document);
  const principal = `arn:${scope.partition}:sts::${scope.account}:assumed-role/${role.roleName}/clusterra-${role.stack}`;
  // Many resources ask the same question (forty rules on one group): the simulator answers each once.
  const answers = new Map<string, Promise<string>>();
  const ask = async (a: Ask): Promise<DeployVerdict> => {
    const resourcePolicy = a.resourcePolicy ?? resourcePolicyOf(ctx, a.resource);
    const key = JSON.stringify([a.action, a.resource, a.context, resourcePolicy ?? null]);
    let verdict = answers.get(key);
    if (!verdict) {
      verdict = decide({ identity, action: a.action, resource: a.resource, principal, context: a.context, ...(resourcePolicy ? { resourcePolicy } : {}) });
      answers.set(key, verdict);
    }
    return { what: a.what, action: a.action, resource: a.resource, verdict: await verdict };
  };
  const creates: DeployVerdict[] = [];
  for (const r of held) for (const a of createAsks(ctx, r)) creates.push(await ask(a));
  const outside: DeployVerdict[] = [];
  for (const a of outsideAsks(scope, role)) outside.push(await ask(a));
  return { creates, outside };
}
