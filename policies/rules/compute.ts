/** Compute: IMDSv2, encrypted volumes, no SSH keys, no secrets in user data. */
import { asArray, asRecord, isNonEmptyString, isTrue, resourcePolicy, type PackResourcePolicy } from "./util";

export const INSTANCE = "aws:ec2/instance:Instance";
export const LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate";

export const ec2Imdsv2Required = resourcePolicy("ec2-imdsv2-required", {
  description: 'Instances and launch templates require IMDSv2 (metadataOptions.httpTokens = "required").',
  remediation: 'set metadataOptions: { httpTokens: "required", httpPutResponseHopLimit: 2 } (2 lets pods reach IMDS through the node)',
  types: [INSTANCE, LAUNCH_TEMPLATE],
  validate: (args, report) => {
    const mo = asRecord(args.props.metadataOptions);
    if (mo?.httpEndpoint === "disabled") return;
    if (mo?.httpTokens !== "required") report(`metadataOptions.httpTokens is ${mo?.httpTokens === undefined ? "not set (IMDSv1 allowed)" : `"${String(mo.httpTokens)}"`}`);
  },
});

export const ec2VolumesEncrypted = resourcePolicy("ec2-volumes-encrypted", {
  description: "An instance's root and data volumes, and every EBS mapping of a launch template, are encrypted.",
  remediation: "set rootBlockDevice.encrypted: true and encrypted: true on every EBS block device (launch templates: blockDeviceMappings[].ebs.encrypted)",
  types: [INSTANCE, LAUNCH_TEMPLATE],
  validate: (args, report) => {
    if (args.type === INSTANCE) {
      const root = asRecord(args.props.rootBlockDevice);
      if (!root) report("rootBlockDevice is not declared, so the root volume's encryption is left to the AMI and account default");
      else if (!isTrue(root.encrypted)) report("rootBlockDevice.encrypted is not true");
      asArray(args.props.ebsBlockDevices).forEach((d, i) => {
        if (!isTrue(asRecord(d)?.encrypted)) report(`ebsBlockDevices[${i}].encrypted is not true`);
      });
      return;
    }
    const mappings = asArray(args.props.blockDeviceMappings);
    if (mappings.length === 0) report("no blockDeviceMappings: the root volume's encryption is left to the AMI and account default");
    mappings.forEach((m, i) => {
      const ebs = asRecord(asRecord(m)?.ebs);
      if (ebs && !isTrue(ebs.encrypted)) report(`blockDeviceMappings[${i}].ebs.encrypted is not true`);
    });
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
  types: [INSTANCE, LAUNCH_TEMPLATE, "aws:ec2/keyPair:KeyPair"],
  validate: (args, report) => {
    if (args.type === "aws:ec2/keyPair:KeyPair") report("an EC2 key pair is created");
    else if (isNonEmptyString(args.props.keyName)) report(`keyName "${args.props.keyName}" installs an SSH key`);
  },
});

/** What secret-looking user data looks like. Messages name the kind, never the value. */
const SECRET_PATTERNS: readonly { readonly what: string; readonly re: RegExp }[] = [
  { what: "an AWS access key id", re: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/ },
  { what: "an AWS secret access key", re: /aws_secret_access_key\s*[=:]\s*["']?[A-Za-z0-9/+=]{40}/i },
  { what: "a private key", re: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----/ },
  { what: "a literal password", re: /\b(?:password|passwd|pwd)\s*[=:]\s*(?!["']?\$)["']?[^\s"'$]{3,}/i },
  { what: "a literal token or API key", re: /\b[A-Za-z0-9_]*(?:token|secret|api[_-]?key)\s*[=:]\s*(?!["']?\$)["']?[A-Za-z0-9_\-./+=:]{12,}/i },
  { what: "a GitHub token", re: /\bgh[pousr]_[A-Za-z0-9]{36}\b/ },
  { what: "a Slack token", re: /\bxox[abpr]-[A-Za-z0-9-]{10,}/ },
];

/** Base64 text decoded when it decodes to readable text, else undefined. */
function decodeBase64(v: string): string | undefined {
  const t = v.replace(/\s+/g, "");
  if (t.length === 0 || t.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(t)) return undefined;
  const s = Buffer.from(t, "base64").toString("utf8");
  return /[\x00-\x08\x0e-\x1f]/.test(s) ? undefined : s;
}

/** Kinds of secret found in a text, with the 1-based line of the first hit. */
export function findSecrets(text: string): { what: string; line: number }[] {
  const out: { what: string; line: number }[] = [];
  for (const { what, re } of SECRET_PATTERNS) {
    const m = re.exec(text);
    if (m) out.push({ what, line: text.slice(0, m.index).split("\n").length });
  }
  return out;
}

export const ec2NoSecretsInUserData = resourcePolicy("ec2-no-secrets-in-user-data", {
  description: "User data (plain or base64) carries no AWS keys, private keys, passwords or tokens: it is readable by anyone who can describe the instance.",
  remediation: "keep the secret in Secrets Manager and fetch it at boot with the instance role (aws secretsmanager get-secret-value)",
  types: [INSTANCE, LAUNCH_TEMPLATE],
  validate: (args, report) => {
    // Either field may hold plain text or base64; scan the decoded text when it decodes.
    const fields: [string, unknown][] =
      args.type === INSTANCE
        ? [["userData", args.props.userData], ["userDataBase64", args.props.userDataBase64]]
        : [["userData", args.props.userData]];
    for (const [field, value] of fields) {
      if (!isNonEmptyString(value)) continue;
      const text = decodeBase64(value) ?? value;
      for (const { what, line } of findSecrets(text)) report(`${field} contains ${what} (line ${line})`);
    }
  },
});

export const COMPUTE_POLICIES: readonly PackResourcePolicy[] = [
  ec2Imdsv2Required,
  ec2VolumesEncrypted,
  ebsVolumeEncrypted,
  ec2NoSshKey,
  ec2NoSecretsInUserData,
];
