/**
 * The shapes of a journey's network world: the namespaces that stand for hosts, nodes and
 * pods, their links and rulesets. journey/slurm/topology.ts plans one from the plans and the
 * fleet; journey/host/network.ts builds it.
 */
import type { Translation } from "./nft";
import type { PolicyTranslation } from "./network-policy";

export interface Namespace {
  /** The kernel's name (prefixed per run). */
  readonly name: string;
  /** Who it stands for, as reports name it. */
  readonly label: string;
}

export interface SlurmdPod {
  readonly ns: Namespace;
  readonly node: Namespace;
  readonly address: string;
  readonly nodeAddress: string;
  /** Slurm node name (the pod's hostname, as Slinky's NodeSet pods register). */
  readonly hostname: string;
  readonly features: readonly string[];
}

export interface Firewall {
  readonly ns: Namespace;
  readonly translation: Translation;
}

export interface Topology {
  readonly namespaces: readonly Namespace[];
  /** `ip` argument lists, in order. */
  readonly commands: readonly (readonly string[])[];
  /** /etc/hosts of each namespace that needs names. */
  readonly hosts: ReadonlyMap<string, string>;
  /** nftables text per namespace (security groups, then NAT). */
  readonly rulesets: ReadonlyMap<string, readonly string[]>;
  readonly firewalls: readonly Firewall[];
  readonly central: {
    readonly host: Namespace;
    readonly hostAddress: string;
    readonly slurmctld: { readonly ns: Namespace; readonly address: string; readonly hostname: string };
    readonly slurmdbd: { readonly ns: Namespace; readonly address: string; readonly hostname: string };
    readonly mariadb: { readonly ns: Namespace; readonly address: string };
    readonly login: { readonly ns: Namespace; readonly address: string; readonly hostname: string };
    /** The other tenant's control-plane pods on the same host, in its own namespace: what the first tenant's code must not reach. */
    readonly other: readonly { readonly ns: Namespace; readonly address: string; readonly name: string; readonly port: number }[];
    /** Both tenant namespaces' NetworkPolicies, enforced on the host as K3s does. */
    readonly policy: PolicyTranslation;
    /** The DNS pods on the host: the tenant's own (the one its pods may ask), the other tenant's, the retiring shared one (the release before's pods'), and K3s's (which forwards every other name out of central). */
    readonly dns: { readonly tenant: { readonly ns: Namespace; readonly address: string }; readonly other: { readonly ns: Namespace; readonly address: string }; readonly shared: { readonly ns: Namespace; readonly address: string }; readonly cluster: { readonly ns: Namespace; readonly address: string } };
  };
  /** A host on the internet, behind the central VPC's way out. */
  readonly internet: { readonly ns: Namespace; readonly address: string; readonly port: number };
  readonly slurmd: readonly SlurmdPod[];
  readonly other: {
    readonly pod: Namespace;
    readonly address: string;
    readonly node: Namespace;
    readonly tenantId: string;
    readonly server: Namespace;
    readonly serverAddress: string;
    /** Where the other tenant's own Slurm runs, when it does: its pods on central (its login among them) and its slurmd pod. */
    readonly controlPlane?: Pick<Topology["central"], "slurmctld" | "slurmdbd" | "mariadb" | "login"> & { readonly slurmd: readonly SlurmdPod[] };
  };
  /** Address -> who holds it, to name flows in reports. */
  readonly names: ReadonlyMap<string, string>;
}
