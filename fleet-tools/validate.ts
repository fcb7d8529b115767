/**
 * The fleet against the real charts: every Application rendered with Helm (values checked
 * by the chart's values.schema.json, which Helm applies), every values key the chart would
 * ignore, and every rendered object and every plain object under fleet/ validated by
 * kubectl-validate as the API server would (unknown fields are errors), with the charts'
 * CRDs and the reference CRDs as local CRDs.
 */
import { AWS_LIMITS } from "../facts/aws-limits";
import { LOGIN_CAPABILITIES } from "../facts/control-plane";
import { tenantClusterKinds } from "../components/fleet/tenant-entry";
import { execFile } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { FACTS_FILE } from "../components/fleet/facts";
import { promisify } from "util";
import { parse, parseAllDocuments, stringify } from "yaml";
import { CHARTS } from "../facts/charts";
import { SLURM_CLUSTER_NAME_POLICY, TENANT_K3S_VERSION } from "../facts/tenant-cluster";
import { CLUSTER_MANIFESTS_ADDON } from "../components/fleet/application-set";
import { controllerConfProblems } from "../components/fleet/control-plane";
import { fleetPlace, SELF_HEALED_KINDS, TENANT_GUARDS_APPLICATION_SET, tenantNamespace } from "../facts/fleet";
import { tenantClusterFleetPath } from "../components/fleet/tenant-cluster";
import { tenantEgressProblems } from "./egress";
import { ARGOCD_IN_CLUSTER } from "../facts/versions";
import { chartModel, ignoredValues } from "./chart-values";
import { fleetDocuments, fleetFiles, tenantStacks, type FleetProblem } from "./files";
import { WHOLE_FLEET, type FleetSelection } from "./changes";
import { argoCdRender, helmRenders, kubernetesVersion, renderCharts, renderFleetCharts, tenantVersionOf, tenantVersions, type HelmRender, type RenderedObject } from "./render";

const run = promisify(execFile);

/** What the Helm part of `fleet check --render` found and how long it took. */
export interface ChartCheck {
  readonly problems: FleetProblem[];
  /** Objects rendered per Application (`<file> <name>`). */
  readonly objects: ReadonlyMap<string, number>;
  readonly plainDocuments: number;
  readonly seconds: number;
}

/**
 * Keys of each values file (and of the inline values) that the chart would ignore, one
 * problem per key naming the Application, the values file and the key path.
 */
export function ignoredValueProblems(root: string, renders: readonly HelmRender[]): FleetProblem[] {
  const problems: FleetProblem[] = [];
  for (const r of renders) {
    const model = chartModel(r.chartDir);
    const at = `Application/${r.application}/spec/sources/${r.source} (${r.chartLabel})`;
    // A facts file is every tenant Application's to read: each chart takes the facts it needs.
    const sets: [string, unknown][] = r.valueFiles.filter((f) => path.basename(f) !== FACTS_FILE).map((f) => [path.relative(root, f), parse(fs.readFileSync(f, "utf8"))]);
    if (r.inlineValues) sets.push(["helm.values", r.inlineValues]);
    for (const [where, values] of sets) {
      if (!values || typeof values !== "object") continue;
      for (const key of ignoredValues(model, values as Record<string, unknown>)) {
        problems.push({ file: r.file, at, reason: `values key ${key} (${where}) is neither in ${r.chartLabel}'s values.yaml nor read by its templates: Helm would ignore it` });
      }
    }
  }
  return problems;
}

/** Every chart pinned in facts/ (and ArgoCD's) must have its folder, used by an Application or not. */
export function missingPinnedCharts(chartsDir: string): FleetProblem[] {
  return Object.entries(CHARTS).flatMap(([key, pin]) => {
    const folder = `${pin.chart}-${pin.version}`;
    return fs.existsSync(path.join(chartsDir, folder, "Chart.yaml")) ? [] : [{ file: "facts/charts.ts", at: `CHARTS.${key}`, reason: `${pin.chart} ${pin.version} has no chart in ${chartsDir} (no ${folder}/Chart.yaml)` }];
  });
}

/** kubectl-validate's verdict on one document (Kubernetes Status). */
export interface Status {
  status: string;
  message?: string;
  details?: { causes?: { reason?: string; message?: string; field?: string }[] };
}

const RBAC_KINDS = new Set(["Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"]);

/**
 * What the API server would refuse in a verdict, as one line; empty when nothing is left.
 * kubectl-validate checks every metadata.name as a DNS subdomain, but the API server checks
 * RBAC names as path segments (`cert-manager:leaderelection` is valid): those are dropped
 * when the name is a valid path segment. Its note that CEL rules were skipped after another
 * error says nothing of its own.
 */
export function refusal(status: Status, kind: string | undefined, name: string | undefined): string {
  if (status.status === "Success") return "";
  const rbacName = RBAC_KINDS.has(String(kind)) && !!name && name !== "." && name !== ".." && !/[/%]/.test(name);
  const causes = (status.details?.causes ?? []).filter((c) => !/some validation rules were not checked/.test(String(c.message)) && !(rbacName && c.field === "metadata.name"));
  if (!causes.length) return status.details?.causes?.length ? "" : String(status.message);
  return causes.map((c) => (c.field ? `${c.field}: ${c.message}` : String(c.message))).join("; ");
}

/** `v1.35.3` -> `1.35`, as kubectl-validate names its built-in schemas. */
function minor(kubeVersion: string): string {
  return kubeVersion.replace(/^v/, "").split(".").slice(0, 2).join(".");
}

/** Runs kubectl-validate over files at one Kubernetes version; verdicts by absolute path, one per document. */
async function kubectlValidate(tool: string, version: string, crdDir: string, files: readonly string[], home: string): Promise<Map<string, Status[]>> {
  const args = ["--version", version, "--local-crds", crdDir, "--output", "json", ...files];
  // No kubeconfig: the schemas come from the pinned built-ins and the local CRDs, never a cluster.
  const env = { ...process.env, KUBECONFIG: path.join(home, "no-kubeconfig"), HOME: home };
  let stdout: string;
  try {
    stdout = (await run(tool, args, { env, maxBuffer: 256 * 1024 * 1024 })).stdout;
  } catch (e) {
    stdout = (e as { stdout?: string }).stdout ?? "";
    if (!stdout.trim().startsWith("{")) throw new Error(`kubectl-validate failed: ${((e as { stderr?: string }).stderr || (e as Error).message).trim()}`);
  }
  return new Map(Object.entries(JSON.parse(stdout) as Record<string, Status[]>).map(([f, s]) => [path.resolve(f), s]));
}

/** CRDs for the validator: those the renders produced, ArgoCD's, and the reference's, one file each by name. */
function writeCrds(crdDir: string, objects: readonly { file: string; object: Record<string, unknown> }[], reference: string | undefined): void {
  const seen = new Set<string>();
  const add = (object: Record<string, unknown>) => {
    const name = String((object.metadata as { name?: string } | undefined)?.name);
    if (object.kind !== "CustomResourceDefinition" || seen.has(name)) return;
    seen.add(name);
    fs.writeFileSync(path.join(crdDir, `${name}.yaml`), stringify(object, { lineWidth: 0 }));
  };
  objects.forEach((o) => add(o.object));
  if (!reference) return;
  for (const dir of fs.readdirSync(reference, { withFileTypes: true })) {
    if (!dir.isDirectory() || dir.name === "charts") continue;
    for (const f of fs.readdirSync(path.join(reference, dir.name)).filter((n) => n.endsWith(".yaml"))) {
      for (const doc of parseAllDocuments(fs.readFileSync(path.join(reference, dir.name, f), "utf8"))) {
        const object = doc.toJS() as Record<string, unknown> | null;
        if (object && typeof object === "object") add(object);
      }
    }
  }
}

/** One file for kubectl-validate: where it is, and per document what it is and how to name it. */
interface Checked {
  readonly file: string;
  readonly object: (document: number) => { kind?: string; name?: string };
  readonly name: (document: number) => { file: string; at: string };
}

/** The version of the cluster a plain fleet file goes to: a tenant's own cluster, else central. */
function plainFileVersion(file: string, renders: readonly HelmRender[], tenants: ReadonlyMap<string, string>): string | undefined {
  const place = fleetPlace(file);
  if (place?.kind === "tenant" && file.startsWith(`${tenantClusterFleetPath(place.scope, place.tenantId)}/`)) return tenantVersionOf(file, tenants);
  return renders.find((r) => r.server === ARGOCD_IN_CLUSTER)?.kubeVersion;
}

/**
 * Renders every Application under root with Helm from chartsDir and validates everything.
 * The tools are paths from toolPath(); the reference folder supplies the extra CRDs.
 */
/**
 * A mutating admission policy rewrites objects inside a tenant's API server, Secrets and Pods
 * included: the cluster-manifests chart's one policy and its binding, by name, are all the
 * fleet may render (the tenant project's whitelist cannot say which Application). Pure.
 */
export function admissionPolicyProblems(objects: readonly { readonly kind: string; readonly name: string; readonly render: { readonly file: string; readonly application: string } }[]): FleetProblem[] {
  return objects
    .filter((o) => /^MutatingAdmissionPolicy(Binding)?$/.test(o.kind) && (!o.render.application.endsWith(`-${CLUSTER_MANIFESTS_ADDON}`) || o.name !== SLURM_CLUSTER_NAME_POLICY))
    .map((o) => ({ file: o.render.file, at: `Application/${o.render.application} renders ${o.kind}/${o.name}`, reason: `only ${CLUSTER_MANIFESTS_ADDON} may render a mutating admission policy, and only ${SLURM_CLUSTER_NAME_POLICY} (the Slinky Controller's cluster name)` }));
}

/** Why a container securityContext is not hardened (HARDENED_CONTAINER): empty when it is. Pure. */
function unhardened(sc: unknown): string[] {
  const c = (sc ?? {}) as { allowPrivilegeEscalation?: unknown; privileged?: unknown; runAsUser?: unknown; capabilities?: { drop?: unknown[]; add?: unknown[] } };
  return [
    ...(c.allowPrivilegeEscalation === false ? [] : ["allowPrivilegeEscalation is not false"]),
    ...((c.capabilities?.drop ?? []).includes("ALL") ? [] : ["capabilities are not all dropped"]),
    ...((c.capabilities?.add ?? []).length ? [`capabilities added: ${(c.capabilities?.add ?? []).join(",")}`] : []),
    ...(c.privileged === true ? ["privileged"] : []),
    ...(c.runAsUser === 0 ? ["runs as root"] : []),
  ];
}

/**
 * A tenant's namespace on central as rendered: its daemons' and MariaDB's containers hardened
 * (a tenant's values file comes before the shared one, and Helm merges maps, so a tenant could
 * add a capability), and its ResourceQuota and LimitRange present. Pure.
 */
export function tenantHardeningProblems(objects: readonly { readonly kind: string; readonly name: string; readonly namespace: string; readonly render: { readonly file: string; readonly application: string }; readonly object: Record<string, unknown> }[]): FleetProblem[] {
  const problems: FleetProblem[] = [];
  const containers: Readonly<Record<string, readonly string[]>> = { Controller: ["slurmctld", "logfile"], RestApi: ["slurmrestd"], Accounting: ["slurmdbd"], MariaDB: [""] };
  const namespaces = new Map<string, { file: string; kinds: Set<string> }>();
  for (const o of objects) {
    const ns = namespaces.get(o.namespace) ?? { file: o.render.file, kinds: new Set<string>() };
    ns.kinds.add(o.kind);
    namespaces.set(o.namespace, ns);
    // The login: root's sshd, with no capability beyond LOGIN_CAPABILITIES.
    if (o.kind === "LoginSet") {
      const sc = ((o.object.spec ?? {}) as { login?: { securityContext?: { capabilities?: { drop?: unknown[]; add?: unknown[] }; privileged?: unknown } } }).login?.securityContext;
      const extra = (sc?.capabilities?.add ?? []).map(String).filter((c) => !(LOGIN_CAPABILITIES as readonly string[]).includes(c));
      const why = [
        ...((sc?.capabilities?.drop ?? []).includes("ALL") ? [] : ["capabilities are not all dropped"]),
        ...(extra.length ? [`capabilities added beyond what sshd needs: ${extra.join(",")}`] : []),
        ...(sc?.privileged === true ? ["privileged"] : []),
      ];
      for (const w of why) problems.push({ file: o.render.file, at: `Application/${o.render.application} LoginSet/${o.namespace}/${o.name} login`, reason: `${w} (LOGIN_CONTAINER)` });
    }
    for (const c of containers[o.kind] ?? []) {
      const spec = (o.object.spec ?? {}) as Record<string, { securityContext?: unknown } | unknown>;
      const sc = c ? (spec[c] as { securityContext?: unknown } | undefined)?.securityContext : spec.securityContext;
      for (const why of unhardened(sc)) problems.push({ file: o.render.file, at: `Application/${o.render.application} ${o.kind}/${o.namespace}/${o.name}${c ? ` ${c}` : ""}`, reason: `its container is not hardened: ${why} (HARDENED_CONTAINER)` });
    }
  }
  for (const [ns, { file, kinds }] of namespaces) for (const kind of ["ResourceQuota", "LimitRange"]) if (!kinds.has(kind)) problems.push({ file, at: `namespace ${ns}`, reason: `no ${kind}: the tenant's pods would take what they like of central` });
  return problems;
}

/**
 * Every Slinky Controller rendered for central is a tenant's, and the tenant is SlurmUser of
 * it through its own slurm.key: its slurm.conf lines (`extraConf`) and slurmctld scripts may
 * make it run nothing on central, and it keeps `disable_triggers` (controllerConfProblems). Pure.
 */
export function tenantControllerProblems(objects: readonly { readonly kind: string; readonly name: string; readonly render: { readonly file: string; readonly application: string; readonly server: string }; readonly object: Record<string, unknown> }[]): FleetProblem[] {
  return objects.filter((o) => o.kind === "Controller" && o.render.server === ARGOCD_IN_CLUSTER).flatMap((o) => {
    const spec = (o.object.spec ?? {}) as { extraConf?: unknown; prologSlurmctldScriptRefs?: unknown[]; epilogSlurmctldScriptRefs?: unknown[] };
    const at = `Application/${o.render.application} renders Controller/${o.name}`;
    const scripts = (["prologSlurmctldScriptRefs", "epilogSlurmctldScriptRefs"] as const).filter((k) => (spec[k] ?? []).length > 0)
      .map((k) => `${k}: slurmctld would run these scripts on central (never on a tenant's controller)`);
    return [...controllerConfProblems(typeof spec.extraConf === "string" ? spec.extraConf : ""), ...scripts].map((reason) => ({ file: o.render.file, at, reason }));
  });
}

/**
 * Every object rendered for a tenant cluster is of a kind ArgoCD caches of tenant clusters
 * (resource.inclusions from tenantClusterKinds): ArgoCD would leave any other kind out of the
 * sync with only a warning. Pure.
 */
export function tenantClusterKindProblems(objects: readonly { readonly kind: string; readonly name: string; readonly render: { readonly file: string; readonly application: string; readonly server: string }; readonly apiVersion: string }[]): FleetProblem[] {
  const kinds = tenantClusterKinds();
  return objects
    .filter((o) => o.render.server !== ARGOCD_IN_CLUSTER && !kinds.has(`${o.apiVersion.includes("/") ? o.apiVersion.split("/")[0] : ""}/${o.kind}`))
    .map((o) => ({ file: o.render.file, at: `Application/${o.render.application} renders ${o.kind}/${o.name}`, reason: `${o.apiVersion} ${o.kind} is not a kind ArgoCD caches of tenant clusters (TENANT_CLUSTER_NAMESPACED_RESOURCES or TENANT_CLUSTER_RESOURCES in components/fleet/tenant-entry.ts): it would be left out of the sync` }));
}

/**
 * AWS's limits on what the fleet renders for AWS: an EC2NodeClass's user data becomes the
 * launch template Karpenter makes for every worker, and EC2 refuses more than its limit
 * (AWS_LIMITS.userData), node by node, at scale-up. Pure.
 */
export function renderedLimitProblems(objects: readonly { readonly kind: string; readonly name: string; readonly render: { readonly file: string; readonly application: string }; readonly object: Record<string, unknown> }[]): FleetProblem[] {
  return objects.filter((o) => o.kind === "EC2NodeClass").flatMap((o) => {
    const userData = (o.object.spec as { userData?: unknown } | undefined)?.userData;
    const bytes = typeof userData === "string" ? Buffer.byteLength(userData, "utf8") : 0;
    return bytes > AWS_LIMITS.userData.max ? [{ file: o.render.file, at: `Application/${o.render.application} renders EC2NodeClass/${o.name} spec.userData`, reason: `${bytes} bytes, over EC2's ${AWS_LIMITS.userData.max} (${AWS_LIMITS.userData.source}): Karpenter could launch no worker` }] : [];
  });
}

/** Whether ArgoCD self-heals this Application: automated sync on (RollingSync turns it off: `enabled: false`), selfHeal set. Pure. */
export function selfHealed(application: Record<string, unknown>): boolean {
  const automated = ((application.spec as { syncPolicy?: { automated?: { enabled?: boolean; selfHeal?: boolean } } } | undefined)?.syncPolicy)?.automated;
  return !!automated && automated.enabled !== false && automated.selfHeal === true;
}

/**
 * What contains a tenant on central (facts/fleet.ts SELF_HEALED_KINDS) is rendered only by
 * Applications ArgoCD self-heals: under RollingSync a deleted NetworkPolicy or a raised quota
 * stays as it was left until the next commit that changes that Application. Pure.
 */
export function selfHealProblems(objects: readonly { readonly kind: string; readonly name: string; readonly namespace?: string; readonly render: { readonly file: string; readonly application: string; readonly server: string } }[], selfHealedApps: ReadonlyMap<string, boolean>): FleetProblem[] {
  return objects
    .filter((o) => o.render.server === ARGOCD_IN_CLUSTER && (SELF_HEALED_KINDS as readonly string[]).includes(o.kind) && selfHealedApps.get(o.render.application) !== true)
    .map((o) => ({
      file: o.render.file,
      at: `Application/${o.render.application} renders ${o.kind}/${o.namespace ? `${o.namespace}/` : ""}${o.name}`,
      reason: `${selfHealedApps.has(o.render.application) ? "ArgoCD does not self-heal this Application (a RollingSync set turns its automated sync off)" : "no Application of the fleet self-heals it"}: a deleted or edited ${o.kind} on central stays as it was left until the next commit; render it from an Application with automated selfHeal (${TENANT_GUARDS_APPLICATION_SET})`,
    }));
}

export async function checkAgainstCharts(root: string, tools: { helm: string; kubectlValidate: string }, chartsDir: string, reference: string | undefined, selection: FleetSelection = WHOLE_FLEET): Promise<ChartCheck> {
  const started = Date.now();
  const tenants = tenantVersions(root);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "clusterra-charts-"));
  try {
    const { renders, problems } = helmRenders(root, chartsDir, selection);
    problems.push(...missingPinnedCharts(chartsDir), ...ignoredValueProblems(root, renders));
    const renderedDir = path.join(work, "rendered");
    const central = renders.find((r) => r.server === ARGOCD_IN_CLUSTER)?.kubeVersion ?? kubernetesVersion(TENANT_K3S_VERSION);
    const argo = argoCdRender(chartsDir, central);
    const [fleet, argoCd] = [await renderFleetCharts(tools.helm, renders, renderedDir), fs.existsSync(argo.chartDir) ? await renderCharts(tools.helm, [argo], path.join(work, "argocd")) : { objects: [], problems: [] }];
    problems.push(...fleet.problems, ...argoCd.problems, ...admissionPolicyProblems(fleet.objects));
    const read = (dir: string, o: RenderedObject) => ({ file: path.join(dir, o.out), object: parse(fs.readFileSync(path.join(dir, o.out), "utf8")) as Record<string, unknown> });
    // Each object in its namespace (its own, or the Application's), the tenant's CIDR as its stack file plans it.
    const stacks = tenantStacks(root);
    const inNamespace = fleet.objects.map((o) => ({ o, namespace: o.namespace ?? o.render.namespace }));
    problems.push(...tenantEgressProblems(inNamespace.filter(({ o, namespace }) => o.render.server === ARGOCD_IN_CLUSTER && namespace.startsWith(tenantNamespace(""))).map(({ o, namespace }) => {
      const id = namespace.slice(tenantNamespace("").length);
      const place = fleetPlace(o.render.file);
      const stack = stacks.get(`${place?.kind === "central" ? place.scope : ""}/${id}`);
      return { file: o.render.file, application: o.render.application, namespace, kind: o.kind, object: o.kind === "NetworkPolicy" ? read(renderedDir, o).object : {}, tenantCidr: stack?.vpcCidr, srunBlock: stack?.ports?.srunBlock };
    })));
    problems.push(...tenantHardeningProblems(inNamespace.filter(({ o, namespace }) => o.render.server === ARGOCD_IN_CLUSTER && namespace.startsWith(tenantNamespace(""))).map(({ o, namespace }) => ({ kind: o.kind, name: o.name, namespace, render: o.render, object: ["Controller", "RestApi", "Accounting", "MariaDB", "LoginSet"].includes(o.kind) ? read(renderedDir, o).object : {} }))));
    problems.push(...tenantControllerProblems(fleet.objects.filter((o) => o.kind === "Controller").map((o) => ({ ...o, object: read(renderedDir, o).object }))));
    problems.push(...renderedLimitProblems(fleet.objects.filter((o) => o.kind === "EC2NodeClass").map((o) => ({ ...o, object: read(renderedDir, o).object }))));
    problems.push(...tenantClusterKindProblems(fleet.objects.filter((o) => o.render.server !== ARGOCD_IN_CLUSTER).map((o) => ({ ...o, apiVersion: String(read(renderedDir, o).object.apiVersion ?? "") }))));
    const crdDir = path.join(work, "crds");
    fs.mkdirSync(crdDir);
    writeCrds(crdDir, [...fleet.objects.map((o) => read(renderedDir, o)), ...argoCd.objects.map((o) => read(path.join(work, "argocd"), o))], reference);

    // Rendered objects, by the version of their cluster.
    const byVersion = new Map<string, Checked[]>();
    const add = (version: string, entry: Checked) => byVersion.set(minor(version), [...(byVersion.get(minor(version)) ?? []), entry]);
    for (const o of fleet.objects) {
      add(o.render.kubeVersion, { file: path.join(renderedDir, o.out), object: () => ({ kind: o.kind, name: o.name }), name: () => ({ file: o.render.file, at: `Application/${o.render.application} ${o.kind}/${o.namespace ? `${o.namespace}/` : ""}${o.name} (${o.render.chartLabel}, rendered ${o.out})` }) });
    }
    let plainDocuments = 0;
    for (const file of fleetFiles(root).filter(selection.file)) {
      const version = plainFileVersion(file, renders, tenants);
      if (!version) continue;
      const docs = parseAllDocuments(fs.readFileSync(path.join(root, file), "utf8")).map((d) => d.toJS() as { apiVersion?: string; kind?: string; metadata?: { name?: string } } | null);
      // Values files are Helm's input, not objects: the renders above checked them.
      if (!docs.every((d) => d?.apiVersion && d.kind)) continue;
      plainDocuments += docs.length;
      add(version, { file: path.join(root, file), object: (i) => ({ kind: docs[i]?.kind, name: docs[i]?.metadata?.name }), name: (i) => ({ file, at: `document ${i} ${docs[i]?.kind}/${docs[i]?.metadata?.name}` }) });
    }
    // The Applications the ApplicationSets generate, as the API server on central gets them.
    const documents = fleetDocuments(root, (f) => !selection.file(f), selection.tenant).documents;
    const generated = documents.filter((d) => d.generated);
    const applications = documents.filter((d) => d.object.kind === "Application").map((d) => ({ name: String((d.object.metadata as { name?: string } | undefined)?.name), selfHealed: selfHealed(d.object) }));
    problems.push(...selfHealProblems(fleet.objects, new Map(applications.map((a) => [a.name, a.selfHealed]))));
    const centralVersion = renders.find((r) => r.server === ARGOCD_IN_CLUSTER)?.kubeVersion;
    if (generated.length && centralVersion) {
      const file = path.join(work, "generated-applications.yaml");
      fs.writeFileSync(file, generated.map((d) => stringify(d.object)).join("---\n"));
      plainDocuments += generated.length;
      add(centralVersion, { file, object: (i) => ({ kind: "Application", name: String((generated[i].object.metadata as { name?: string }).name) }), name: (i) => ({ file: generated[i].file, at: `ApplicationSet/${generated[i].generated?.by} generates Application/${String((generated[i].object.metadata as { name?: string }).name)}` }) });
    }
    for (const [version, entries] of byVersion) {
      const verdicts = await kubectlValidate(tools.kubectlValidate, version, crdDir, entries.map((e) => e.file), work);
      for (const e of entries) {
        (verdicts.get(path.resolve(e.file)) ?? []).forEach((status, i) => {
          const refused = refusal(status, e.object(i).kind, e.object(i).name);
          if (refused) problems.push({ ...e.name(i), reason: `kubectl-validate (Kubernetes ${version}): ${refused}` });
        });
      }
    }
    const objects = new Map<string, number>();
    for (const o of fleet.objects) objects.set(`${o.render.file} ${o.render.application}`, (objects.get(`${o.render.file} ${o.render.application}`) ?? 0) + 1);
    return { problems, objects, plainDocuments, seconds: (Date.now() - started) / 1000 };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
