/**
 * `clusterra policy check <resources.json>`: runs the CrossGuard pack's policy objects
 * (policies/rules, the very objects `pulumi preview --policy-pack policies` runs) over a
 * deployment file, offline. Each resource becomes the ResourceValidationArgs the policy
 * server would build (type, inputs as props, URN, name, options, provider, stackTags,
 * notApplicable, getConfig) and the whole file one StackValidationArgs (outputs over
 * inputs as props, as the engine sends outputs to stack policies; parent, dependencies
 * and property dependencies resolved to resources).
 *
 * Differences from the Pulumi CLI, by design:
 * - `retainOnDelete` is attached to the options (the engine does not send it to policies);
 * - stack tags are empty (a deployment file does not carry them);
 * - the tenant-isolation policy's `tenants`, `tenantAccounts` and `tenantCidrs` config come from the stack
 *   files.
 */
import * as fs from "fs";
import type {
  EnforcementLevel,
  PolicyProviderResource,
  PolicyResource,
  ReportViolation,
  ResourceValidationArgs,
  Severity,
  StackValidationArgs,
} from "@pulumi/policy";
import { PROJECT_ROOT, tenantAccountsFromStackFiles, tenantPortsFromStackFiles, tenantsFromStackFiles, tenantVpcCidrsFromStackFiles } from "../config";
import {
  isStackPolicy,
  POLICIES,
  POLICY_FACTS,
  resourceTypesOf,
  type PackPolicy,
  type PackResourceOptions,
  type PackResourcePolicy,
  type PackStackPolicy,
} from "../policies/rules";
import { parseDeployment, SECRET_SIG_KEY, urnName, type Deployment, type DeploymentResource } from "./deployment";
import { limitFindings } from "../policies/rules/limits";

export interface PolicyViolation {
  readonly policy: string;
  readonly level: "mandatory" | "advisory";
  /** The resource's URN; the stack's URN (or "") for a stack-wide finding. */
  readonly urn: string;
  readonly message: string;
  readonly severity: Severity;
}

export interface PolicyReport {
  readonly resources: number;
  readonly policies: number;
  readonly violations: readonly PolicyViolation[];
  readonly counts: {
    readonly mandatory: number;
    readonly advisory: number;
    readonly byPolicy: Readonly<Record<string, number>>;
  };
  /** True when no mandatory policy failed. */
  readonly passed: boolean;
  /** URNs of resources with secret (encrypted) inputs: an exported stack's ciphertext cannot be inspected. */
  readonly secretInputs: readonly string[];
  /** AWS's limits as `within-aws-limits` applied them: values checked, how many limits bound them, how many values were over. */
  readonly limits: { readonly values: number; readonly limits: number; readonly over: number };
}

export interface CheckOptions {
  /** Every tenant id of the platform (tenant-isolation's `tenants` config). */
  readonly tenants?: readonly string[];
  /**
   * Tenant id -> account id (tenant-isolation's `tenantAccounts` config). When omitted and
   * `tenants` is given, the accounts of those tenants are read from the stack files.
   */
  readonly tenantAccounts?: Readonly<Record<string, string>>;
  /**
   * Tenant id -> the tenant's VPC CIDR (tenant-isolation's `tenantCidrs` config). When omitted
   * and `tenants` is given, read from the stack files.
   */
  readonly tenantCidrs?: Readonly<Record<string, string>>;
  /** Per-policy configuration, as `--policy-pack-config` would give it. */
  readonly config?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  /** Policies to run (default: the whole pack). */
  readonly policies?: readonly PackPolicy[];
  /** The repository whose stack files give the tenants' accounts and CIDRs when not given (none read without it: the CLI passes its repository). */
  readonly root?: string;
}

/** Thrown by notApplicable(); a plain object, so no stack trace is captured. */
const NOT_APPLICABLE = { notApplicable: true } as const;
function notApplicable(): never {
  throw NOT_APPLICABLE;
}

const NO_TAGS: ReadonlyMap<string, string> = new Map();

function isType(type: string): (cls: unknown) => boolean {
  return (cls) => (cls as { __pulumiType?: unknown } | undefined)?.__pulumiType === type;
}

function levelOf(p: PackPolicy, config: CheckOptions["config"]): EnforcementLevel {
  const configured = config?.[p.name]?.enforcementLevel as EnforcementLevel | undefined;
  const level = configured ?? p.enforcementLevel ?? "advisory";
  return level === "remediate" ? "mandatory" : level;
}

/** getConfig for one policy: its configuration with the schema's defaults filled in. */
function configFor(p: PackPolicy, options: CheckOptions): () => object {
  const given: Record<string, unknown> = { ...(options.config?.[p.name] ?? {}) };
  delete given.enforcementLevel;
  if (p.name === "tenant-isolation" && options.tenants && given.tenants === undefined) given.tenants = [...options.tenants];
  if (p.name === "tenant-isolation" && given.tenantAccounts === undefined) {
    const accounts = options.tenantAccounts ?? (options.tenants && options.root ? pick(safePerTenant(tenantAccountsFromStackFiles, options.root), options.tenants) : undefined);
    if (accounts) given.tenantAccounts = { ...accounts };
  }
  if (p.name === "peering-flows-match-contract" && given.tenantPorts === undefined && options.root) {
    given.tenantPorts = { ...safePerTenant(tenantPortsFromStackFiles, options.root) };
  }
  if (p.name === "tenant-isolation" && given.tenantCidrs === undefined) {
    const cidrs = options.tenantCidrs ?? (options.tenants && options.root ? pick(safePerTenant(tenantVpcCidrsFromStackFiles, options.root), options.tenants) : undefined);
    if (cidrs) given.tenantCidrs = { ...cidrs };
  }
  for (const [k, schema] of Object.entries(p.configSchema?.properties ?? {})) {
    if (given[k] === undefined && schema.default !== undefined) given[k] = structuredClone(schema.default);
  }
  return () => given;
}

function fail(p: PackPolicy, urn: string, e: unknown): never {
  throw new Error(`policy ${p.name} failed on ${urn || "the stack"}: ${e instanceof Error ? e.message : String(e)}`);
}

/** Checks a deployment against the pack, synchronously. */
export function checkDeployment(deployment: Deployment, options: CheckOptions = {}): PolicyReport {
  const policies = (options.policies ?? POLICIES).filter((p) => levelOf(p, options.config) !== "disabled");
  const resources = deployment.deployment.resources;
  const violations: PolicyViolation[] = [];
  const byUrn = new Map<string, DeploymentResource>();
  for (const r of resources) byUrn.set(r.urn, r);
  const stackUrn = resources.find((r) => r.type === "pulumi:pulumi:Stack")?.urn ?? "";

  const providers = new Map<string, PolicyProviderResource | undefined>();
  const providerOf = (r: DeploymentResource): PolicyProviderResource | undefined => {
    if (!r.provider) return undefined;
    let p = providers.get(r.provider);
    if (p === undefined && !providers.has(r.provider)) {
      const cut = r.provider.lastIndexOf("::");
      const urn = cut > 0 ? r.provider.slice(0, cut) : r.provider;
      const res = byUrn.get(urn);
      p = res ? { type: res.type, props: { ...(res.inputs ?? {}) }, urn, name: urnName(urn) } : undefined;
      providers.set(r.provider, p);
    }
    return p;
  };
  const optsOf = (r: DeploymentResource): PackResourceOptions => ({
    protect: r.protect === true,
    ignoreChanges: [],
    aliases: [],
    customTimeouts: { createSeconds: 0, updateSeconds: 0, deleteSeconds: 0 },
    additionalSecretOutputs: [],
    ...(r.parent ? { parent: r.parent } : {}),
    ...(r.retainOnDelete !== undefined ? { retainOnDelete: r.retainOnDelete } : {}),
  });

  const reporter = (p: PackPolicy, level: "mandatory" | "advisory", urn: string | undefined): ReportViolation =>
    (message: string, at?: string) => {
      violations.push({ policy: p.name, level, urn: urn ?? at ?? stackUrn, message, severity: p.severity ?? POLICY_FACTS[p.name].severity });
    };

  // Resource policies: dispatch by type where the policy declares its types.
  const resourcePolicies = policies.filter((p): p is PackResourcePolicy => !isStackPolicy(p));
  const untyped: PackResourcePolicy[] = [];
  const byType = new Map<string, PackResourcePolicy[]>();
  for (const p of resourcePolicies) {
    const types = resourceTypesOf(p);
    if (!types) untyped.push(p);
    else for (const t of types) byType.set(t, [...(byType.get(t) ?? []), p]);
  }
  const levels = new Map(policies.map((p) => [p.name, levelOf(p, options.config) as "mandatory" | "advisory"] as const));
  const getConfigs = new Map(policies.map((p) => [p.name, configFor(p, options)] as const));

  for (const r of resources) {
    const typed = byType.get(r.type);
    if (!typed && untyped.length === 0) continue;
    const props = (r.inputs ?? {}) as Record<string, any>;
    const provider = providerOf(r);
    const args: ResourceValidationArgs = {
      type: r.type,
      props,
      urn: r.urn,
      name: urnName(r.urn),
      opts: optsOf(r),
      stackTags: NO_TAGS,
      isType: isType(r.type),
      asType: ((cls: unknown) => (isType(r.type)(cls) ? props : undefined)) as ResourceValidationArgs["asType"],
      getConfig: () => ({}) as never,
      notApplicable,
      ...(provider ? { provider } : {}),
    };
    for (const list of [typed ?? [], untyped]) {
      for (const p of list) {
        args.getConfig = getConfigs.get(p.name) as ResourceValidationArgs["getConfig"];
        try {
          const result = p.validateResource(args, reporter(p, levels.get(p.name)!, r.urn));
          if (result && typeof (result as Promise<void>).then === "function") fail(p, r.urn, new Error("returned a promise; the offline checker runs synchronous policies only"));
        } catch (e) {
          if (e !== NOT_APPLICABLE) fail(p, r.urn, e);
        }
      }
    }
  }

  // Stack policies: the whole deployment, outputs over inputs.
  const stackPolicies = policies.filter((p): p is PackStackPolicy => isStackPolicy(p));
  const stackResources = buildStackResources(resources, providerOf, optsOf);
  const limits = limitFindings(stackResources);
  if (stackPolicies.length > 0) {
    for (const p of stackPolicies) {
      const args: StackValidationArgs = {
        resources: stackResources,
        stackTags: NO_TAGS,
        getConfig: getConfigs.get(p.name) as StackValidationArgs["getConfig"],
        notApplicable,
      };
      try {
        const result = p.validateStack(args, reporter(p, levels.get(p.name)!, undefined));
        if (result && typeof (result as Promise<void>).then === "function") fail(p, "", new Error("returned a promise; the offline checker runs synchronous policies only"));
      } catch (e) {
        if (e !== NOT_APPLICABLE) fail(p, "", e);
      }
    }
  }

  const byPolicy: Record<string, number> = {};
  let mandatory = 0;
  for (const v of violations) {
    byPolicy[v.policy] = (byPolicy[v.policy] ?? 0) + 1;
    if (v.level === "mandatory") mandatory++;
  }
  return {
    resources: resources.length,
    policies: policies.length,
    violations,
    counts: { mandatory, advisory: violations.length - mandatory, byPolicy },
    passed: mandatory === 0,
    secretInputs: resources.filter((r) => hasCiphertext(r.inputs)).map((r) => r.urn),
    limits: { values: [...limits.checked.values()].reduce((a, b) => a + b, 0), limits: limits.checked.size, over: limits.over.length },
  };
}


function hasCiphertext(value: unknown, depth = 0): boolean {
  if (depth > 20 || value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) return value.some((v) => hasCiphertext(v, depth + 1));
  const record = value as Record<string, unknown>;
  if (SECRET_SIG_KEY in record && "ciphertext" in record) return true;
  return Object.values(record).some((v) => hasCiphertext(v, depth + 1));
}

function buildStackResources(
  resources: readonly DeploymentResource[],
  providerOf: (r: DeploymentResource) => PolicyProviderResource | undefined,
  optsOf: (r: DeploymentResource) => PackResourceOptions,
): PolicyResource[] {
  const built = new Map<string, PolicyResource>();
  const list: PolicyResource[] = [];
  for (const r of resources) {
    const props = { ...(r.inputs ?? {}), ...(r.outputs ?? {}) } as Record<string, any>;
    const provider = providerOf(r);
    const res: PolicyResource = {
      type: r.type,
      props,
      urn: r.urn,
      name: urnName(r.urn),
      opts: optsOf(r),
      dependencies: [],
      propertyDependencies: {},
      isType: isType(r.type),
      asType: ((cls: unknown) => (isType(r.type)(cls) ? props : undefined)) as PolicyResource["asType"],
      ...(provider ? { provider } : {}),
    };
    built.set(r.urn, res);
    list.push(res);
  }
  for (const r of resources) {
    const res = built.get(r.urn)!;
    const parent = r.parent ? built.get(r.parent) : undefined;
    if (parent) res.parent = parent;
    if (r.dependencies) res.dependencies = r.dependencies.flatMap((d) => built.get(d) ?? []);
    if (r.propertyDependencies) {
      for (const [k, urns] of Object.entries(r.propertyDependencies)) res.propertyDependencies[k] = urns.flatMap((d) => built.get(d) ?? []);
    }
  }
  return list;
}

/** Human-readable report: one line per violation, then a summary line. */
export function formatReport(report: PolicyReport): string {
  const lines = report.violations.map((v) => `${v.policy} [${v.level}, ${v.severity}] ${v.urn || "(stack)"}: ${v.message}`);
  const failing = Object.keys(report.counts.byPolicy).length;
  lines.push(
    `${report.passed ? "PASSED" : "FAILED"}: ${report.violations.length} violation${report.violations.length === 1 ? "" : "s"} ` +
      `(${report.counts.mandatory} mandatory, ${report.counts.advisory} advisory) from ${failing} of ${report.policies} policies over ${report.resources} resources`,
  );
  if (report.secretInputs.length > 0) {
    lines.push(`note: ${report.secretInputs.length} resource(s) have secret inputs that were not inspected (encrypted in the file): ${report.secretInputs.slice(0, 5).join(", ")}${report.secretInputs.length > 5 ? ", ..." : ""}`);
  }
  return lines.join("\n");
}

const cachedFacts = new Map<string, Record<string, unknown>>();
/** A per-tenant fact of the stack files under `root`, read once per process ({} when they cannot be read). */
function safePerTenant<T>(read: (root: string) => Record<string, T>, root: string): Record<string, T> {
  const key = `${read.name} ${root}`;
  let found = cachedFacts.get(key) as Record<string, T> | undefined;
  if (!found) {
    try {
      found = read(root);
    } catch {
      found = {};
    }
    cachedFacts.set(key, found);
  }
  return found;
}

function pick(accounts: Readonly<Record<string, string>>, tenants: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const t of tenants) if (accounts[t] !== undefined) out[t] = accounts[t];
  return out;
}

/** A deployment file that cannot be read or is not a deployment export. */
export class DeploymentFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DeploymentFileError";
  }
}

/** Reads and parses a deployment file; DeploymentFileError with a one-line message otherwise. */
export function readDeploymentFile(file: string): Deployment {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a directory" : code === "EACCES" ? "permission denied" : (code ?? (e as Error).message);
    throw new DeploymentFileError(`${file}: cannot read (${why})`);
  }
  try {
    return parseDeployment(text, file);
  } catch (e) {
    throw new DeploymentFileError((e as Error).message);
  }
}

/** Reads a deployment file and checks it (tenants default to the stack files'). */
export function checkDeploymentFile(file: string, options: CheckOptions = {}): PolicyReport {
  const deployment = readDeploymentFile(file);
  return checkDeployment(deployment, { ...options, tenants: options.tenants ?? safeTenants(options.root) });
}

/** The stack files' tenants, or none when the stack files do not read (the check then names no tenant). */
function safeTenants(root = PROJECT_ROOT): string[] {
  try {
    return tenantsFromStackFiles(root);
  } catch {
    return [];
  }
}
