/**
 * The Kubernetes half of the journey: the example environment's clusters started as their
 * user data starts them, ArgoCD installed on central as the central stack installs it, the
 * committed fleet synced into them as ArgoCD syncs it (central first, then each tenant
 * cluster through the credential the fleet declares), and the scaling loop played. Each
 * joint reports a step.
 */
import { argocdManagerManifest } from "../components/fleet/tenant-cluster";
import { plannedHostFiles, type HostFile } from "../components/host/host-files";
import { ARGOCD_CREDENTIAL_SCRIPT } from "../components/host/tenant-cloud-init";
import { SLURM_DAEMON_PRIVILEGE_POLICY } from "../components/fleet/central-admission";
import * as fs from "fs";
import * as path from "path";
import { parse } from "yaml";
import { checkoutFiles } from "../fleet-tools/files";
import { helmRenders, renderFleetCharts, argoCdRender, type HelmRender } from "../fleet-tools/render";
import { CONTROL_PLANE_MANIFESTS_ADDON, GUARDS_ADDON, TENANT_ADD_ONS, tenantsApplicationSet } from "../components/fleet/application-set";
import { tenantPodDnsBindingName } from "../components/fleet/central-admission";
import { healedStep, managedObject, rollingSyncDriftDetail, SELF_HEAL_BOUND_MS, watchDrifts, type Drift, type Managed } from "./gitops/self-heal";
import { APPLICATION_HEALTH_KEY, PROGRESSIVE_SYNCS_PARAM } from "../components/central/argocd-values";
import { CHARTS } from "../facts/charts";
import { centralFleetPath, ROLLOUT_WAVES, SLURM_RELEASE, TENANT_ENTRIES_APPLICATION_SET, tenantFleetPath, TENANT_GUARDS_APPLICATION_SET, TENANTS_APPLICATION_SET, tenantNamespace, tenantsApplicationSetPath, tenantsFleetPath } from "../facts/fleet";
import { crossCentralApplications, expanderDifferences, FLEET_SYNC_TIMEOUT_MS, type OtherCentral, liveApplications, liveClusterParams, rolloutStart, secretsGateViolations, type ApplicationObject, type SecretsReady, liveRollout, refreshApplication, REFRESH_ANNOTATION, ROLLOUT_QUIET_MS, ROLLOUT_TIMEOUT_MS, type LiveApplication, type RolloutResult } from "./gitops/applications";
import { ARGOCD_PODS, controllerShards, startArgoCd } from "./gitops/argocd";
import { ARGOCD_CONTROLLER_SHARDS } from "../facts/central-host";
import { commitToFleet, externalSecretsPackaging, publishChart, startGitopsServers } from "./gitops/servers";
import { yamlFile } from "../components/fleet/yaml-file";
import { findArgoCdImage } from "./host/image";
import type { PlanResult } from "../planning/plan";
import type { CentralConfig, TenantConfig } from "../config/types";
import { ARGOCD_CHART, ARGOCD_IN_CLUSTER } from "../facts/versions";
import { splitManifests, type KubeObject, type Manifest } from "./argo/manifests";
import { argoSettings } from "./argo/settings";
import { syncSteps } from "./argo/order";
import { health } from "./argo/health";
import { readK3sServer } from "./kube/k3s";
import { startCluster, type Cluster } from "./kube/cluster";
import { startTenantDns, tenantPodsDns, unnamedResolverRefused } from "./kube/tenant-dns";
import { controlPlanePodLabels, TENANT_DNS, tenantDnsName } from "../facts/control-plane";
import { outboundDials } from "./kube/outbound";
import { SLURM_CONFIG_MAP, slurmConfValues, startSlurmOperator, unpinnedImage } from "./kube/slurm-operator";
import { Kubectl } from "./kube/kubectl";
import { Processes, rbacRefusals, sleep, waitFor } from "./kube/processes";
import type { Tools } from "./kube/tools";
import { nodeObject, serverNode } from "./nodes";
import { localPathStorageClass, MARIADB_STAND_INS, READY_STAND_INS, standInCiliumTaint, standInControllerSecrets, standInLocalPath, standInReady } from "./stand-ins";
import { discoveryZones, KARPENTER_DEPLOYMENT, KARPENTER_RESOURCES, mapNodeClasses, resolveNodeClasses, startKarpenter } from "./kube/karpenter";
import { CentralMariadb, mariadbSteps } from "./kube/mariadb";
import { restapiForwardAddress, SLINKY_WORKLOADS, startTenantSlurm, type OperatorFiles, type RestapiSwitch } from "./kube/tenant-slurm";
import { addOwnAddress, type SealedNetwork } from "./kube/sealed-network";
import type { SlurmImage } from "./host/image";
import { NETNS_ETC } from "./host/processes";
import { lowerNodeSet, nodeRemovedStep, playScalingLoop, watchRemoval, type Placed } from "./scaling";
import { replacedServerForgets } from "./replaced-server";
import { volumeLimitsHold } from "./volume-limits";
import { hostFilesPrefix } from "../components/central/k3s-host";
import type { OperatorPod } from "./slurm/slurmd-pod";
import { handoverFiles } from "./slurm/handover";
import { clusterParameterNames, KARPENTER_DISCOVERY_TAG, TENANT_NAMESPACES, tenantClusterName } from "../facts/tenant-cluster";
import { EXTERNAL_SECRETS_NAMESPACE } from "../facts/fleet";
import { note, step, type JourneyStep } from "./host/step";
import { plannedSecrets, SecretsManager } from "./gitops/secrets-manager";
import { secretGateSteps } from "./gitops/secret-gate";
import { answerKey, EXTERNAL_SECRET_RESOURCE, externalSecretsPass, syncedResourceVersion, type Answered, type ExternalSecret } from "./gitops/external-secrets";
import { centralOnlySecretNames } from "../facts/project";
import { droppedSecurity, labelsNoPodCarries, unmatchedSelectors, type PolicyLike } from "./kube/policies";
import { SLURM_PART_POLICY_PODS } from "./slurm/topology";

export interface FleetJourneyInput {
  /** The project: its built tools and images. */
  readonly root: string;
  /** The example repository the plans came from (journey/example/repository.ts): its fleet is rendered, and its HEAD served and synced. */
  readonly repository: string;
  readonly chartsDir: string;
  readonly dir: string;
  readonly tools: Tools;
  readonly central: PlanResult;
  readonly tenants: readonly PlanResult[];
  /** The environment's other centrals (cells) in the same repository: none of theirs may reach this central's ArgoCD. */
  readonly otherCentrals: readonly OtherCentral[];
  readonly processes: Processes;
  readonly report: (s: JourneyStep) => void;
  /** The sealed namespace the tools run in (a tenant's operator gets its cluster's names there). */
  readonly sealed: SealedNetwork;
  /** The binaries themselves (tools' are the sealed wrappers): those that run inside a pod's own namespaces. */
  readonly binaries: { readonly slurmOperator: string; readonly mariadbOperator: string; readonly argocd: string; readonly helm: string; readonly coredns: string };
  /** The Slurm image the tenants' slurmctld, slurmdbd, MariaDB and slurmrestd run in; why not, when it is missing. */
  readonly image: { readonly image?: SlurmImage; readonly missing?: string };
}

const CENTRAL_PORT = 17443;
/** The port a tenant's K3s server serves its API on at its private address (K3s's). */
const TENANT_API_PORT = 6443;
/** ArgoCD's ConfigMap of TLS certificates by host name (a private CA's, here the journey's origins'). */
const ARGOCD_TLS_CERTS = "argocd-tls-certs-cm";
/** The External Secrets controller's Deployment (its release name, in its namespace on either side). */
const ESO_CONTROLLER = "external-secrets";
/** Whether the External Secrets controller's Deployment has a replica available on a cluster. */
async function esoAvailable(kc: Kubectl): Promise<boolean> {
  return !!(await kc.get<{ status?: { availableReplicas?: number } }>(["deployment", ESO_CONTROLLER, "-n", EXTERNAL_SECRETS_NAMESPACE]))?.status?.availableReplicas;
}

/** How often the External Secrets stand-in reads a failing ExternalSecret again (the controller retries with back-off), and looks for the controller where it is not available yet. */
const ESO_RETRY_MS = 5000;
type Resource = { type: string; urn: string; inputs: Record<string, unknown> };

function resources(p: PlanResult): Resource[] {
  return p.deployment.deployment.resources as unknown as Resource[];
}

function serverInstance(p: PlanResult): Resource {
  const i = resources(p).find((r) => r.type === "aws:ec2/instance:Instance");
  if (!i) throw new Error(`plan ${p.config.stack} has no K3s server instance`);
  return i;
}

/** What a tenant's server writes from its host-files parameters, as its plan sets them. */
function serverFiles(t: { readonly plan: PlanResult; readonly config: TenantConfig }): HostFile[] {
  return plannedHostFiles(resources(t.plan), clusterParameterNames(t.config.environment, t.config.tenant.id).serverFiles);
}

function archOf(instanceType: string): string {
  return /^[a-z]+\d+g/.test(instanceType) ? "arm64" : "amd64";
}

/** The tenant's cluster name as its ArgoCD destination names it (the server's fixed address). */
function tenantServer(p: PlanResult): string {
  return `https://${String(serverInstance(p).inputs.privateIp)}:6443`;
}

/**
 * What the Kubernetes part hands the Slurm part, per tenant: central's slurmctld and slurmdbd
 * /etc/slurm as Slinky's operator wrote them, and the slurmd pod the tenant's operator made when the scaling
 * loop raised a NodeSet (also kept as `slurm-<tenant>/slurmd-pod.json` in the run's folder).
 */
export interface FleetJourneyResult {
  readonly operatorFiles: ReadonlyMap<string, OperatorFiles>;
  readonly slurmdPods: ReadonlyMap<string, OperatorPod>;
}

/** Writes one handed-over object as JSON, its folder made. */
function keep(file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(value, null, 2), { mode: 0o600 });
}

export async function runFleetJourney(input: FleetJourneyInput): Promise<FleetJourneyResult> {
  const cleanups: (() => Promise<void>)[] = [];
  const result = { operatorFiles: new Map<string, OperatorFiles>(), slurmdPods: new Map<string, OperatorPod>() };
  try {
    await fleetJourney(input, cleanups, result);
    return result;
  } finally {
    // Each cleanup runs whatever another's did.
    for (const c of cleanups) await c().catch((e: unknown) => input.report(step("what the Kubernetes part started is gone", false, String(e))));
  }
}

async function fleetJourney(input: FleetJourneyInput, cleanups: (() => Promise<void>)[], result: { operatorFiles: Map<string, OperatorFiles>; slurmdPods: Map<string, OperatorPod> }): Promise<void> {
  const { report, tools, processes } = input;
  const { operatorFiles } = result;
  const central = input.central.config as CentralConfig;
  const tenants = input.tenants.map((t) => ({ plan: t, config: t.config as TenantConfig }));
  const clusters = new Map<string, Cluster>();
  const kubectl = new Map<string, Kubectl>();

  // 1. Control planes, each from its server's user data.
  const started = Date.now();
  const centralInstance = serverInstance(input.central);
  const centralServer = readK3sServer(String(centralInstance.inputs.userData), archOf(String(centralInstance.inputs.instanceType)), "central", plannedHostFiles(resources(input.central), hostFilesPrefix(central.scope)));
  const specs = [
    { name: "central", server: centralServer, instance: centralInstance, port: CENTRAL_PORT, addresses: [] as string[] },
    ...tenants.map((t, i) => {
      const inst = serverInstance(t.plan);
      const server = readK3sServer(String(inst.inputs.userData), archOf(String(inst.inputs.instanceType)), `${t.config.tenant.id}-server`, serverFiles(t));
      return { name: t.config.tenant.id, server, instance: inst, port: CENTRAL_PORT + 1 + i, addresses: [String(inst.inputs.privateIp)] };
    }),
  ];
  for (const s of specs) {
    const c = await startCluster({ name: s.name, server: s.server, port: s.port, dir: path.join(input.dir, s.name), tools, processes, addresses: s.addresses });
    clusters.set(s.name, c);
    kubectl.set(s.name, new Kubectl(tools.kubectl, c.kubeconfig));
  }
  // K3s's packaged local-storage add-on where the server keeps it: its default StorageClass
  // before any claim is made (the provisioner is stood in while ArgoCD syncs).
  for (const s of specs.filter((x) => x.server.localStorage)) {
    const r = await (kubectl.get(s.name) as Kubectl).run(["apply", "-f", "-"], { input: JSON.stringify(localPathStorageClass()) });
    if (r.code !== 0) report(step(`${s.name}: K3s's local-path StorageClass applied (its claims bind)`, false, r.stderr.trim().slice(0, 300)));
  }
  const admission = centralServer.admissionConfig ? (parse(centralServer.admissionConfig) as { plugins?: { configuration?: { defaults?: { enforce?: string }; exemptions?: { namespaces?: string[] } } }[] }).plugins?.[0]?.configuration : undefined;
  report(note("control planes up from the servers' user data", `${specs.map((s) => s.name).join(", ")} in ${((Date.now() - started) / 1000).toFixed(1)} s; central enforces Pod Security "${admission?.defaults?.enforce ?? "privileged"}" (exempt: ${admission?.exemptions?.namespaces?.join(", ") ?? "none"}); tenants run K3s's default (no admission configuration)`));

  // 2. Nodes: each server. A tenant's workers are Karpenter's to launch (kube/karpenter.ts), for
  // the slurmd pods the scaling loop makes: none is made here.
  const k = (name: string) => kubectl.get(name) as Kubectl;
  const nodeLines: string[] = [];
  for (const s of specs) {
    const node = serverNode(s.server.nodeLabels["kubernetes.io/hostname"], String(s.instance.inputs.instanceType), s.server.nodeLabels, s.server.maxPods);
    await k(s.name).run(["create", "-f", "-"], { input: JSON.stringify(nodeObject(node)) });
    nodeLines.push(`${s.name}: ${node.name} (${s.instance.inputs.instanceType}, ${node.pods} pods)`);
  }
  const ready = await waitFor(async () => {
    for (const s of specs) {
      const nodes = await k(s.name).get<{ items: { status?: { conditions?: { type: string; status: string }[] } }[] }>(["nodes"]);
      if (!nodes?.items.length || !nodes.items.every((n) => n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"))) return undefined;
    }
    return true;
  }, 60_000);
  report(step("the servers' nodes, shaped like the real ones, are Ready (no worker: Karpenter launches those)", !!ready, ready ? nodeLines.join("; ") : `kwok did not make every node Ready in 60 s: ${processes.tail("central-kwok")}`));

  // 3. Helm renders of every Application, as ArgoCD renders them.
  const helm = tools.helm;
  const renderDir = path.join(input.dir, "render");
  const { renders, problems: renderProblems } = helmRenders(input.repository, input.chartsDir);
  const rendered = await renderFleetCharts(helm, renders, renderDir);
  const problems = [...renderProblems, ...rendered.problems];
  report(step("every Helm source renders as ArgoCD renders it", problems.length === 0, problems.length ? problems.map((p) => `${p.file}: ${p.at}: ${p.reason}`).join("; ") : `${renders.length} sources, ${rendered.objects.length} objects`));
  const byRender = new Map<HelmRender, Manifest[]>();
  for (const o of rendered.objects) {
    const list = byRender.get(o.render) ?? [];
    list.push(...splitManifests(fs.readFileSync(path.join(renderDir, o.out), "utf8"), `${o.render.chartLabel} render`));
    byRender.set(o.render, list);
  }
  // External Secrets' published chart generates its CRD templates when it is packaged; the
  // chart source beside the project has only their README. The journey adds the CRDs the
  // reference folder holds for the same release wherever the values install them.
  const packaged: string[] = [];
  for (const r of renders.filter((x) => /^external-secrets-/.test(x.chartLabel))) {
    const values = [path.join(r.chartDir, "values.yaml"), ...r.valueFiles].map((f) => parse(fs.readFileSync(f, "utf8")) as { installCRDs?: boolean } | null);
    if (values.reduce<boolean>((on, v) => (v && typeof v.installCRDs === "boolean" ? v.installCRDs : on), false)) {
      const dir = path.join(path.dirname(input.chartsDir), r.chartLabel.replace(/^external-secrets-/, "external-secrets-chart-"));
      const crds = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => /^external-secrets\.io_.*\.yaml$/.test(f)).sort().flatMap((f) => splitManifests(fs.readFileSync(path.join(dir, f), "utf8"), f)) : [];
      byRender.set(r, [...crds, ...(byRender.get(r) ?? [])]);
      packaged.push(`${r.application}: ${crds.length} CRDs`);
    }
  }
  report(step("charts' packaging-time templates stood in from the reference", packaged.length > 0, packaged.join("; ") || "no External Secrets render installs CRDs, or the reference has none of its CRDs"));

  // 4. ArgoCD as the central stack installs it: its chart with the stack's values (Helm, not ArgoCD).
  const release = resources(input.central).find((r) => r.type === "kubernetes:helm.sh/v3:Release");
  const releaseValues = (release?.inputs.values ?? {}) as Record<string, unknown>;
  const argoRender: HelmRender = { ...argoCdRender(input.chartsDir, `v${kubeMinor(central.controlPlane.k3sVersion)}`), inlineValues: releaseValues };
  const argoRendered = await renderFleetCharts(helm, [argoRender], path.join(input.dir, "render-argocd"));
  const argoManifests = argoRendered.objects.flatMap((o) => splitManifests(fs.readFileSync(path.join(input.dir, "render-argocd", o.out), "utf8"), "argo-cd render"));
  report(outboundStep(specs.map((s) => ({ name: s.name, args: (clusters.get(s.name) as Cluster).apiServerArgs, admissionConfig: s.server.admissionConfig })), [...[...byRender.values()].flat(), ...argoManifests].map((m) => m.object)));
  const c = k("central");
  await c.run(["create", "namespace", ARGOCD_CHART.namespace]);
  const argoProblems = await helmInstall(c, argoManifests, ARGOCD_CHART.namespace);
  report(step("ArgoCD installed on central as the central stack installs it", argoProblems.length === 0, argoProblems.length ? argoProblems.join("; ") : `${argoManifests.length} objects; every Deployment and StatefulSet available`));
  const chartValues = parse(fs.readFileSync(path.join(argoRender.chartDir, "values.yaml"), "utf8")) as Record<string, unknown>;
  const settings = argoSettings(chartValues, releaseValues);

  // 4b. The fleet's sources inside the sealed namespace, under the names the fleet gives them;
  // ArgoCD told of their CA as an operator tells it of a private CA (argocd-tls-certs-cm).
  const gitops = await startGitopsServers({
    root: input.repository, chartsDir: input.chartsDir, repoUrl: central.fleet.repoUrl, revision: central.fleet.revision, charts: Object.values(CHARTS),
    dir: path.join(input.dir, "origins"), sealed: input.sealed, processes, helm: tools.helm, registry: tools.registry,
    packagingSource: externalSecretsPackaging(path.dirname(input.chartsDir)),
  });
  const tls = await c.run(["patch", "configmap", ARGOCD_TLS_CERTS, "-n", ARGOCD_CHART.namespace, "--type=merge", "-p", JSON.stringify({ data: Object.fromEntries(gitops.hosts.map((h) => [h, gitops.caPem])) })]);
  report(step("the fleet's repository and charts are served inside the sealed namespace under their own names", tls.code === 0,
    tls.code === 0 ? `${central.fleet.repoUrl} (${central.fleet.revision} = the example repository's commit, git http-backend), ${gitops.published.length} charts (helm repo index; a distribution registry for oci://): ${gitops.hosts.join(", ")}; their CA in ${ARGOCD_TLS_CERTS}` : tls.stderr.trim()));
  // Each tenant's server at its private address, as its cluster Secret names it: the address is
  // the sealed namespace's own (on its loopback), forwarded to the tenant's API server.
  for (const t of tenants) {
    const ip = String(serverInstance(t.plan).inputs.privateIp);
    await addOwnAddress(input.sealed, ip);
    processes.start(`${t.config.tenant.id}-server-address`, "ip", ["netns", "exec", input.sealed.name, "socat", `TCP-LISTEN:${TENANT_API_PORT},bind=${ip},reuseaddr,fork`, `TCP:127.0.0.1:${new URL((clusters.get(t.config.tenant.id) as Cluster).url).port}`]);
  }

  // 5. The tenant servers' own bootstrap: ArgoCD's account (the SSM parameter its credential
  // script reads, as the tenant's plan writes it) and its credential.
  // Secrets Manager as the plans make it: what they create, what they version, who may read each.
  const secretsManager = new SecretsManager(plannedSecrets([input.central, ...tenants.map((t) => t.plan)].flatMap(resources)));
  for (const t of tenants) {
    const id = t.config.tenant.id;
    const parameter = clusterParameterNames(t.config.environment, id).argocdManager;
    const script = serverFiles(t).find((f) => f.path === ARGOCD_CREDENTIAL_SCRIPT)?.content ?? "";
    // The parameter as the stack writes it (its value is a secret in the plan: the same pure function's).
    const planned = t.plan.deployment.deployment.resources.some((r) => r.type === "aws:ssm/parameter:Parameter" && r.inputs?.name === parameter);
    const account = script.includes(`--name '${parameter}'`) && planned ? argocdManagerManifest() : undefined;
    const tk = k(id);
    const applied = typeof account === "string" ? await tk.run(["apply", "--server-side", "--force-conflicts", "--field-manager=clusterra-bootstrap", "-f", "-"], { input: account }) : undefined;
    const token = await tk.run(["-n", "kube-system", "create", "token", "argocd-manager", "--duration=24h"]);
    // The server's PutSecretValue: to the secret the plan creates for it, or nowhere.
    const credential = centralOnlySecretNames(t.config.environment, id).argocdCluster;
    const ok = applied?.code === 0 && token.code === 0 && secretsManager.put(credential, JSON.stringify({ bearerToken: token.stdout.trim(), caData: (clusters.get(id) as Cluster).caData }));
    report(step(`tenant ${id}: the server publishes ArgoCD's credential`, ok, ok ? `argocd-manager applied from SSM ${parameter}, which the server's credential script reads; a 24 h token minted` : `${applied?.stderr ?? `the credential script reads no ${parameter}, or the plan writes none`} ${token.stderr}`.trim()));
  }

  // 6. The controllers the journey cannot run, stood in while ArgoCD syncs: External Secrets
  // (each ExternalSecret's target written with the keys it names, the tenant's real ArgoCD
  // credential among them, then its Ready condition), and the Ready conditions of the kinds
  // stand-ins.ts lists, once their controller's Deployment is available.
  const stoodIn = new Set<string>();
  // mariadb-operator runs for real on central, and each MariaDB pod it makes, in the Slurm
  // image; without the image (by hand) its kinds' conditions are stood in instead.
  const slurmImage = input.image.image;
  const mariadb = slurmImage
    ? new CentralMariadb({ cluster: clusters.get("central") as Cluster, kc: c, binary: input.binaries.mariadbOperator, image: slurmImage.dir, sealed: input.sealed, processes, dir: path.join(input.dir, "mariadb"), port: MARIADB_OPERATOR_PORT })
    : undefined;
  const readyRows = mariadb ? READY_STAND_INS : [...READY_STAND_INS, ...MARIADB_STAND_INS];
  // Karpenter on each tenant cluster once ArgoCD made its Deployment available, with AWS's
  // part stood in (kube/karpenter.ts): each EC2NodeClass's findings from the plan, a
  // KWOKNodeClass of its name, and Cilium's operator's removal of its startup taint.
  const karpenters = new Map<string, { process?: string; problem?: string; detail?: string; wait?: string }>();
  const karpenterTick = async (): Promise<void> => {
    for (const [i, t] of tenants.entries()) {
      const id = t.config.tenant.id;
      const kc = k(id);
      // One tenant's trouble stops neither the other tenants' nor the other stand-ins.
      try {
        if (!karpenters.get(id)?.process) {
          const d = await kc.get<{ status?: { availableReplicas?: number } }>(["deployment", KARPENTER_DEPLOYMENT, "-n", TENANT_NAMESPACES.karpenter]);
          if (!d?.status?.availableReplicas) continue;
          const zones = discoveryZones(resources(t.plan), KARPENTER_DISCOVERY_TAG, tenantClusterName(t.config.environment, id));
          // Kept to report; tried again on the next tick until it starts (a pod's kubelet retries too).
          karpenters.set(id, await startKarpenter({ cluster: clusters.get(id) as Cluster, kc, namespace: TENANT_NAMESPACES.karpenter, tools, processes, port: KARPENTER_PORT + 2 * i, zones }));
        }
        for (const x of await resolveNodeClasses(kc, resources(t.plan))) stoodIn.add(`${id}:ec2nodeclass/${x}`);
        if (!karpenters.get(id)?.process) continue;
        for (const x of await mapNodeClasses(kc)) stoodIn.add(`${id}:kwoknodeclass/${x}`);
        for (const x of await standInCiliumTaint(kc)) stoodIn.add(`${id}:${x} (agent-not-ready removed)`);
      } catch (e) {
        karpenters.set(id, { ...karpenters.get(id), problem: String(e) });
      }
    }
  };
  const deliverSecrets = async (): Promise<void> => {
    await mariadb?.tick();
    await karpenterTick();
    for (const [name, kc] of kubectl) {
      for (const x of await standInControllerSecrets(kc)) stoodIn.add(`${name}:${x}`);
      for (const x of await standInReady(kc, readyRows)) stoodIn.add(`${name}:${x}`);
      if (specs.find((s) => s.name === name)?.server.localStorage) for (const x of await standInLocalPath(kc)) stoodIn.add(`${name}:${x}`);
    }
  };
  // External Secrets answers a changed ExternalSecret within about a second, as the controller
  // (a watch) does: before ArgoCD can count the old Ready condition as the new spec's health.
  const externalSecrets = new Map([...kubectl].map(([name, kc]) => [name, { kc, answered: new Map<string, Answered>(), available: false, checked: 0, dirty: true, retried: 0, watched: 0, watch: undefined as ReturnType<Kubectl["watch"]> | undefined }]));
  const answerExternalSecrets = async (): Promise<void> => {
    for (const x of externalSecrets.values()) {
      if (!x.available && Date.now() - x.checked > ESO_RETRY_MS) {
        x.checked = Date.now();
        x.available = await esoAvailable(x.kc);
      }
      if (!x.available) continue;
      // A watch the API server ended is started again, no faster than a retry.
      if ((!x.watch || x.watch.ended()) && Date.now() - x.watched > ESO_RETRY_MS) [x.watch, x.dirty, x.watched] = [x.kc.watch(EXTERNAL_SECRET_RESOURCE, () => (x.dirty = true)), true, Date.now()];
      // Failures are read again every few seconds (a secret published later, as the tenant's credential is).
      const retry = [...x.answered.values()].some((a) => a.error) && Date.now() - x.retried > ESO_RETRY_MS;
      if (!x.dirty && !retry) continue;
      [x.dirty, x.retried] = [false, Date.now()];
      await externalSecretsPass(x.kc, secretsManager, x.answered);
    }
  };
  let standing = true;
  const standIns = (async () => {
    while (standing) {
      await deliverSecrets().catch(() => undefined);
      await sleep(2000);
    }
  })();
  const esoStandIn = (async () => {
    while (standing) {
      await answerExternalSecrets().catch(() => undefined);
      await sleep(500);
    }
  })();
  cleanups.unshift(async () => {
    standing = false;
    await Promise.all([standIns, esoStandIn]);
    for (const x of externalSecrets.values()) x.watch?.stop();
    mariadb?.stopWatching();
    // No MariaDB pod still being started once the processes are stopped.
    await mariadb?.settled();
  });

  // 6a. Real ArgoCD on central: the chart's pods, as its ServiceAccounts.
  const who = `ArgoCD ${tools.argocdVersion}`;
  const argoImage = findArgoCdImage(input.root);
  if (!argoImage.image) {
    // By hand the rest of the part is skipped with how to make the image; in CI a missing image fails.
    report({ ...step(`${who} runs on central as the chart's pods`, false, argoImage.missing ?? "no ArgoCD image"), ...(process.env.CI ? {} : { skipped: true }) });
    return;
  }
  const argocd = await startArgoCd({ kc: c, cluster: clusters.get("central") as Cluster, namespace: ARGOCD_CHART.namespace, image: argoImage.image.dir, binaries: { argocd: input.binaries.argocd, helm: input.binaries.helm }, sealed: input.sealed, dir: path.join(input.dir, "argocd"), processes });
  report(step(`${who} runs on central as the chart's pods (its Redis password Job, then ${ARGOCD_PODS.map((p) => p.name).join(", ")})`, !argocd.problem, argocd.problem ?? `${argocd.started.join(", ")} in the ArgoCD image (${argoImage.image.versions}), each as its ServiceAccount`));
  if (argocd.problem) return;

  // 6b. The central stack's own ArgoCD objects (the platform project, the root Application),
  // as Pulumi applies them; from there ArgoCD syncs the fleet by itself.
  const pulumiObjects = resources(input.central).filter((r) => /^kubernetes:argoproj.io\/v1alpha1:(AppProject|Application)$/.test(r.type)).map((r) => r.inputs as unknown as KubeObject);
  for (const o of pulumiObjects) await c.run(["apply", "--server-side", "--field-manager=pulumi-kubernetes", "-f", "-"], { input: JSON.stringify(o) });
  const syncStarted = Date.now();
  const expectedGenerated = tenants.length * (1 + TENANT_ADD_ONS.length);
  let last: LiveApplication[] = [];
  const converged = await waitFor(async () => {
    last = await liveApplications(c, ARGOCD_CHART.namespace);
    const generated = last.filter((a) => a.appSet).length;
    return generated >= expectedGenerated && last.every((a) => a.sync === "Synced" && a.health === "Healthy") ? true : undefined;
  }, FLEET_SYNC_TIMEOUT_MS, 5000);
  const took = ((Date.now() - syncStarted) / 1000).toFixed(0);
  report(step(`${who} syncs the whole fleet from a fresh install by itself`, !!converged,
    `${last.filter((a) => a.sync === "Synced" && a.health === "Healthy").length}/${last.length} Applications Synced and Healthy after ${took} s${converged ? "" : ` (gave up at ${FLEET_SYNC_TIMEOUT_MS / 60_000} min)`}`));

  // Progressive syncs, by what the controller does: it keeps a RollingSync set's per-Application
  // status (its step, Waiting/Pending/Progressing/Healthy) only with them on.
  const tenantsSet = await c.get<{ status?: { applicationStatus?: { application: string; step?: string; status?: string }[] } }>(["applicationsets.argoproj.io", TENANTS_APPLICATION_SET, "-n", ARGOCD_CHART.namespace]);
  const stepped = tenantsSet?.status?.applicationStatus ?? [];
  const progressive = stepped.length > 0;
  report(step("ArgoCD's ApplicationSet controller runs progressive syncs (what it keeps of each Application's step)", progressive, progressive
    ? `ApplicationSet ${TENANTS_APPLICATION_SET}'s status holds ${stepped.length} Applications' steps (${[...new Set(stepped.map((x) => x.status))].join(", ")}), written by the controller only with ${PROGRESSIVE_SYNCS_PARAM} on`
    : `ApplicationSet ${TENANTS_APPLICATION_SET} has no applicationStatus: RollingSync is ignored and every tenant syncs at once (argocd-cmd-params-cm ${PROGRESSIVE_SYNCS_PARAM})`));
  const waveOf = new Map(tenants.map((t) => [t.config.tenant.id, t.config.rolloutWave]));
  for (const set of [TENANT_ENTRIES_APPLICATION_SET, TENANTS_APPLICATION_SET]) {
    const entries = set === TENANT_ENTRIES_APPLICATION_SET;
    const what = entries ? "every tenant's entry on central from its folder" : "every tenant's Applications from its cluster Secret";
    report(rolloutStep(`${who}: ApplicationSet ${set} generates ${what} and rolls them out canary first`, await liveRollout(c, ARGOCD_CHART.namespace, set, progressive), waveOf, tenants.length * (entries ? 1 : TENANT_ADD_ONS.filter((a) => !a.selfHealed).length)));
  }
  // RollingSync's gate includes each step's ExternalSecrets: no later step's Application began
  // its first sync before every ExternalSecret of an earlier step was Ready.
  const kcOfServer = (server: string) => (server === ARGOCD_IN_CLUSTER ? c : kubectl.get(tenants.find((t) => tenantServer(t.plan) === server)?.config.tenant.id ?? ""));
  const gate: string[] = [];
  let gated = 0;
  for (const set of [TENANT_ENTRIES_APPLICATION_SET, TENANTS_APPLICATION_SET]) {
    const live = await c.get<{ status?: { applicationStatus?: { application: string; step?: string }[] } }>(["applicationsets.argoproj.io", set, "-n", ARGOCD_CHART.namespace]);
    const steps = new Map((live?.status?.applicationStatus ?? []).map((x) => [x.application, Number(x.step ?? "1") - 1]));
    const apps = ((await c.get<{ items: (ApplicationObject & { spec: { destination?: { server?: string } } })[] }>(["applications.argoproj.io", "-n", ARGOCD_CHART.namespace]))?.items ?? []).filter((a) => steps.has(a.metadata.name));
    const ready: SecretsReady[] = [];
    for (const a of apps) {
      const kc = kcOfServer(a.spec.destination?.server ?? "");
      const secrets: { name: string; readyAt: string }[] = [];
      for (const r of (a.status?.resources ?? []).filter((x) => x.kind === "ExternalSecret")) {
        const es = kc ? await kc.get<{ status?: { conditions?: { type: string; status: string; lastTransitionTime?: string }[] } }>([EXTERNAL_SECRET_RESOURCE, r.name, "-n", r.namespace ?? ""]) : undefined;
        const cond = es?.status?.conditions?.find((x) => x.type === "Ready" && x.status === "True");
        secrets.push({ name: `${r.namespace}/${r.name}`, readyAt: cond?.lastTransitionTime ?? "" });
      }
      gated += secrets.length;
      if (secrets.length) ready.push({ app: a.metadata.name, secrets });
    }
    gate.push(...secretsGateViolations(steps, new Map(apps.map((a) => [a.metadata.name, rolloutStart(a)])), ready));
  }
  report(step(`RollingSync moves on only once each step's ExternalSecrets are Ready (${who})`, gate.length === 0 && gated > 0,
    gate.length ? gate.slice(0, 4).join("; ") : gated ? `${gated} ExternalSecrets, each Ready before any later step's Application began to sync` : "no generated Application has an ExternalSecret"));

  // fleet check's offline expander against what the real ApplicationSet controller generated
  // from the same fleet (the served commit is the example repository's, read here from its folder).
  const clusterList = await liveClusterParams(c, ARGOCD_CHART.namespace);
  const liveApps = (await c.get<{ items: { metadata: { name: string; ownerReferences?: { kind: string; name: string }[] }; spec: Record<string, unknown> }[] }>(["applications.argoproj.io", "-n", ARGOCD_CHART.namespace]))?.items ?? [];
  const differences: string[] = [];
  for (const set of [TENANT_ENTRIES_APPLICATION_SET, TENANTS_APPLICATION_SET, TENANT_GUARDS_APPLICATION_SET]) {
    const live = await c.get<Record<string, unknown>>(["applicationsets.argoproj.io", set, "-n", ARGOCD_CHART.namespace]);
    if (!live) differences.push(`${set}: not on central`);
    else differences.push(...expanderDifferences(live, clusterList, checkoutFiles(input.repository), liveApps));
  }
  report(step(`fleet check's offline ApplicationSet expander generates what ${who}'s ApplicationSet controller generated`, differences.length === 0,
    differences.length ? differences.slice(0, 4).join("; ") : `${liveApps.filter((a) => a.metadata.ownerReferences?.some((o) => o.kind === "ApplicationSet")).length} Applications from ${TENANT_ENTRIES_APPLICATION_SET}, ${TENANTS_APPLICATION_SET} and ${TENANT_GUARDS_APPLICATION_SET}: the same names, projects, destinations and sources`));
  // Each central's ApplicationSets read their own scope's folders: the repository holds a cell
  // (another central and its tenant), whose folders this ArgoCD must leave alone.
  const foreign = crossCentralApplications(liveApps, input.otherCentrals);
  const cellFolders = input.otherCentrals.flatMap((o) => o.tenants.map((id) => tenantFleetPath(o.scope, id))).filter((f) => fs.existsSync(path.join(input.repository, f)));
  report(step(`${who}'s ApplicationSets generate nothing from another central's folders (${input.otherCentrals.map((o) => `${centralFleetPath(o.scope)}, ${tenantsFleetPath(o.scope)}`).join("; ") || "no other central"})`,
    foreign.length === 0 && cellFolders.length > 0,
    foreign.length ? foreign.slice(0, 6).join("; ") : cellFolders.length ? `${liveApps.length} Applications, none of them another central's; the served commit holds ${cellFolders.join(", ")}` : "the served commit holds no other central's tenant: nothing to tell apart"));
  const noRetry = last.filter((a) => !a.retry).map((a) => a.name);
  // App-of-apps waves wait on each child's health only where argocd-cm gives ArgoCD a health
  // check for Applications: read from the live argocd-cm the central stack's release wrote.
  // ArgoCD v3 keeps resources' health out of the Application's status (controller.resource.health.persist
  // is false by default), so the wait itself is not observed here.
  const argocdCm = await c.get<{ data?: Record<string, string> }>(["configmap", "argocd-cm", "-n", ARGOCD_CHART.namespace]);
  const applicationHealth = !!argocdCm?.data?.[APPLICATION_HEALTH_KEY]?.trim();
  report(step("app-of-apps waves wait for each child Application's health (argocd-cm, as the central stack's release wrote it, has a health check for argoproj.io/Application)", applicationHealth,
    applicationHealth ? `argocd-cm ${APPLICATION_HEALTH_KEY}: ${argocdCm?.data?.[APPLICATION_HEALTH_KEY]?.split("\n").length} lines of Lua${settings.applicationHealth ? "" : " (though the values the journey read say none)"}` : `argocd-cm has no ${APPLICATION_HEALTH_KEY}: ArgoCD treats child Applications as healthy at once, so central's waves (CRDs, operators, tenants) do not wait for each other`));
  for (const a of last) report(step(`Application ${a.name} Synced and Healthy (${who})`, a.sync === "Synced" && a.health === "Healthy", a.detail));

  // External Secrets on every cluster: each ExternalSecret the fleet made, read from what the
  // plans create with its store's role, Ready with its Secret written; none failing.
  for (const [name, x] of externalSecrets) {
    const esos = (await x.kc.get<{ items: (ExternalSecret & { status?: { syncedResourceVersion?: string } })[] }>([EXTERNAL_SECRET_RESOURCE, "-A"]))?.items ?? [];
    const secrets = new Set(((await x.kc.get<{ items: { metadata: { name: string; namespace: string } }[] }>(["secrets", "-A"]))?.items ?? []).map((s) => `${s.metadata.namespace}/${s.metadata.name}`));
    // Ready for what it is now (synced at its generation, labels and annotations), its Secret there.
    const bad = esos.filter((e) => !e.status?.conditions?.some((k) => k.type === "Ready" && k.status === "True") || e.status?.syncedResourceVersion !== syncedResourceVersion(e) || !secrets.has(`${e.metadata.namespace}/${e.spec.target?.name ?? e.metadata.name}`))
      .map((e) => `${e.metadata.namespace}/${e.metadata.name}: ${x.answered.get(answerKey(e))?.error ?? "not Ready for its generation, or its Secret missing"}`);
    // The controller as it is now, not as it was when the stand-in first found it.
    const running = await esoAvailable(x.kc);
    report(step(`${name}: External Secrets runs and delivers every ExternalSecret from the secrets the plans create, with its store's role`, running && esos.length > 0 && bad.length === 0,
      !running ? `deployment ${EXTERNAL_SECRETS_NAMESPACE}/${ESO_CONTROLLER} not available: ${await whyNot(x.kc, ESO_CONTROLLER, EXTERNAL_SECRETS_NAMESPACE)}`
        : !esos.length ? "no ExternalSecret on this cluster" : bad.length ? bad.slice(0, 4).join("; ") : `${esos.length} ExternalSecrets Ready, each Secret written (${secretsManager.secrets.length} secrets in the plans)`));
  }
  // Karpenter on every tenant cluster: running, and the fleet's NodePools Ready by its own
  // readiness controller (their EC2NodeClass found in the tenant's plan).
  for (const t of tenants) {
    const id = t.config.tenant.id;
    const run = karpenters.get(id);
    const pools = (await k(id).get<{ items: { metadata: { name: string }; status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] } }[] }>([KARPENTER_RESOURCES.nodePools]))?.items ?? [];
    const notReady = pools.filter((p) => !p.status?.conditions?.some((x) => x.type === "Ready" && x.status === "True"))
      .map((p) => `${p.metadata.name}: ${p.status?.conditions?.filter((x) => x.status !== "True").map((x) => `${x.type} ${x.reason ?? ""} ${x.message ?? ""}`.trim()).join(", ") || "no conditions"}`);
    const alive = !!run?.process && processes.alive(run.process);
    // As its ServiceAccount: the chart's RBAC (and the kwok launch's rights) must be all it needs.
    const forbidden = run?.process ? rbacRefusals(processes.log(run.process)) : [];
    report(step(`tenant ${id}: Karpenter ${tools.karpenterVersion} runs as its Deployment and its ServiceAccount, and makes the fleet's NodePools Ready itself`, alive && pools.length > 0 && notReady.length === 0 && forbidden.length === 0,
      !run ? `deployment ${TENANT_NAMESPACES.karpenter}/${KARPENTER_DEPLOYMENT} never available` : !run.process ? run.problem ?? `not started: ${run.wait}` : !alive ? `exited: ${processes.tail(run.process as string)}`
        : !pools.length ? "no NodePool on the cluster" : notReady.length ? notReady.join("; ") : forbidden.length ? `${forbidden.length} RBAC refusals: ${forbidden.slice(0, 2).join(" | ").slice(0, 400)}` : `${pools.map((p) => p.metadata.name).join(", ")} Ready; ${run.detail}; no RBAC refusal in its log`));
  }
  await mariadb?.settled();
  if (mariadb) await mariadbSteps({ mariadb, c, tenants: tenants.map((t) => t.config.tenant.id), image: slurmImage?.dir ?? "", processes: input.processes, sealed: input.sealed, dir: input.dir, report, version: tools.mariadbOperatorVersion });
  report(note("what controllers that cannot run here write, written once each controller is available", stoodIn.size ? `${stoodIn.size}: ${[...stoodIn].slice(0, 12).join(", ")}${stoodIn.size > 12 ? ", ..." : ""}` : "none"));

  // 6c. Slinky's real slurm-operator on every cluster, once ArgoCD synced its Deployment: what
  // it makes of the synced Controllers (slurm.conf, the control plane's workloads) is checked.
  const restapis = new Map<string, RestapiSwitch>();
  await runSlurmOperators({ specs: specs.map((s) => s.name), clusters, k, tools, processes, report, tenants: tenants.map((t) => t.config.tenant.id), input, cleanups, mariadb, operatorFiles, restapis });

  // 6d. Each tenant's DNS, run for real: every tenant pod the API server admitted asks its
  // own tenant's alone, which answers the tenant's Services, no other tenant's, and refuses
  // every name outside the cluster itself.
  for (const [i, t] of tenants.entries()) {
    const id = t.config.tenant.id;
    const other = tenants[(i + 1) % tenants.length]?.config.tenant.id;
    const dns = slurmImage
      ? await startTenantDns({ tenantId: id, kc: c, cluster: clusters.get("central") as Cluster, sealed: input.sealed, binary: input.binaries.coredns, image: slurmImage.dir, dir: path.join(input.dir, "tenant-dns", id) })
      : { problem: `no Slurm image to run its pod in: ${input.image.missing ?? "not made"}`, stop: async () => {} };
    cleanups.unshift(dns.stop);
    report(step(`tenant ${id}: its own DNS runs on central as the fleet's Deployment ${TENANT_DNS.namespace}/${tenantDnsName(id)}, at the address the API server gave its Service`, !("problem" in dns), "problem" in dns ? dns.problem : dns.detail));
    const r = "problem" in dns ? { ok: false, detail: "its DNS does not run (above)" } : await tenantPodsDns(c, dns, id, other === id ? undefined : other);
    const refused = await unnamedResolverRefused(c, id);
    report(step(`tenant ${id}: its pods on central ask its own DNS alone (central's admission policy, reading that Service), which answers its Services, not ${other && other !== id ? `${other}'s` : "another tenant's"}, and refuses every name outside the cluster itself; a pod made for no resolver is refused`, r.ok && refused.ok, `${r.detail}; a pod made for no resolver: ${refused.detail}`));
  }

  // 6e. Each tenant namespace's NetworkPolicies select the pods the real operators made
  // (and each peer in the namespace is one of them): a policy on the wrong labels protects
  // nothing, an egress peer on the wrong labels leaves its flow closed.
  for (const t of tenants) {
    const ns = tenantNamespace(t.config.tenant.id);
    const policies = (await c.get<{ items: PolicyLike[] }>(["networkpolicies", "-n", ns]))?.items ?? [];
    const pods = (await c.get<{ items: { metadata: { labels?: Record<string, string> } }[] }>(["pods", "-n", ns]))?.items ?? [];
    const cronJobs = (await c.get<{ items: { spec: { jobTemplate: { spec: { template: { metadata?: { labels?: Record<string, string> } } } } } }[] }>(["cronjobs", "-n", ns]))?.items ?? [];
    const labels = [...pods.map((p) => p.metadata.labels ?? {}), ...cronJobs.map((j) => j.spec.jobTemplate.spec.template.metadata?.labels ?? {})];
    const unmatched = unmatchedSelectors(policies, labels);
    report(step(`tenant ${t.config.tenant.id}: its namespace's NetworkPolicies on central select the pods the operators made, and each peer is one of them`, policies.length > 0 && unmatched.length === 0,
      !policies.length ? `no NetworkPolicy in ${ns}` : unmatched.length ? unmatched.slice(0, 6).join("; ") : `${policies.length} policies over ${pods.length} pods and ${cronJobs.length} CronJob template${cronJobs.length === 1 ? "" : "s"} in ${ns}`));
    // The Slurm part enforces these policies on pods it knows by labels: the labels the operators gave the live pods.
    const known = Object.fromEntries(SLURM_PART_POLICY_PODS.map((p) => [p, controlPlanePodLabels(p)]));
    const unknown = labelsNoPodCarries(known, pods.map((p) => p.metadata.labels ?? {}));
    report(step(`tenant ${t.config.tenant.id}: the pods the Slurm part enforces its policies on carry the labels the operators gave the live pods in ${ns}`, pods.length > 0 && unknown.length === 0,
      unknown.length ? unknown.join("; ") : `${SLURM_PART_POLICY_PODS.join(", ")}: each label set carried by a live pod`));
    // The API server admitted every pod the operators made under the namespace's quota (its own
    // accounting, after the LimitRange's defaults): what they use of it.
    const quotas = (await c.get<{ items: { metadata: { name: string }; status?: { hard?: Record<string, string>; used?: Record<string, string> } }[] }>(["resourcequotas", "-n", ns]))?.items ?? [];
    const refused = (await c.run(["get", "events", "-n", ns, "--field-selector", "reason=FailedCreate", "-o", "custom-columns=M:.message", "--no-headers"])).stdout.split("\n").filter((l) => /exceeded quota|forbidden/i.test(l));
    const usage = quotas.flatMap((q) => Object.entries(q.status?.hard ?? {}).map(([k, hard]) => `${k} ${q.status?.used?.[k] ?? "?"}/${hard}`));
    // Each hardened container as the fleet asks it (the Slinky CR), as the operator made it (the
    // StatefulSet) and as the API server admitted its pod (after central's admission policies).
    type Sc = Record<string, unknown>;
    type PodSpec = { containers: { name: string; securityContext?: Sc }[]; initContainers?: { name: string; securityContext?: Sc }[] };
    const cr = async (kind: string) => (await c.get<{ spec: Record<string, { securityContext?: Sc }> }>([`${kind}.slinky.slurm.net`, SLURM_RELEASE, "-n", ns]))?.spec;
    const sts = async (name: string) => (await c.get<{ spec: { template: { spec: PodSpec } } }>(["statefulset", name, "-n", ns]))?.spec.template.spec;
    const pod = async (name: string) => (await c.get<{ spec: PodSpec }>(["pod", `${name}-0`, "-n", ns]))?.spec;
    const [ctldCr, dbdCr] = [await cr("controllers"), await cr("accountings")];
    const [ctldSts, dbdSts, ctldPod, dbdPod] = [await sts(SLINKY_WORKLOADS.controller.name), await sts(SLINKY_WORKLOADS.accounting.name), await pod(SLINKY_WORKLOADS.controller.name), await pod(SLINKY_WORKLOADS.accounting.name)];
    const made = (spec: PodSpec | undefined, name: string) => [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])].find((x) => x.name === name)?.securityContext;
    const lost = (ctld: PodSpec | undefined, dbd: PodSpec | undefined) => [
      ...droppedSecurity(ctldCr?.slurmctld?.securityContext, made(ctld, "slurmctld")).map((d) => `slurmctld ${d}`),
      ...droppedSecurity(ctldCr?.logfile?.securityContext, made(ctld, "logfile")).map((d) => `logfile ${d}`),
      ...droppedSecurity(dbdCr?.slurmdbd?.securityContext, made(dbd, "slurmdbd")).map((d) => `slurmdbd ${d}`),
    ];
    const [byOperator, admitted] = [lost(ctldSts, dbdSts), lost(ctldPod, dbdPod)];
    report(step(`tenant ${t.config.tenant.id}: its daemons on central run with the securityContext the fleet asks (central's admission policy sets back what slurm-operator v1.2.1 drops)`, !!ctldPod && !!dbdPod && admitted.length === 0,
      !ctldPod || !dbdPod ? `no pod ${SLINKY_WORKLOADS.controller.name}-0 or ${SLINKY_WORKLOADS.accounting.name}-0 in ${ns}`
        : [admitted.length ? `the admitted pods lose: ${admitted.join("; ")}` : "slurmctld, its logfile sidecar and slurmdbd as asked in the admitted pods",
          byOperator.length ? `set back by ${SLURM_DAEMON_PRIVILEGE_POLICY} (the operator's StatefulSets lose: ${byOperator.join("; ")})` : "the operator's StatefulSets keep it"].join("; ")));
    report(step(`tenant ${t.config.tenant.id}: the operators' pods are admitted under its namespace's ResourceQuota and LimitRange on central`, quotas.length > 0 && refused.length === 0 && pods.length > 0,
      !quotas.length ? `no ResourceQuota in ${ns}` : refused.length ? `refused: ${[...new Set(refused)].slice(0, 3).join(" | ")}` : `${pods.length} pods; used/hard: ${usage.join(", ")}`));
  }

  // 7. Every Secret a workload or custom resource names exists with the key it names.
  for (const [name, kc] of kubectl) {
    const missing = await missingSecretRefs(kc);
    report(step(`${name}: every Secret reference resolves (name and key)`, missing.length === 0, missing.length ? missing.slice(0, 8).join("; ") : "all resolve"));
  }

  // 7b. Drift on central: what contains a tenant, changed by hand, comes back by itself
  // (ArgoCD's self-heal of the guards' and the root Application); the same kind of edit to an
  // object of a RollingSync Application stays as it was left (the control: ArgoCD v3.4.4 turns
  // automated sync off for those, which is why the guards have a set of their own).
  await driftSteps(c, tenants[0].config.tenant.id, who, report);

  // 8. The application controller's shards: central's cluster on one pod, every tenant cluster
  // on the other (facts/central-host.ts ARGOCD_CONTROLLER_SHARDS), as each pod's metrics say.
  const servers = tenants.map((t) => tenantServer(t.plan)).sort();
  const expected = (ordinal: number) => (ordinal === ARGOCD_CONTROLLER_SHARDS.central ? [ARGOCD_IN_CLUSTER] : ordinal === ARGOCD_CONTROLLER_SHARDS.tenantClusters ? servers : []);
  const matches = (found: readonly { clusters: string[] | undefined }[]) => found.length === ARGOCD_CONTROLLER_SHARDS.replicas && found.every((s, i) => JSON.stringify(s.clusters) === JSON.stringify(expected(i)));
  // The controller refreshes its cluster metrics every 30 s: read again for a minute before judging.
  const readShards = () => controllerShards({ kc: c, namespace: ARGOCD_CHART.namespace, sealed: input.sealed });
  let shards = await readShards();
  await waitFor(async () => (matches(shards) ? true : ((shards = await readShards()), matches(shards) || undefined)), 60_000, 5000);
  const sharded = matches(shards);
  report(step(`${who}'s application controller in ${ARGOCD_CONTROLLER_SHARDS.replicas} shards: central's cluster on one pod, every tenant cluster on the other (each pod's argocd_cluster_info)`, sharded,
    shards.map((s) => `${s.pod}: ${s.clusters === undefined ? "no metrics" : s.clusters.join(", ") || "no cluster"}`).join("; ") || "no controller StatefulSet"));

  // 9. ArgoCD's cache of each tenant cluster lists with argocd-manager's credential (respectRBAC), in the log of the pod that caches it.
  for (const t of tenants) {
    const server = tenantServer(t.plan);
    const holder = shards.find((s) => s.clusters?.includes(server))?.pod;
    const controllerLog = holder ? processes.log(holder) : "";
    const refused = controllerLog.split("\n").filter((l) => l.includes(server) && /forbidden|failed to sync cluster/i.test(l));
    report(step(`tenant ${t.config.tenant.id}: ArgoCD's cache of its cluster lists everything with argocd-manager's credential (${who})`, holder !== undefined && refused.length === 0, !holder ? `no controller pod caches ${server}` : refused.length ? `${refused.length} refusals in ${holder}'s log: ${refused.slice(0, 3).join(" | ").slice(0, 600)}` : `no refusal for ${server} in ${holder}'s log (respectRBAC ${settings.respectRBAC || "unset"})`));
  }

  // 10. The scaling loop on each tenant cluster.
  const removals: { id: string; placed: Placed; since: number; watch: ReturnType<typeof watchRemoval> }[] = [];
  for (const t of tenants) {
    const id = t.config.tenant.id;
    const placed = await playScalingLoop({
      tenantId: id, kc: k(id), report,
      resync: () => refreshApplication(c, ARGOCD_CHART.namespace, `${id}-slurm`),
      slurmApp: `${id}-slurm`,
      agentNamespace: TENANT_NAMESPACES.edgeAgent, nodeSetNamespace: TENANT_NAMESPACES.slurm,
      operatorLog: () => processes.tail(`${id}-slurm-operator`, 3),
      operatorLogText: () => processes.log(`${id}-slurm-operator`),
      ...(restapis.has(id) ? { slurmrestd: restapis.get(id) } : {}),
    });
    if (placed) {
      result.slurmdPods.set(id, placed.pod);
      keep(handoverFiles(input.dir, id).slurmdPod, placed.pod);
      // The job done, the loop lowers the NodeSet again; Karpenter's removal is judged at the end (consolidateAfter).
      const lowered = await lowerNodeSet(k(id), TENANT_NAMESPACES.edgeAgent, TENANT_NAMESPACES.slurm, placed);
      if (lowered.problem) report(step(`tenant ${id}: the edge-agent lowers ${placed.nodeSet} to 0`, false, lowered.problem));
      else {
        const watch = watchRemoval(k(id), placed, lowered.at);
        cleanups.unshift(async () => watch.stop());
        removals.push({ id, placed, since: lowered.at, watch });
      }
    }
    // Its server replaced: the new one forgets the old one's Node and CiliumNode.
    await replacedServerForgets({ tenantId: id, kc: k(id), script: specs.find((s) => s.name === id)?.server.forgetPredecessors, dir: path.join(input.dir, "replaced-server", id), report });
  }
  // Central's volumes held to their sizes, each tenant's slurmctld state among them (the VM's kernel enforces XFS quotas).
  const dataVolume = resources(input.central).find((r) => r.type === "aws:ebs/volume:Volume");
  if (tenants.length > 1) await volumeLimitsHold({ kc: c, server: centralServer, dataVolumeGiB: Number(dataVolume?.inputs.size), tenants: [tenants[0].config.tenant.id, tenants[1].config.tenant.id], root: input.root, dir: path.join(input.dir, "volume-limits"), report });
  // 11. A fleet-wide chart change, as `fleet write` writes it: a new slurm chart version
  // published to its registry and the tenants' ApplicationSet committed with it (facts/charts.ts),
  // rolled out by ArgoCD canary first, each tenant's control plane before its slurmd. The new
  // version is the pinned chart repackaged (only its version differs). ArgoCD is told of the
  // commit as a git webhook tells it (a refresh of the root), not by waiting for its poll.
  const charts = path.join(input.dir, "charts-bumped");
  fs.mkdirSync(charts, { recursive: true });
  const slurmOrigin = gitops.origins.oci.find((r) => r.charts.some((x) => x.chart === CHARTS.slurm.chart));
  const rootName = String((pulumiObjects.find((o) => o.kind === "Application") as KubeObject).metadata.name);
  /** Publishes a slurm chart version (the pinned one repackaged, `extra` templates added), commits the ApplicationSet that pins it, and waits for ArgoCD's rollout. */
  const rollOutSlurm = async (version: string, extra: Record<string, string> = {}) => {
    const problems: string[] = [];
    const dir = path.join(charts, `${CHARTS.slurm.chart}-${version}`);
    if (version !== CHARTS.slurm.version && !fs.existsSync(dir)) {
      fs.cpSync(path.join(input.chartsDir, `${CHARTS.slurm.chart}-${CHARTS.slurm.version}`), dir, { recursive: true });
      const chartYaml = path.join(dir, "Chart.yaml");
      fs.writeFileSync(chartYaml, fs.readFileSync(chartYaml, "utf8").replace(/^version:.*$/m, `version: ${version}`));
      for (const [file, text] of Object.entries(extra)) fs.writeFileSync(path.join(dir, "templates", file), text);
      if (slurmOrigin) await publishChart(gitops, tools.helm, dir, slurmOrigin, path.join(charts, "packages")).catch((e: Error) => problems.push(e.message));
    }
    const since = new Date(Date.now() - 1000).toISOString().replace(/\.\d+Z$/, "Z");
    const file = yamlFile(`stack ${central.stack}`, tenantsApplicationSet(central.environment, central.scope, { repoUrl: central.fleet.repoUrl, revision: central.fleet.revision }, { ...CHARTS, slurm: { ...CHARTS.slurm, version } }));
    await commitToFleet(gitops, central.fleet.revision, { [tenantsApplicationSetPath(central.scope)]: file }, `fleet: slurm chart ${version}`).catch((e: Error) => problems.push(e.message));
    await c.run(["annotate", "--overwrite", "applications.argoproj.io", rootName, "-n", ARGOCD_CHART.namespace, `${REFRESH_ANNOTATION}=normal`]);
    // Settled: every Application the set generates carries the version and is Synced and
    // Healthy, or nothing has moved for the quiet period once the rollout began (a stopped
    // rollout). Before its first sync nothing moving is a rollout not yet started (ArgoCD on two
    // loaded cores took longer than the quiet period to begin a revert once): wait on to the timeout.
    let moved = Date.now();
    let seen = "";
    await waitFor(async () => {
      const r = await liveRollout(c, ARGOCD_CHART.namespace, TENANTS_APPLICATION_SET, progressive, since);
      const state = JSON.stringify(r.entries);
      if (state !== seen) [seen, moved] = [state, Date.now()];
      const slurmApps = (await c.get<{ items: { metadata: { name: string }; spec: { sources?: { chart?: string; targetRevision?: string }[] } }[] }>(["applications.argoproj.io", "-n", ARGOCD_CHART.namespace]))?.items.filter((a) => a.spec.sources?.some((x) => x.chart === CHARTS.slurm.chart)) ?? [];
      const carried = slurmApps.length > 0 && slurmApps.every((a) => a.spec.sources?.some((x) => x.chart === CHARTS.slurm.chart && x.targetRevision === version));
      if (carried && r.stoppedAt === undefined && r.entries.filter((e) => e.synced).length >= slurmApps.length) return true;
      return r.entries.some((e) => e.synced) && Date.now() - moved > ROLLOUT_QUIET_MS ? true : undefined;
    }, ROLLOUT_TIMEOUT_MS, 3000);
    const r = await liveRollout(c, ARGOCD_CHART.namespace, TENANTS_APPLICATION_SET, progressive, since);
    return { r, problems };
  };
  /** Per tenant, how many of its Slurm objects (NodeSets on its cluster, its Controller on central) come from this chart version. */
  const fromChart = async (version: string) => {
    const counts = new Map<string, { on: number; all: number }>();
    for (const t of tenants) {
      const nodeSets = await k(t.config.tenant.id).get<{ items: KubeObject[] }>(["nodesets.slinky.slurm.net", "-n", TENANT_NAMESPACES.slurm]);
      const controllers = await c.get<{ items: KubeObject[] }>(["controllers.slinky.slurm.net", "-n", tenantNamespace(t.config.tenant.id)]);
      const all = [...(nodeSets?.items ?? []), ...(controllers?.items ?? [])];
      counts.set(t.config.tenant.id, { on: all.filter((o) => o.metadata.labels?.["helm.sh/chart"] === `${CHARTS.slurm.chart}-${version}`).length, all: all.length });
    }
    return counts;
  };

  /**
   * The Applications a chart change touches: those that install the Slurm chart. RollingSync
   * may also sync an unchanged Application of a later step when its comparison expires (ArgoCD
   * v3.4.4 did, once, during a stopped rollout): it applies what it applied before, and says
   * nothing of where the change went.
   */
  const slurmChartApps = async () => new Set(((await c.get<{ items: { metadata: { name: string }; spec: { sources?: { chart?: string }[] } }[] }>(["applications.argoproj.io", "-n", ARGOCD_CHART.namespace]))?.items ?? []).filter((a) => a.spec.sources?.some((x) => x.chart === CHARTS.slurm.chart)).map((a) => a.metadata.name));
  const resynced = (r: RolloutResult, touched: ReadonlySet<string>) => r.entries.filter((e) => e.synced && !touched.has(e.name)).map((e) => e.name);

  const good = `${CHARTS.slurm.version}-journey`;
  const bump = await rollOutSlurm(good);
  const touched = await slurmChartApps();
  const after = await fromChart(good);
  const labelled = [...after].map(([t, n]) => `${t}: ${n.on}/${n.all} Slurm objects from ${CHARTS.slurm.chart}-${good}`);
  for (const [t, n] of after) if (n.on !== n.all || !n.all) bump.problems.push(`${t}: ${n.all - n.on} Slurm objects not from the new chart`);
  const changed = bump.r.entries.filter((e) => e.synced && touched.has(e.name)).length;
  const rollout = rolloutStep(`a chart change (${CHARTS.slurm.chart} ${CHARTS.slurm.version} -> ${good}) committed to the fleet rolls out canary first, each control plane before its slurmd (${who})`, { ...bump.r, entries: bump.r.entries.filter((e) => touched.has(e.name)), problems: [...bump.r.problems, ...bump.problems] }, waveOf, changed || 1);
  report({ ...rollout, passed: rollout.passed && changed === tenants.length * 2, detail: `${rollout.detail}; ${labelled.join("; ")}` });

  // 12. A chart change that breaks the canary (one object the API server refuses): the rollout
  // stops there, and no later wave's tenant gets it; rolling back to the good version heals the canary.
  const broken = `${CHARTS.slurm.version}-journey-broken`;
  const canaries = tenants.filter((t) => t.config.rolloutWave === ROLLOUT_WAVES[0]).map((t) => t.config.tenant.id);
  const later = tenants.filter((t) => t.config.rolloutWave !== ROLLOUT_WAVES[0]).map((t) => t.config.tenant.id);
  const bad = await rollOutSlurm(broken, { "journey-broken.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Not_A_Valid_Name\ndata: {}\n" });
  const untouched = await fromChart(good);
  const reached = bad.r.entries.filter((e) => e.synced && touched.has(e.name)).map((e) => e.name);
  const stoppedWell = bad.r.stoppedAt !== undefined && reached.length > 0 && reached.every((n) => canaries.some((t) => n.startsWith(`${t}-`))) && later.every((t) => allFrom(untouched.get(t)));
  // A failed automated sync retried, as ArgoCD's controller counts its tries of the broken canary.
  const tries = ((await c.get<{ items: ApplicationObject[] }>(["applications.argoproj.io", "-n", ARGOCD_CHART.namespace]))?.items ?? [])
    .filter((a) => reached.includes(a.metadata.name)).map((a) => ({ name: a.metadata.name, phase: a.status?.operationState?.phase ?? "none", retries: a.status?.operationState?.retryCount ?? 0 }));
  const retried = tries.filter((t) => t.retries > 0);
  report(step("a failed automated sync is retried by ArgoCD (the broken canary's tries, as its controller counts them), and every Application has a retry policy", retried.length > 0 && noRetry.length === 0,
    [tries.length ? tries.map((t) => `${t.name}: ${t.phase}, retried ${t.retries} times`).join("; ") : "no Application took the broken change", noRetry.length ? `no retry policy (a failed first sync stays failed until a new commit): ${noRetry.slice(0, 6).join("; ")}` : "every Application has a retry policy"].join("; ")));
  report(step(
    `a chart change that breaks the canary stops the rollout before ${later.join(", ") || "the later waves"} (${who})`,
    stoppedWell && canaries.length > 0 && later.length > 0,
    `stopped at step ${bad.r.stoppedAt === undefined ? "none" : bad.r.stoppedAt + 1}; synced: ${reached.join(", ") || "none"} (${bad.r.entries.filter((e) => e.synced && !e.healthy).map((e) => e.name).join(", ") || "none"} not healthy)${resynced(bad.r, touched).length ? `; unchanged, synced again by RollingSync: ${resynced(bad.r, touched).join(", ")}` : ""}; ${later.map((t) => `${t}: ${untouched.get(t)?.on}/${untouched.get(t)?.all} Slurm objects still from ${good}`).join("; ")}`,
  ));
  const back = await rollOutSlurm(good);
  // Read back on every wave: each tenant's Slurm objects from the good chart again, none left on the broken one.
  const reverted = await fromChart(good);
  const healed = back.r.stoppedAt === undefined && back.r.entries.filter((e) => e.synced).every((e) => e.healthy) && back.r.entries.some((e) => e.synced) && tenants.every((t) => allFrom(reverted.get(t.config.tenant.id)));
  report(step(`a revert commit heals the canary and reaches every wave, with nobody touching ArgoCD (${who})`, healed, `${back.r.entries.filter((e) => e.synced).map((e) => e.name).join(", ")}; ${[...reverted].map(([t, n]) => `${t}: ${n.on}/${n.all} Slurm objects from ${CHARTS.slurm.chart}-${good}`).join("; ")}${back.r.problems.length ? `; ${back.r.problems.join("; ")}` : ""}`));

  // 13. RollingSync's gate on External Secrets: a commit naming a key no plan creates, held at the canary; then its revert.
  await secretGateSteps({ c, argocdNamespace: ARGOCD_CHART.namespace, gitops, branch: central.fleet.revision, repository: input.repository, scope: central.scope, canaries, later, who, report });

  // 14. Karpenter's consolidation of the nodes it launched for the scaling loop, emptied since.
  for (const r of removals) report(await nodeRemovedStep(r.id, r.placed, r.since, r.watch, karpenters.get(r.id)?.process ? processes.log(karpenters.get(r.id)?.process as string) : ""));
}

/** Hand-made changes on central to one tenant's guards, its DNS binding and (the control) its users ConfigMap; then what ArgoCD made of them. */
async function driftSteps(c: Kubectl, id: string, who: string, report: (s: JourneyStep) => void): Promise<void> {
  const ns = tenantNamespace(id);
  const app = (addon: string) => c.get<ApplicationObject>(["applications.argoproj.io", `${id}-${addon}`, "-n", ARGOCD_CHART.namespace]);
  const [guards, manifests] = [await app(GUARDS_ADDON), await app(CONTROL_PLANE_MANIFESTS_ADDON)];
  const policy = managedObject(guards, "NetworkPolicy");
  const quota = managedObject(guards, "ResourceQuota");
  const users = managedObject(manifests, "ConfigMap");
  const binding: Managed = { kind: "MutatingAdmissionPolicyBinding", name: tenantPodDnsBindingName(id) };
  // Each must be there to change: a guards' Application that manages no policy or quota fails the step, never shrinks it.
  const missing = (kind: string): Drift => ({ what: kind, make: async () => ({ code: 1, stderr: "" }), absent: `${id}-${GUARDS_ADDON} manages no ${kind}` });
  const drifts: Drift[] = [
    policy ? { what: `NetworkPolicy ${ns}/${policy.name} deleted`, object: policy, make: (kc: Kubectl) => kc.run(["delete", "networkpolicy", policy.name, "-n", ns]) } : missing("NetworkPolicy"),
    quota ? { what: `ResourceQuota ${ns}/${quota.name} raised (requests.cpu 64, pods 1000)`, object: quota, make: (kc: Kubectl) => kc.run(["patch", "resourcequota", quota.name, "-n", ns, "--type=merge", "-p", JSON.stringify({ spec: { hard: { "requests.cpu": "64", pods: "1000" } } })]) } : missing("ResourceQuota"),
    { what: `MutatingAdmissionPolicyBinding ${binding.name} deleted`, object: binding, make: (kc: Kubectl) => kc.run(["delete", "mutatingadmissionpolicybinding", binding.name]) },
  ];
  // Both Applications Synced first: "as before" is git's state, not a drift already there.
  const unsynced = [guards, manifests].filter((a) => a?.status?.sync?.status !== "Synced").map((a) => a?.metadata.name ?? "(missing)");
  const original = users ? (await c.get<{ data?: Record<string, string> }>(["configmap", users.name, "-n", ns]))?.data ?? {} : {};
  // Its group file: a line of it changes who a user is on the login, and nothing the journey reads later.
  const key = "group" in original ? "group" : undefined;
  const control: Drift | undefined = users && key ? { what: `ConfigMap ${ns}/${users.name} data.${key} edited`, object: users, make: (kc: Kubectl) => kc.run(["patch", "configmap", users.name, "-n", ns, "--type=merge", "-p", JSON.stringify({ data: { [key]: `${original[key]}journey-drift:x:64999:\n` } })]) } : undefined;
  const outcomes = await watchDrifts(c, [...drifts, ...(control ? [control] : [])], SELF_HEAL_BOUND_MS);
  const sync = (await app(CONTROL_PLANE_MANIFESTS_ADDON))?.status?.sync?.status;
  // The control's object set back by hand: the Slurm part reads nothing live, but later steps list this namespace.
  const restored = users && key ? await c.run(["patch", "configmap", users.name, "-n", ns, "--type=merge", "-p", JSON.stringify({ data: { [key]: original[key] } })]) : undefined;
  if (restored && restored.code !== 0) report(step(`tenant ${id}: the control's ConfigMap set back by hand`, false, restored.stderr.trim()));
  if (unsynced.length) report(step(`tenant ${id}: its guards and manifests Synced before the drift`, false, `not Synced: ${unsynced.join(", ")}`));
  report(healedStep(`tenant ${id}: what contains it on central, changed by hand (a NetworkPolicy deleted, its quota raised, its pods' DNS binding deleted), is put back by ${who} itself within ${SELF_HEAL_BOUND_MS / 1000} s (${id}-${GUARDS_ADDON} and the root Application self-heal)`, outcomes.slice(0, drifts.length), SELF_HEAL_BOUND_MS));
  report(note(`tenant ${id}: the same kind of edit to an object of a RollingSync Application (${id}-${CONTROL_PLANE_MANIFESTS_ADDON}), which ${who} does not self-heal; its ApplicationSet controller re-syncs it only by the accident of finding its spec changed at every reconcile`, rollingSyncDriftDetail(control ? outcomes[drifts.length] : undefined, sync, SELF_HEAL_BOUND_MS)));
}

/** Every one of a tenant's Slurm objects from the chart version counted, and at least one (0/0 proves nothing). Pure. */
export function allFrom(n: { on: number; all: number } | undefined): boolean {
  return !!n && n.all > 0 && n.on === n.all;
}

/** The first of the loopback ports the clusters' slurm-operators listen on (two each). */
const OPERATOR_PORT = 18081;
/** mariadb-operator's probe and metrics ports on the sealed namespace's loopback (after the slurm-operators'). */
const MARIADB_OPERATOR_PORT = 18091;
/** First of each tenant's Karpenter's two loopback ports (metrics, health probes). */
const KARPENTER_PORT = 18101;

/**
 * The real slurm-operator on each cluster as its ServiceAccount; then, per tenant, the
 * slurm.conf it writes on both sides, and every image any cluster's workloads run.
 */
async function runSlurmOperators(o: {
  specs: readonly string[];
  clusters: ReadonlyMap<string, Cluster>;
  k: (name: string) => Kubectl;
  tools: Tools;
  processes: Processes;
  report: (s: JourneyStep) => void;
  tenants: readonly string[];
  input: FleetJourneyInput;
  cleanups: (() => Promise<void>)[];
  mariadb?: CentralMariadb;
  operatorFiles: Map<string, OperatorFiles>;
  /** Each tenant's slurmrestd, for the scaling loop to stop and start. */
  restapis: Map<string, RestapiSwitch>;
}): Promise<void> {
  const who = `slurm-operator ${o.tools.slurmOperatorVersion}`;
  // A tenant's operator dials its slurmrestd by its Service's name; here that name is an
  // address of the sealed namespace forwarded into the tenant's Slurm namespace (tenant-slurm.ts).
  const restapiAddress = (t: string) => restapiForwardAddress(o.tenants.indexOf(t));
  const names = (name: string) => {
    if (name === "central") return undefined;
    const hosts = path.join((o.clusters.get(name) as Cluster).dir, "hosts");
    const sealed = fs.readFileSync(path.join(NETNS_ETC, o.input.sealed.name, "hosts"), "utf8");
    fs.writeFileSync(hosts, `${sealed}${restapiAddress(name)} ${SLINKY_WORKLOADS.restapi.name}.${TENANT_NAMESPACES.slurm}\n`);
    return { hosts, sealed: o.input.sealed, binary: o.input.binaries.slurmOperator };
  };
  /** Where each cluster's operator writes a Controller's slurm.conf: central per tenant namespace, a tenant cluster in its slurm namespace. */
  const configs = (name: string) => (name === "central" ? o.tenants.map((t) => tenantNamespace(t)) : [TENANT_NAMESPACES.slurm]);
  const slurmConf = async (name: string, ns: string) => {
    const cm = await o.k(name).get<{ data?: Record<string, string> }>(["configmap", SLURM_CONFIG_MAP, "-n", ns]);
    return cm?.data?.["slurm.conf"];
  };
  for (const [i, name] of o.specs.entries()) {
    const started = Date.now();
    const named = names(name);
    const r = await startSlurmOperator({ cluster: o.clusters.get(name) as Cluster, kc: o.k(name), namespace: TENANT_NAMESPACES.slurmOperator, tools: o.tools, processes: o.processes, port: OPERATOR_PORT + 2 * i, ...(named ? { names: named } : {}) });
    const made = r.process ? await waitFor(async () => {
      if (!o.processes.alive(r.process as string)) return false;
      for (const ns of configs(name)) if (!(await slurmConf(name, ns))) return undefined;
      return true;
    }, 90_000, 1000) : false;
    const forbidden = r.process ? rbacRefusals(o.processes.log(r.process)) : [];
    const ok = made === true && forbidden.length === 0;
    o.report(step(`${name}: ${who} reconciles its Controllers as its ServiceAccount (chart RBAC)`, ok, ok
      ? `${configs(name).map((ns) => `${ns}/${SLURM_CONFIG_MAP}`).join(", ")} written in ${((Date.now() - started) / 1000).toFixed(1)} s`
      : r.problem ?? (forbidden.length ? `refused by its RBAC: ${forbidden.slice(0, 3).join(" | ")}` : `no ${SLURM_CONFIG_MAP} in ${configs(name).join(", ")} after 90 s: ${o.processes.tail(r.process as string)}`)));
  }
  for (const t of o.tenants) {
    const central = slurmConfValues((await slurmConf("central", tenantNamespace(t))) ?? "").ClusterName;
    const own = slurmConfValues((await slurmConf(t, TENANT_NAMESPACES.slurm)) ?? "").ClusterName;
    o.report(step(`tenant ${t}: its slurmd's slurm.conf names the cluster its slurmctld on central runs (${who} on both sides)`, !!central && central === own,
      `central ${tenantNamespace(t)}/${SLURM_CONFIG_MAP}: ClusterName=${central ?? "(none)"}; ${t} ${TENANT_NAMESPACES.slurm}/${SLURM_CONFIG_MAP}: ClusterName=${own ?? "(none)"}`));
  }
  // Each tenant's slurmctld (central's operator's StatefulSet) and slurmrestd (its own operator's Deployment), for real.
  for (const t of o.tenants) {
    const started = Date.now();
    const image = o.input.image.image;
    if (!image) {
      o.report({ ...step(`tenant ${t}: its slurmctld and slurmdbd (central) and slurmrestd (its cluster) run as ${who} made them (Slurm 26.05)`, false, o.input.image.missing ?? "no Slurm image"), ...(process.env.CI ? {} : { skipped: true }) });
      continue;
    }
    const slurm = await startTenantSlurm({ tenantId: t, index: o.tenants.indexOf(t), image, central: o.k("central"), tenant: o.k(t), sealed: o.input.sealed, dir: o.input.dir, mariadb: o.mariadb?.pod(tenantNamespace(t)) });
    o.cleanups.push(slurm.stop);
    if (slurm.operatorFiles) {
      o.operatorFiles.set(t, slurm.operatorFiles);
      keep(handoverFiles(o.input.dir, t).operatorFiles, slurm.operatorFiles);
    }
    if (slurm.slurmrestd && !slurm.problem) o.restapis.set(t, slurm.slurmrestd);
    o.report(step(`tenant ${t}: its slurmctld and slurmdbd (central) and slurmrestd (its cluster) run as ${who} made them (Slurm 26.05)`, !slurm.problem, `${slurm.problem ?? slurm.detail} (${((Date.now() - started) / 1000).toFixed(1)} s)`));
  }
  const unpinned: string[] = [];
  let images = 0;
  for (const name of o.specs) {
    for (const kind of ["deployments", "statefulsets", "daemonsets", "jobs", "cronjobs", "pods"]) {
      const list = await o.k(name).get<{ items: { metadata: { name: string; namespace: string }; spec: PodHolder }[] }>([kind, "-A"]);
      for (const w of list?.items ?? []) {
        const pod = podSpecOf(kind, w.spec);
        for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
          images++;
          const why = unpinnedImage(c.image);
          if (why) unpinned.push(`${name} ${kind} ${w.metadata.namespace}/${w.metadata.name} ${c.name}: ${why}`);
        }
      }
    }
  }
  o.report(step("every image the clusters' workloads (Jobs and CronJobs among them) and the operator's pods run is pinned (a tag or a digest, never latest)", unpinned.length === 0, unpinned.length ? [...new Set(unpinned)].slice(0, 8).join("; ") : `${images} container images on ${o.specs.join(", ")}`));
}

interface PodSpec {
  containers: { name: string; image: string }[];
  initContainers?: { name: string; image: string }[];
}
type PodHolder = PodSpec | { template: { spec: PodSpec } } | { jobTemplate: { spec: { template: { spec: PodSpec } } } };

/** The pod spec a workload of this kind (as `kubectl get <kind>` names it) runs: a pod's own, a template's, a CronJob's job template's. Pure. */
export function podSpecOf(kind: string, spec: PodHolder): PodSpec {
  if (kind === "pods") return spec as PodSpec;
  if (kind === "cronjobs") return (spec as { jobTemplate: { spec: { template: { spec: PodSpec } } } }).jobTemplate.spec.template.spec;
  return (spec as { template: { spec: PodSpec } }).template.spec;
}

/**
 * No API server of the journey would dial outside loopback with its flags and every object the
 * journey gives it (outbound.ts): webhook configurations are stored, not called.
 */
function outboundStep(servers: readonly { name: string; args: readonly string[]; admissionConfig?: string }[], objects: readonly KubeObject[]): JourneyStep {
  const found = servers.flatMap((s) => outboundDials(s.args, objects, s.admissionConfig).map((d) => `${s.name}: ${d}`));
  const webhooks = objects.filter((o) => /WebhookConfiguration$/.test(o.kind)).map((o) => `${o.kind}/${o.metadata.name}`);
  return step(
    "no API server dials outside loopback (webhook admission off: the configurations are stored, never called)",
    found.length === 0,
    found.length ? found.slice(0, 8).join("; ") : `${servers.map((s) => s.name).join(", ")} over ${objects.length} objects; ${webhooks.length} webhook configurations stored (${[...new Set(webhooks)].join(", ") || "none"}); no APIService, no conversion webhook`,
  );
}

/**
 * A rollout as a journey step: every Application synced and healthy, no canary Application
 * after a later wave's, and each tenant's control plane before its slurmd.
 */
function rolloutStep(name: string, r: RolloutResult, waveOf: ReadonlyMap<string, string>, expected: number): JourneyStep {
  const synced = r.entries.filter((e) => e.synced);
  const tenantOf = (app: string) => [...waveOf.keys()].find((t) => app.startsWith(`${t}-`)) ?? "";
  const rank = (app: string) => ROLLOUT_WAVES.indexOf(waveOf.get(tenantOf(app)) as (typeof ROLLOUT_WAVES)[number]);
  const outOfOrder = synced.filter((e, i) => synced.slice(i + 1).some((later) => rank(later.name) < rank(e.name)));
  const slurmd = synced.filter((e, i) => e.name.endsWith("-slurm") && synced.slice(i + 1).some((x) => x.name === `${tenantOf(e.name)}-control-plane`));
  const unhealthy = synced.filter((e) => !e.healthy).map((e) => e.name);
  const ok = r.progressive && r.problems.length === 0 && r.stoppedAt === undefined && synced.length >= expected && outOfOrder.length === 0 && slurmd.length === 0 && unhealthy.length === 0;
  const order = [...new Set(synced.map((e) => `${tenantOf(e.name)} (${waveOf.get(tenantOf(e.name))})`))].join(" then ");
  const detail = [
    `${synced.length} Applications synced in ${new Set(synced.map((e) => e.step)).size} steps: ${order}`,
    `order: ${synced.map((e) => e.name).join(", ")}`,
    r.stoppedAt !== undefined ? `STOPPED at step ${r.stoppedAt + 1}: ${unhealthy.join(", ")} not healthy` : "",
    outOfOrder.length ? `OUT OF WAVE ORDER: ${outOfOrder.map((e) => e.name).join(", ")}` : "",
    slurmd.length ? `SLURMD BEFORE ITS CONTROL PLANE: ${slurmd.map((e) => e.name).join(", ")}` : "",
    ...r.problems.slice(0, 5),
  ].filter(Boolean).join("; ");
  return step(name, ok, detail);
}

/** Every `{name, key}` Secret reference in workloads' pod templates and custom resources, unresolved. */
async function missingSecretRefs(kc: Kubectl): Promise<string[]> {
  const secrets = await kc.get<{ items: { metadata: { name: string; namespace: string }; data?: Record<string, string> }[] }>(["secrets", "-A"]);
  const have = new Map((secrets?.items ?? []).map((s) => [`${s.metadata.namespace}/${s.metadata.name}`, new Set(Object.keys(s.data ?? {}))]));
  const kinds = ["deployments", "statefulsets", "daemonsets", "nodesets.slinky.slurm.net", "controllers.slinky.slurm.net", "restapis.slinky.slurm.net", "accountings.slinky.slurm.net", "loginsets.slinky.slurm.net", "mariadbs.k8s.mariadb.com"];
  const missing: string[] = [];
  for (const kind of kinds) {
    const list = await kc.get<{ items: KubeObject[] }>([kind, "-A"]);
    for (const o of list?.items ?? []) {
      const ns = String(o.metadata.namespace);
      walkRefs(o.spec, "", (where, name, key) => {
        const keys = have.get(`${ns}/${name}`);
        if (!keys) missing.push(`${o.kind}/${o.metadata.name} (${ns}) ${where}: Secret ${name} does not exist`);
        else if (key && !keys.has(key)) missing.push(`${o.kind}/${o.metadata.name} (${ns}) ${where}: Secret ${name} has no key ${key}`);
      });
    }
  }
  return missing;
}

/** Calls back for each Secret reference: secretKeyRef/*KeyRef {name,key} (not a ConfigMap's), secret volumes, envFrom secretRef. */
export function walkRefs(v: unknown, at: string, found: (where: string, name: string, key?: string) => void): void {
  if (!v || typeof v !== "object") return;
  if (Array.isArray(v)) return v.forEach((x, i) => walkRefs(x, `${at}[${i}]`, found));
  for (const [key, value] of Object.entries(v as Record<string, unknown>)) {
    const here = at ? `${at}.${key}` : key;
    const ref = value as { name?: unknown; key?: unknown; secretName?: unknown; optional?: unknown } | null;
    // A reference its operator generates (mariadb-operator's `generate: true`) is not the fleet's to deliver.
    if (ref && typeof ref === "object" && !Array.isArray(ref) && ref.optional !== true && (ref as { generate?: unknown }).generate !== true) {
      // A ConfigMap's key (configMapKeyRef, mariadb-operator's myCnfConfigMapKeyRef) is no Secret reference.
      if (/KeyRef$/.test(key) && !/configMapKeyRef$/i.test(key) && typeof ref.name === "string") found(here, ref.name, typeof ref.key === "string" ? ref.key : undefined);
      else if (key === "secret" && typeof ref.secretName === "string") found(here, ref.secretName);
      else if (key === "secretRef" && typeof ref.name === "string" && at.endsWith("]")) found(here, ref.name, typeof ref.key === "string" ? ref.key : undefined);
    }
    walkRefs(value, here, found);
  }
}

function kubeMinor(k3sVersion: string): string {
  return k3sVersion.replace(/^v/, "").replace(/\+.*$/, "");
}

async function whyNot(kc: Kubectl, name: string, ns: string): Promise<string> {
  const h = await health(kc, "Deployment", `deployment/${name}`, ns, 1000);
  return h.reason || h.status;
}

/** `helm install` as Pulumi's Release runs it: CRDs first, then everything, then wait for workloads. */
async function helmInstall(kc: Kubectl, manifests: readonly Manifest[], namespace: string): Promise<string[]> {
  const problems: string[] = [];
  const ordered = syncSteps(manifests.map((m) => ({ ...m.object, manifest: m }))).flatMap((s) => s.objects.map((o) => o.manifest));
  const crds = ordered.filter((m) => m.object.kind === "CustomResourceDefinition");
  for (const m of [...crds, ...ordered.filter((x) => x.object.kind !== "CustomResourceDefinition")]) {
    const r = await kc.run(["apply", "--server-side", "--field-manager=helm", "-n", namespace, "-f", "-"], { input: m.text });
    if (r.code !== 0) problems.push(`${m.object.kind}/${m.object.metadata.name}: ${r.stderr.trim().split("\n").slice(-1)[0]}`);
    if (m.object.kind === "CustomResourceDefinition") await kc.run(["wait", "--for=condition=Established", "--timeout=60s", `crd/${m.object.metadata.name}`]);
  }
  for (const m of ordered.filter((x) => ["Deployment", "StatefulSet"].includes(x.object.kind))) {
    const h = await health(kc, m.object.kind, `${m.object.kind.toLowerCase()}/${m.object.metadata.name}`, namespace, 60_000);
    if (h.status !== "Healthy") problems.push(`${m.object.kind}/${m.object.metadata.name} ${h.status}: ${h.reason}`);
  }
  return problems;
}

