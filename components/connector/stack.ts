/** The connector stack: attaches an existing ParallelCluster in the customer's account. */
import * as pulumi from "@pulumi/pulumi";
import { getCallerIdentityOutput } from "@pulumi/aws/getCallerIdentity";
import type { ConnectorConfig } from "../../config/types";
import { connectorBridgeRoleName, connectorExternalId, controlPlaneRoleName } from "../../facts/connector-network";
import { emitFleetFiles } from "../fleet/writer";
import { StackKey } from "../security/stack-key";
import { stackProvider } from "../security/provider";
import { ConnectorAccess } from "./access";
import { connectorStackFiles } from "./cluster-files";
import { alarmTopicName } from "../../facts/alarms";
import { connectorKeyAliasName, PROJECT } from "../../facts/project";
import { Alarms } from "../observability/alarms";
import { EventPipeline } from "./event-pipeline";
import { NoInternetEndpoints } from "./no-internet";
import { SlurmrestdService } from "./slurmrestd-service";

/** What the central stack reads through its StackReference to each connector. */
export interface ConnectorOutputs {
  readonly clusterName: string;
  readonly accountId: string;
  readonly slurmrestdServiceArn: string;
  readonly resourceShareArn: string;
  readonly controlPlaneRoleArn: string;
  readonly externalId: string;
}

export function connectorStack(config: ConnectorConfig): Record<string, unknown> {
  const provider = stackProvider("aws", config);
  const opts = { providers: { aws: provider } };
  const accountId = getCallerIdentityOutput({}, { provider }).accountId;
  const c = config.connector;
  const scope = { region: config.region, partition: config.partition, accountId };
  const name = `connector-${c.clusterName}`;
  const bridgeRoleArn = `arn:${config.partition}:iam::${config.central.accountId}:role/${connectorBridgeRoleName(config.central.scope)}`;
  const externalId = connectorExternalId(config.central.scope, c.clusterName);

  const key = new StackKey(name, { ...scope, aliasName: connectorKeyAliasName(c.clusterName), purpose: `connector ${c.clusterName}: event queues, API token, logs, alarms`, logsService: true, eventsService: true, alarmsService: true }, { provider });
  const events = new EventPipeline(
    name,
    { ...scope, clusterName: c.clusterName, headNodeInstanceId: c.headNodeInstanceId, headNodeRoleName: c.headNodeRoleName, apiUrl: c.apiUrl, kmsKeyArn: key.keyArn },
    opts,
  );
  const access = new ConnectorAccess(
    name,
    {
      ...scope,
      roleName: controlPlaneRoleName(c.clusterName),
      centralAccountId: config.central.accountId,
      bridgeRoleArn,
      externalId,
      jwtSecretName: c.jwtSecretName,
      headNodeRoleName: c.headNodeRoleName,
      queueArn: events.queueArn,
      kmsKeyArn: key.keyArn,
    },
    opts,
  );
  const slurmrestd = new SlurmrestdService(
    name,
    { clusterName: c.clusterName, region: config.region, vpcId: c.vpcId, headNodeInstanceId: c.headNodeInstanceId, centralAccountId: config.central.accountId, bridgeRoleArn },
    opts,
  );
  const endpoints = c.noInternet
    ? new NoInternetEndpoints(
        name,
        {
          clusterName: c.clusterName, region: config.region, partition: config.partition, vpcId: c.vpcId, subnetIds: c.subnetIds,
          routeTableIds: c.routeTableIds ?? [], clusterSecurityGroupIds: c.clusterSecurityGroupIds, directoryService: c.directoryService,
        },
        opts,
      )
    : undefined;
  const facts = events.queueUrl.apply((eventQueueUrl) => ({ eventQueueUrl }));
  emitFleetFiles(facts.apply((f) => connectorStackFiles(config, f)));
  // Events the shipper could not deliver land in the dead-letter queue: each one pages.
  const alarms = new Alarms(
    name,
    {
      ...scope,
      topic: { name: alarmTopicName(`${PROJECT}-${c.clusterName}`), kmsKeyArn: key.keyArn },
      alarmPrefix: `${alarmTopicName(`${PROJECT}-${c.clusterName}`)}-`,
      deadLetterQueues: { events: events.deadLetterQueueArn.apply((a) => a.split(":").pop() as string) },
    },
    opts,
  );

  const outputs: { [K in keyof ConnectorOutputs]: pulumi.Input<ConnectorOutputs[K]> } = {
    clusterName: c.clusterName,
    accountId,
    slurmrestdServiceArn: slurmrestd.serviceArn,
    resourceShareArn: slurmrestd.resourceShareArn,
    controlPlaneRoleArn: access.controlPlaneRoleArn,
    externalId,
  };
  return {
    ...outputs,
    // What the facts file must say (`fleet check --outputs`).
    fleetFacts: facts,
    slurmrestdDns: slurmrestd.serviceDns,
    eventQueueArn: events.queueArn,
    eventQueueUrl: events.queueUrl,
    alarmTopicArn: alarms.topicArn,
    deadLetterQueueArn: events.deadLetterQueueArn,
    apiTokenSecretArn: events.tokenSecretArn,
    kmsKeyArn: key.keyArn,
    ...(endpoints ? { endpointSecurityGroupId: endpoints.securityGroupId, endpointIds: endpoints.endpointIds } : {}),
  };
}
