import * as assert from "node:assert/strict";
import { envFromSources } from "../journey/kube/pods";
import { initSql, mariadbAddress, mariadbNames, optionValue } from "../journey/kube/mariadb";
import { pinAddressFlags } from "../journey/kube/slurm-operator";
import { localPathStorageClass, localPathVolume } from "../journey/stand-ins";
import { readK3sServer } from "../journey/kube/k3s";
import { walkRefs } from "../journey/fleet-journey";

describe("the journey's real mariadb-operator (pure parts)", () => {
  it("gives a container every key of its envFrom sources, prefixed, a later source winning, a Secret's decoded", () => {
    const objects = {
      configMaps: new Map<string, Record<string, string>>([["mariadb-operator-env", { MARIADB_DEFAULT_VERSION: "11.8", WATCH_NAMESPACE: "" }], ["later", { MARIADB_DEFAULT_VERSION: "12.0" }]]),
      secrets: new Map<string, Record<string, string>>([["creds", { TOKEN: Buffer.from("s3cret").toString("base64") }]]),
    };
    const r = envFromSources([{ configMapRef: { name: "mariadb-operator-env" } }, { configMapRef: { name: "later" } }, { prefix: "X_", secretRef: { name: "creds" } }], objects);
    assert.deepEqual(r, { env: { MARIADB_DEFAULT_VERSION: "12.0", WATCH_NAMESPACE: "", X_TOKEN: "s3cret" }, missing: [] });
  });

  it("names an absent envFrom source the kubelet would refuse, and skips an optional one", () => {
    const objects = { configMaps: new Map<string, Record<string, string>>(), secrets: new Map<string, Record<string, string>>() };
    assert.deepEqual(envFromSources([{ configMapRef: { name: "absent" } }, { secretRef: { name: "maybe", optional: true } }], objects), { env: {}, missing: ["envFrom: ConfigMap absent"] });
  });

  it("initializes root as the official image does: its password, and root at MARIADB_ROOT_HOST with every privilege, quoted", () => {
    const sql = initSql({ MARIADB_ROOT_PASSWORD: "pa'ss\\word", MARIADB_ROOT_HOST: "%" }) ?? "";
    assert.match(sql, /ALTER USER 'root'@'localhost' IDENTIFIED BY 'pa\\'ss\\\\word';/);
    assert.match(sql, /CREATE USER IF NOT EXISTS 'root'@'%' IDENTIFIED BY 'pa\\'ss\\\\word';/);
    assert.match(sql, /GRANT ALL ON \*\.\* TO 'root'@'%' WITH GRANT OPTION;/);
    // No passwordless root left where a TCP client comes from (the operator's dials).
    assert.match(sql, /DROP USER IF EXISTS 'root'@'127\.0\.0\.1', 'root'@'::1';/);
    assert.equal(initSql({ MARIADB_ROOT_HOST: "%" }), undefined);
    assert.doesNotMatch(initSql({ MARIADB_ROOT_PASSWORD: "p", MARIADB_ROOT_HOST: "localhost" }) ?? "", /CREATE USER/);
  });

  it("quotes a value in a client option file, so a # or a quote stays part of the password", () => {
    assert.equal(optionValue('p#a"s\\s'), '"p#a\\"s\\\\s"');
  });

  it("resolves the names the operator dials a MariaDB by, each tenant's at its own address", () => {
    assert.deepEqual(mariadbNames("mariadb", "tenant-acme", "cluster.local"), [
      "mariadb.tenant-acme.svc.cluster.local", "mariadb.tenant-acme.svc", "mariadb.tenant-acme",
      "mariadb-0.mariadb-internal.tenant-acme.svc.cluster.local", "mariadb-0.mariadb-internal.tenant-acme.svc",
    ]);
    assert.notEqual(mariadbAddress(0), mariadbAddress(1));
  });

  it("pins a controller's probe and metrics listeners to loopback ports, adding them where the chart leaves the defaults (every address)", () => {
    assert.deepEqual(pinAddressFlags(["--metrics-addr=:8080", "--log-level=INFO"], 18091), ["--metrics-addr=127.0.0.1:18092", "--log-level=INFO", "--health-addr=127.0.0.1:18091"]);
  });
});

describe("K3s's local-storage add-on in the journey", () => {
  const claim = (over: Record<string, unknown> = {}, annotations: Record<string, string> = { "volume.kubernetes.io/selected-node": "central" }) => ({
    metadata: { name: "storage-mariadb-0", namespace: "tenant-acme", uid: "0f1e", annotations },
    spec: { storageClassName: "local-path", accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "10Gi" } } },
    status: { phase: "Pending" },
    ...over,
  });

  it("applies K3s's default StorageClass: local-path, bound when a pod is scheduled", () => {
    const sc = localPathStorageClass() as { metadata: { annotations: Record<string, string> }; volumeBindingMode: string; provisioner: string };
    assert.equal(sc.metadata.annotations["storageclass.kubernetes.io/is-default-class"], "true");
    assert.equal(sc.volumeBindingMode, "WaitForFirstConsumer");
    assert.equal(sc.provisioner, "rancher.io/local-path");
  });

  it("provisions a claim the scheduler placed on a node: a folder on that node, its size, bound to that claim alone", () => {
    const pv = localPathVolume(claim()) as { spec: { capacity: { storage: string }; claimRef: { uid: string }; nodeAffinity: { required: { nodeSelectorTerms: { matchExpressions: { values: string[] }[] }[] } }; hostPath: { path: string } } };
    assert.equal(pv.spec.capacity.storage, "10Gi");
    assert.equal(pv.spec.claimRef.uid, "0f1e");
    assert.deepEqual(pv.spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values, ["central"]);
    assert.match(pv.spec.hostPath.path, /^\/var\/lib\/rancher\/k3s\/storage\/pvc-0f1e_tenant-acme_storage-mariadb-0$/);
  });

  it("leaves a claim not yet placed, of another class, or already bound", () => {
    assert.equal(localPathVolume(claim({}, {})), undefined);
    assert.equal(localPathVolume(claim({ spec: { storageClassName: "gp3" } })), undefined);
    assert.equal(localPathVolume(claim({ status: { phase: "Bound" } })), undefined);
  });
});

describe("what a K3s server's user data keeps of K3s's packaged add-ons", () => {
  const userData = (config: string) => `#cloud-config\nwrite_files:\n  - path: /etc/rancher/k3s/config.yaml\n    content: |\n${config.split("\n").map((l) => `      ${l}`).join("\n")}\n`;
  it("keeps local-storage unless the config disables it, as a list or a comma-separated value", () => {
    assert.equal(readK3sServer(userData("disable:\n  - traefik\n  - servicelb"), "arm64", "central").localStorage, true);
    assert.equal(readK3sServer(userData("disable:\n  - traefik\n  - local-storage"), "arm64", "central").localStorage, false);
    assert.equal(readK3sServer(userData("disable: traefik,local-storage"), "arm64", "central").localStorage, false);
  });
});

describe("the journey's Secret references", () => {
  it("follows every Secret reference an operator's object names, and neither a ConfigMap's key nor a Secret its operator generates", () => {
    const found: string[] = [];
    walkRefs({
      rootPasswordSecretKeyRef: { name: "mariadb-root", key: "password", generate: true },
      passwordSecretKeyRef: { name: "mariadb-password", key: "password" },
      myCnfConfigMapKeyRef: { name: "mariadb-config", key: "my.cnf" },
      env: [{ name: "A", valueFrom: { configMapKeyRef: { name: "env", key: "A" } } }, { name: "B", valueFrom: { secretKeyRef: { name: "b", key: "B" } } }],
      volumes: [{ name: "v", secret: { secretName: "tls" } }],
    }, "", (where, name, key) => found.push(`${where} ${name}${key ? `/${key}` : ""}`));
    assert.deepEqual(found, ["passwordSecretKeyRef mariadb-password/password", "env[1].valueFrom.secretKeyRef b/B", "volumes[0].secret tls"]);
  });
});
