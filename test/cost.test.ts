import * as assert from "node:assert/strict";
import { idleCost } from "../cli/cost";
import { plan } from "./helpers";

describe("idle cost", function () {
  this.timeout(60000);

  it("prices the central side from facts/prices.ts: host, NAT, address, volumes, key, secret, one NLB per tenant", async () => {
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
      "NLB clusterra-dev-acme": 16.43,
      "NLB clusterra-dev-globex": 16.43,
    });
    assert.equal(cost.totalUsd, 105.69);
  });

  it("leaves the tenant's slurmctld endpoint on central's bill, where central owns it", async () => {
    const cost = idleCost((await plan("tenant-acme-dev")).deployment);
    assert.equal(cost.lines.find((l) => l.item.startsWith("NLB")), undefined);
  });
});
