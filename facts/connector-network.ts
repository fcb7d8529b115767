/**
 * Connector networking as data: the slurmrestd service the control plane reaches over VPC
 * Lattice, the names both sides derive, and the VPC endpoints a cluster without internet
 * needs, per partition (the ParallelCluster no-internet guide's China table).
 */
import { platformName } from "./project";
import type { Partition } from "./regions";

/** slurmrestd on the ParallelCluster head node, as the connector inventory sets it up. */
export const SLURMRESTD = { port: 6830, protocol: "HTTP", healthPath: "/openapi/v3" } as const;

/** The Lattice listener: HTTPS on Lattice's own certificate, so the hop across accounts is encrypted. */
export const LATTICE_LISTENER = { port: 443, protocol: "HTTPS" } as const;

/** Clients of a Lattice service: the data plane calls this action, signed with SigV4. */
export const LATTICE_INVOKE_ACTION = "vpc-lattice-svcs:Invoke";

/** The connector's Lattice service name. */
export function latticeServiceName(clusterName: string): string {
  return `clusterra-${clusterName}`;
}

/** The central role that calls connector services (cluster-api assumes it). */
export function connectorBridgeRoleName(environment: string): string {
  return platformName(environment, "connector-bridge");
}

/** The role in the customer's account the control plane assumes to read the cluster's JWT key. */
export function controlPlaneRoleName(clusterName: string): string {
  return `clusterra-${clusterName}-control-plane`;
}

/** ExternalId of that role: per environment and cluster, so one customer's stack cannot name another's. */
export function connectorExternalId(environment: string, clusterName: string): string {
  return platformName(environment, "connector", clusterName);
}

/**
 * Where Lattice's traffic to targets comes from: the AWS-managed prefix list of that name
 * (169.254.171.0/24). The head node's group must admit it on slurmrestd's port; that rule
 * is on the customer's own group, a prerequisite the install guide gives as one command.
 */
export function latticePrefixListName(region: string): string {
  return `com.amazonaws.${region}.vpc-lattice`;
}

export interface EndpointSpec {
  readonly service: string;
  readonly type: "Interface" | "Gateway";
  /** Only when the cluster uses a directory service. */
  readonly directoryServiceOnly?: boolean;
  /** The China partition names this service `cn.com.amazonaws.<region>.<service>`. */
  readonly chinaPrefixed?: boolean;
  readonly why: string;
}

/** What a ParallelCluster without internet needs, and what the connector adds (sqs for the hooks). */
export const NO_INTERNET_ENDPOINTS: readonly EndpointSpec[] = [
  { service: "logs", type: "Interface", why: "the CloudWatch agent on every node ships cluster logs" },
  { service: "cloudformation", type: "Interface", chinaPrefixed: true, why: "cfn-hup and cfn-signal on the head node" },
  { service: "ec2", type: "Interface", chinaPrefixed: true, why: "the head node launches, describes and terminates compute nodes" },
  { service: "secretsmanager", type: "Interface", directoryServiceOnly: true, why: "the directory service's bind password" },
  { service: "sqs", type: "Interface", why: "the Slurm job hooks send job events to the connector's queue" },
  { service: "s3", type: "Gateway", why: "cluster configuration, bootstrap scripts and packages" },
  { service: "dynamodb", type: "Gateway", why: "ParallelCluster's compute-fleet status table" },
];

/** A service's regional endpoint host, as `kms:ViaService` names it (China ends in .com.cn). */
export function regionalServiceHost(partition: Partition, region: string, service: string): string {
  return `${service}.${region}.amazonaws.com${partition === "aws-cn" ? ".cn" : ""}`;
}

/** The endpoint service name of one service in one region. */
export function endpointServiceName(partition: Partition, region: string, spec: EndpointSpec): string {
  return `${partition === "aws-cn" && spec.chinaPrefixed ? "cn." : ""}com.amazonaws.${region}.${spec.service}`;
}

/** ParallelCluster settings a cluster without internet requires (pcluster update-cluster applies them). */
export const NO_INTERNET_SLURM_DNS = { DisableManagedDns: true, UseEc2Hostnames: true } as const;

/** Where the job hooks are installed on the head node, and the file they read their settings from. */
export const HOOK_INSTALL = {
  script: "/opt/clusterra/bin/clusterra-job-event",
  settings: "/etc/clusterra/connector.env",
  log: "/var/log/clusterra/job-events.log",
  spool: "/var/spool/clusterra/job-events",
} as const;
