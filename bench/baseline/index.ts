// Baseline for `npm run bench`: a minimal Pulumi TypeScript program of the kind
// `pulumi new aws-typescript` starts from, importing the whole AWS SDK and registering
// ten resources. bench/baseline/run.js runs it the way Pulumi runs TypeScript by
// default: through ts-node with type-checking.
import * as aws from "@pulumi/aws";

const vpc = new aws.ec2.Vpc("baseline", { cidrBlock: "10.0.0.0/16" });
const subnets = [0, 1, 2].map((i) => new aws.ec2.Subnet(`baseline-${i}`, { vpcId: vpc.id, cidrBlock: `10.0.${i}.0/24` }));
new aws.ec2.SecurityGroup("baseline", { vpcId: vpc.id });
new aws.s3.Bucket("baseline");
new aws.sqs.Queue("baseline");
new aws.dynamodb.Table("baseline", { hashKey: "id", attributes: [{ name: "id", type: "S" }], billingMode: "PAY_PER_REQUEST" });
new aws.iam.Role("baseline", { assumeRolePolicy: JSON.stringify({ Version: "2012-10-17", Statement: [] }) });
new aws.kms.Key("baseline", {});

export const subnetIds = subnets.map((s) => s.id);
