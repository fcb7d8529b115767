/** What a central stack publishes: tenant stacks read it through their StackReference. */

/** One tenant's way in to its slurmctld: the central host's address and the tenant's own NodePort there. */
export interface SlurmctldEndpointOutput {
  readonly host: string;
  readonly port: number;
}

export interface CentralOutputs {
  readonly accountId: string;
  readonly region: string;
  readonly environment: string;
  readonly vpcId: string;
  readonly vpcCidr: string;
  readonly privateSubnetIds: string[];
  readonly routeTableIds: string[];
  readonly hostInstanceId: string;
  readonly hostPrivateIp: string;
  readonly hostSecurityGroupId: string;
  /** Per tenant id: the role that tenant's stack assumes in the central account. */
  readonly tenantRoleArns: Readonly<Record<string, string>>;
  /** Per tenant id: its slurmctld endpoint. */
  readonly slurmctldEndpoints: Readonly<Record<string, SlurmctldEndpointOutput>>;
  readonly heartbeatEndpoint: string;
  /** The CA that signs cluster-api's listener certificate: the edge-agents verify with it. */
  readonly clusterApiCaPem: string;
  readonly kmsKeyArn: string;
  /** The operator subscribes to it: the host's and every tenant server's status checks. */
  readonly alarmTopicArn: string;
  /** Where tenant accounts share their EC2 metrics (cross-account observability). */
  readonly monitoringSinkArn: string;
  /** What the environment's facts file must say (`clusterra fleet check --outputs`). */
  readonly fleetFacts: { readonly clusterApiRoleArn: string };
}
