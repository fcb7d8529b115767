/**
 * The pack's table: every policy's severity and the Checkov / Trivy rule it matches
 * ("none" when no public scanner has an equivalent). The rule modules take their
 * severity from here, and the README table is this table.
 */
import type { Severity } from "@pulumi/policy";

export interface PolicyFacts {
  readonly severity: Severity;
  /** Matching Checkov / Trivy rule IDs, or "none". */
  readonly equivalent: string;
  readonly group: "iam" | "network" | "compute" | "data" | "lambda" | "safety" | "isolation";
}

export const POLICY_FACTS = {
  // IAM
  "iam-no-wildcard-action": { group: "iam", severity: "critical", equivalent: "Checkov CKV_AWS_63, CKV_AWS_62; Trivy AVD-AWS-0057" },
  "iam-no-service-wildcard-on-any-resource": { group: "iam", severity: "high", equivalent: "Checkov CKV2_AWS_40 (iam:* only); Trivy AVD-AWS-0057" },
  "iam-no-wildcard-resource": { group: "iam", severity: "high", equivalent: "Checkov CKV_AWS_355 (CKV_AWS_356 for data sources); Trivy AVD-AWS-0057" },
  "iam-no-wildcard-principal": { group: "iam", severity: "critical", equivalent: "Checkov CKV_AWS_60 (trust), CKV_AWS_70 (S3), CKV_AWS_168 (SQS), CKV_AWS_33 (KMS)" },
  "iam-cross-account-trust-condition": { group: "iam", severity: "high", equivalent: "none" },
  "iam-passrole-scoped-to-service": { group: "iam", severity: "high", equivalent: "Trivy AVD-AWS-0342 (flags any PassRole); Checkov CKV_AWS_286 (partial)" },
  "iam-no-broad-managed-policy": { group: "iam", severity: "critical", equivalent: "Checkov CKV_AWS_274, CKV2_AWS_56" },
  "iam-no-privilege-escalation": { group: "iam", severity: "critical", equivalent: "Checkov CKV_AWS_286, CKV_AWS_287, CKV_AWS_110" },
  "iam-resource-policy-cross-account": { group: "iam", severity: "high", equivalent: "none" },
  "iam-no-user-access-keys": { group: "iam", severity: "high", equivalent: "Checkov CKV_AWS_273" },
  // Network
  "sg-no-public-ingress": { group: "network", severity: "critical", equivalent: "Checkov CKV_AWS_24, CKV_AWS_25, CKV_AWS_260, CKV_AWS_277; Trivy AVD-AWS-0107" },
  "ec2-no-public-ip": { group: "network", severity: "high", equivalent: "Checkov CKV_AWS_88; Trivy AVD-AWS-0009 (launch configurations)" },
  "subnet-no-auto-public-ip": { group: "network", severity: "high", equivalent: "Checkov CKV_AWS_130; Trivy AVD-AWS-0164" },
  "default-sg-closed": { group: "network", severity: "medium", equivalent: "Checkov CKV2_AWS_12; Trivy AVD-AWS-0173" },
  "peering-flows-match-contract": { group: "network", severity: "critical", equivalent: "none" },
  "lb-not-internet-facing": { group: "network", severity: "critical", equivalent: "Trivy AVD-AWS-0053" },
  "rds-not-publicly-accessible": { group: "network", severity: "critical", equivalent: "Checkov CKV_AWS_17; Trivy AVD-AWS-0180" },
  "eks-endpoint-not-public": { group: "network", severity: "high", equivalent: "Checkov CKV_AWS_38, CKV_AWS_39; Trivy AVD-AWS-0040, AVD-AWS-0041" },
  "vpc-endpoint-service-restricted": { group: "network", severity: "high", equivalent: "none" },
  // Compute
  "ec2-imdsv2-required": { group: "compute", severity: "high", equivalent: "Checkov CKV_AWS_79; Trivy AVD-AWS-0028, AVD-AWS-0130" },
  "ec2-volumes-encrypted": { group: "compute", severity: "high", equivalent: "Checkov CKV_AWS_8; Trivy AVD-AWS-0131" },
  "ebs-volume-encrypted": { group: "compute", severity: "high", equivalent: "Checkov CKV_AWS_3; Trivy AVD-AWS-0026" },
  "ec2-no-ssh-key": { group: "compute", severity: "medium", equivalent: "none" },
  "ec2-no-secrets-in-user-data": { group: "compute", severity: "critical", equivalent: "Checkov CKV_AWS_46; Trivy AVD-AWS-0029, AVD-AWS-0129" },
  "ec2-user-data-within-limit": { group: "compute", severity: "high", equivalent: "none" },
  "ebs-default-encryption-on": { group: "compute", severity: "high", equivalent: "none" },
  "within-aws-limits": { group: "safety", severity: "high", equivalent: "none" },
  // Data
  "s3-public-access-block": { group: "data", severity: "critical", equivalent: "Checkov CKV_AWS_53, CKV_AWS_54, CKV_AWS_55, CKV_AWS_56, CKV2_AWS_6; Trivy AVD-AWS-0086, -0087, -0091, -0093, -0094" },
  "s3-tls-only": { group: "data", severity: "high", equivalent: "Checkov CKV_AWS_379" },
  "s3-encryption-configured": { group: "data", severity: "high", equivalent: "Checkov CKV_AWS_19, CKV_AWS_145 (KMS); Trivy AVD-AWS-0088" },
  "dynamodb-pitr-enabled": { group: "data", severity: "high", equivalent: "Checkov CKV_AWS_28; Trivy AVD-AWS-0024" },
  "dynamodb-encrypted-with-cmk": { group: "data", severity: "medium", equivalent: "Checkov CKV_AWS_119; Trivy AVD-AWS-0025" },
  "dynamodb-deletion-protection": { group: "data", severity: "medium", equivalent: "none" },
  "efs-encrypted": { group: "data", severity: "high", equivalent: "Checkov CKV_AWS_42; Trivy AVD-AWS-0037" },
  "sqs-encrypted": { group: "data", severity: "high", equivalent: "Checkov CKV_AWS_27; Trivy AVD-AWS-0096" },
  "sqs-consumed-queue-has-dlq": { group: "data", severity: "medium", equivalent: "none" },
  "secretsmanager-uses-cmk": { group: "data", severity: "medium", equivalent: "Checkov CKV_AWS_149; Trivy AVD-AWS-0098" },
  "kms-key-rotation": { group: "data", severity: "medium", equivalent: "Checkov CKV_AWS_7; Trivy AVD-AWS-0065" },
  "s3-no-public-acl": { group: "data", severity: "critical", equivalent: "Checkov CKV_AWS_20, CKV_AWS_57; Trivy AVD-AWS-0092" },
  "s3-versioning-enabled": { group: "data", severity: "medium", equivalent: "Checkov CKV_AWS_21; Trivy AVD-AWS-0090" },
  "encryption-uses-cmk": { group: "data", severity: "medium", equivalent: "Checkov CKV_AWS_158 (log groups), CKV_AWS_184 (EFS), CKV_AWS_189 (EBS); Trivy AVD-AWS-0017 (log groups), AVD-AWS-0135 (SQS)" },
  // Lambda
  "lambda-reserved-concurrency": { group: "lambda", severity: "low", equivalent: "Checkov CKV_AWS_115" },
  "lambda-permission-restricted": { group: "lambda", severity: "critical", equivalent: "Checkov CKV_AWS_301, CKV_AWS_364; Trivy AVD-AWS-0067" },
  "lambda-url-requires-auth": { group: "lambda", severity: "critical", equivalent: "Checkov CKV_AWS_258" },
  "lambda-role-scoped": { group: "lambda", severity: "high", equivalent: "none" },
  "lambda-no-secrets-in-env": { group: "lambda", severity: "critical", equivalent: "Checkov CKV_AWS_45" },
  // Safety
  "stateful-resources-protected": { group: "safety", severity: "high", equivalent: "none" },
  "required-tags": { group: "safety", severity: "medium", equivalent: "none" },
  "policy-exception-valid": { group: "safety", severity: "high", equivalent: "none" },
  // Isolation
  "tenant-isolation": { group: "isolation", severity: "critical", equivalent: "none" },
} as const satisfies Record<string, PolicyFacts>;

export type PolicyName = keyof typeof POLICY_FACTS;

/**
 * The only policies a resource may be exempted from, with why an exception can be sound.
 * A resource tagged `clusterra:policy-exception = <policy>` with a non-empty
 * `clusterra:policy-exception-reason` is not judged by that policy (and no other);
 * policy-exception-valid judges the exception itself.
 */
export const EXEMPTIBLE_POLICIES: Readonly<Partial<Record<PolicyName, string>>> = {
  "ec2-no-public-ip":
    "a NAT instance needs a public address to reach the internet; policy-exception-valid then requires that none of its security groups admits a non-private source",
};
