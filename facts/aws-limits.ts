/**
 * AWS's (and Kubernetes') documented limits on values this program sets, as data: a value
 * over one is a plan error (the policy pack's checks and configuration read them), never a
 * deploy-time refusal.
 */
export interface DocumentedLimit {
  readonly max: number;
  readonly unit: "bytes" | "characters";
  /** What the limit bounds. */
  readonly what: string;
  /** Where AWS documents it. */
  readonly source: string;
}

export const AWS_LIMITS = {
  ssmStandardParameter: { max: 4096, unit: "characters", what: "an SSM parameter's value in the Standard tier", source: "Systems Manager quotas: \"Parameter value size, standard tier: 4 KB\"" },
  userData: { max: 16384, unit: "bytes", what: "EC2 user data before base64 (an instance's, a launch template's, a spot request's, a launch configuration's)", source: "EC2 API reference, RunInstances UserData: \"User data is limited to 16 KB\"" },
} as const satisfies Record<string, DocumentedLimit>;

/** Kubernetes' own limits on objects the fleet makes: over one, the API server refuses the object at sync. */
export const KUBERNETES_LIMITS = {
  configMapData: { max: 1048576, unit: "bytes", what: "a ConfigMap's data, all keys together", source: "Kubernetes documentation, ConfigMaps: \"The data stored in a ConfigMap cannot exceed 1 MiB\"" },
} as const satisfies Record<string, DocumentedLimit>;
