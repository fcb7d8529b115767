/**
 * External Secrets objects (@kubernetes-models/external-secrets, validated): a namespaced
 * store on Secrets Manager that assumes one role, and ExternalSecrets that copy one
 * Secrets Manager secret into one Kubernetes Secret. The fleet never holds a Secret.
 */
import type { IExternalSecret as ExternalSecret } from "@kubernetes-models/external-secrets/external-secrets.io/v1/ExternalSecret";
import type { ISecretStore as SecretStore } from "@kubernetes-models/external-secrets/external-secrets.io/v1/SecretStore";

export interface StoreArgs {
  readonly name: string;
  readonly namespace: string;
  /** Region of the Secrets Manager that holds the secrets. */
  readonly region: string;
  /** Role every read assumes: it can read only this store's secrets. */
  readonly roleArn: string;
}

export function secretStore(s: StoreArgs): SecretStore {
  return {
    apiVersion: "external-secrets.io/v1",
    kind: "SecretStore",
    metadata: { name: s.name, namespace: s.namespace },
    spec: { provider: { aws: { service: "SecretsManager", region: s.region, role: s.roleArn } } },
  };
}

export interface ExternalSecretArgs {
  readonly store: StoreArgs;
  /** The Kubernetes Secret written (and the ExternalSecret's name). */
  readonly target: string;
  /** Key inside that Secret. */
  readonly key: string;
  /** The Secrets Manager secret (ARN across accounts, name or ARN in the same account). */
  readonly remoteKey: string;
  /** A template for the Secret (labels, several keys from the one remote JSON value). */
  readonly template?: { labels: Record<string, string>; data: Record<string, string>; properties: readonly string[] };
}

/**
 * One Secret from one Secrets Manager secret, refreshed hourly; the Secret is kept if the
 * ExternalSecret goes, so a bad sync never leaves a daemon without its key.
 */
export function externalSecret(e: ExternalSecretArgs): ExternalSecret {
  const storeRef = { kind: "SecretStore" as const, name: e.store.name };
  const spec = e.template
    ? {
        refreshInterval: "1h",
        secretStoreRef: storeRef,
        target: { name: e.target, creationPolicy: "Owner" as const, deletionPolicy: "Retain" as const, template: { metadata: { labels: e.template.labels }, data: e.template.data } },
        data: e.template.properties.map((property) => ({ secretKey: property, remoteRef: { key: e.remoteKey, property } })),
      }
    : {
        refreshInterval: "1h",
        secretStoreRef: storeRef,
        target: { name: e.target, creationPolicy: "Owner" as const, deletionPolicy: "Retain" as const },
        data: [{ secretKey: e.key, remoteRef: { key: e.remoteKey } }],
      };
  return { apiVersion: "external-secrets.io/v1", kind: "ExternalSecret", metadata: { name: e.target, namespace: e.store.namespace }, spec };
}
