/**
 * Slinky's real slurm-operator (v1.2.1, built by scripts/install-tools) on one of the
 * journey's clusters, as chart slurm-operator deploys it: the arguments of the Deployment
 * ArgoCD synced there, run as that Deployment's ServiceAccount (a token minted for it, so the
 * chart's RBAC is what it has), inside the sealed namespace. Its probes and metrics listen on
 * loopback ports of the journey's; nothing else of the Deployment changes.
 */
import { serviceAccountKubeconfig, type ControllerOnCluster } from "./cluster";
import type { SealedNetwork } from "./sealed-network";

/** The operator's Deployment, as chart slurm-operator names it. */
export const SLURM_OPERATOR_DEPLOYMENT = "slurm-operator";

/** The ConfigMap the operator writes a Controller's slurm.conf into (`<Controller>-config`; the fleet's Controllers are named slurm). */
export const SLURM_CONFIG_MAP = "slurm-config";

/** The address flags the journey gives its own loopback ports (probes, metrics). */
const ADDRESS_FLAGS = ["--health-addr", "--metrics-addr"] as const;

/**
 * A controller's container arguments with each address flag (`--health-addr`,
 * `--metrics-addr`) on 127.0.0.1 (`port`, `port + 1`): the clusters' operators share the
 * sealed namespace's loopback. Pure.
 */
export function pinAddressFlags(deploymentArgs: readonly string[], port: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < deploymentArgs.length; i++) {
    const a = deploymentArgs[i];
    const flag = ADDRESS_FLAGS.find((f) => a === f || a.startsWith(`${f}=`));
    if (!flag) {
      out.push(a);
      continue;
    }
    if (a === flag) i++;
    out.push(`${flag}=127.0.0.1:${port + ADDRESS_FLAGS.indexOf(flag)}`);
  }
  for (const flag of ADDRESS_FLAGS) if (!out.some((a) => a.startsWith(`${flag}=`))) out.push(`${flag}=127.0.0.1:${port + ADDRESS_FLAGS.indexOf(flag)}`);
  return out;
}

/** The slurm-operator's arguments: its address flags pinned, then the kubeconfig of its ServiceAccount. Pure. */
export function operatorArgs(deploymentArgs: readonly string[], port: number, kubeconfig: string): string[] {
  return [...pinAddressFlags(deploymentArgs, port), `--kubeconfig=${kubeconfig}`];
}

interface Deployment {
  spec: { template: { spec: { serviceAccountName?: string; containers: { name: string; args?: string[] }[] } } };
}

/** Starts the operator on a cluster where ArgoCD synced its Deployment; a reason when it cannot. */
export async function startSlurmOperator(o: ControllerOnCluster & {
  /**
   * The cluster's own names (its Services, a tenant's slurmrestd among them): a hosts file
   * bound over /etc/hosts for this operator alone, run as `binary` inside the sealed
   * namespace (every tenant's operator dials the same Service name).
   */
  readonly names?: { readonly hosts: string; readonly sealed: SealedNetwork; readonly binary: string };
}): Promise<{ process?: string; problem?: string }> {
  const d = await o.kc.get<Deployment>(["deployment", SLURM_OPERATOR_DEPLOYMENT, "-n", o.namespace]);
  const container = d?.spec.template.spec.containers.find((c) => c.name === SLURM_OPERATOR_DEPLOYMENT);
  if (!d || !container) return { problem: `no Deployment ${o.namespace}/${SLURM_OPERATOR_DEPLOYMENT} with a container of that name on ${o.cluster.name}` };
  const account = d.spec.template.spec.serviceAccountName ?? "default";
  const { kubeconfig, problem } = await serviceAccountKubeconfig(o.kc, o.cluster, o.namespace, account, "slurm-operator.kubeconfig");
  if (!kubeconfig) return { problem };
  const name = `${o.cluster.name}-slurm-operator`;
  const args = operatorArgs(container.args ?? [], o.port, kubeconfig);
  if (!o.names) o.processes.start(name, o.tools["slurm-operator"], args);
  else {
    // The hosts file as the script's first argument: no path is ever parsed by the shell.
    const argv = o.names.sealed.argv(["unshare", "--mount", "--propagation", "private", "sh", "-c", 'mount --bind "$1" /etc/hosts && shift && exec "$@"', "sh", o.names.hosts, o.names.binary, ...args]);
    o.processes.start(name, argv[0], argv.slice(1));
  }
  return { process: name };
}

/** `Key=Value` lines of a slurm.conf, the last one winning as slurmctld reads them. Pure. */
export function slurmConfValues(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const m = /^\s*([A-Za-z]+)\s*=\s*(.*?)\s*$/.exec(line.replace(/#.*$/, ""));
    if (m) out[m[1]] = m[2];
  }
  return out;
}

/** Why an image reference is not pinned (no tag, `latest`), or undefined when it is. Pure. */
export function unpinnedImage(image: string): string | undefined {
  if (/@sha256:[0-9a-f]{64}$/.test(image)) return undefined;
  const last = image.slice(image.lastIndexOf("/") + 1);
  const tag = last.includes(":") ? last.slice(last.indexOf(":") + 1) : undefined;
  if (tag === undefined) return `${image}: no tag (latest)`;
  if (tag === "latest") return `${image}: the latest tag`;
  return undefined;
}
