/** Lambda: reserved concurrency, nothing public, execution role without wildcards. */
import type { PolicyResource } from "@pulumi/policy";
import { findSecrets } from "./compute";
import { broadManagedPolicy, onAnyResource, scopableActions } from "./iam";
import { documentsOf, isAllow, statementsOf, type Statement } from "./iam-docs";
import {
  asRecord,
  indexTargets,
  isNonEmptyString,
  known,
  ofTypes,
  referencedResources,
  resourcePolicy,
  stackPolicy,
  strings,
  type PackPolicy,
} from "./util";

export const FUNCTION = "aws:lambda/function:Function";
const ROLE = "aws:iam/role:Role";
const ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy";
const ROLE_POLICY_ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment";
const POLICY_ATTACHMENT = "aws:iam/policyAttachment:PolicyAttachment";
const ROLE_POLICY_ATTACHMENTS_EXCLUSIVE = "aws:iam/rolePolicyAttachmentsExclusive:RolePolicyAttachmentsExclusive";
const LAYER_VERSION_PERMISSION = "aws:lambda/layerVersionPermission:LayerVersionPermission";
const MANAGED_POLICY = "aws:iam/policy:Policy";

export const lambdaReservedConcurrency = resourcePolicy("lambda-reserved-concurrency", {
  description: "Every Lambda function sets reservedConcurrentExecutions, so a flood of events cannot starve the account's other functions.",
  remediation: "set reservedConcurrentExecutions to the most concurrent invocations the function needs (e.g. 2 for the event shipper)",
  types: [FUNCTION],
  validate: (args, report) => {
    const r = args.props.reservedConcurrentExecutions;
    if (typeof r !== "number" || r < 0) report(`reservedConcurrentExecutions is ${r === undefined ? "not set" : String(r)} (unreserved)`);
  },
});

export const lambdaPermissionRestricted = resourcePolicy("lambda-permission-restricted", {
  description:
    'No Lambda permission lets anyone invoke a function or use a layer: no Principal "*" unless limited to an organisation (principalOrgId, ' +
    "organizationId for layers), no unauthenticated function-URL grant, and a service principal only with sourceAccount, or a sourceArn that names one resource in one account (no wildcard; S3's ARNs name no account).",
  remediation: "name the invoking service or account as principal and set sourceArn (the rule, queue or bucket) or sourceAccount, or limit \"*\" to principalOrgId",
  types: ["aws:lambda/permission:Permission", LAYER_VERSION_PERMISSION],
  validate: (args, report) => {
    if (args.type === LAYER_VERSION_PERMISSION) {
      if (args.props.principal === "*" && !isNonEmptyString(args.props.organizationId)) report('principal is "*" with no organizationId: any account may use the layer');
      return;
    }
    const { principal, sourceArn, sourceAccount, functionUrlAuthType, principalOrgId } = args.props;
    if (principal === "*") {
      if (!isNonEmptyString(principalOrgId)) report('principal is "*" with no principalOrgId: anyone may invoke the function');
    } else if (typeof principal === "string" && /\.amazonaws\.com(\.cn)?$/.test(principal) && !isNonEmptyString(sourceAccount)) {
      // A sourceArn limits only when it names one resource, and an ARN with no account (S3's)
      // names one in any account: the bucket may be deleted and its name taken elsewhere.
      const arnText = isNonEmptyString(sourceArn) ? sourceArn : "";
      const noAccount = /^arn:[^:]*:[^:]*:[^:]*::/.test(arnText);
      if (!arnText) report(`service principal ${principal} is not limited by sourceArn or sourceAccount: any ${principal} resource in any account may invoke the function`);
      else if (/[*?]/.test(arnText)) report(`service principal ${principal} is limited by the wildcard sourceArn ${arnText} and no sourceAccount: any matching resource in any account may invoke the function`);
      else if (noAccount) report(`service principal ${principal} is limited by ${arnText}, an ARN with no account, and no sourceAccount: a resource of that name in another account may invoke the function`);
    }
    if (functionUrlAuthType === "NONE") report('functionUrlAuthType is "NONE": the function URL needs no authentication');
  },
});

export const lambdaUrlRequiresAuth = resourcePolicy("lambda-url-requires-auth", {
  description: "Lambda function URLs require IAM authentication.",
  remediation: 'set authorizationType: "AWS_IAM" (or drop the URL and invoke through the event source)',
  types: ["aws:lambda/functionUrl:FunctionUrl"],
  validate: (args, report) => {
    if (args.props.authorizationType !== "AWS_IAM") report(`authorizationType is "${String(args.props.authorizationType)}": the URL is public`);
  },
});

/** Wildcards in one Allow statement, described; empty when the statement is scoped. */
export function statementWildcards(st: Statement): string[] {
  if (!isAllow(st)) return [];
  const out: string[] = [];
  const wildActions = st.actions.filter((a) => a.includes("*"));
  if (wildActions.length > 0) out.push(`wildcard action ${wildActions.join(", ")}`);
  if (st.notActions) out.push("NotAction");
  if (st.notResources) out.push("NotResource");
  if (onAnyResource(st) && !st.notResources) {
    const scopable = st.actions.filter((a) => !a.includes("*")).flatMap((a) => scopableActions(a, st));
    const on = st.resources.find((r) => r !== "*" && r.startsWith("arn:")) ?? "*";
    if (scopable.length > 0) out.push(`Resource "${on}" for ${scopable.slice(0, 4).join(", ")}${scopable.length > 4 ? ", ..." : ""}`);
  }
  return out;
}

function documentWildcards(raw: unknown): string[] {
  return (statementsOf(raw) ?? []).flatMap(statementWildcards);
}

export const lambdaRoleScoped = stackPolicy("lambda-role-scoped", {
  description:
    "A Lambda function's execution role (its inline policies, role policies, and customer-managed policies attached through RolePolicyAttachment, " +
    "PolicyAttachment or RolePolicyAttachmentsExclusive) has no wildcard action, " +
    'NotAction/NotResource, Resource "*" for a scopable action, or broad AWS-managed policy.',
  remediation: "grant the function's role only the actions it calls on the ARNs of this stack's queue, secret or log group",
  validate: (args, report) => {
    const functions = ofTypes(args.resources, FUNCTION);
    if (functions.length === 0) return;
    const roles = indexTargets(ofTypes(args.resources, ROLE), ["arn", "id", "name"]);
    const policies = indexTargets(ofTypes(args.resources, MANAGED_POLICY), ["arn", "id"]);

    // Role URN -> problems found in documents attached to it.
    const problems = new Map<string, string[]>();
    const add = (role: PolicyResource, found: readonly string[]): void => {
      if (found.length === 0) return;
      const list = problems.get(role.urn) ?? [];
      for (const f of found) if (!list.includes(f)) list.push(f);
      problems.set(role.urn, list);
    };
    const attachedArns = (role: PolicyResource, arns: readonly string[]): void => {
      for (const arn of arns) {
        if (broadManagedPolicy(arn)) add(role, [`broad AWS-managed policy ${arn}`]);
        for (const pol of policies.byId.get(arn) ?? []) add(role, documentWildcards(known(() => pol.props.policy as unknown, undefined)).map((w) => `policy ${pol.name}: ${w}`));
      }
    };
    for (const role of roles.byUrn.values()) {
      for (const doc of known(() => documentsOf(ROLE, role.props), [])) {
        if (doc.kind === "identity") add(role, documentWildcards(doc.raw).map((w) => `${doc.field}: ${w}`));
      }
      attachedArns(role, known(() => strings(role.props.managedPolicyArns), []));
    }
    for (const rp of ofTypes(args.resources, ROLE_POLICY)) {
      const found = documentWildcards(known(() => rp.props.policy as unknown, undefined)).map((w) => `role policy ${rp.name}: ${w}`);
      if (found.length > 0) for (const role of referencedResources(rp, "role", roles)) add(role, found);
    }
    // Attachments: one role and one policy, many roles and one policy, or one role and the exact set of its policies.
    const attachments: [string, string, string][] = [
      [ROLE_POLICY_ATTACHMENT, "role", "policyArn"],
      [POLICY_ATTACHMENT, "roles", "policyArn"],
      [ROLE_POLICY_ATTACHMENTS_EXCLUSIVE, "roleName", "policyArns"],
    ];
    for (const [type, roleField, policyField] of attachments) {
      for (const at of ofTypes(args.resources, type)) {
        const attachedTo = referencedResources(at, roleField, roles);
        if (attachedTo.length === 0) continue;
        const arns = known(() => strings(at.props[policyField]), []);
        const viaDeps = referencedResources(at, policyField, policies, false);
        for (const role of attachedTo) {
          attachedArns(role, arns);
          for (const pol of viaDeps) add(role, documentWildcards(known(() => pol.props.policy as unknown, undefined)).map((w) => `policy ${pol.name}: ${w}`));
        }
      }
    }

    for (const f of functions) {
      const found = referencedResources(f, "role", roles);
      if (found.length === 0) {
        const role = known(() => f.props.role as unknown, undefined);
        if (isNonEmptyString(role)) report(`execution role ${role} is not part of this stack, so its permissions cannot be checked`, f.urn);
        continue;
      }
      for (const role of found) {
        const p = problems.get(role.urn);
        if (p && p.length > 0) report(`execution role ${role.name} has ${p.join("; ")}`, f.urn);
      }
    }
  },
});

export const lambdaNoSecretsInEnv = resourcePolicy("lambda-no-secrets-in-env", {
  description:
    "A Lambda function's environment variables carry no AWS keys, private keys, passwords or tokens (anyone with lambda:GetFunctionConfiguration " +
    "reads them); names of secrets (ARNs, paths, ids) are fine.",
  remediation: "keep the secret in Secrets Manager, pass its ARN in the environment and read it at run time with the function's role",
  types: [FUNCTION],
  validate: (args, report) => {
    const variables = asRecord(asRecord(args.props.environment)?.variables) ?? {};
    for (const [name, value] of Object.entries(variables)) {
      if (typeof value !== "string") continue;
      for (const { what } of findSecrets(`${name}=${value}`)) report(`environment variable ${name} holds ${what}`);
    }
  },
});

export const LAMBDA_POLICIES: readonly PackPolicy[] = [lambdaReservedConcurrency, lambdaPermissionRestricted, lambdaUrlRequiresAuth, lambdaRoleScoped, lambdaNoSecretsInEnv];
