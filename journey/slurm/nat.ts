/**
 * The address translations Kubernetes does on the way, as nftables: what decides which
 * address each Slurm daemon sees its peer at. Pure (parameters in, ruleset text out).
 */

export const NAT_TABLE = "k8s";

/**
 * The central host: the tenant's slurmctld NodePort DNATed to the slurmctld pod, and pod
 * egress leaving as the host (flannel's masquerade for destinations outside the cluster CIDR).
 * With `externalTrafficPolicy: Local` kube-proxy keeps the client's address; with `Cluster`
 * it also SNATs NodePort traffic to the node, which the journey must then see at slurmctld.
 */
export function centralHostNat(p: {
  readonly device: string;
  readonly hostAddress: string;
  readonly nodePort: number;
  readonly podAddress: string;
  readonly podPort: number;
  readonly podCidr: string;
  readonly externalTrafficPolicy: string;
}): string {
  const clusterPolicySnat =
    p.externalTrafficPolicy === "Local" ? [] : [`    ct status dnat ip daddr ${p.podAddress} tcp dport ${p.podPort} masquerade comment "externalTrafficPolicy ${p.externalTrafficPolicy}: NodePort clients SNATed"`];
  return [
    `table ip ${NAT_TABLE} {`,
    "  chain nodeports {",
    "    type nat hook prerouting priority dstnat; policy accept;",
    `    iifname "${p.device}" ip daddr ${p.hostAddress} tcp dport ${p.nodePort} dnat to ${p.podAddress}:${p.podPort} comment "slurmctld NodePort"`,
    "  }",
    "  chain egress {",
    "    type nat hook postrouting priority srcnat; policy accept;",
    `    oifname "${p.device}" ip saddr ${p.podCidr} masquerade comment "pod egress leaves as the host"`,
    ...clusterPolicySnat,
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
