/**
 * The resources that hold state, and the inputs whose change makes the AWS provider replace
 * one (delete and create: its data goes with it unless it lives elsewhere). From the
 * provider's schema (pulumi-aws is bridged from the Terraform AWS provider: these are the
 * arguments it marks ForceNew), checked 2026-11-26; a dotted name is a field of a nested
 * input (an instance's root volume changes size in place, but not its key). An instance's
 * user data replaces it only with `userDataReplaceOnChange`; an input named in the
 * resource's `ignoreChanges` never does.
 */
export interface StatefulType {
  /** What the runbook calls it. */
  readonly what: string;
  /** Inputs whose change replaces the resource. */
  readonly replacedBy: readonly string[];
}

export const STATEFUL_TYPES: Readonly<Record<string, StatefulType>> = {
  "aws:ec2/instance:Instance": {
    what: "instance",
    replacedBy: [
      "ami", "associatePublicIpAddress", "availabilityZone", "cpuOptions", "ebsBlockDevices", "enclaveOptions", "ephemeralBlockDevices", "hibernation", "hostId",
      "hostResourceGroupArn", "instanceMarketOptions", "ipv6AddressCount", "ipv6Addresses", "keyName", "launchTemplate", "networkInterfaces", "placementGroup",
      "placementPartitionNumber", "privateIp", "rootBlockDevice.encrypted", "rootBlockDevice.kmsKeyId", "securityGroups", "subnetId", "tenancy",
    ],
  },
  "aws:ebs/volume:Volume": { what: "volume", replacedBy: ["availabilityZone", "encrypted", "kmsKeyId", "outpostArn", "snapshotId"] },
  "aws:efs/fileSystem:FileSystem": { what: "file system", replacedBy: ["availabilityZoneName", "creationToken", "encrypted", "kmsKeyId", "performanceMode"] },
  "aws:dynamodb/table:Table": { what: "table", replacedBy: ["hashKey", "localSecondaryIndexes", "name", "rangeKey"] },
  "aws:kms/key:Key": { what: "key", replacedBy: ["customKeyStoreId", "customerMasterKeySpec", "keyUsage", "multiRegion", "xksKeyId"] },
  "aws:s3/bucket:Bucket": { what: "bucket", replacedBy: ["bucket", "bucketPrefix", "objectLockEnabled"] },
  "aws:s3/bucketV2:BucketV2": { what: "bucket", replacedBy: ["bucket", "bucketPrefix", "objectLockEnabled"] },
  "aws:secretsmanager/secret:Secret": { what: "secret", replacedBy: ["name", "namePrefix"] },
};

/** The input that replaces an instance when `userDataReplaceOnChange` is set. */
export const USER_DATA_INPUTS: readonly string[] = ["userData", "userDataBase64"];
