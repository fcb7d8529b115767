/**
 * Central's admission policy that sets back what Slinky's operator drops from a tenant's
 * Slurm daemons: which pods it matches and what it sets. The real API server evaluates it in
 * the journey (the admitted pods of every tenant's slurmctld and slurmdbd).
 */
import * as assert from "node:assert/strict";
import { PRIVILEGE_RESTORED_COMPONENTS, SLURM_DAEMON_PRIVILEGE_POLICY, slurmDaemonPrivilegePolicy } from "../components/fleet/central-admission";
import { k3sServerConfig } from "../components/host/central-cloud-init";
import { HARDENED_CONTAINER } from "../facts/control-plane";
import { slinkyPodLabels } from "../facts/fleet";
import { LABEL_KEYS } from "../facts/project";
import { MUTATING_ADMISSION_POLICY_ARGS } from "../facts/versions";

describe("central admission: no privilege gain for a tenant's Slurm daemons", () => {
  const [policy, binding] = slurmDaemonPrivilegePolicy() as [Record<string, any>, Record<string, any>];

  it("matches the pods of slurmctld and slurmdbd only, by the labels the operator gives them, on create", () => {
    assert.equal(policy.kind, "MutatingAdmissionPolicy");
    assert.deepEqual(policy.spec.matchConstraints.resourceRules, [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] }]);
    assert.equal(policy.spec.failurePolicy, "Fail");
    const condition: string = policy.spec.matchConditions[0].expression;
    for (const c of PRIVILEGE_RESTORED_COMPONENTS) for (const [k, v] of Object.entries(slinkyPodLabels(c))) assert.ok(condition.includes(`'${k}'`) && condition.includes(`'${v}'`), `${c}: ${k}=${v}`);
    assert.doesNotMatch(condition, /login|slurmrestd|mariadb/);
  });

  it("sets allowPrivilegeEscalation as the fleet asks on every container and init container, merged by name", () => {
    const expression: string = policy.spec.mutations[0].applyConfiguration.expression;
    assert.equal(policy.spec.mutations[0].patchType, "ApplyConfiguration");
    for (const field of ["containers", "initContainers"]) assert.ok(expression.includes(`Object.spec.${field}.securityContext{allowPrivilegeEscalation: ${HARDENED_CONTAINER.allowPrivilegeEscalation}}`), field);
    // Init containers only when the pod has some (an empty list is not written).
    assert.match(expression, /\?initContainers: has\(object\.spec\.initContainers\) \? optional\.of\(/);
  });

  it("is bound to every tenant's namespace and none of the platform's, and central's API server serves it", () => {
    assert.equal(binding.spec.policyName, SLURM_DAEMON_PRIVILEGE_POLICY);
    assert.deepEqual(binding.spec.matchResources.namespaceSelector, { matchExpressions: [{ key: LABEL_KEYS.tenant, operator: "Exists" }] });
    const args = k3sServerConfig({ nodeName: "n", nodeLabels: {} } as never)["kube-apiserver-arg"] as string[];
    for (const a of MUTATING_ADMISSION_POLICY_ARGS) assert.ok(args.includes(a), a);
  });
});
