import * as assert from "node:assert/strict";
import { awsInstanceLabels, claimFor, controllerEnv, discoveryZones, ec2NodeClassFindings, instanceTypeCatalogue, kubeletOverhead, kwokLaunchRbac, quantityIn } from "../journey/kube/karpenter";
import { disruptionOf, durationMs } from "../journey/scaling";
import { INSTANCE_TYPES } from "../facts/instance-types";
import { KARPENTER_DISCOVERY_TAG, KARPENTER_LABELS, WORKER_NODE } from "../facts/tenant-cluster";

describe("the journey's Karpenter (kwok provider, the fleet's EC2NodeClass)", () => {
  it("offers every instance type of the facts table in each zone, on-demand at its price, with the labels the AWS provider sets", () => {
    const catalogue = instanceTypeCatalogue(["us-east-1a", "us-east-1b"]);
    assert.equal(catalogue.length, Object.keys(INSTANCE_TYPES).length);
    const m7g = catalogue.find((t) => t.name === "m7g.xlarge");
    assert.ok(m7g);
    assert.equal(m7g.architecture, "arm64");
    assert.equal(m7g.resources.cpu, "4");
    // 16 GiB less the hypervisor's 7.5 %, as the AWS provider assumes (VM_MEMORY_OVERHEAD_PERCENT).
    assert.equal(m7g.resources.memory, "15155Mi");
    assert.equal(m7g.resources.pods, String(WORKER_NODE.maxPods));
    assert.deepEqual(m7g.offerings.map((o) => o.Requirements.find((r) => r.key === "topology.kubernetes.io/zone")?.values[0]), ["us-east-1a", "us-east-1b"]);
    const labels = Object.fromEntries(m7g.offerings[0].Requirements.map((r) => [r.key, r.values[0]]));
    assert.equal(labels[KARPENTER_LABELS.category], "m");
    assert.equal(labels[KARPENTER_LABELS.generation], "7");
    assert.equal(labels[KARPENTER_LABELS.cpu], "4");
    assert.equal(labels[KARPENTER_LABELS.capacityType], "on-demand");
    assert.equal(catalogue.find((t) => t.name === "t3.large")?.architecture, "amd64");
  });

  it("reads category, family, generation, vCPUs and MiB off a type's name and facts", () => {
    assert.deepEqual(awsInstanceLabels("c7g.2xlarge", INSTANCE_TYPES["c7g.2xlarge"]), {
      [KARPENTER_LABELS.category]: "c", [KARPENTER_LABELS.family]: "c7g", [KARPENTER_LABELS.generation]: "7", [KARPENTER_LABELS.cpu]: "8", [KARPENTER_LABELS.memory]: "16384",
    });
  });

  it("gives the controller its Deployment's environment as the kubelet would, and names what it cannot resolve", () => {
    const env = [
      { name: "LOG_LEVEL", value: "info" },
      { name: "SYSTEM_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
      { name: "CPU_REQUESTS", valueFrom: { resourceFieldRef: { resource: "requests.cpu", divisor: "1m" } } },
      { name: "MEMORY_LIMIT", valueFrom: { resourceFieldRef: { resource: "limits.memory", divisor: "0" } } },
    ];
    assert.deepEqual(controllerEnv(env, "karpenter", { requests: { cpu: "100m", memory: "512Mi" }, limits: { memory: "1Gi" } }), {
      env: { LOG_LEVEL: "info", SYSTEM_NAMESPACE: "karpenter", CPU_REQUESTS: "100", MEMORY_LIMIT: String(1024 ** 3) }, unresolved: [],
    });
    // No memory limit, and a Secret reference: named, never guessed.
    const missing = controllerEnv([...env, { name: "TOKEN", valueFrom: {} }], "karpenter", { requests: { cpu: "1" } });
    assert.deepEqual(missing.unresolved, ["MEMORY_LIMIT (limits.memory not set)", "TOKEN"]);
    assert.equal(missing.env.CPU_REQUESTS, "1000");
    assert.equal(quantityIn("1.5", "1m"), 1500);
    assert.equal(quantityIn("250m"), 1);
    assert.throws(() => quantityIn("lots"), /not a quantity/);
  });

  it("grants the kwok provider only what it does in place of EC2 and the kubelet: create Nodes, read KWOKNodeClasses", () => {
    const [role, binding] = kwokLaunchRbac("karpenter", "karpenter") as { rules?: { resources: string[]; verbs: string[] }[]; subjects?: unknown[] }[];
    assert.deepEqual(role.rules?.map((r) => `${r.resources.join()}:${r.verbs.join()}`), ["nodes:create", "kwoknodeclasses:get,list,watch"]);
    assert.deepEqual(binding.subjects, [{ kind: "ServiceAccount", name: "karpenter", namespace: "karpenter" }]);
  });

  const plan = [
    { type: "aws:ec2/subnet:Subnet", inputs: { availabilityZone: "us-east-1a", tags: { [KARPENTER_DISCOVERY_TAG]: "clusterra-dev-acme" } } },
    { type: "aws:ec2/subnet:Subnet", inputs: { availabilityZone: "us-east-1b", tags: { Name: "public" } } },
    { type: "aws:ec2/securityGroup:SecurityGroup", inputs: { tags: { [KARPENTER_DISCOVERY_TAG]: "clusterra-dev-acme" } } },
    { type: "aws:iam/instanceProfile:InstanceProfile", inputs: { name: "clusterra-dev-acme-worker" } },
  ];
  const selector = [{ tags: { [KARPENTER_DISCOVERY_TAG]: "clusterra-dev-acme" } }];

  it("finds an EC2NodeClass's subnets, security groups and instance profile in the tenant's plan, as the AWS provider would in its account", () => {
    const ok = ec2NodeClassFindings({ subnetSelectorTerms: selector, securityGroupSelectorTerms: selector, instanceProfile: "clusterra-dev-acme-worker" }, plan);
    assert.equal(ok.ready, true, ok.message);
    assert.deepEqual(ok.zones, ["us-east-1a"]);
    // Controls: each thing the plan does not hold keeps the class not Ready, with the provider's reason.
    const other = [{ tags: { [KARPENTER_DISCOVERY_TAG]: "clusterra-dev-globex" } }];
    assert.equal(ec2NodeClassFindings({ subnetSelectorTerms: other, securityGroupSelectorTerms: selector, instanceProfile: "clusterra-dev-acme-worker" }, plan).reason, "SubnetsNotFound");
    assert.equal(ec2NodeClassFindings({ subnetSelectorTerms: selector, securityGroupSelectorTerms: other, instanceProfile: "clusterra-dev-acme-worker" }, plan).reason, "SecurityGroupsNotFound");
    assert.equal(ec2NodeClassFindings({ subnetSelectorTerms: selector, securityGroupSelectorTerms: selector, instanceProfile: "clusterra-dev-globex-worker" }, plan).reason, "InstanceProfileNotFound");
    assert.deepEqual(discoveryZones(plan, KARPENTER_DISCOVERY_TAG, "clusterra-dev-acme"), ["us-east-1a"]);
  });

  it("reads a NodePool's consolidateAfter as Go writes durations, and nothing for Never", () => {
    assert.equal(durationMs("10m"), 600_000);
    assert.equal(durationMs("1h30m15s"), 5_415_000);
    assert.equal(durationMs("Never"), undefined);
    assert.equal(durationMs(undefined), undefined);
  });
});

describe("the journey's Karpenter: which node it launched", () => {
  it("finds the NodeClaim that names a node, and none for a node nobody claimed (the journey-made workers of old)", () => {
    const claims = [{ metadata: { name: "cpu-64hk2" }, status: { nodeName: "kwok-cpu-64hk2-thornflint" } }, { metadata: { name: "cpu-pending" }, status: {} }];
    assert.equal(claimFor(claims, "kwok-cpu-64hk2-thornflint")?.metadata.name, "cpu-64hk2");
    assert.equal(claimFor(claims, "cpu-m7g-xlarge"), undefined);
    assert.equal(claimFor([], "acme-server"), undefined);
  });
});

describe("the journey's Karpenter: reservations and removals", () => {
  it("reserves on every node what the EC2NodeClass's kubelet settings reserve, as the AWS provider does, and names what it cannot map", () => {
    const kubelet = { kubeReserved: { cpu: "100m", memory: "512Mi" }, systemReserved: { cpu: "100m", memory: "256Mi" }, evictionHard: { "memory.available": "200Mi" } };
    assert.deepEqual(kubeletOverhead(kubelet), {
      overhead: { KubeReserved: { cpu: "100m", memory: "512Mi" }, SystemReserved: { cpu: "100m", memory: "256Mi" }, EvictionThreshold: { memory: "200Mi" } }, problems: [],
    });
    assert.deepEqual(kubeletOverhead({ evictionHard: { "memory.available": "5%", "pid.available": "10" } }).problems, [
      "evictionHard memory.available: 5% (only a quantity of memory.available or nodefs.available is mapped)",
      "evictionHard pid.available: 10 (only a quantity of memory.available or nodefs.available is mapped)",
    ]);
    assert.deepEqual(kubeletOverhead(undefined).overhead, { KubeReserved: {}, SystemReserved: {}, EvictionThreshold: {} });
  });

  it("takes a removal as Karpenter's only when its log names the node in a disruption, and reads the reason", () => {
    const node = "kwok-cpu-mn8kg-monkeytorch-1-cg9qdvcgd8-1840994034";
    const line = JSON.stringify({ level: "INFO", message: "disrupting node(s)", controller: "disruption", command: `Empty/904d0029-546c-4e3d-b1aa-3c1f0e9c2d11: delete: nodepools=[cpu]: [${node}] (savings: $0.16)` });
    assert.equal(disruptionOf(`{"level":"INFO","message":"Starting workers"}\n${line}\n`, node), "Empty");
    // Controls: another node's disruption, and no disruption at all (a node deleted by someone else).
    assert.equal(disruptionOf(line, "kwok-compute-vplcs-jaguarnebula"), undefined);
    assert.equal(disruptionOf(JSON.stringify({ message: "deleted node", Node: { name: node } }), node), undefined);
  });
});
