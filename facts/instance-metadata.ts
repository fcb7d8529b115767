/** EC2's instance metadata service: link-local on every instance, reached without a route of the VPC's. */
export const INSTANCE_METADATA = { address: "169.254.169.254", port: 80 } as const;

/** The base URL of IMDS's latest API. */
export const INSTANCE_METADATA_URL = `http://${INSTANCE_METADATA.address}/latest`;
