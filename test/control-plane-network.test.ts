/**
 * The tenant namespace's NetworkPolicies on central, evaluated as Kubernetes evaluates them
 * (a pod selected by any policy admits only what some policy's rule admits): who may reach
 * the accounting database, slurmctld and slurmrestd, and who may not.
 */
import * as assert from "node:assert/strict";
import { centralObjects, skipWithoutHelm } from "./helpers";

interface Peer { namespaceSelector?: { matchLabels?: Record<string, string> }; podSelector?: { matchLabels?: Record<string, string> }; ipBlock?: { cidr: string } }
interface Policy { metadata: { namespace: string }; spec: { podSelector: { matchLabels?: Record<string, string> }; ingress?: { from?: Peer[]; ports?: { port: number }[] }[] } }
interface Pod { namespace: string; namespaceLabels: Record<string, string>; labels: Record<string, string>; ip: string }

const matches = (sel: Record<string, string> | undefined, labels: Record<string, string>) => Object.entries(sel ?? {}).every(([k, v]) => labels[k] === v);
const inCidr = (ip: string, cidr: string) => {
  const [base, bits] = cidr.split("/");
  const n = (a: string) => a.split(".").reduce((x, o) => (x << 8) + Number(o), 0) >>> 0;
  const mask = Number(bits) === 0 ? 0 : (~0 << (32 - Number(bits))) >>> 0;
  return ((n(ip) & mask) >>> 0) === ((n(base) & mask) >>> 0);
};

/** Whether the policies admit `from` to `to` on `port` (Kubernetes NetworkPolicy ingress semantics). */
export function admits(policies: readonly Policy[], to: Pod, from: Pod, port: number): boolean {
  const selecting = policies.filter((p) => p.metadata.namespace === to.namespace && matches(p.spec.podSelector.matchLabels, to.labels));
  if (!selecting.length) return true;
  return selecting.some((p) => (p.spec.ingress ?? []).some((rule) => {
    const portOk = !rule.ports?.length || rule.ports.some((x) => x.port === port);
    const peerOk = !rule.from?.length || rule.from.some((peer) => {
      if (peer.ipBlock) return inCidr(from.ip, peer.ipBlock.cidr);
      const nsOk = peer.namespaceSelector ? matches(peer.namespaceSelector.matchLabels, from.namespaceLabels) : from.namespace === to.namespace;
      return nsOk && matches(peer.podSelector?.matchLabels, from.labels);
    });
    return portOk && peerOk;
  }));
}

describe("central's tenant NetworkPolicies (fleet/charts/tenant-control-plane, rendered from acme's facts)", () => {
  let policies: Policy[] = [];
  before(function () {
    const objects = centralObjects("acme");
    if (!objects) return skipWithoutHelm(this);
    policies = objects.filter((o) => o.kind === "NetworkPolicy");
  });
  const pod = (namespace: string, labels: Record<string, string>, ip = "100.64.0.50"): Pod => ({ namespace, namespaceLabels: { "kubernetes.io/metadata.name": namespace }, labels, ip });
  const mariadb = pod("tenant-acme", { "app.kubernetes.io/name": "mariadb", "app.kubernetes.io/instance": "mariadb" });
  const operator = pod("mariadb-operator", { "app.kubernetes.io/name": "mariadb-operator", "app.kubernetes.io/instance": "mariadb-operator" });

  it("mariadb-operator reaches its MariaDB on 3306 (it creates the slurm user and grants by SQL)", () => {
    assert.equal(admits(policies, mariadb, operator, 3306), true);
  });
  it("slurmdbd in the namespace reaches MariaDB; another tenant's pods and other namespaces do not", () => {
    assert.equal(admits(policies, mariadb, pod("tenant-acme", { "app.kubernetes.io/name": "slurmdbd" }), 3306), true);
    assert.equal(admits(policies, mariadb, pod("tenant-globex", { "app.kubernetes.io/name": "slurmdbd" }), 3306), false);
    assert.equal(admits(policies, mariadb, pod("mariadb-operator", { "app.kubernetes.io/name": "something-else" }), 3306), false);
    assert.equal(admits(policies, mariadb, pod("external-secrets", operator.labels), 3306), false);
    assert.equal(admits(policies, mariadb, operator, 22), false);
  });
  it("slurmctld admits the tenant's VPC on 6817 only; globex's VPC is refused", () => {
    const ctld = pod("tenant-acme", { "app.kubernetes.io/name": "slurmctld", "app.kubernetes.io/instance": "slurm" });
    assert.equal(admits(policies, ctld, pod("", {}, "10.16.0.41"), 6817), true);
    assert.equal(admits(policies, ctld, pod("", {}, "10.16.16.41"), 6817), false);
  });
});
