/**
 * What an edge-agent and cluster-api agree on for a heartbeat's proof of tenant
 * (facts/contract.ts HEARTBEAT_AUTH: the scheme, and what cluster-api checks): the same
 * values in the agent's shared values and cluster-api's, from the central stack's settings.
 */
import { HEARTBEAT_AUTH } from "../../facts/contract";
import { platformName } from "../../facts/project";
import { serviceEndpoint, type Partition } from "../../facts/regions";
import { edgeAgentRoleName } from "../../facts/tenant-cluster";

/** The central a heartbeat goes to. */
export interface HeartbeatScope {
  /** Its environment: the tenants' edge-agent roles are named in it. */
  readonly environment: string;
  /** Its scope (facts/project.ts centralScope): cluster-api's name, the audience. */
  readonly scope: string;
  /** Central's region: its STS endpoint is the one both sides name. */
  readonly region: string;
  readonly partition: Partition;
}

/** The agent's half: how it signs. Pure. */
export function heartbeatSigning(s: HeartbeatScope): Record<string, string | number> {
  return {
    scheme: HEARTBEAT_AUTH.scheme,
    // cluster-api's own name: a heartbeat signed for another central's cluster-api (another environment's, another cell's) is refused there.
    audience: platformName(s.scope, "cluster-api"),
    audienceHeader: HEARTBEAT_AUTH.audienceHeader,
    bodyDigestHeader: HEARTBEAT_AUTH.bodyDigestHeader,
    stsEndpoint: serviceEndpoint("sts", s.region, s.partition),
    // The region the signature is scoped to: central's, whatever region the agent runs in.
    stsRegion: s.region,
  };
}

/** cluster-api's half: the same, how old a signature may be, and whose it must be ({account}, {tenant}: the tenant the heartbeat claims, its account from the tenants table). Pure. */
export function heartbeatVerification(s: HeartbeatScope): Record<string, string | number> {
  return {
    ...heartbeatSigning(s),
    maxAgeSeconds: HEARTBEAT_AUTH.maxAgeSeconds,
    // The role's session as STS names it: any session name (the agent picks it), only that role.
    callerArnTemplate: `arn:${s.partition}:sts::{account}:assumed-role/${edgeAgentRoleName(s.environment, "{tenant}")}/*`,
  };
}
