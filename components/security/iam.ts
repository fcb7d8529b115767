/**
 * IAM policy documents as plain data: small pure functions the components call and the
 * tests check directly. Statements always name resources; where AWS cannot scope an
 * action, the caller says so with `unscopable`.
 */
export interface Statement {
  readonly Sid?: string;
  readonly Effect: "Allow" | "Deny";
  readonly Action: string | readonly string[];
  readonly Resource?: string | readonly string[];
  readonly Principal?: Record<string, string | readonly string[]> | "*";
  readonly Condition?: Record<string, Record<string, string | readonly string[] | boolean>>;
}

export interface PolicyDocument {
  readonly Version: "2012-10-17";
  readonly Statement: readonly Statement[];
}

export function policyDocument(...statements: Statement[]): PolicyDocument {
  return { Version: "2012-10-17", Statement: statements };
}

/** Serialized form the AWS provider takes. */
export function toJson(doc: PolicyDocument): string {
  return JSON.stringify(doc);
}

/** Trust for an AWS service, pinned to this account (and source ARN where the service sets one). */
export function serviceTrust(service: string, accountId: string, sourceArn?: string): PolicyDocument {
  const condition: Record<string, Record<string, string>> = { StringEquals: { "aws:SourceAccount": accountId } };
  if (sourceArn) condition.ArnLike = { "aws:SourceArn": sourceArn };
  return policyDocument({ Effect: "Allow", Principal: { Service: service }, Action: "sts:AssumeRole", Condition: condition });
}

/**
 * Trust for a service that AWS documents with no source condition (it sends neither
 * aws:SourceAccount nor aws:SourceArn when assuming), such as Data Lifecycle Manager.
 */
export function documentedServiceTrust(service: string): PolicyDocument {
  return policyDocument({ Effect: "Allow", Principal: { Service: service }, Action: "sts:AssumeRole" });
}

/** Trust for EC2 instances: EC2 passes no source account, so the role's PassRole scope is the guard. */
export function ec2Trust(partition: string): PolicyDocument {
  return documentedServiceTrust(partition === "aws-cn" ? "ec2.amazonaws.com.cn" : "ec2.amazonaws.com");
}

/** Trust for principals of another account: only with an ExternalId, as AWS recommends for third parties. */
export function crossAccountTrust(partition: string, accountId: string, externalId: string): PolicyDocument {
  return policyDocument({
    Effect: "Allow",
    Principal: { AWS: `arn:${partition}:iam::${accountId}:root` },
    Action: "sts:AssumeRole",
    Condition: { StringEquals: { "sts:ExternalId": externalId } },
  });
}

/** Trust for named roles of the same or another account, by exact ARN. */
export function principalTrust(partition: string, accountId: string, principalArns: readonly string[]): PolicyDocument {
  return policyDocument({
    Effect: "Allow",
    Principal: { AWS: `arn:${partition}:iam::${accountId}:root` },
    Action: "sts:AssumeRole",
    Condition: { ArnEquals: { "aws:PrincipalArn": principalArns } },
  });
}

/** ARN builder, so no component hand-writes the partition or account layout. */
export function arn(partition: string, service: string, region: string, accountId: string, resource: string): string {
  return `arn:${partition}:${service}:${region}:${accountId}:${resource}`;
}

/** Session Manager registration and channels: how operators reach a node, with no SSH. */
export function sessionManagerStatements(s: { readonly partition: string; readonly region: string; readonly accountId: string }): Statement[] {
  return [
    { Sid: "SessionManagerRegistration", Effect: "Allow", Action: "ssm:UpdateInstanceInformation", Resource: arn(s.partition, "ec2", s.region, s.accountId, "instance/*") },
    {
      // Session Manager's message channels take no resource ARNs.
      Sid: "SessionManagerChannels",
      Effect: "Allow",
      Action: ["ssmmessages:CreateControlChannel", "ssmmessages:CreateDataChannel", "ssmmessages:OpenControlChannel", "ssmmessages:OpenDataChannel",
        "ec2messages:AcknowledgeMessage", "ec2messages:DeleteMessage", "ec2messages:FailMessage", "ec2messages:GetEndpoint", "ec2messages:GetMessages", "ec2messages:SendReply"],
      Resource: "*",
    },
  ];
}

/**
 * Reading a host's files (components/host/host-files.ts): the parameters under its prefix, by
 * path. IAM authorizes GetParametersByPath on the path asked for (recursive included), so the
 * host reads its own prefix and nothing beside or above it.
 */
export function hostFilesReadStatement(s: { readonly partition: string; readonly region: string; readonly accountId: string }, prefix: string): Statement {
  return { Sid: "HostFilesRead", Effect: "Allow", Action: "ssm:GetParametersByPath", Resource: arn(s.partition, "ssm", s.region, s.accountId, `parameter${prefix}`) };
}

/** Writing one SecureString parameter (the kubeconfig), encrypting only for that parameter. */
export function writeSecureParameterStatements(sid: string, parameterArn: string, kmsKeyArn: string): Statement[] {
  return [
    { Sid: `${sid}Write`, Effect: "Allow", Action: "ssm:PutParameter", Resource: parameterArn },
    { Sid: `${sid}Encrypt`, Effect: "Allow", Action: ["kms:Encrypt", "kms:GenerateDataKey"], Resource: kmsKeyArn, Condition: { StringEquals: { "kms:EncryptionContext:PARAMETER_ARN": parameterArn } } },
  ];
}

