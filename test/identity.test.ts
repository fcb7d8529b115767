import * as assert from "node:assert/strict";
import { groupLines, passwdLines, userDirectory, withUsers } from "../components/identity/passwd";
import { validateStack } from "../config";
import { TENANT_ID_FLOOR, userProblems, type TenantUser } from "../config/users";
import { exampleFile, exampleFiles, withValues } from "./helpers";

const alice: TenantUser = { name: "alice", uid: 10001, gid: 10001 };
const bob: TenantUser = { name: "bob", uid: 10002, gid: 10002 };

describe("tenant users as passwd and group files", () => {
  it("gives each user a line with their ids and a home in their own directory on the shared file system", () => {
    assert.equal(userDirectory("/mnt/efs", alice), "/mnt/efs/users/alice");
    assert.deepEqual(passwdLines([alice, bob], "/mnt/efs"), ["alice:x:10001:10001::/mnt/efs/users/alice:/bin/sh", "bob:x:10002:10002::/mnt/efs/users/bob:/bin/sh"]);
    assert.deepEqual(groupLines([alice]), ["alice:x:10001:"]);
  });

  it("adds them to the image's accounts, replacing any line with the same name or id", () => {
    const base = "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000::/home/alice:/bin/bash\nold:x:10001:10001::/:/bin/sh\n";
    assert.equal(withUsers(base, passwdLines([alice], "/mnt/efs")), "root:x:0:0:root:/root:/bin/bash\nalice:x:10001:10001::/mnt/efs/users/alice:/bin/sh\n");
  });
});

describe("tenant users (validation)", () => {
  it("accepts distinct valid names with ids from the floor up", () => {
    assert.deepEqual(userProblems([alice, bob, { name: "_svc-1", uid: TENANT_ID_FLOOR, gid: TENANT_ID_FLOOR }]), []);
  });

  it("names every problem at once: a bad name, a duplicate name or uid, an id among system ids", () => {
    const problems = userProblems([alice, { name: "Alice Smith", uid: 5001, gid: 10003 }, { name: "alice", uid: 10001, gid: 999 }]);
    assert.deepEqual(problems.map((p) => [p.index, p.field, p.value, p.problem]), [
      [1, "name", "Alice Smith", "not a valid Linux user name"],
      [1, "uid", 5001, "collides with the images' system and default user ids"],
      [2, "name", "alice", "duplicates users[0].name"],
      [2, "gid", 999, "collides with the images' system and default user ids"],
      [2, "uid", 10001, "duplicates users[0].uid"],
    ]);
    assert.match(problems[1].valid, /from 10000 to 65533/);
  });
});

describe("tenant users in the stack file (clusterra:users)", () => {
  it("types them with the gid defaulting to the uid", () => {
    const r = validateStack(exampleFile("tenant-acme-dev"), exampleFiles());
    assert.ok(r.ok && r.config.kind === "tenant");
    assert.deepEqual(r.config.users, [alice, bob]);
  });

  it("rejects bad users at once, each with its key, value and what is valid, keeping the file's indexes", () => {
    const file = withValues(exampleFile("tenant-acme-dev"), { "clusterra:users": [{ name: "alice", uid: "x" }, { name: "root", uid: 0 }, { name: "bob", uid: 10002, gid: 10002 }, { name: "bob", uid: 10002 }] });
    const r = validateStack(file, exampleFiles());
    assert.ok(!r.ok);
    const users = r.issues.filter((i) => i.key.startsWith("clusterra:users")).map((i) => [i.key, i.value, i.problem]);
    assert.deepEqual(users.filter(([k]) => k !== "clusterra:users[0].uid"), [
      ["clusterra:users[1].uid", 0, "collides with the images' system and default user ids"],
      ["clusterra:users[1].gid", 0, "collides with the images' system and default user ids"],
      ["clusterra:users[3].name", "bob", "duplicates users[2].name"],
      ["clusterra:users[3].uid", 10002, "duplicates users[2].uid"],
    ]);
    assert.ok(users.some(([k]) => k === "clusterra:users[0].uid"), "the schema names the uid that is not a number");
  });
});
