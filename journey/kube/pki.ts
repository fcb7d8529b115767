/**
 * The journey's certificates, made per run by openssl and never leaving the run's folder: a
 * CA, and serving certificates it signs for the names and addresses a server answers to
 * (the control planes, the local git, Helm and OCI servers).
 */
import { execFile } from "child_process";
import * as fs from "fs";
import * as path from "path";
import { promisify } from "util";

const openssl = promisify(execFile);

export interface Ca {
  readonly cert: string;
  readonly key: string;
}

export interface ServingCertificate {
  readonly cert: string;
  readonly key: string;
}

/** The subjectAltName line of a certificate for these DNS names and IP addresses. Pure. */
export function subjectAltName(dns: readonly string[], ips: readonly string[]): string {
  return `subjectAltName=${[...ips.map((i) => `IP:${i}`), ...dns.map((d) => `DNS:${d}`)].join(",")}`;
}

/** A CA valid for two days (a run's lifetime), `<dir>/<stem>.crt` and `.key`. */
export async function makeCa(dir: string, stem: string, commonName: string): Promise<Ca> {
  fs.mkdirSync(dir, { recursive: true });
  await openssl("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", `${stem}.key`, "-out", `${stem}.crt`, "-days", "2", "-subj", `/CN=${commonName}`], { cwd: dir });
  return { cert: path.join(dir, `${stem}.crt`), key: path.join(dir, `${stem}.key`) };
}

/** A serving certificate signed by `ca` for `dns` and `ips`, `<dir>/<stem>.crt` and `.key`. */
export async function issueCertificate(dir: string, ca: Ca, stem: string, commonName: string, dns: readonly string[], ips: readonly string[]): Promise<ServingCertificate> {
  fs.mkdirSync(dir, { recursive: true });
  const o = (args: string[]) => openssl("openssl", args, { cwd: dir });
  await o(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", `${stem}.key`, "-out", `${stem}.csr`, "-subj", `/CN=${commonName}`]);
  fs.writeFileSync(path.join(dir, `${stem}.ext`), `${subjectAltName(dns, ips)}\n`);
  await o(["x509", "-req", "-in", `${stem}.csr`, "-CA", ca.cert, "-CAkey", ca.key, "-CAcreateserial", "-out", `${stem}.crt`, "-days", "2", "-extfile", `${stem}.ext`]);
  return { cert: path.join(dir, `${stem}.crt`), key: path.join(dir, `${stem}.key`) };
}
