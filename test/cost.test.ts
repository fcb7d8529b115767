import * as assert from "node:assert/strict";
import { idleCost } from "../cli/cost";
import { plan } from "./helpers";

describe("idle cost", function () {
  this.timeout(60000);

  it("prices the central side from facts/prices.ts: host, NAT, address, volumes, key, secret", async () => {
    const cost = idleCost((await plan("central-dev")).deployment);
    const items = Object.fromEntries(cost.lines.map((l) => [l.item, l.monthlyUsd]));
    assert.deepEqual(items, {
      "EC2 t4g.medium": 24.53,
      "EBS gp3 root 30 GiB": 2.4,
      "EBS gp3 100 GiB": 8,
      "NAT gateway": 32.85,
      "public IPv4 address": 3.65,
      "KMS key": 1,
      "Secrets Manager secret": 0.4,
    });
    assert.equal(cost.totalUsd, 72.83);
  });

  it("charges each tenant its NLB endpoint", async () => {
    const cost = idleCost((await plan("tenant-acme-dev")).deployment);
    assert.equal(cost.lines.find((l) => l.item === "NLB clusterra-dev-acme")?.monthlyUsd, 16.43);
  });
});
