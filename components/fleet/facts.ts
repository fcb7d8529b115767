/**
 * A stack's cloud facts in the fleet: the values only the cloud knows (addresses, ids, ARNs,
 * the CA), one file per stack, written by `pulumi up` (or `plan --write-fleet` offline). Every
 * other file a stack writes is derived from its stack file and these facts, so `clusterra
 * fleet write` regenerates them offline from what is committed, and `fleet check --render`
 * compares against that: a real deployment's ids pass. Each file is checked against its
 * kind's schema; a problem names the file, the key, the value and what is valid.
 */
import Ajv from "ajv";
import { parse } from "yaml";
import { NODE_PORT_RANGE, SRUN_PORT_BLOCK_SIZE } from "../../facts/contract";
import { yamlDocument } from "./yaml-file";
import { centralFleetPath, tenantFleetPath } from "../../facts/fleet";

/** What a tenant stack resolves in its own account for its fleet files (central's facts are central's file's). */
export interface TenantCloudFacts {
  /** The K3s server's private address. */
  readonly serverAddress: string;
  /** The tenant's stack key. */
  readonly kmsKeyArn: string;
  readonly fileSystemId: string;
  readonly accessPointId: string;
  readonly interruptionQueueName: string;
  readonly instanceProfileName: string;
  /** The tenant's slurmctld on central: its NodePort there (on central's host, a central fact). */
  readonly slurmctld: { readonly port: number };
  /**
   * Its srun block on central's host as deployed (its stack file's, when `pulumi up` ran):
   * `fleet check` refuses a stack file that moves it. Absent from facts written before it was
   * recorded (the next `pulumi up` writes it).
   */
  readonly srun?: { readonly from: number; readonly to: number };
  /** The tenant's Slurm keys in central's Secrets Manager, by ARN (cross-account reads need it). */
  readonly keySecretArns: { readonly slurm: string; readonly jwt: string };
  readonly externalSecretsRoleArn: string;
  readonly edgeAgentRoleArn: string;
  /** The role central's External Secrets assumes for this tenant's secrets on central. */
  readonly secretsRoleArn: string;
}

/** What a central stack resolves for its fleet files, and the tenants' charts read of central. */
export interface CentralCloudFacts {
  readonly clusterApiRoleArn: string;
  /** The central host's private address: slurmctld's NodePorts, the tenants' peering rules. */
  readonly centralHostIp: string;
  /** cluster-api's listener and the CA that signs it (the edge-agents' heartbeat). */
  readonly heartbeatEndpoint: string;
  readonly heartbeatCaPem: string;
}

/** What a connector stack resolves for its files. */
export interface ConnectorCloudFacts {
  readonly eventQueueUrl: string;
}

export interface CloudFactsByKind {
  readonly tenant: TenantCloudFacts;
  readonly central: CentralCloudFacts;
  readonly connector: ConnectorCloudFacts;
}
export type FactsKind = keyof CloudFactsByKind;

type Schema = Record<string, unknown>;
const obj = (properties: Record<string, Schema>): Schema => ({ type: "object", properties, required: Object.keys(properties), additionalProperties: false, description: `an object with keys ${Object.keys(properties).join(", ")}` });
const str = (pattern: string, description: string): Schema => ({ type: "string", pattern, description });
/** A whole ARN of the service: partition, region (or none), account, and a resource of ARN characters only (no space, quote or newline: facts reach config files and scripts). */
const ARN = (service: string) => str(`^arn:aws[a-z-]*:${service}:[a-z0-9-]*:[0-9]{12}:[A-Za-z0-9_+=,.@:/-]+$`, `an ARN of ${service} (arn:<partition>:${service}:<region>:<account>:<resource>)`);
const OCTET = "(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";
const IPV4 = str(`^(${OCTET}\\.){3}${OCTET}$`, "an IPv4 address");
const NAME = str("^[A-Za-z0-9_.:/+=@-]{1,256}$", "a resource name or id");
/** A port Kubernetes gives a NodePort Service (the tenant's slurmctld on central). */
const NODE_PORT = { type: "integer", minimum: NODE_PORT_RANGE.from, maximum: NODE_PORT_RANGE.to, description: `a NodePort from ${NODE_PORT_RANGE.from} to ${NODE_PORT_RANGE.to}` };

/** Each kind's facts file, as JSON Schema (structure and shape of each value). */
/** Facts a file may lack: written only by releases after the one that added them. */
const OPTIONAL_FACTS: Readonly<Partial<Record<FactsKind, readonly string[]>>> = { tenant: ["srun"] };

const CLOUD_FACTS_SCHEMAS: Readonly<Record<FactsKind, Schema>> = {
  tenant: obj({
    serverAddress: IPV4,
    kmsKeyArn: ARN("kms"),
    fileSystemId: str("^fs-[0-9a-f]+$", "an EFS file system id (fs-...)"),
    accessPointId: str("^fsap-[0-9a-f]+$", "an EFS access point id (fsap-...)"),
    interruptionQueueName: NAME,
    instanceProfileName: NAME,
    slurmctld: obj({ port: NODE_PORT }),
    srun: { ...obj({ from: NODE_PORT, to: NODE_PORT }), description: `the tenant's srun block on central: ${SRUN_PORT_BLOCK_SIZE} NodePorts, from and to` },
    keySecretArns: obj({ slurm: ARN("secretsmanager"), jwt: ARN("secretsmanager") }),
    externalSecretsRoleArn: ARN("iam"),
    edgeAgentRoleArn: ARN("iam"),
    secretsRoleArn: ARN("iam"),
  }),
  central: obj({
    clusterApiRoleArn: ARN("iam"),
    centralHostIp: IPV4,
    heartbeatEndpoint: str("^https://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~/-]*)?$", "an https:// URL: a host, a port, a path"),
    heartbeatCaPem: str("^-----BEGIN CERTIFICATE-----\\n[\\s\\S]+-----END CERTIFICATE-----\\n?$", "a PEM certificate"),
  }),
  connector: obj({ eventQueueUrl: str("^https://sqs\\.[^\\s]+$", "an SQS queue URL") }),
};

/** A tenant facts file's schema of one key (the tenant charts' values.schema.json reuse them). */
export function tenantFactSchema(key: keyof TenantCloudFacts): Schema {
  return (CLOUD_FACTS_SCHEMAS.tenant.properties as Record<string, Schema>)[key];
}

/** A central facts file's schema of one key (the tenant charts that read central's facts reuse them). */
export function centralFactSchema(key: keyof CentralCloudFacts): Schema {
  return (CLOUD_FACTS_SCHEMAS.central.properties as Record<string, Schema>)[key];
}

/** The facts file's name in its stack's folder. */
export const FACTS_FILE = "facts.yaml";

/** Where a stack's facts file is: beside its tenant's folders; in central's values/ (its root Application syncs the folder above). */
export function tenantFactsPath(scope: string, tenantId: string): string {
  return `${tenantFleetPath(scope, tenantId)}/${FACTS_FILE}`;
}
export function centralFactsPath(scope: string): string {
  return `${centralFleetPath(scope)}/values/${FACTS_FILE}`;
}

/** The key an offline plan's facts file carries, `true`: its ids are invented, no cloud holds them. */
export const OFFLINE_FACTS_KEY = "offline";

/**
 * A facts file as an offline plan (`clusterra plan --write-fleet`) writes it: said to be
 * offline in its header and by OFFLINE_FACTS_KEY, so `fleet check` refuses it for any stack
 * but the project's examples, and no pull request merges a tenant on invented ids.
 */
export function offlineFactsFile(text: string): string {
  const body = text.split("\n").slice(1).join("\n");
  const stack = /^# (\S+)'s cloud facts/.exec(text)?.[1] ?? "this stack";
  return `# ${stack}'s cloud facts, written OFFLINE by clusterra plan --write-fleet: invented ids, no cloud holds them; pulumi up writes the real ones.\n${body}${OFFLINE_FACTS_KEY}: true\n`;
}

/** Whether a facts file's text says it was written offline. */
export function isOfflineFacts(text: string): boolean {
  return new RegExp(`^${OFFLINE_FACTS_KEY}: true$`, "m").test(text);
}

/** The facts file's text. */
export function factsFile(stack: string, facts: CloudFactsByKind[FactsKind]): string {
  // Short: one per tenant. What a facts file is and where the rest comes from: fleet/README.md.
  return `# ${stack}'s cloud facts, written by pulumi up: the only fleet file the cloud resolves.\n${yamlDocument(facts)}`;
}

export interface FactsProblem {
  readonly key: string;
  readonly value: unknown;
  readonly problem: string;
}

const ajv = new Ajv({ allErrors: true, strict: false });
/** Each kind's schema, with the offline mark an offline plan adds (never required). */
const withOfflineMark = (schema: Schema): Schema => ({ ...schema, properties: { ...(schema.properties as Record<string, Schema>), [OFFLINE_FACTS_KEY]: { const: true, description: "true: written offline" } } });
/** Each kind's schema as its files are checked: the facts it may lack not required. */
const asChecked = (kind: FactsKind, schema: Schema): Schema => ({ ...schema, required: (schema.required as string[]).filter((k) => !(OPTIONAL_FACTS[kind] ?? []).includes(k)) });
const validators = Object.fromEntries(Object.entries(CLOUD_FACTS_SCHEMAS).map(([k, s]) => [k, ajv.compile(withOfflineMark(asChecked(k as FactsKind, s)))])) as Record<FactsKind, ReturnType<typeof ajv.compile>>;

/** A facts file's text checked against its kind's schema: the facts, or every problem at once. */
export function parseFacts<K extends FactsKind>(kind: K, text: string): { facts: CloudFactsByKind[K] } | { problems: FactsProblem[] } {
  let value: unknown;
  try {
    value = parse(text);
  } catch (e) {
    return { problems: [{ key: "(file)", value: undefined, problem: `is not YAML: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}` }] };
  }
  const validate = validators[kind];
  if (validate(value)) return { facts: value as CloudFactsByKind[K] };
  const at = (path: string) => path.split("/").filter(Boolean).join(".") || "(top)";
  const valueAt = (path: string) => path.split("/").filter(Boolean).reduce<unknown>((v, k) => (v && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined), value);
  const schemaAt = (path: string) => path.split("/").filter(Boolean).reduce<Schema | undefined>((s, k) => (s?.properties as Record<string, Schema> | undefined)?.[k], CLOUD_FACTS_SCHEMAS[kind]);
  return {
    problems: (validate.errors ?? []).map((e) => {
      if (e.keyword === "required") return { key: [at(e.instancePath), String(e.params.missingProperty)].filter((k) => k !== "(top)").join("."), value: undefined, problem: `is missing: ${String(schemaAt(`${e.instancePath}/${String(e.params.missingProperty)}`)?.description ?? "required")}` };
      if (e.keyword === "additionalProperties") return { key: [at(e.instancePath), String(e.params.additionalProperty)].filter((k) => k !== "(top)").join("."), value: undefined, problem: "is not a fact of this kind" };
      return { key: at(e.instancePath), value: valueAt(e.instancePath), problem: `must be ${String(schemaAt(e.instancePath)?.description ?? e.message)}` };
    }),
  };
}
