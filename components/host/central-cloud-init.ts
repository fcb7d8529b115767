/**
 * Cloud-init for the central K3s host, as a pure function of its inputs. It holds no
 * secret: the host creates its own keys, and publishes the admin kubeconfig to an SSM
 * SecureString (KMS-encrypted) where the program reads it back.
 */
import { stringify } from "yaml";
import { CENTRAL_K3S_RANGES, K3S_API_PORT } from "../../facts/contract";
import { k3sInstallScriptUrl, MUTATING_ADMISSION_POLICY_ARGS } from "../../facts/versions";
import { CENTRAL_POD_MAX_PIDS } from "../../facts/control-plane";
import { CLUSTER_API_NAMESPACE } from "../../facts/fleet";
import { EXTERNAL_SECRETS_NAMESPACE } from "../../facts/fleet";
import { hostMetricsNamespace } from "../../facts/alarms";
import { diskMetricsFiles, type HostMetrics } from "../observability/host-metrics";
import { bootFiles, mountDataVolumeScript, START_BOOT, type DataVolumeMount } from "./boot";
import { hostFilesBootFiles, hostFilesBootLines, type HostFile } from "./host-files";
import { volumeLimitsFiles } from "./volume-limits";

/** What the host writes as the parameter's description: which instance published it. */
export function publishedByDescription(instanceId: string): string {
  return `K3s admin kubeconfig published by ${instanceId}`;
}

/** Where K3s reads its admission configuration (Pod Security defaults). */
export const ADMISSION_CONFIG_PATH = "/etc/rancher/k3s/admission.yaml";

/**
 * Namespaces exempt from Pod Security "baseline": K3s's own system pods, and the two
 * platform services that run on the host network to reach the host role's credentials
 * (IMDS hop limit 1): cluster-api, and External Secrets, which assumes each tenant's
 * reader role from them. Only the platform project deploys into these namespaces; every
 * tenant namespace stays at baseline. (Per-pod roles through IRSA would narrow this
 * further: README, "Why External Secrets runs on the host network".)
 */
export const POD_SECURITY_EXEMPT_NAMESPACES = ["kube-system", CLUSTER_API_NAMESPACE, EXTERNAL_SECRETS_NAMESPACE] as const;

/**
 * Pod Security Admission for the whole cluster: "baseline" enforced everywhere else, so no
 * workload pod gets the host network, host paths, host ports or privileges: with the IMDS
 * hop limit of 1, no workload pod can reach the host role's credentials.
 */
export function admissionConfig(): Record<string, unknown> {
  return {
    apiVersion: "apiserver.config.k8s.io/v1",
    kind: "AdmissionConfiguration",
    plugins: [
      {
        name: "PodSecurity",
        configuration: {
          apiVersion: "pod-security.admission.config.k8s.io/v1",
          kind: "PodSecurityConfiguration",
          defaults: { enforce: "baseline", "enforce-version": "latest", audit: "restricted", "audit-version": "latest", warn: "restricted", "warn-version": "latest" },
          exemptions: { usernames: [], runtimeClasses: [], namespaces: [...POD_SECURITY_EXEMPT_NAMESPACES] },
        },
      },
    ],
  };
}

export interface K3sServerInit {
  readonly k3sVersion: string;
  readonly region: string;
  /** SSM parameter that receives the kubeconfig. */
  readonly kubeconfigParameter: string;
  /** KMS key (ARN or alias) that encrypts the parameter. */
  readonly kmsKeyId: string;
  /** EBS volume that holds /var/lib/rancher (datastore, local volumes); survives the instance. */
  readonly dataVolumeId: string;
  /** Kubernetes node name: fixed, so a replaced host takes over the same node and its volumes. */
  readonly nodeName: string;
  /** Node labels, e.g. the environment. */
  readonly nodeLabels: Readonly<Record<string, string>>;
  /** Its disk use, published to its own account. */
  readonly metrics: HostMetrics;
  /** The path of the parameters that deliver its scripts and units (centralHostFiles). */
  readonly filesPrefix: string;
}

/** What central's host publishes: the root file system and the data volume. */
export function centralHostMetrics(environment: string, region: string): HostMetrics {
  return { region, namespace: hostMetricsNamespace(environment, "central"), mounts: ["/", CENTRAL_DATA_MOUNT.mountPoint], counts: ["VolumesUnlimited"] };
}

/** K3s server flags, as /etc/rancher/k3s/config.yaml. */
export function k3sServerConfig(init: K3sServerInit): Record<string, unknown> {
  return {
    "write-kubeconfig-mode": "0600",
    "node-name": init.nodeName,
    // Secrets in the datastore are encrypted at rest (AES-CBC key generated on the host).
    "secrets-encryption": true,
    // No ingress or service load balancer: nothing on this host faces the internet.
    disable: ["traefik", "servicelb"],
    "protect-kernel-defaults": true,
    // K3s's defaults (10.42/16, 10.43/16) could collide with a tenant VPC routed over the peering.
    "cluster-cidr": CENTRAL_K3S_RANGES.clusterCidr,
    "service-cidr": CENTRAL_K3S_RANGES.serviceCidr,
    "cluster-dns": CENTRAL_K3S_RANGES.clusterDns,
    // Mutating admission policies: what an operator drops from the pods it makes is set back (components/fleet/central-admission.ts).
    "kube-apiserver-arg": ["anonymous-auth=false", "profiling=false", `admission-control-config-file=${ADMISSION_CONFIG_PATH}`, ...MUTATING_ADMISSION_POLICY_ARGS],
    // pod-max-pids: a fork bomb in a tenant's pod exhausts that pod, not the host.
    "kubelet-arg": ["streaming-connection-idle-timeout=5m", "make-iptables-util-chains=true", `pod-max-pids=${CENTRAL_POD_MAX_PIDS}`],
    "node-label": Object.entries(init.nodeLabels).map(([k, v]) => `${k}=${v}`),
    "https-listen-port": K3S_API_PORT,
  };
}

/**
 * The script that publishes the kubeconfig. Its server stays https://127.0.0.1:6443: the
 * API has no ingress rule, and operators reach it through a Session Manager port forward.
 * It runs on every boot, so certificates K3s renews at start reach SSM too; it retries until
 * SSM accepts (the role's policy or the network may lag the boot), and names the instance
 * in the parameter's description, so the program waits for this host's publication.
 */
export function publishKubeconfigScript(init: K3sServerInit): string {
  return [
    "#!/bin/bash",
    "set -euo pipefail",
    'INSTANCE_ID="$(cat /var/lib/cloud/data/instance-id)"',
    "until [ -s /etc/rancher/k3s/k3s.yaml ] && k3s kubectl get --raw /readyz >/dev/null 2>&1; do sleep 5; done",
    `until aws ssm put-parameter --region ${init.region} --name '${init.kubeconfigParameter}' --type SecureString --key-id '${init.kmsKeyId}' --tier Intelligent-Tiering --overwrite --description "${publishedByDescription("${INSTANCE_ID}")}" --value file:///etc/rancher/k3s/k3s.yaml >/dev/null; do`,
    '  echo "publishing the kubeconfig failed; retrying in 15 s" >&2',
    "  sleep 15",
    "done",
    "",
  ].join("\n");
}

/** Central's: all of /var/lib/rancher (datastore, images, every local volume), with XFS project quotas (each local volume's limit: volume-limits.ts). */
export const CENTRAL_DATA_MOUNT: DataVolumeMount = { mountPoint: "/var/lib/rancher", label: "k3s-data", options: ["prjquota"] };

/** The script that mounts the data volume (user data: it must run before anything else). */
export const CENTRAL_MOUNT_SCRIPT = "/usr/local/sbin/clusterra-mount-data";

/**
 * Central's boot (run by the boot unit until it completes): nothing installs unless the data
 * volume is mounted; K3s's install script at the pinned release's tag (it verifies the
 * binary's checksum), whose download fails until the NAT route is there; then the
 * kubeconfig's publication, which needs K3s.
 */
export function centralBootScript(k3sVersion: string): string {
  return [
    "#!/bin/bash",
    "set -euo pipefail",
    CENTRAL_MOUNT_SCRIPT,
    // Its scripts and units (the kubeconfig's publication, the disk metrics) before anything uses them.
    ...hostFilesBootLines(),
    `curl -sfL --retry 5 ${k3sInstallScriptUrl(k3sVersion)} -o /usr/local/sbin/k3s-install.sh`,
    `INSTALL_K3S_VERSION='${k3sVersion}' INSTALL_K3S_SKIP_SELINUX_RPM=true INSTALL_K3S_SELINUX_WARN=true sh /usr/local/sbin/k3s-install.sh server`,
    "systemctl enable clusterra-publish-kubeconfig.service",
    "systemctl start --no-block clusterra-publish-kubeconfig.service",
    "",
  ].join("\n");
}

/**
 * The host's scripts and units that change without replacing it (components/host/host-files.ts):
 * delivered from SSM under init.filesPrefix, written by its sync at boot and every few minutes.
 */
export function centralHostFiles(init: K3sServerInit): HostFile[] {
  const publishUnit = [
    "[Unit]",
    "Description=Publish the K3s kubeconfig to SSM Parameter Store",
    "After=k3s.service",
    "Requires=k3s.service",
    "",
    "[Service]",
    "Type=oneshot",
    // The script retries until SSM accepts: no start timeout may cut it short.
    "TimeoutStartSec=infinity",
    "ExecStart=/usr/local/sbin/clusterra-publish-kubeconfig",
    "",
    "[Install]",
    "WantedBy=multi-user.target",
    "",
  ].join("\n");
  return [
    { path: "/usr/local/sbin/clusterra-publish-kubeconfig", permissions: "0700", content: publishKubeconfigScript(init) },
    { path: "/etc/systemd/system/clusterra-publish-kubeconfig.service", permissions: "0644", content: publishUnit },
    // EBS grows the data volume in place when tenants join (no reboot): the file system follows within 15 minutes.
    { path: "/etc/systemd/system/clusterra-grow-data.service", permissions: "0644", content: "[Unit]\nDescription=Grow /var/lib/rancher to its volume's size\nRequiresMountsFor=/var/lib/rancher\n\n[Service]\nType=oneshot\nExecStart=/usr/sbin/xfs_growfs /var/lib/rancher\n" },
    { path: "/etc/systemd/system/clusterra-grow-data.timer", permissions: "0644", content: "[Unit]\nDescription=Grow /var/lib/rancher when its volume grew\n\n[Timer]\nOnBootSec=5min\nOnUnitActiveSec=15min\n\n[Install]\nWantedBy=timers.target\n" },
    ...diskMetricsFiles(init.metrics),
    ...volumeLimitsFiles(CENTRAL_DATA_MOUNT.mountPoint),
  ];
}

/** The whole #cloud-config document: what the host needs to start, and the sync that writes the rest. */
export function k3sServerUserData(init: K3sServerInit): string {
  const doc = {
    write_files: [
      { path: "/etc/rancher/k3s/config.yaml", permissions: "0600", content: stringify(k3sServerConfig(init)) },
      { path: ADMISSION_CONFIG_PATH, permissions: "0600", content: stringify(admissionConfig()) },
      {
        // K3s's protect-kernel-defaults needs these set before it starts.
        path: "/etc/sysctl.d/90-kubelet.conf",
        permissions: "0644",
        content: "vm.panic_on_oom=0\nvm.overcommit_memory=1\nkernel.panic=10\nkernel.panic_on_oops=1\n",
      },
      { path: CENTRAL_MOUNT_SCRIPT, permissions: "0700", content: mountDataVolumeScript(init.dataVolumeId, CENTRAL_DATA_MOUNT) },
      ...hostFilesBootFiles(init.region, init.filesPrefix),
      ...bootFiles(centralBootScript(init.k3sVersion), "Central's first boot: its data volume, its files, then K3s"),
      {
        // K3s never starts on an empty root-disk /var/lib/rancher (that would be a new cluster).
        path: "/etc/systemd/system/k3s.service.d/10-data-volume.conf",
        permissions: "0644",
        content: "[Unit]\nRequiresMountsFor=/var/lib/rancher\n",
      },
    ],
    // The host-files sync enables every timer it writes (the data volume's growth, the disk
    // metrics); enabled units start on every boot: K3s and the kubeconfig's publication survive a reboot.
    runcmd: [["sysctl", "--system"], ["systemctl", "daemon-reload"], [...START_BOOT]],
  };
  return `#cloud-config\n${stringify(doc)}`;
}
