/**
 * Fleet rendering benchmark: `npx tsc -b && node dist/bench/fleet-bench.js`.
 *
 * Renders the whole fleet (central's add-ons, then per tenant its cluster's add-ons, its
 * control plane on central, its Applications and central's entry for it) for 10, 100, 1,000
 * and 10,000 synthetic tenants (FLEET_BENCH_SIZES=10,100 for others), and times, median of 5:
 *
 * - baseline: `yaml.stringify` of the render's input, every one of the 1,000 tenants' facts
 *   and settings as built beforehand: a cost that does not depend on the fleet's layout or
 *   serializer, so the ratio shows what the layout costs;
 * - the render at each size, as a ratio to the baseline at 1,000 tenants, and per tenant.
 *
 * Targets: 1,000 tenants written in under 1 s and 5 MB, growing linearly (issue "Fleet facts
 * apart from templates"); 10,000 in under 3 s and 50 MB (issue 38). What every tenant shares
 * (central/<env>/tenants/) counts once.
 */
import { stringify } from "yaml";
import { tenantsSharedFiles } from "../components/fleet/application-set";
import { centralAddOnFiles } from "../components/fleet/central-addons";
import type { ControlPlaneFacts } from "../components/fleet/control-plane";
import { tenantFleetFiles, type TenantEntryFacts } from "../components/fleet/tenant";
import { tenantEntriesApplicationSet, tenantEntrySharedValues } from "../components/fleet/tenant-entry";
import { tenantsApplicationSet } from "../components/fleet/application-set";
import { yamlFile } from "../components/fleet/yaml-file";
import type { TenantClusterFacts } from "../components/fleet/tenant-cluster";
import { factsFile, type TenantCloudFacts } from "../components/fleet/facts";
import { nodeSetPlans } from "../config/sizing";
import { tenantClusterName, TENANT_K3S_VERSION } from "../facts/tenant-cluster";
import { SYNTHETIC_FLEET, syntheticTenantCloud } from "./synthetic";
import { portsAtSlot } from "../config/tenant-ports";
import { ACCOUNTING_BACKUP } from "../facts/fleet";
import { keepToLoopback } from "../test/loopback-only";

// Benchmarks keep every packet on this machine (test/loopback-only.ts).
keepToLoopback();

const RUNS = 5;
/** Every tenant's users (a company's first few). */
const USERS = Array.from({ length: 5 }, (_, i) => ({ name: `user${i}`, uid: 10001 + i, gid: 10001 + i }));
const SIZES = (process.env.FLEET_BENCH_SIZES ?? "10,100,1000,10000").split(",").map(Number);
/** Tenants -> the most milliseconds and megabytes their fleet may take. */
const TARGETS: ReadonlyMap<number, { ms: number; mb: number }> = new Map([[1000, { ms: 1000, mb: 5 }], [10000, { ms: 3000, mb: 50 }]]);
const BASELINE_TENANTS = 1000;
const REPO = SYNTHETIC_FLEET;

/** One synthetic tenant, `i` making every name, address and ARN unique: its cloud facts and what its derived files are rendered from. */
function tenant(i: number): { stack: string; cloud: TenantCloudFacts; parts: [TenantClusterFacts, ControlPlaneFacts, TenantEntryFacts] } {
  const id = `t${i}`;
  const clusterName = tenantClusterName("dev", id);
  const account = String(100000000000 + i);
  const serverAddress = `10.${16 + Math.floor(i / 256)}.${i % 256}.10`;
  // As allocation gives them (past one central's range they repeat: the render does not care).
  const ports = portsAtSlot(i);
  const nodeSets = nodeSetPlans([
    { name: "cpu", memoryPerCpuGiB: 4, sizes: [4, 16], maxNodes: 20, capacityType: "spot" },
    { name: "himem", memoryPerCpuGiB: 8, sizes: [8], maxNodes: 4, capacityType: "on-demand" },
  ]);
  const cloud: TenantCloudFacts = syntheticTenantCloud({ id, environment: "dev", account, serverAddress, ports, serial: i });
  return {
    stack: `tenant-${id}-dev`,
    cloud,
    parts: [
      {
        environment: "dev", scope: "dev", tenantId: id, clusterName, region: "us-east-1", nativeRoutingCidr: "10.0.0.0/8",
        k3sVersion: TENANT_K3S_VERSION, nodeSets, centralRegion: "us-east-1",
        users: USERS,
      },
      {
        environment: "dev", scope: "dev", tenantId: id, clusterName, centralRegion: "us-east-1",
        secretNames: { slurm: `clusterra/dev/${id}/slurm-key`, jwt: `clusterra/dev/${id}/jwt-key`, mariadb: `clusterra/dev/${id}/mariadb-password` },
        tenantCidr: `10.${16 + Math.floor(i / 256)}.${i % 256}.0/24`, srunPortBlock: ports.srunBlock, nodeSets, users: USERS,
      },
      { rolloutWave: "general" },
    ],
  };
}

/** The whole fleet of `n` tenants: its bytes and files. */
function render(facts: readonly ReturnType<typeof tenant>[]): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  const count = (set: Record<string, string>) => {
    for (const content of Object.values(set)) bytes += Buffer.byteLength(content);
    files += Object.keys(set).length;
  };
  count(centralAddOnFiles("dev", "bench", REPO));
  count(tenantsSharedFiles("dev", "bench", ACCOUNTING_BACKUP.defaults, { environment: "dev", scope: "dev", region: "us-east-1", partition: "aws" }));
  count({ entries: yamlFile("bench", tenantEntrySharedValues("dev", REPO.repoUrl, "us-east-1")), appsets: yamlFile("bench", tenantEntriesApplicationSet("dev", REPO), tenantsApplicationSet("dev", "dev", REPO)) });
  // Each tenant's facts file too: it is in git like the rest.
  for (const t of facts) count({ facts: factsFile(t.stack, t.cloud), ...tenantFleetFiles(...t.parts) });
  return { bytes, files };
}

function median(fn: () => void): number {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = process.hrtime.bigint();
    fn();
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return times.sort((a, b) => a - b)[Math.floor(RUNS / 2)];
}

function main(): void {
  const largest = Array.from({ length: Math.max(...SIZES, BASELINE_TENANTS) }, (_, i) => tenant(i));
  // Baseline: the render's input for 1,000 tenants, serialized once (independent of the layout).
  const documents = largest.slice(0, BASELINE_TENANTS).flatMap(({ cloud, parts }) => [cloud, ...parts]);
  const baseline = median(() => documents.forEach((d) => stringify(d)));
  console.log(`fleet render, median of ${RUNS} runs; baseline: yaml.stringify of the render's input, ${documents.length} documents (1,000 tenants' facts and settings) ${baseline.toFixed(0)} ms`);
  const verdicts: string[] = [];
  for (const n of SIZES) {
    let size = { bytes: 0, files: 0 };
    const ms = median(() => (size = render(largest.slice(0, n))));
    console.log(`${String(n).padStart(5)} tenants  ${ms.toFixed(0).padStart(6)} ms  ${(ms / baseline).toFixed(2).padStart(6)}x baseline  ${(ms / n).toFixed(2)} ms/tenant  ${size.files} files, ${(size.bytes / 1e6).toFixed(1)} MB (${(size.bytes / n / 1e3).toFixed(1)} KB/tenant)`);
    const target = TARGETS.get(n);
    if (target) verdicts.push(`target: ${n.toLocaleString("en-US")} tenants under ${target.ms} ms and ${target.mb} MB: ${ms.toFixed(0)} ms, ${(size.bytes / 1e6).toFixed(1)} MB -> ${ms < target.ms && size.bytes / 1e6 < target.mb ? "met" : "NOT met"}`);
  }
  for (const v of verdicts) console.log(v);
}

main();
