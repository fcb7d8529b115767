import * as assert from "node:assert/strict";
import { operatorArgs, slurmConfValues, unpinnedImage } from "../journey/kube/slurm-operator";
import { allFrom, podSpecOf } from "../journey/fleet-journey";
import { restapiFailures } from "../journey/scaling";
import { rbacRefusals } from "../journey/kube/processes";
import { droppedSecurity, labelsNoPodCarries, unmatchedSelectors } from "../journey/kube/policies";
import { controlPlanePodLabels } from "../facts/control-plane";
import { SLURM_PART_POLICY_PODS } from "../journey/slurm/topology";

describe("the journey's real slurm-operator", () => {
  it("runs with its Deployment's arguments, its probes and metrics on the journey's loopback ports, as the given kubeconfig", () => {
    const chart = ["--controller-workers", "4", "--zap-log-level", "info", "--health-addr", ":8081", "--metrics-addr=:8080", "--leader-elect", "--leader-elect-namespace", "slinky"];
    assert.deepEqual(operatorArgs(chart, 18081, "/run/op.kubeconfig"), [
      "--controller-workers", "4", "--zap-log-level", "info",
      "--health-addr=127.0.0.1:18081", "--metrics-addr=127.0.0.1:18082",
      "--leader-elect", "--leader-elect-namespace", "slinky",
      "--kubeconfig=/run/op.kubeconfig",
    ]);
  });

  it("reads slurm.conf as slurmctld does: Key=Value lines, comments dropped, the last one winning", () => {
    const conf = "#\n### GENERAL ###\nClusterName=slurm_slurm\nSlurmctldHost=slurm-controller.tenant-acme # central\nSlurmctldPort=6817\nClusterName = clusterra-dev-acme\n";
    assert.deepEqual(slurmConfValues(conf), { ClusterName: "clusterra-dev-acme", SlurmctldHost: "slurm-controller.tenant-acme", SlurmctldPort: "6817" });
  });

  it("calls an image pinned by a tag other than latest or by a digest, and names the rest", () => {
    for (const image of ["ghcr.io/slinkyproject/slurmctld:26.05-ubuntu26.04", "docker.io/library/alpine:3.22", "localhost:5000/x:1", `alpine@sha256:${"a".repeat(64)}`]) assert.equal(unpinnedImage(image), undefined, image);
    assert.equal(unpinnedImage("docker.io/library/alpine:latest"), "docker.io/library/alpine:latest: the latest tag");
    // A CronJob's image is read from its job template (the control: CronJobs were once skipped).
    const cronJob = { jobTemplate: { spec: { template: { spec: { containers: [{ name: "backup", image: "mariadb:latest" }] } } } } };
    assert.equal(unpinnedImage(podSpecOf("cronjobs", cronJob).containers[0].image), "mariadb:latest: the latest tag");
    // A wave counted as on a chart only with objects to count (the control: 0/0 once passed).
    assert.deepEqual([allFrom({ on: 3, all: 3 }), allFrom({ on: 0, all: 0 }), allFrom({ on: 2, all: 3 }), allFrom(undefined)], [true, false, false, false]);
    assert.equal(podSpecOf("jobs", { template: { spec: { containers: [{ name: "x", image: "a:1" }] } } }).containers[0].image, "a:1");
    assert.equal(unpinnedImage("alpine"), "alpine: no tag (latest)");
    assert.equal(unpinnedImage("localhost:5000/alpine"), "localhost:5000/alpine: no tag (latest)");
  });

  it("finds the NodeSet controller's failed calls to its slurmrestd in the operator's log, and nothing else", () => {
    const refused = 'failed \\"Reservation\\" step: Get \\"http://slurm-restapi.slurm:6820/slurm/v0.0.44/reservation/SlurmOperatorMaint-w\\": dial tcp 127.0.1.1:6820: connect: connection refused';
    const log = [
      '{"level":"info","msg":"Starting EventSource","controller":"restapi-controller"}',
      `{"level":"error","msg":"encountered an error while reconciling request","controller":"nodeset-controller","error":"${refused}"}`,
      `{"level":"error","msg":"Reconciler error","controller":"nodeset-controller","error":"${refused}"}`,
      '{"level":"error","msg":"Reconciler error","controller":"nodeset-controller","error":"pods \\"w-0\\" is forbidden"}',
      "slurm-restapi: not JSON",
    ].join("\n");
    assert.deepEqual(restapiFailures(log), [JSON.parse(`"${refused}"`)]);
    assert.deepEqual(restapiFailures(""), []);
  });

  it("names each NetworkPolicy selector, own or peer, that matches none of the operators' pods", () => {
    const ctld = { "app.kubernetes.io/name": "slurmctld", "app.kubernetes.io/instance": "slurm" };
    const policies = [
      { metadata: { name: "same-namespace-only" }, spec: { podSelector: {}, ingress: [{ from: [{ podSelector: {} }] }] } },
      { metadata: { name: "slurmctld-egress" }, spec: { podSelector: { matchLabels: ctld }, egress: [{ to: [{ podSelector: { matchLabels: { "app.kubernetes.io/name": "slurmdbd" } } }] }, { to: [{ namespaceSelector: { matchLabels: { x: "y" } }, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } }] }] } },
      { metadata: { name: "login-egress" }, spec: { podSelector: { matchLabels: { "app.kubernetes.io/name": "login", "app.kubernetes.io/instance": "slurm-login" } } } },
    ];
    assert.deepEqual(unmatchedSelectors(policies, [{ ...ctld, "pod-template-hash": "1" }, { "app.kubernetes.io/name": "login", "app.kubernetes.io/instance": "slurm-login-login" }]), [
      'slurmctld-egress: its peer {"matchLabels":{"app.kubernetes.io/name":"slurmdbd"}} is no pod',
      'login-egress selects no pod ({"matchLabels":{"app.kubernetes.io/name":"login","app.kubernetes.io/instance":"slurm-login"}})',
    ]);
    // Expressions count as labels do (the control: they were once skipped), and an empty selector over no pod selects nothing.
    const expressions = [{ metadata: { name: "by-expression" }, spec: { podSelector: { matchExpressions: [{ key: "app.kubernetes.io/name", operator: "In", values: ["slurmctl"] }] } } }];
    assert.deepEqual(unmatchedSelectors(expressions, [ctld]), ['by-expression selects no pod ({"matchExpressions":[{"key":"app.kubernetes.io/name","operator":"In","values":["slurmctl"]}]})']);
    assert.deepEqual(unmatchedSelectors([{ ...expressions[0], spec: { podSelector: { matchExpressions: [{ key: "app.kubernetes.io/name", operator: "In", values: ["slurmctld"] }] } } }], [ctld]), []);
    assert.deepEqual(unmatchedSelectors([policies[0]], []), ["same-namespace-only selects no pod ({})", "same-namespace-only: its peer {} is no pod"]);
  });

  it("names each pod the Slurm part knows by labels that no live pod carries (its policies would hold for pods that do not exist)", () => {
    const known = Object.fromEntries(SLURM_PART_POLICY_PODS.map((p) => [p, controlPlanePodLabels(p)]));
    const live = SLURM_PART_POLICY_PODS.map((p) => ({ ...controlPlanePodLabels(p), "pod-template-hash": "1" }));
    assert.deepEqual(labelsNoPodCarries(known, live), []);
    // The control: the operator names its login pods otherwise than the Slurm part thinks.
    const renamed = live.map((l, i) => (SLURM_PART_POLICY_PODS[i] === "login" ? { ...l, "app.kubernetes.io/instance": "renamed" } : l));
    const out = labelsNoPodCarries(known, renamed);
    assert.equal(out.length, 1);
    assert.match(out[0], /^login \(.*\): no live pod carries these labels$/);
  });

  it("names each securityContext key the fleet asked that the operator's pod template lacks or changed", () => {
    const asked = { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] }, readOnlyRootFilesystem: true };
    const made = { capabilities: { drop: ["ALL"] }, readOnlyRootFilesystem: true, runAsUser: 401 };
    assert.deepEqual(droppedSecurity(asked, made), ["allowPrivilegeEscalation: false asked, absent made"]);
    assert.deepEqual(droppedSecurity(asked, { ...made, allowPrivilegeEscalation: false }), []);
    assert.deepEqual(droppedSecurity({ capabilities: { drop: ["ALL"] } }, { capabilities: { drop: ["NET_RAW"] } }), ['capabilities: {"drop":["ALL"]} asked, {"drop":["NET_RAW"]} made']);
  });
});

describe("a controller's refusals in its log", () => {
  it("names RBAC refusals, not a quota's refusal of a create its stale cache repeated", () => {
    // Both as controller-runtime logs them (JSON, quotes escaped), from journey runs.
    const rbac = String.raw`{"level":"error","msg":"Reconciler error","error":"persistentvolumeclaims \"mariadb-daily\" is forbidden: User \"system:serviceaccount:mariadb-operator:mariadb-operator\" cannot create resource \"persistentvolumeclaims\" in API group \"\" in the namespace \"tenant-acme\""}`;
    const quota = String.raw`{"level":"error","msg":"Reconciler error","error":"error creating Job: 1 error occurred:\n\t* error reconciling storage: error creating Backup storage PVC: persistentvolumeclaims \"mariadb-daily\" is forbidden: exceeded quota: control-plane, requested: requests.storage=10Gi, used: requests.storage=20Gi, limited: requests.storage=24Gi\n\n"}`;
    const clusterScope = String.raw`E1127 list failed: nodes is forbidden: User "system:serviceaccount:slinky:slurm-operator" cannot list resource "nodes" in API group "" at the cluster scope`;
    const nonResource = String.raw`forbidden: User "system:anonymous" cannot get path "/metrics"`;
    const podSecurity = String.raw`pods "x" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false`;
    assert.deepEqual(rbacRefusals([quota, rbac, "ok", clusterScope, podSecurity].join("\n")), [rbac, clusterScope]);
    assert.deepEqual(rbacRefusals(`x is ${nonResource}`), [`x is ${nonResource}`]);
    assert.deepEqual(rbacRefusals(quota), []);
  });
});
