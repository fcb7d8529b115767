/** Compute: IMDSv2, encrypted volumes, no SSH keys, no secrets in user data. */
import { AWS_LIMITS } from "../../facts/aws-limits";
import type { PolicyResource } from "@pulumi/policy";
import { gunzipSync } from "zlib";
import { asArray, asRecord, indexTargets, isNonEmptyString, isTrue, known, ofTypes, resourcePolicy, stackPolicy, type PackPolicy, type TargetIndex } from "./util";

export const INSTANCE = "aws:ec2/instance:Instance";
export const LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate";
export const SPOT_INSTANCE_REQUEST = "aws:ec2/spotInstanceRequest:SpotInstanceRequest";
export const LAUNCH_CONFIGURATION = "aws:ec2/launchConfiguration:LaunchConfiguration";
/** Types that launch a host from their own arguments (and, for instances and spot requests, maybe a launch template). */
const HOST_TYPES = [INSTANCE, SPOT_INSTANCE_REQUEST, LAUNCH_CONFIGURATION, LAUNCH_TEMPLATE] as const;

/** Reads a resource's input, unknown values (preview) as undefined. */
function prop(r: PolicyResource, field: string): unknown {
  return known<unknown>(() => r.props[field], undefined);
}

/**
 * The launch template an instance or spot request is launched from, when it is in the
 * deployment: `launchTemplate.id` / `.name` matched against the templates' id and name,
 * or the engine's property dependencies of `launchTemplate`. `named` is set when the
 * resource names a template at all.
 */
function launchTemplateOf(r: PolicyResource, templates: TargetIndex): { named: boolean; template?: PolicyResource } {
  if (r.type !== INSTANCE && r.type !== SPOT_INSTANCE_REQUEST) return { named: false };
  const spec = asRecord(prop(r, "launchTemplate"));
  const deps = r.propertyDependencies?.launchTemplate ?? [];
  if (!spec && deps.length === 0) return { named: false };
  for (const v of [spec?.id, spec?.name]) {
    if (!isNonEmptyString(v)) continue;
    const found = templates.byId.get(v)?.[0];
    if (found) return { named: true, template: found };
  }
  for (const d of deps) {
    const found = templates.byUrn.get(d.urn);
    if (found) return { named: true, template: found };
  }
  return { named: true };
}

function templatesIndex(resources: readonly PolicyResource[]): TargetIndex {
  return indexTargets(ofTypes(resources, LAUNCH_TEMPLATE), ["id", "name", "arn"]);
}

/** The httpTokens problem of some metadata options, or undefined when IMDSv2 is required (or IMDS is off). */
function imdsProblem(mo: Record<string, unknown> | undefined): string | undefined {
  if (mo?.httpEndpoint === "disabled") return undefined;
  if (mo?.httpTokens === "required") return undefined;
  return `metadataOptions.httpTokens is ${mo?.httpTokens === undefined ? "not set (IMDSv1 allowed)" : `"${String(mo.httpTokens)}"`}`;
}

export const ec2Imdsv2Required = stackPolicy("ec2-imdsv2-required", {
  description:
    'Instances, spot requests, launch configurations and launch templates require IMDSv2 (metadataOptions.httpTokens = "required"); ' +
    "an instance launched from a launch template of the same deployment may take it from the template.",
  remediation: 'set metadataOptions: { httpTokens: "required" }, with httpPutResponseHopLimit 1 unless pods must reach the node\'s credentials',
  validate: (args, report) => {
    const templates = templatesIndex(args.resources);
    // A resource with values still unknown (preview) is skipped, not allowed to abort the check.
    for (const r of ofTypes(args.resources, ...HOST_TYPES)) known(() => checkImds(r), undefined);

    function checkImds(r: PolicyResource): void {
      const own = asRecord(prop(r, "metadataOptions"));
      const ownProblem = imdsProblem(own);
      if (ownProblem === undefined) return;
      const lt = launchTemplateOf(r, templates);
      if (lt.template && own?.httpTokens === undefined) {
        const fromTemplate = imdsProblem(asRecord(prop(lt.template, "metadataOptions")));
        if (fromTemplate !== undefined) report(`its launch template ${lt.template.name} does not require IMDSv2 (${fromTemplate})`, r.urn);
        return;
      }
      report(lt.named && !lt.template ? `${ownProblem}, and its launch template is not in this deployment` : ownProblem, r.urn);
    }
  },
});

/** Problems of a launch template's block device mappings (every EBS mapping encrypted, and at least one). */
function templateVolumeProblems(lt: PolicyResource): string[] {
  const mappings = asArray(prop(lt, "blockDeviceMappings"));
  if (mappings.length === 0) return ["no blockDeviceMappings: the root volume's encryption is left to the AMI and account default"];
  const out: string[] = [];
  mappings.forEach((m, i) => {
    const ebs = asRecord(asRecord(m)?.ebs);
    if (ebs && !isTrue(ebs.encrypted)) out.push(`blockDeviceMappings[${i}].ebs.encrypted is not true`);
  });
  return out;
}

export const ec2VolumesEncrypted = stackPolicy("ec2-volumes-encrypted", {
  description:
    "The root and data volumes of instances, spot requests and launch configurations, and every EBS mapping of a launch template, are encrypted; " +
    "an instance launched from a launch template of the same deployment may take its root volume from the template.",
  remediation: "set rootBlockDevice.encrypted: true and encrypted: true on every EBS block device (launch templates: blockDeviceMappings[].ebs.encrypted)",
  validate: (args, report) => {
    const templates = templatesIndex(args.resources);
    for (const r of ofTypes(args.resources, ...HOST_TYPES)) known(() => checkVolumes(r), undefined);

    function checkVolumes(r: PolicyResource): void {
      if (r.type === LAUNCH_TEMPLATE) {
        for (const p of templateVolumeProblems(r)) report(p, r.urn);
        return;
      }
      const root = asRecord(prop(r, "rootBlockDevice"));
      if (root) {
        if (!isTrue(root.encrypted)) report("rootBlockDevice.encrypted is not true", r.urn);
      } else {
        const lt = launchTemplateOf(r, templates);
        if (lt.template) {
          for (const p of templateVolumeProblems(lt.template)) report(`its launch template ${lt.template.name}: ${p}`, r.urn);
        } else {
          report(`rootBlockDevice is not declared${lt.named ? " and its launch template is not in this deployment" : ""}, so the root volume's encryption is left to the AMI and account default`, r.urn);
        }
      }
      asArray(prop(r, "ebsBlockDevices")).forEach((d, i) => {
        if (!isTrue(asRecord(d)?.encrypted)) report(`ebsBlockDevices[${i}].encrypted is not true`, r.urn);
      });
    }
  },
});

export const ebsVolumeEncrypted = resourcePolicy("ebs-volume-encrypted", {
  description: "Standalone EBS volumes are encrypted.",
  remediation: "set encrypted: true (and kmsKeyId for a customer-managed key)",
  types: ["aws:ebs/volume:Volume"],
  validate: (args, report) => {
    if (!isTrue(args.props.encrypted)) report("encrypted is not true");
  },
});

export const ec2NoSshKey = resourcePolicy("ec2-no-ssh-key", {
  description: "No SSH key pairs: hosts are reached through SSM Session Manager, not keys.",
  remediation: "remove keyName / the KeyPair and use SSM Session Manager (AmazonSSMManagedInstanceCore on the instance role)",
  types: [INSTANCE, LAUNCH_TEMPLATE, SPOT_INSTANCE_REQUEST, LAUNCH_CONFIGURATION, "aws:ec2/keyPair:KeyPair"],
  validate: (args, report) => {
    if (args.type === "aws:ec2/keyPair:KeyPair") report("an EC2 key pair is created");
    else if (isNonEmptyString(args.props.keyName)) report(`keyName "${args.props.keyName}" installs an SSH key`);
  },
});

/**
 * A value that is a reference, not a secret: a shell expansion or substitution, an ARN
 * (`DB_SECRET=arn:aws:secretsmanager:...`), a file path, or a template placeholder.
 */
const NOT_A_LITERAL = String.raw`(?!["']?(?:\$|\x60|arn:|/|\{\{|<))`;
/** `NAME=value`, or `NAME: value` (YAML; the space keeps `arn:aws:secretsmanager:...` from reading as one). */
const ASSIGN = String.raw`(?:\s*=\s*|\s*:\s+)`;
/** Names of settings that hold secrets (DB_PASSWORD, MYSQL_ROOT_PASSWORD, K3S_TOKEN, api_key, client_secret, ...). */
const SECRET_NAME = String.raw`[A-Za-z0-9_.-]*(?:password|passwd|pwd|secret|token|api[_-]?key|private[_-]?key)[A-Za-z0-9_.-]*`;

/** What secret-looking user data looks like. Messages name the kind, never the value. */
const SECRET_PATTERNS: readonly { readonly what: string; readonly re: RegExp }[] = [
  { what: "an AWS access key id", re: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/ },
  { what: "an AWS secret access key", re: /aws_secret_access_key\s*[=:]\s*["']?[A-Za-z0-9/+=]{40}/i },
  { what: "a private key", re: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----/ },
  // NAME=value / NAME: value, the name anywhere in an identifier (DB_PASSWORD, MYSQL_ROOT_PASSWORD)
  { what: "a literal password", re: new RegExp(String.raw`(?:^|[^A-Za-z0-9_])[A-Za-z0-9_]*(?:password|passwd|pwd)[A-Za-z0-9_]*${ASSIGN}${NOT_A_LITERAL}["']?[^\s"'$\x60]{3,}`, "im") },
  {
    what: "a literal token or API key",
    re: new RegExp(String.raw`(?:^|[^A-Za-z0-9_])[A-Za-z0-9_]*(?:token|secret|api[_-]?key)[A-Za-z0-9_]*${ASSIGN}${NOT_A_LITERAL}["']?[A-Za-z0-9_\-./+=:]{12,}`, "im"),
  },
  // JSON / YAML with quoted keys: "password": "hunter2"
  { what: "a literal secret in a JSON field", re: new RegExp(String.raw`"${SECRET_NAME}"\s*:\s*"${NOT_A_LITERAL}[^"\s$]{3,}"`, "i") },
  // Command-line flags: --password x, --token=x (not --token-file, --password-stdin)
  { what: "a literal secret on a command line", re: new RegExp(String.raw`--(?:password|passwd|token|secret|api-key|client-secret)(?:=|\s+)${NOT_A_LITERAL}["']?[^\s"'$\x60-][^\s"'$\x60]{2,}`, "i") },
  { what: "a GitHub token", re: /\bgh[pousr]_[A-Za-z0-9]{36}\b/ },
  { what: "a Slack token", re: /\bxox[abpr]-[A-Za-z0-9-]{10,}/ },
];

/** Bytes as readable text, gunzipped first when they are gzip; undefined when they are not text. */
function bytesToText(bytes: Buffer): string | undefined {
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      bytes = gunzipSync(bytes);
    } catch {
      return undefined;
    }
  }
  const s = bytes.toString("utf8");
  return /[\x00-\x08\x0e-\x1f]/.test(s) ? undefined : s;
}

/** Base64 text decoded (gunzipped when the bytes are gzip) when it decodes to readable text, else undefined. */
function decodeBase64(v: string): string | undefined {
  const t = v.replace(/\s+/g, "");
  if (t.length === 0 || t.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(t)) return undefined;
  return bytesToText(Buffer.from(t, "base64"));
}

/**
 * Every text user data carries: the value itself, decoded from base64 / gzip, and each part
 * of a MIME multipart document (cloud-init's format for several parts), each part decoded
 * by its Content-Transfer-Encoding and gunzipped, nested multiparts included.
 */
export function userDataTexts(value: string, depth = 0): string[] {
  const text = decodeBase64(value) ?? value;
  const boundary = /^Content-Type:\s*multipart\/[a-z-]+;[^]*?boundary="?([^"\r\n;]+)"?/im.exec(text)?.[1];
  if (boundary === undefined || depth > 4) return [text];
  const out: string[] = [];
  const sep = `--${boundary}`;
  for (const part of text.split(sep).slice(1)) {
    if (part.startsWith("--")) break;
    const split = /\r?\n\r?\n/.exec(part);
    const headers = split ? part.slice(0, split.index) : "";
    const body = split ? part.slice(split.index + split[0].length) : part;
    const encoding = /^Content-Transfer-Encoding:\s*(\S+)/im.exec(headers)?.[1]?.toLowerCase();
    const decoded = encoding === "base64" ? (bytesToText(Buffer.from(body.replace(/\s+/g, ""), "base64")) ?? body) : body;
    out.push(...(/^Content-Type:\s*multipart\//im.test(headers) ? userDataTexts(`${headers}\n\n${decoded}`, depth + 1) : userDataTexts(decoded, depth + 1)));
  }
  return out.length > 0 ? out : [text];
}

/** Kinds of secret found in a text, with the 1-based line of the first hit. */
export function findSecrets(text: string): { what: string; line: number }[] {
  const out: { what: string; line: number }[] = [];
  for (const { what, re } of SECRET_PATTERNS) {
    const m = re.exec(text);
    if (m) out.push({ what, line: text.slice(0, m.index + (m[0].length - m[0].trimStart().length)).split("\n").length });
  }
  return out;
}

export const ec2NoSecretsInUserData = resourcePolicy("ec2-no-secrets-in-user-data", {
  description:
    "User data (plain, base64, gzip + base64, and every part of a MIME multipart document) of instances, spot requests, launch configurations and launch templates carries no AWS keys, " +
    "private keys, passwords (DB_PASSWORD=..., \"password\": \"...\", --password x) or tokens: it is readable by anyone who can describe the instance. " +
    "References (shell variables, ARNs, file paths) are not secrets.",
  remediation: "keep the secret in Secrets Manager and fetch it at boot with the instance role (aws secretsmanager get-secret-value)",
  types: [INSTANCE, LAUNCH_TEMPLATE, SPOT_INSTANCE_REQUEST, LAUNCH_CONFIGURATION],
  validate: (args, report) => {
    // Either field may hold plain text or base64; scan the decoded text when it decodes.
    for (const field of ["userData", "userDataBase64"]) {
      const value = args.props[field];
      if (!isNonEmptyString(value)) continue;
      const texts = userDataTexts(value);
      texts.forEach((text, i) => {
        const part = texts.length > 1 ? ` MIME part ${i + 1}` : "";
        for (const { what, line } of findSecrets(text)) report(`${field}${part} contains ${what} (line ${line})`);
      });
    }
  },
});

/** User data's size as EC2 counts it: the raw bytes, before base64 (a launch template's and userDataBase64 are base64 already). Pure. */
export function userDataBytes(type: string, field: string, value: string): number {
  const t = value.replace(/\s+/g, "");
  const base64 = (field === "userDataBase64" || type === LAUNCH_TEMPLATE) && t.length % 4 === 0 && /^[A-Za-z0-9+/]+={0,2}$/.test(t);
  return base64 ? Buffer.from(t, "base64").length : Buffer.byteLength(value, "utf8");
}

export const ec2UserDataWithinLimit = resourcePolicy("ec2-user-data-within-limit", {
  description: `User data of instances, spot requests, launch configurations and launch templates is at most ${AWS_LIMITS.userData.max} bytes before base64: EC2 refuses more (${AWS_LIMITS.userData.source}), so the launch fails at deploy time. Checked wherever the user data is known (clusterra plan, pulumi up); a preview with unknown parts skips it.`,
  remediation: "keep in user data only what the instance alone can know; fetch the rest at boot with the instance role (SSM, S3), or compact it (JSON without indentation, gzip with cloud-init's gz+b64)",
  types: [INSTANCE, LAUNCH_TEMPLATE, SPOT_INSTANCE_REQUEST, LAUNCH_CONFIGURATION],
  validate: (args, report) => {
    for (const field of ["userData", "userDataBase64"]) {
      const value = args.props[field];
      if (!isNonEmptyString(value)) continue;
      const bytes = userDataBytes(args.type, field, value);
      if (bytes > AWS_LIMITS.userData.max) report(`${field} is ${bytes} bytes, over EC2's ${AWS_LIMITS.userData.max} (${bytes - AWS_LIMITS.userData.max} too many)`);
    }
  },
});

export const ebsDefaultEncryptionOn = resourcePolicy("ebs-default-encryption-on", {
  description: "The account's EBS encryption by default is not turned off (aws.ebs.EncryptionByDefault with enabled: false).",
  remediation: "set enabled: true (or drop the resource; new volumes should be encrypted whatever their template says)",
  types: ["aws:ebs/encryptionByDefault:EncryptionByDefault"],
  validate: (args, report) => {
    const v = args.props.enabled;
    if (v === false || v === "false") report("enabled is false: new volumes of the account are unencrypted unless each asks");
  },
});

export const COMPUTE_POLICIES: readonly PackPolicy[] = [
  ebsDefaultEncryptionOn,
  ec2Imdsv2Required,
  ec2VolumesEncrypted,
  ebsVolumeEncrypted,
  ec2NoSshKey,
  ec2NoSecretsInUserData,
  ec2UserDataWithinLimit,
];
