import * as assert from "node:assert/strict";
import { carveSubnets, cidrsOverlap, hostAddress, vpcCidrProblem } from "../config/cidr";
import { subnetLayout } from "../config/subnet-layout";

describe("CIDR arithmetic", () => {
  it("accepts private /16 to /24 and nothing else", () => {
    assert.equal(vpcCidrProblem("10.0.0.0/16"), undefined);
    assert.equal(vpcCidrProblem("192.168.10.0/24"), undefined);
    assert.equal(vpcCidrProblem("172.31.0.0/16"), undefined);
    assert.match(vpcCidrProblem("172.32.0.0/16") as string, /private/);
    assert.match(vpcCidrProblem("100.64.0.0/16") as string, /private/);
  });

  it("detects overlap in both directions and not for neighbours", () => {
    assert.equal(cidrsOverlap("10.0.0.0/16", "10.0.128.0/20"), true);
    assert.equal(cidrsOverlap("10.0.128.0/20", "10.0.0.0/16"), true);
    assert.equal(cidrsOverlap("10.16.0.0/20", "10.16.16.0/20"), false);
  });

  it("carves subnets and host addresses", () => {
    assert.deepEqual(carveSubnets("10.0.0.0/16", 2, 1, 2), ["10.0.64.0/18", "10.0.128.0/18"]);
    assert.equal(hostAddress("10.0.64.0/18", 10), "10.0.64.10");
    assert.throws(() => carveSubnets("10.0.0.0/24", 5, 0, 1), /\/28/);
  });

  it("lays out one private subnet per zone and one /28 for the NAT gateway, without overlap", () => {
    assert.deepEqual(subnetLayout("10.0.0.0/16", 2), { private: ["10.0.0.0/18", "10.0.64.0/18"], public: "10.0.192.0/28" });
    for (const [cidr, zones] of [["10.16.0.0/20", 3], ["192.168.0.0/24", 6], ["10.1.0.0/24", 1]] as const) {
      const layout = subnetLayout(cidr, zones);
      const all = [...layout.private, layout.public];
      assert.equal(layout.private.length, zones);
      for (const a of all) {
        assert.ok(cidrsOverlap(cidr, a), `${a} inside ${cidr}`);
        for (const b of all) if (a !== b) assert.equal(cidrsOverlap(a, b), false, `${a} vs ${b}`);
      }
    }
  });
});
