/**
 * Runs the real program offline on the Pulumi SDK's mock engine and captures every
 * registration the way the Pulumi engine would record it: inputs, outputs and the
 * resource options (protect, retainOnDelete, parent, provider, dependencies) that the
 * mock interface itself does not show.
 */
import * as pulumi from "@pulumi/pulumi";
import { DIY_ORGANIZATION, PROJECT } from "../facts/project";
import { SECRET_SIG, SECRET_SIG_KEY, type Deployment, type DeploymentResource } from "./deployment";
import { createMocks, MockContext } from "./mocks";


export interface OfflineRun {
  readonly deployment: Deployment;
  readonly outputs: Record<string, unknown>;
  /** The reads (invokes) the program made, each with the provider it went through ("" for the default one). */
  readonly invokes: readonly { readonly token: string; readonly provider: string }[];
}

interface Struct {
  toJavaScript(): Record<string, unknown>;
}

/** A RegisterResourceRequest, or a ReadResourceRequest (which lacks the optional parts). */
interface RegisterRequest {
  getType(): string;
  getName(): string;
  getParent(): string;
  getCustom?(): boolean;
  getObject?(): Struct;
  getProperties?(): Struct;
  getProtect?(): boolean;
  getRetainondelete?(): boolean;
  getDependenciesList(): string[];
  getProvider(): string;
  getPropertydependenciesMap?(): { toArray(): [string, [string[]]][] };
  getAdditionalsecretoutputsList?(): string[];
  getIgnorechangesList?(): string[];
  getDeletebeforereplace?(): boolean;
}

type Callback = (err: unknown, response: { getUrn(): string } | undefined) => void;

interface MonitorWithResources {
  resources: Map<string, { urn: string; id: string | null; state: Record<string, unknown> }>;
  registerResource(req: RegisterRequest, cb: Callback): Promise<void>;
  readResource(req: RegisterRequest & { getId(): string }, cb: Callback): Promise<void>;
  registerResourceOutputs(req: { getUrn(): string; getOutputs(): Struct | undefined }, cb: (err: unknown, r: unknown) => void): void;
}

/** Replaces secret values with Pulumi's ciphertext marker: plans never hold secrets in clear. */
export function redactSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactSecrets);
  if (value && typeof value === "object") {
    const obj = value as Record<string, unknown>;
    if (obj[SECRET_SIG_KEY] === SECRET_SIG) return { [SECRET_SIG_KEY]: SECRET_SIG, ciphertext: "[secret]" };
    return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, redactSecrets(v)]));
  }
  return value;
}

/**
 * Runs `program` under mocks for one stack. Must not overlap with another run in the same
 * process: the Pulumi runtime's state is global.
 */
export async function runOffline(
  stack: string,
  config: Record<string, string>,
  mockContext: MockContext,
  program: () => Promise<Record<string, unknown>>,
): Promise<OfflineRun> {
  // Errors inside mock answers surface as never-resolving outputs; collect them and fail loudly.
  const failures: string[] = [];
  const mocks = createMocks(mockContext);
  const invokes: { token: string; provider: string }[] = [];
  const recording: pulumi.runtime.Mocks = {
    call: (args) => {
      invokes.push({ token: args.token, provider: String(args.provider ?? "") });
      return guard(failures, `invoke ${args.token}`, () => mocks.call(args));
    },
    newResource: (args) => guard(failures, `resource ${args.type} ${args.name}`, () => mocks.newResource(args)),
  };
  await pulumi.runtime.setMocks(recording, PROJECT, stack, false, DIY_ORGANIZATION);
  pulumi.runtime.setAllConfig(config);
  const monitor = pulumi.runtime.getMonitor() as unknown as MonitorWithResources;
  const captured = new Map<string, DeploymentResource>();
  const componentOutputs = new Map<string, Record<string, unknown>>();
  // The engine, not the mock, applies additionalSecretOutputs: do it here.
  const secretOutputs = new Map<string, string[]>();

  const record = (req: RegisterRequest, urn: string, custom: boolean, extra: Partial<DeploymentResource> = {}) => {
    const deps = req.getPropertydependenciesMap?.().toArray() ?? [];
    secretOutputs.set(urn, req.getAdditionalsecretoutputsList?.() ?? []);
    captured.set(urn, {
      urn,
      custom,
      type: req.getType(),
      ...(extra.id !== undefined ? { id: extra.id } : {}),
      inputs: redactSecrets((req.getObject?.() ?? req.getProperties?.())?.toJavaScript() ?? {}) as Record<string, unknown>,
      outputs: {},
      ...(req.getParent() ? { parent: req.getParent() } : {}),
      protect: req.getProtect?.() === true,
      retainOnDelete: req.getRetainondelete?.() === true,
      ...(req.getIgnorechangesList?.().length ? { ignoreChanges: req.getIgnorechangesList!() } : {}),
      ...(req.getDeletebeforereplace?.() ? { deleteBeforeReplace: true } : {}),
      dependencies: [...new Set(req.getDependenciesList())],
      propertyDependencies: Object.fromEntries(deps.map(([k, [urns]]) => [k, urns])),
      ...(req.getProvider() ? { provider: req.getProvider() } : {}),
      ...extra,
    });
  };

  const register = monitor.registerResource.bind(monitor);
  monitor.registerResource = (req, cb) =>
    register(req, (err, resp) => {
      if (!err && resp) record(req, resp.getUrn(), req.getCustom?.() === true);
      cb(err, resp);
    });
  const read = monitor.readResource.bind(monitor);
  monitor.readResource = (req, cb) =>
    read(req, (err, resp) => {
      if (!err && resp) record(req, resp.getUrn(), true, { id: req.getId() });
      cb(err, resp);
    });
  const registerOutputs = monitor.registerResourceOutputs.bind(monitor);
  monitor.registerResourceOutputs = (req, cb) => {
    componentOutputs.set(req.getUrn(), req.getOutputs()?.toJavaScript() ?? {});
    registerOutputs(req, cb);
  };

  // The SDK records a stack trace on every promise it makes (runtime/debuggable.js), read only
  // by its leak report, which names operations here (pendingOperations): a fifth of a plan's
  // time formatting traces nothing reads. An error's message still says what failed.
  const traceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = process.env.CLUSTERRA_TRACES ? traceLimit : 0;
  let outputs: Record<string, unknown>;
  // An error the program throws is kept here, not let through the stack resource: the SDK
  // rejects that resource's promises more than once, and a copy nobody awaits crashes Node.
  let thrown: { readonly error: unknown } | undefined;
  const caught = async () => {
    try {
      return await program();
    } catch (error) {
      thrown = { error };
      return {};
    }
  };
  try {
    outputs = ((await pulumi.runtime.runInPulumiStack(caught)) ?? {}) as Record<string, unknown>;
    await pulumi.runtime.disconnect();
  } finally {
    Error.stackTraceLimit = traceLimit;
  }
  if (thrown) throw thrown.error;
  const leaked = pendingOperations();
  if (failures.length > 0 || leaked > 0) {
    throw new Error(
      `the offline run of ${stack} did not complete:${failures.map((f) => `\n  ${f}`).join("")}` +
        (leaked > 0 ? `\n  ${leaked} operations never finished (an output waiting on a failed mock answer)` : "") +
        (process.env.CLUSTERRA_TRACES ? "" : "\n  (CLUSTERRA_TRACES=1 keeps the stack traces the plan turns off)"),
    );
  }

  const resources = [...captured.values()].map((r) => {
    const state = r.custom ? monitor.resources.get(r.urn)?.state : componentOutputs.get(r.urn);
    const id = r.custom ? (monitor.resources.get(r.urn)?.id ?? undefined) : undefined;
    const outputs = { ...(state ?? {}) };
    for (const key of secretOutputs.get(r.urn) ?? []) if (key in outputs) outputs[key] = { [SECRET_SIG_KEY]: SECRET_SIG, value: outputs[key] };
    return { ...r, ...(id ? { id } : {}), outputs: redactSecrets(outputs) as Record<string, unknown> };
  });
  return {
    deployment: {
      version: 3,
      deployment: {
        manifest: { time: new Date(0).toISOString(), magic: "", version: `clusterra-plan/pulumi-${pulumiVersion()}` },
        resources,
      },
    },
    outputs: outputs as Record<string, unknown>,
    invokes,
  };
}

function guard<T>(failures: string[], what: string, answer: () => T): T {
  try {
    return answer();
  } catch (e) {
    failures.push(`${what}: ${(e as Error).message}`);
    throw e;
  }
}

/** Outputs the runtime still tracks as unresolved; cleared so the next run starts clean. */
function pendingOperations(): number {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const state = require("@pulumi/pulumi/runtime/state") as { getStore(): { leakCandidates: Set<unknown> } };
  const leaks = state.getStore().leakCandidates;
  const count = leaks.size;
  leaks.clear();
  return count;
}

function pulumiVersion(): string {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require("@pulumi/pulumi/package.json") as { version: string }).version;
}
