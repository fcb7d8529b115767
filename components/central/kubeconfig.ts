/**
 * The kubeconfig the central host publishes is untrusted input: the host (or anything that
 * obtained its role) can write the parameter, and a kubeconfig can name commands the
 * operator's machine would run (`users[].user.exec`, auth providers) or send credentials
 * elsewhere. Only the three pieces of data K3s writes are taken, checked, and put into a
 * kubeconfig built here; nothing else of the published document reaches the provider.
 */
import { parse } from "yaml";
import { K3S_API_PORT } from "../../facts/contract";

/** The only API address accepted: the loopback end of the operator's Session Manager port forward. */
export const TRUSTED_API_SERVER = `https://127.0.0.1:${K3S_API_PORT}`;

const ALLOWED = {
  top: ["apiVersion", "kind", "clusters", "contexts", "users", "current-context", "preferences"],
  cluster: ["server", "certificate-authority-data"],
  user: ["client-certificate-data", "client-key-data"],
};

/** A refused kubeconfig: says what was found where, never echoes its secret data. */
export class UntrustedKubeconfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`refusing the published kubeconfig: ${problems.join("; ")}; valid: one cluster at ${TRUSTED_API_SERVER} with certificate-authority-data, one user with client-certificate-data and client-key-data, nothing else`);
    this.name = "UntrustedKubeconfigError";
  }
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * Checks a published kubeconfig and returns a new one holding only its CA, client
 * certificate and key, with the server fixed to the loopback. Throws with every problem.
 */
export function trustedKubeconfig(published: string): string {
  const problems: string[] = [];
  let doc: unknown;
  try {
    doc = parse(published, { schema: "core", maxAliasCount: 0 });
  } catch (e) {
    throw new UntrustedKubeconfigError([`not YAML (${(e as Error).message.split("\n")[0]})`]);
  }
  if (!isObject(doc)) throw new UntrustedKubeconfigError(["not a mapping"]);
  const extra = (where: string, value: Record<string, unknown>, allowed: readonly string[]) => {
    for (const key of Object.keys(value)) if (!allowed.includes(key)) problems.push(`${where}.${key} is not allowed`);
  };
  extra("(top)", doc, ALLOWED.top);
  const only = (key: "clusters" | "users", inner: "cluster" | "user"): Record<string, unknown> => {
    const list = doc[key];
    if (!Array.isArray(list) || list.length !== 1 || !isObject(list[0]) || !isObject(list[0][inner])) {
      problems.push(`${key} must hold exactly one entry with a ${inner} mapping`);
      return {};
    }
    const value = list[0][inner] as Record<string, unknown>;
    extra(`${key}[0].${inner}`, value, ALLOWED[inner]);
    return value;
  };
  const cluster = only("clusters", "cluster");
  const user = only("users", "user");
  if (cluster.server !== TRUSTED_API_SERVER) problems.push(`clusters[0].cluster.server is ${JSON.stringify(cluster.server)}, not ${TRUSTED_API_SERVER}`);
  const data = {
    ca: cluster["certificate-authority-data"],
    cert: user["client-certificate-data"],
    key: user["client-key-data"],
  };
  const names = { ca: "clusters[0].cluster.certificate-authority-data", cert: "users[0].user.client-certificate-data", key: "users[0].user.client-key-data" };
  for (const [k, v] of Object.entries(data)) {
    if (typeof v !== "string" || !BASE64.test(v)) problems.push(`${names[k as keyof typeof names]} is missing or not base64`);
  }
  if (problems.length > 0) throw new UntrustedKubeconfigError(problems);
  return buildKubeconfig(String(data.ca), String(data.cert), String(data.key));
}

/** A kubeconfig of one cluster at the loopback and one certificate user. */
function buildKubeconfig(ca: string, cert: string, key: string): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "central", cluster: { server: TRUSTED_API_SERVER, "certificate-authority-data": ca } }],
    users: [{ name: "central-admin", user: { "client-certificate-data": cert, "client-key-data": key } }],
    contexts: [{ name: "central", context: { cluster: "central", user: "central-admin" } }],
    "current-context": "central",
  });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
