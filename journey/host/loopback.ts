/**
 * The sealed namespace's loopback addresses, one /24 block per kind of listener, so no two
 * kinds can take the same address: the n-th of a kind is `127.0.<block>.<n + 1>`. Every
 * listener of the journey's own that is not on 127.0.0.1 takes its address here.
 */
export const LOOPBACK_BLOCKS = {
  /** Each tenant's slurmrestd Service, forwarded into the tenant's namespace (kube/tenant-slurm.ts). */
  restapiForward: 1,
  /** The fleet's origins: the git and chart server, the OCI registry (gitops/servers.ts). */
  origin: 2,
  /** ArgoCD's pods (gitops/argocd.ts). */
  argocd: 3,
  /** Each tenant's MariaDB pod (kube/mariadb.ts). */
  mariadb: 4,
} as const;

/** The n-th (from 0) loopback address of a block. Pure. */
export function loopbackAddress(block: keyof typeof LOOPBACK_BLOCKS, index: number): string {
  if (!Number.isInteger(index) || index < 0 || index > 253) throw new Error(`loopback ${block}: index ${index} is outside 0-253`);
  return `127.0.${LOOPBACK_BLOCKS[block]}.${index + 1}`;
}
