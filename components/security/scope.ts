import type * as pulumi from "@pulumi/pulumi";
import type { Partition } from "../../facts/regions";

/** Where a component's resources live: every ARN and service name derives from these. */
export interface AccountScope {
  readonly region: string;
  readonly partition: Partition;
  /** The account the component's provider acts in. */
  readonly accountId: pulumi.Input<string>;
}
