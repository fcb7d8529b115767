/** The connector stack: attaches an existing ParallelCluster in the customer's account. */
import { getCallerIdentityOutput } from "@pulumi/aws/getCallerIdentity";
import type { ConnectorConfig } from "../../config/types";
import { StackKey } from "../security/stack-key";
import { stackProvider } from "../security/provider";
import { EventPipeline } from "./event-pipeline";

export function connectorStack(config: ConnectorConfig): Record<string, unknown> {
  const provider = stackProvider("aws", config);
  const accountId = getCallerIdentityOutput({}, { provider }).accountId;
  const c = config.connector;
  const key = new StackKey(`connector-${c.clusterName}`, { region: config.region, partition: config.partition, accountId, aliasName: `connector/${c.clusterName}`, purpose: `connector ${c.clusterName}: event queues, logs`, logsService: true, eventsService: true }, { provider });
  const events = new EventPipeline(
    `connector-${c.clusterName}`,
    { clusterName: c.clusterName, apiUrl: c.apiUrl, region: config.region, partition: config.partition, accountId, kmsKeyArn: key.keyArn },
    { providers: { aws: provider } },
  );
  return { clusterName: c.clusterName, eventQueueArn: events.queueArn, eventQueueUrl: events.queueUrl, deadLetterQueueArn: events.deadLetterQueueArn, kmsKeyArn: key.keyArn };
}
