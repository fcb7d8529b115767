/**
 * Values AWS enumerates, checked against the catalogs the pinned @pulumi/aws ships (its
 * generated enums follow the AWS API models), with "did you mean" for near misses.
 */
import { InstanceType } from "@pulumi/aws/types/enums/ec2";
import { nearest } from "./validate-text";

/** Every EC2 instance type the pinned provider knows. */
export const INSTANCE_TYPES: ReadonlySet<string> = new Set(Object.values(InstanceType));

/** Why `value` is not a known instance type, with the closest known one; undefined when it is known. */
export function instanceTypeProblem(value: string): { problem: string; valid: string } | undefined {
  if (INSTANCE_TYPES.has(value)) return undefined;
  const guess = nearest(value, [...INSTANCE_TYPES]);
  return {
    problem: guess ? `not an EC2 instance type (did you mean ${guess}?)` : "not an EC2 instance type",
    valid: `an instance type from the EC2 catalog${guess ? ` such as ${guess}` : ", such as t4g.medium or m7g.large"}`,
  };
}
