import * as assert from "node:assert/strict";
import { parseSighting, writtenBeforeReady, type Sighting } from "../journey/kube/creation-order";

describe("the order the API server wrote objects in (a watch's resource versions)", () => {
  const owners = new Map([["tenant-acme/mariadb", "tenant-acme/mariadb"]]);
  const seen = (...lines: string[]) => lines.map((l) => parseSighting(l) as Sighting);

  it("reads a watch line: kind, namespace/name, resourceVersion, Ready", () => {
    assert.deepEqual(parseSighting("MariaDB tenant-acme/mariadb 1042 True"), { kind: "MariaDB", key: "tenant-acme/mariadb", rv: 1042, ready: true });
    assert.deepEqual(parseSighting("Backup tenant-acme/mariadb 1043 "), { kind: "Backup", key: "tenant-acme/mariadb", rv: 1043, ready: false });
    assert.equal(parseSighting("error: the server doesn't have a resource type"), undefined);
  });

  it("passes a Backup written after its MariaDB was first seen Ready", () => {
    assert.deepEqual(writtenBeforeReady(seen("MariaDB tenant-acme/mariadb 10 ", "MariaDB tenant-acme/mariadb 20 True", "Backup tenant-acme/mariadb 21 "), "MariaDB", "Backup", owners, new Set()), []);
  });

  it("catches a Backup written one write before its MariaDB was Ready, though both carry the same second", () => {
    const out = writtenBeforeReady(seen("MariaDB tenant-acme/mariadb 10 ", "Backup tenant-acme/mariadb 19 ", "MariaDB tenant-acme/mariadb 20 True"), "MariaDB", "Backup", owners, new Set());
    assert.deepEqual(out, ["Backup tenant-acme/mariadb: written at resourceVersion 19, before its MariaDB tenant-acme/mariadb was Ready (resourceVersion 20)"]);
  });

  it("catches a Backup whose MariaDB never was Ready, one never seen, and one written before the watch began", () => {
    assert.match(writtenBeforeReady(seen("Backup tenant-acme/mariadb 5 "), "MariaDB", "Backup", owners, new Set())[0], /was Ready \(never\)/);
    assert.match(writtenBeforeReady([], "MariaDB", "Backup", owners, new Set())[0], /never seen by the watch/);
    assert.match(writtenBeforeReady(seen("MariaDB tenant-acme/mariadb 2 True", "Backup tenant-acme/mariadb 9 "), "MariaDB", "Backup", owners, new Set(["tenant-acme/mariadb"]))[0], /before the watch began/);
  });
});
