import { referenceDir } from "../fleet-tools/check";
import * as assert from "node:assert/strict";
import * as fs from "fs";
import * as path from "path";
import { parse } from "yaml";
import { architectureOf, hostPolicy, hostFilesPrefix, kubeconfigParameterName } from "../components/central/k3s-host";
import { k3sServerConfig, k3sServerUserData } from "../components/host/central-cloud-init";
import { argocdValues } from "../components/central/argocd-values";
import { hostAddress, vpcCidrProblem } from "../config/cidr";
import { CENTRAL_HOST_NUMBER } from "../facts/central-host";
import { byType, exampleFile, exampleFiles, examplePorts, exampleRoot, json, named, needHelm, plan, withValues } from "./helpers";
import * as pulumi from "@pulumi/pulumi";
import { ownStackReferenceName, refuseStrandedTenants, strandedMessage, strandedTenants, unservedRemovals } from "../components/central/live-tenants";
import { loadStackConfig } from "../planning/plan";
import { runOffline } from "../planning/engine";
import { encodeConfigValues, validateStack } from "../config";
import { clusterraProgram } from "../program";
import type { CentralConfig } from "../config/types";
import { STATE_TABLES } from "../facts/state-tables";
import { plannedHostFiles } from "../components/host/host-files";

/** The pinned ArgoCD chart's defaults, or undefined where ../shared/reference is absent. */
function argoChartDefaults(): Record<string, unknown> | undefined {
  const dir = referenceDir();
  return dir ? parse(fs.readFileSync(path.join(dir, "argo-cd-chart-10.1.1", "argo-cd-chart-values.yaml"), "utf8")) : undefined;
}

type Doc = { Statement: { Sid?: string; Action: string | string[]; Resource: string | string[]; Condition?: unknown; Principal?: unknown }[] };

describe("central stack (central-dev)", function () {
  this.timeout(60000);

  it("builds a private VPC: subnets per zone, one NAT gateway, S3 and DynamoDB gateway endpoints, flow logs, closed default group", async () => {
    const p = await plan("central-dev");
    assert.equal(byType(p, "aws:ec2/vpc:Vpc")[0].inputs?.cidrBlock, "10.0.0.0/16");
    const subnets = byType(p, "aws:ec2/subnet:Subnet");
    assert.deepEqual(subnets.map((s) => s.inputs?.cidrBlock).sort(), ["10.0.0.0/18", "10.0.192.0/28", "10.0.64.0/18"]);
    assert.ok(subnets.every((s) => s.inputs?.mapPublicIpOnLaunch === false));
    assert.equal(byType(p, "aws:ec2/natGateway:NatGateway").length, 1);
    assert.deepEqual(byType(p, "aws:ec2/vpcEndpoint:VpcEndpoint").map((e) => [e.inputs?.serviceName, e.inputs?.vpcEndpointType]).sort(), [
      ["com.amazonaws.us-east-1.dynamodb", "Gateway"],
      ["com.amazonaws.us-east-1.s3", "Gateway"],
    ]);
    const flow = byType(p, "aws:ec2/flowLog:FlowLog")[0];
    assert.equal(flow.inputs?.trafficType, "ALL");
    const group = byType(p, "aws:cloudwatch/logGroup:LogGroup")[0];
    assert.ok(String(group.inputs?.kmsKeyId).startsWith("arn:aws:kms:"));
    const dsg = byType(p, "aws:ec2/defaultSecurityGroup:DefaultSecurityGroup")[0];
    assert.equal(dsg.inputs?.ingress, undefined);
    assert.equal(dsg.inputs?.egress, undefined);
  });

  it("runs one Graviton K3s host: IMDSv2 with hop limit 1, encrypted gp3, no key pair, no public IP, protected data volume", async () => {
    const p = await plan("central-dev");
    const [host] = byType(p, "aws:ec2/instance:Instance");
    const i = host.inputs as Record<string, any>;
    assert.equal(i.instanceType, (exampleFile("central-dev").values["clusterra:controlPlane"] as { instanceType: string }).instanceType);
    assert.deepEqual([i.metadataOptions.httpTokens, i.metadataOptions.httpPutResponseHopLimit], ["required", 1]);
    assert.deepEqual([i.rootBlockDevice.volumeType, i.rootBlockDevice.encrypted], ["gp3", true]);
    assert.equal(i.keyName, undefined);
    assert.equal(i.associatePublicIpAddress, false);
    assert.equal(i.userDataReplaceOnChange, true, "a K3s upgrade is a new host on the same data volume");
    assert.equal(host.deleteBeforeReplace, true, "the old host lets go of the data volume first");
    assert.deepEqual(host.ignoreChanges, ["ami"]);
    const data = byType(p, "aws:ebs/volume:Volume")[0];
    assert.deepEqual([data.inputs?.encrypted, data.inputs?.type, data.protect], [true, "gp3", true]);
    const userData = String(i.userData);
    assert.match(userData, /^#cloud-config\n/);
    // The kubeconfig's publication is a host file (from SSM), its parameter named there.
    assert.ok(plannedHostFiles(p.deployment.deployment.resources, hostFilesPrefix("dev")).some((f) => f.content.includes(kubeconfigParameterName("dev"))));
    assert.ok(userData.includes("INSTALL_K3S_VERSION='v1.35.3+k3s1'"));
    assert.ok(userData.includes(data.id!.replace("-", "")), "mounts its own data volume by id");
    // It starts after its subnet's NAT route: its boot fetches its files and K3s.
    const route = byType(p, "aws:ec2/route:Route").find((r) => r.urn.endsWith("-private-default"));
    assert.ok(route && (host.dependencies ?? []).includes(route.urn), "the host does not wait for its NAT route");
  });

  it("keeps the host at a fixed address reserved in its subnet, the same across a K3s upgrade that replaces it", async () => {
    const p = await plan("central-dev");
    const [host] = byType(p, "aws:ec2/instance:Instance");
    const subnet = byType(p, "aws:ec2/subnet:Subnet").find((s) => s.outputs?.id === host.inputs?.subnetId || s.id === host.inputs?.subnetId);
    assert.ok(subnet, "the host's subnet is planned");
    const address = hostAddress(String(subnet.inputs?.cidrBlock), CENTRAL_HOST_NUMBER);
    assert.equal(host.inputs?.privateIp, address);
    const [reservation] = byType(p, "aws:ec2/subnetCidrReservation:SubnetCidrReservation");
    assert.deepEqual([reservation?.inputs?.cidrBlock, reservation?.inputs?.reservationType, reservation?.inputs?.subnetId, reservation?.protect], [`${address}/32`, "explicit", host.inputs?.subnetId, true]);
    assert.ok((host.dependencies ?? []).includes(reservation.urn), "the host starts once its address is reserved");
    // A K3s upgrade replaces the host (new user data); the address every tenant holds stays.
    const upgraded = await plan("central-dev", { "clusterra:controlPlane": { ...(exampleFile("central-dev").values["clusterra:controlPlane"] as object), k3sVersion: "v1.35.4+k3s1" } });
    assert.notEqual(byType(upgraded, "aws:ec2/instance:Instance")[0].inputs?.userData, host.inputs?.userData);
    assert.equal(p.outputs.hostPrivateIp, address, "what tenants read of central");
    assert.equal(upgraded.outputs.hostPrivateIp, address);
    assert.equal(byType(upgraded, "aws:ec2/instance:Instance")[0].inputs?.privateIp, address);
  });

  it("snapshots the data volume daily through DLM, deleting only its own snapshots", async () => {
    const p = await plan("central-dev");
    const [volume] = byType(p, "aws:ebs/volume:Volume");
    const [lifecycle] = byType(p, "aws:dlm/lifecyclePolicy:LifecyclePolicy");
    const details = lifecycle.inputs?.policyDetails as any;
    assert.deepEqual(details.targetTags, { "clusterra:backup": "dev-central-data" });
    assert.equal((volume.inputs?.tags as Record<string, string>)["clusterra:backup"], "dev-central-data");
    assert.deepEqual([details.schedules[0].createRule.interval, details.schedules[0].retainRule.count], [24, 14]);
    const policy = json<Doc>(named(p, "aws:iam/rolePolicy:RolePolicy", "central-dev-snapshots-policy").inputs?.policy);
    assert.deepEqual(policy.Statement.find((s) => s.Sid === "DeleteOwnSnapshots")!.Condition, { StringEquals: { "aws:ResourceTag/dlm:managed": "true" } });
  });

  it("waits for the host to publish its kubeconfig, then reads it from SSM on every run, kept secret", async () => {
    const p = await plan("central-dev");
    const [cmd] = byType(p, "command:local:Command");
    assert.match(String(cmd.inputs?.create), /aws ssm describe-parameters .*Values=\/clusterra\/dev\/central\/kubeconfig' --query 'Parameters\[0\]\.Description'/);
    assert.doesNotMatch(String(cmd.inputs?.create), /with-decryption/, "the command never prints the kubeconfig");
    const [host] = byType(p, "aws:ec2/instance:Instance");
    assert.deepEqual(cmd.inputs?.triggers, [host.id]);
    const [k8s] = byType(p, "pulumi:providers:kubernetes");
    assert.match(JSON.stringify(k8s.inputs?.kubeconfig), /ciphertext/, "kubeconfig reaches the provider as a secret");
  });

  it("creates the six state tables with their key schemas, PITR, KMS, deletion protection and protect", async () => {
    const p = await plan("central-dev");
    const tables = byType(p, "aws:dynamodb/table:Table");
    assert.equal(tables.length, 6);
    const keys = Object.fromEntries(tables.map((t) => [t.inputs?.name, [t.inputs?.hashKey, t.inputs?.rangeKey ?? null]]));
    assert.deepEqual(keys, {
      "clusterra-dev-tenants": ["tenantId", null],
      "clusterra-dev-users": ["tenantId", "userId"],
      "clusterra-dev-clusters": ["tenantId", "clusterId"],
      "clusterra-dev-events": ["clusterId", "eventTime"],
      "clusterra-dev-chats": ["conversationId", "messageTime"],
      "clusterra-dev-memories": ["userId", "memoryId"],
    });
    for (const t of tables) {
      const i = t.inputs as Record<string, any>;
      assert.equal(i.billingMode, "PAY_PER_REQUEST");
      assert.equal(i.pointInTimeRecovery.enabled, true);
      assert.equal(i.serverSideEncryption.enabled, true);
      assert.match(i.serverSideEncryption.kmsKeyArn, /^arn:aws:kms:/);
      assert.equal(i.deletionProtectionEnabled, true);
      assert.equal(t.protect, true);
    }
    const ttl = tables.filter((t) => (t.inputs as any).ttl?.enabled).map((t) => t.inputs?.name).sort();
    assert.deepEqual(ttl, ["clusterra-dev-chats", "clusterra-dev-events"]);
    const events = tables.find((t) => t.inputs?.name === "clusterra-dev-events")!.inputs as any;
    assert.deepEqual(events.globalSecondaryIndexes.map((g: any) => [g.name, g.hashKey, g.rangeKey]), [["byTenantTime", "tenantId", "eventTime"]]);
    // Every key attribute is declared, and nothing else (DynamoDB rejects unused attributes).
    for (const [name, spec] of Object.entries(STATE_TABLES)) {
      const t = tables.find((x) => x.inputs?.name === `clusterra-dev-${name}`)!.inputs as any;
      const declared = t.attributes.map((a: any) => a.name).sort();
      const used = [...new Set([spec.partitionKey, spec.sortKey, ...(spec.indexes ?? []).flatMap((x) => [x.partitionKey, x.sortKey])].filter(Boolean))].sort();
      assert.deepEqual(declared, used, name);
    }
  });

  it("keeps secrets in Secrets Manager under the stack's key, with a rotating, protected KMS key", async () => {
    const p = await plan("central-dev");
    const [secret] = byType(p, "aws:secretsmanager/secret:Secret");
    assert.equal(secret.inputs?.name, "clusterra/dev/session-signing-key");
    assert.match(String(secret.inputs?.kmsKeyId), /^arn:aws:kms:/);
    assert.equal(secret.protect, true);
    const [version] = byType(p, "aws:secretsmanager/secretVersion:SecretVersion");
    assert.match(JSON.stringify(version.inputs?.secretString), /ciphertext/);
    assert.deepEqual(version.ignoreChanges, ["secretString"], "generated once: a deploy does not rotate the key");
    const [key] = byType(p, "aws:kms/key:Key");
    assert.deepEqual([key.inputs?.enableKeyRotation, key.inputs?.deletionWindowInDays, key.protect], [true, 30, true]);
    const keyPolicy = json<Doc>(key.inputs?.policy);
    assert.ok(keyPolicy.Statement.every((s) => s.Action !== "kms:*"));
  });

  it("scopes cluster-api to its tables, their indexes and the signing secret, assumable only by the host role", async () => {
    const p = await plan("central-dev");
    const role = named(p, "aws:iam/role:Role", "central-dev-cluster-api-role");
    const trust = json<Doc>(role.inputs?.assumeRolePolicy);
    const hostRole = named(p, "aws:iam/role:Role", "central-dev-k3s-role");
    assert.deepEqual(trust.Statement[0].Condition, { ArnEquals: { "aws:PrincipalArn": [hostRole.outputs?.arn] } });
    const policy = json<Doc>(named(p, "aws:iam/rolePolicy:RolePolicy", "central-dev-cluster-api-access").inputs?.policy);
    const tables = policy.Statement.find((s) => s.Sid === "StateTables")!;
    assert.equal((tables.Resource as string[]).length, 12);
    assert.ok((tables.Resource as string[]).every((r) => r.startsWith("arn:aws:dynamodb:us-east-1:111122223333:table/clusterra-dev-")));
    assert.ok(!(tables.Action as string[]).some((a) => a.includes("*") || a === "dynamodb:DeleteTable"));
    const secret = byType(p, "aws:secretsmanager/secret:Secret")[0];
    assert.equal(policy.Statement.find((s) => s.Sid === "SigningKey")!.Resource, secret.outputs?.arn);
  });

  it("installs the pinned ArgoCD chart and one root Application on this environment's fleet folder", async () => {
    const p = await plan("central-dev");
    const [release] = byType(p, "kubernetes:helm.sh/v3:Release");
    assert.deepEqual([release.inputs?.chart, release.inputs?.version, release.inputs?.namespace], ["argo-cd", "10.1.1", "argocd"]);
    const [root] = byType(p, "kubernetes:argoproj.io/v1alpha1:Application");
    const spec = root.inputs?.spec as any;
    assert.deepEqual(spec.source, { repoURL: "https://github.com/clusterra/infra.git", targetRevision: "main", path: "fleet/central/dev", directory: { recurse: false } });
    assert.deepEqual(spec.syncPolicy.automated, { prune: true, selfHeal: true });
    assert.ok(root.dependencies?.includes(release.urn));
    const [k8s] = byType(p, "pulumi:providers:kubernetes");
    assert.ok(release.provider?.startsWith(k8s.urn));
  });

  it("publishes what tenant stacks need", async () => {
    const { outputs } = await plan("central-dev");
    for (const key of ["vpcId", "vpcCidr", "privateSubnetIds", "routeTableIds", "hostInstanceId", "hostPrivateIp", "hostSecurityGroupId", "kmsKeyArn", "heartbeatEndpoint", "accountId", "tenantRoleArns", "slurmctldEndpoints"]) {
      assert.ok(outputs[key] !== undefined, key);
    }
    assert.equal(outputs.accountId, "111122223333");
    assert.equal(outputs.heartbeatEndpoint, `https://${outputs.hostPrivateIp}:8443`);
    assert.deepEqual(outputs.tenantRoleArns, {
      acme: "arn:aws:iam::111122223333:role/clusterra-dev-tenant-acme",
      globex: "arn:aws:iam::111122223333:role/clusterra-dev-tenant-globex",
    });
    // Each tenant's slurmctld: the host, on the tenant's own NodePort.
    assert.deepEqual(outputs.slurmctldEndpoints, {
      acme: { host: outputs.hostPrivateIp, port: examplePorts("acme").slurmctld },
      globex: { host: outputs.hostPrivateIp, port: examplePorts("globex").slurmctld },
    });
  });

  it("writes cluster-api's Application and values to the fleet", async () => {
    const p = await plan("central-dev");
    const addOns = ["cert-manager", "cluster-api", "external-secrets", "mariadb-operator-crds", "mariadb-operator", "slurm-operator-crds", "slurm-operator"];
    assert.deepEqual(p.fleetFiles, [...addOns.map((a) => `fleet/central/dev/${a}.yaml`), ...addOns.map((a) => `fleet/central/dev/values/${a}.yaml`), "fleet/central/dev/values/facts.yaml", "fleet/central/dev/admission-policies.yaml", "fleet/central/dev/dns.yaml", "fleet/central/dev/tenants.yaml", "fleet/central/dev/tenant-entries.yaml", "fleet/central/dev/guards.yaml",
      ...["cilium", "cluster-manifests", "control-plane", "control-plane-manifests", "edge-agent", "entry", "external-secrets", "guards", "karpenter", "slurm", "slurm-operator", "slurm-operator-crds"].map((a) => `fleet/central/dev/tenants/values/${a}.yaml`),
      "fleet/central/dev/tenants/argocd-manager/argocd-manager.yaml",
      ...["tenant-cluster", "tenant-control-plane", "tenant-entry", "tenant-guards", "edge-agent"].map((c) => `fleet/charts/${c}/values.schema.json`)].sort());
    const values = parse(fs.readFileSync(path.join(p.fleetRoot!, "fleet/central/dev/values/cluster-api.yaml"), "utf8"));
    assert.deepEqual(values.image, { repository: "ghcr.io/clusterra/cluster-api", tag: "0.9.0" });
    assert.equal(values.tables.events, "clusterra-dev-events");
    assert.equal(values.port, 8443);
  });
});

describe("central building blocks", () => {
  it("tells Graviton instance types from x86 ones", () => {
    for (const t of ["t4g.medium", "m7g.large", "m7gd.xlarge", "c6gn.large", "r8g.2xlarge", "a1.large"]) assert.equal(architectureOf(t), "arm64", t);
    for (const t of ["t3.medium", "m7i.large", "g5.xlarge", "m7i-flex.large", "c5n.large"]) assert.equal(architectureOf(t), "x86_64", t);
  });

  it("the host policy can only publish its own parameter and encrypt it with the stack key", () => {
    const doc = JSON.parse(hostPolicy({ partition: "aws", region: "us-east-1", accountId: "111122223333", kmsKeyArn: "arn:aws:kms:us-east-1:111122223333:key/k", kubeconfigParameter: "/clusterra/dev/central/kubeconfig", filesPrefix: "/clusterra/dev/central/host-files", metricsNamespace: "Clusterra/dev/central" })) as Doc;
    const put = doc.Statement.find((s) => s.Sid === "KubeconfigWrite")!;
    assert.equal(put.Resource, "arn:aws:ssm:us-east-1:111122223333:parameter/clusterra/dev/central/kubeconfig");
    assert.deepEqual(doc.Statement.find((s) => s.Sid === "KubeconfigEncrypt")!.Condition, {
      StringEquals: { "kms:EncryptionContext:PARAMETER_ARN": "arn:aws:ssm:us-east-1:111122223333:parameter/clusterra/dev/central/kubeconfig" },
    });
    // Resource "*" only where the action has no resource type; PutMetricData is scoped by its namespace.
    const wildcard = doc.Statement.filter((s) => s.Resource === "*");
    assert.deepEqual(wildcard.map((s) => s.Sid), ["SessionManagerChannels", "PublishDiskMetrics"]);
    assert.deepEqual(doc.Statement.find((s) => s.Sid === "PublishDiskMetrics")!.Condition, { StringEquals: { "cloudwatch:namespace": "Clusterra/dev/central" } });
  });

  it("K3s runs with encrypted secrets, no ingress controller or service LB, and publishes its kubeconfig on every boot", () => {
    const init = { k3sVersion: "v1.35.3+k3s1", region: "us-east-1", kubeconfigParameter: "/p", kmsKeyId: "arn:k", dataVolumeId: "vol-0abc", nodeName: "clusterra-dev-central", nodeLabels: { a: "b" }, metrics: { region: "us-east-1", namespace: "Clusterra/dev/central", mounts: ["/"] }, filesPrefix: "/clusterra/dev/central/host-files" };
    const config = k3sServerConfig(init);
    assert.equal(config["secrets-encryption"], true);
    assert.deepEqual(config.disable, ["traefik", "servicelb"]);
    // Pod and service ranges no VPC CIDR can take (validation accepts RFC 1918 only).
    for (const key of ["cluster-cidr", "service-cidr"]) assert.match(vpcCidrProblem(String(config[key])) ?? "", /not a private/);
    const doc = parse(k3sServerUserData(init).replace(/^#cloud-config\n/, ""));
    assert.equal(config["node-name"], "clusterra-dev-central");
    // K3s installs only after the data volume is mounted, and never starts without it; the kubeconfig's publication is enabled once K3s is there.
    const boot = doc.write_files.find((f: any) => f.path === "/usr/local/sbin/clusterra-boot").content.split("\n") as string[];
    const at = (pattern: RegExp) => boot.findIndex((l) => pattern.test(l));
    assert.ok(at(/^\/usr\/local\/sbin\/clusterra-mount-data$/) > 0 && at(/^curl .* -o \/usr\/local\/sbin\/k3s-install.sh$/) > at(/clusterra-mount-data/), boot.join("\n"));
    assert.ok(at(/sh \/usr\/local\/sbin\/k3s-install.sh server$/) > at(/^curl /) && at(/^systemctl enable clusterra-publish-kubeconfig.service$/) > at(/k3s-install.sh server$/), boot.join("\n"));
    assert.ok(doc.write_files.some((f: any) => f.path === "/etc/systemd/system/k3s.service.d/10-data-volume.conf" && f.content.includes("RequiresMountsFor=/var/lib/rancher")));
    assert.equal(doc.packages, undefined, "AL2023's curl-minimal conflicts with a curl package");
    assert.ok(doc.write_files.some((f: any) => f.path === "/usr/local/sbin/clusterra-mount-data" && f.content.includes("nvme-Amazon_Elastic_Block_Store_vol0abc")));
    assert.doesNotMatch(k3sServerUserData(init), /AKIA|BEGIN .*PRIVATE KEY|password/i);
  });

  it("every ArgoCD value sets a key the pinned chart defines", function () {
    const dir = referenceDir();
    if (!dir) return this.skip(); // ../shared/reference is absent here (CI has it)
    const reference = parse(fs.readFileSync(path.join(dir, "argo-cd-chart-10.1.1", "argo-cd-chart-values.yaml"), "utf8"));
    const missing: string[] = [];
    // Maps the chart documents as free-form ("add parameters here").
    const freeForm = new Set(["configs.cm.", "configs.params."]);
    const walk = (ours: Record<string, unknown>, theirs: Record<string, unknown>, at: string) => {
      if (freeForm.has(at)) return;
      for (const [k, v] of Object.entries(ours)) {
        if (!(k in theirs)) missing.push(`${at}${k}`);
        else if (v && typeof v === "object" && !Array.isArray(v) && theirs[k] && typeof theirs[k] === "object" && Object.keys(theirs[k] as object).length > 0) walk(v as Record<string, unknown>, theirs[k] as Record<string, unknown>, `${at}${k}.`);
      }
    };
    walk(argocdValues("dev"), reference, "");
    assert.deepEqual(missing, []);
  });

  it("no ArgoCD value restates the pinned chart's default", function () {
    const defaults = argoChartDefaults();
    if (!defaults) return this.skip(); // ../shared/reference is absent here (CI has it)
    const restated: string[] = [];
    const walk = (ours: unknown, theirs: unknown, at: string) => {
      if (ours && typeof ours === "object" && !Array.isArray(ours)) {
        for (const [k, v] of Object.entries(ours)) walk(v, (theirs as Record<string, unknown> | undefined)?.[k], `${at}${k}.`);
      } else if (JSON.stringify(ours) === JSON.stringify(theirs)) restated.push(at.slice(0, -1));
    };
    walk(argocdValues("dev"), defaults, "");
    assert.deepEqual(restated, []);
  });
});

describe("ArgoCD's bounds on the central host", () => {
  it("gives each component the requests the host reserves for it and a memory limit above them", () => {
    const { CENTRAL_HOST_RESERVED, perPod } = require("../facts/central-host") as typeof import("../facts/central-host");
    const values = argocdValues("dev") as Record<string, { resources?: { requests: Record<string, string>; limits: Record<string, string> } }>;
    const components = { controller: "argocdController", repoServer: "argocdRepoServer", server: "argocdServer", redis: "argocdRedis", applicationSet: "argocdApplicationSet" } as const;
    for (const [key, reserved] of Object.entries(components)) {
      // Each pod its share: the controller's shards split its reservation.
      const r = perPod(CENTRAL_HOST_RESERVED[reserved]);
      const res = values[key]?.resources;
      assert.deepEqual(res?.requests, { cpu: `${r.cpuMillis}m`, memory: `${r.memoryMiB}Mi` }, key);
      assert.ok(Number.parseInt(res?.limits.memory ?? "0", 10) >= 4 * r.memoryMiB, `${key}: a memory limit at least four times its request`);
    }
  });
});

describe("ArgoCD's repositories", () => {
  it("declares, with OCI enabled, every registry a fleet Application pulls a chart from", function () {
    needHelm(this); // the tenants' ApplicationSet is expanded with the tenant-entry chart
    const { ociRepositories } = require("../components/central/argocd-values") as typeof import("../components/central/argocd-values");
    const declared = new Set(Object.values(ociRepositories()).map((r) => r.url));
    const { fleetDocuments } = require("../fleet-tools/files") as typeof import("../fleet-tools/files");
    // Every Application ArgoCD syncs: the fleet's own and those the tenants' ApplicationSet generates.
    const apps = fleetDocuments(exampleRoot()).documents.filter((d) => d.object.kind === "Application");
    const repoUrls = new Set(apps.flatMap((d) => ((d.object.spec as { sources?: { repoURL: string }[] }).sources ?? []).map((s) => s.repoURL)));
    const registries = [...repoUrls].filter((u) => !u.startsWith("https://"));
    assert.ok(registries.length >= 2, registries.join(", "));
    for (const u of registries) assert.ok(declared.has(u), `${u} is not declared to ArgoCD`);
  });
});

describe("a central deployed from a checkout without a live tenant's stack file", function () {
  this.timeout(60000);
  const centralConfig = () => loadStackConfig({ stack: "central-dev", root: exampleRoot() }).config as CentralConfig;
  const served = { acme: "arn:aws:iam::111122223333:role/a", globex: "arn:aws:iam::111122223333:role/g", initech: "arn:aws:iam::111122223333:role/i" };

  it("finds the tenants its last deployment served that no stack file joins and removeTenants does not name", () => {
    const config = centralConfig();
    assert.deepEqual(config.tenants.map((t) => t.id), ["acme", "globex"]);
    assert.deepEqual(strandedTenants(undefined, config), [], "the first deployment has no outputs");
    assert.deepEqual(strandedTenants({ acme: "r", globex: "r" }, config), []);
    assert.deepEqual(strandedTenants(served, config), ["initech"]);
    assert.deepEqual(strandedTenants(served, { ...config, removeTenants: ["initech"] }), []);
    // A name it never served (a typo) is told apart, to be warned about.
    assert.deepEqual(unservedRemovals(served, { removeTenants: ["initech", "initek"] }), ["initek"]);
    assert.deepEqual(unservedRemovals(undefined, { removeTenants: ["initek"] }), []);
  });

  /** refuseStrandedTenants run on the mock engine, central's own last outputs as given. */
  const refusal = async (previous: Record<string, unknown>, removeTenants: string[] = []) => {
    const config = { ...centralConfig(), removeTenants };
    const run = await runOffline("central-dev", {}, { region: "us-east-1", partition: "aws", accountId: "111122223333", stackOutputs: new Map([["central-dev", previous]]) }, async () => {
      try {
        await refuseStrandedTenants(config);
        return { refused: "" };
      } catch (e) {
        return { refused: (e as Error).message, runError: e instanceof pulumi.RunError };
      }
    });
    return run.outputs as { refused: string; runError?: boolean };
  };

  it("refuses to deploy, before any resource, naming the tenant, its stack file's absence and the two ways on", async () => {
    const r = await refusal({ tenantRoleArns: served });
    assert.equal(r.runError, true, "a run error: Pulumi prints it without a stack trace");
    assert.equal(r.refused, strandedMessage(centralConfig(), ["initech"]));
    assert.match(r.refused, /^central-dev serves tenant initech \(its last deployment's tenantRoleArns\), and no stack file in this checkout joins it to central-dev: deploying would remove its roles, host rules, route and endpoint while it is live\. Deploy from a checkout that has its stack file \(main, or the unmerged branch that added it\); to remove a tenant, its stack destroyed first, name it in stacks\/Pulumi\.central-dev\.yaml: clusterra:removeTenants: \[initech\]/);
  });

  it("names its own stack as its backend resolves it: qualified on Pulumi Cloud, short on a DIY backend", () => {
    assert.equal(ownStackReferenceName("acme-ops", "clusterra", "central-dev"), "acme-ops/clusterra/central-dev");
    assert.equal(ownStackReferenceName("organization", "clusterra", "central-dev"), "central-dev");
    assert.equal(ownStackReferenceName("", "clusterra", "central-dev"), "central-dev");
  });

  it("refuses in the whole program before any AWS resource is registered", async () => {
    const { values } = loadStackConfig({ stack: "central-dev", root: exampleRoot() });
    const run = await runOffline("central-dev", encodeConfigValues(values), { region: "us-east-1", partition: "aws", accountId: "111122223333", stackOutputs: new Map([["central-dev", { tenantRoleArns: served }]]) }, async () => {
      try {
        return await clusterraProgram(exampleRoot());
      } catch (e) {
        return { refused: (e as Error).message };
      }
    });
    assert.match(String(run.outputs.refused), /^central-dev serves tenant initech/);
    assert.deepEqual(run.deployment.deployment.resources.filter((r) => r.type.startsWith("aws:")).map((r) => r.type), []);
  });

  it("deploys when every served tenant still joins it, on its first deployment, and when the missing one is named for removal", async () => {
    assert.equal((await refusal({ tenantRoleArns: { acme: "r", globex: "r" } })).refused, "");
    assert.equal((await refusal({})).refused, "");
    assert.equal((await refusal({ tenantRoleArns: served }, ["initech"])).refused, "");
  });

  it("plans with a reference to its own last deployment (offline: none, so nothing is refused)", async () => {
    const central = await plan("central-dev");
    assert.deepEqual(byType(central, "pulumi:pulumi:StackReference").filter((r) => r.inputs?.name === "central-dev").map((r) => r.urn.split("::").pop()), ["central-dev-last-deployment"]);
  });

  it("accepts removeTenants naming a tenant whose stack file is gone, and refuses one still joined, or not a tenant id", () => {
    const issues = (removeTenants: unknown) => {
      const r = validateStack(withValues(exampleFile("central-dev"), { "clusterra:removeTenants": removeTenants }), exampleFiles().filter((f) => f.stack !== "central-dev"));
      return r.ok ? [] : r.issues.map((i) => `${i.key} = ${JSON.stringify(i.value)}: ${i.problem}; valid: ${i.valid}`);
    };
    assert.deepEqual(issues(["initech"]), []);
    assert.deepEqual(issues(["initech", "acme"]), [
      "clusterra:removeTenants[1] = \"acme\": stacks/Pulumi.tenant-acme-dev.yaml still joins tenant acme to this central; valid: the id of a tenant whose stack is destroyed and whose stack file is removed (`clusterra tenant remove --stack tenant-acme-dev` prints the order), or leave it out",
    ]);
    assert.equal(issues(["Initech!"]).length, 1);
    assert.equal(issues(["a", "a"]).length, 1);
  });
});
