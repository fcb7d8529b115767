/**
 * The address translations Kubernetes does on the way, as nftables: what decides which
 * address each Slurm daemon sees its peer at. Pure (parameters in, ruleset text out).
 */

export const NAT_TABLE = "k8s";

/** A NodePort block on the central host and the pod it leads to. */
export interface HostForward {
  /** What the Service is, for the rule's comment. */
  readonly name: string;
  readonly nodePorts: { readonly from: number; readonly to: number };
  readonly podAddress: string;
  /** The pod's port when the block is one port mapped elsewhere; omitted: each port to itself. */
  readonly podPort?: number;
  readonly externalTrafficPolicy: string;
}

function portMatch(r: HostForward["nodePorts"]): string {
  return r.from === r.to ? String(r.from) : `${r.from}-${r.to}`;
}

/**
 * The central host: each NodePort Service DNATed to its pod (the tenant's slurmctld NodePort
 * to 6817, its srun block port by port to the login pod), and pod egress leaving as the host
 * (flannel's masquerade for destinations outside the cluster CIDR). With
 * `externalTrafficPolicy: Local` kube-proxy keeps the client's address; with `Cluster` it also
 * SNATs NodePort traffic to the node, which the journey must then see at the pod.
 */
export function centralHostNat(p: { readonly device: string; readonly hostAddress: string; readonly podCidr: string; readonly forwards: readonly HostForward[] }): string {
  const target = (f: HostForward) => (f.podPort === undefined ? f.podAddress : `${f.podAddress}:${f.podPort}`);
  const dnat = p.forwards.map((f) => `    iifname "${p.device}" ip daddr ${p.hostAddress} tcp dport ${portMatch(f.nodePorts)} dnat to ${target(f)} comment "${f.name} NodePort"`);
  const snat = p.forwards
    .filter((f) => f.externalTrafficPolicy !== "Local")
    .map((f) => `    ct status dnat ip daddr ${f.podAddress} tcp dport ${f.podPort ?? portMatch(f.nodePorts)} masquerade comment "${f.name} externalTrafficPolicy ${f.externalTrafficPolicy}: NodePort clients SNATed"`);
  return [
    `table ip ${NAT_TABLE} {`,
    "  chain nodeports {",
    "    type nat hook prerouting priority dstnat; policy accept;",
    ...dnat,
    "  }",
    "  chain egress {",
    "    type nat hook postrouting priority srcnat; policy accept;",
    `    oifname "${p.device}" ip saddr ${p.podCidr} masquerade comment "pod egress leaves as the host"`,
    ...snat,
    "  }",
    "}",
    "",
  ].join("\n");
}

/**
 * A tenant pod: a Service's cluster address translated to its endpoint at connect time, as
 * Cilium's socket load balancer does (kubeProxyReplacement); the source stays the pod's.
 */
export function clusterIpNat(p: { readonly serviceAddress: string; readonly servicePort: number; readonly endpointAddress: string; readonly endpointPort: number }): string {
  return [
    `table ip ${NAT_TABLE} {`,
    "  chain services {",
    "    type nat hook output priority -100; policy accept;",
    `    ip daddr ${p.serviceAddress} tcp dport ${p.servicePort} dnat to ${p.endpointAddress}:${p.endpointPort} comment "selector-less Service to its EndpointSlice"`,
    "  }",
    "}",
    "",
  ].join("\n");
}

/**
 * A tenant node: Cilium masquerades pod traffic to destinations outside
 * `ipv4NativeRoutingCIDR` to the node's address (enableIPv4Masquerade), and routes the rest
 * natively, so slurmctld sees the pod's own address only when central lies inside it.
 */
export function ciliumNodeNat(p: { readonly device: string; readonly podAddresses: readonly string[]; readonly nativeRoutingCidr: string; readonly masquerade: boolean }): string {
  const pods = p.podAddresses.length === 1 ? p.podAddresses[0] : `{ ${p.podAddresses.join(", ")} }`;
  const rule = p.masquerade ? [`    oifname "${p.device}" ip saddr ${pods} ip daddr != ${p.nativeRoutingCidr} masquerade comment "Cilium: outside ipv4NativeRoutingCIDR"`] : [];
  return [`table ip ${NAT_TABLE} {`, "  chain egress {", "    type nat hook postrouting priority srcnat; policy accept;", ...rule, "  }", "}", ""].join("\n");
}
