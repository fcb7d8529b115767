// Runs bench/baseline/index.ts on the Pulumi mock engine through ts-node with
// type-checking (Pulumi's default for TypeScript programs).
const path = require("path");
const pulumi = require("@pulumi/pulumi");

pulumi.runtime.setMocks(
  {
    newResource: (args) => ({ id: `${args.name}-id`, state: args.inputs }),
    call: (args) => args.inputs,
  },
  "baseline",
  "bench",
  false,
);
require("ts-node").register({ project: path.join(__dirname, "tsconfig.json"), transpileOnly: false });
pulumi.runtime
  .runInPulumiStack(async () => require("./index.ts"))
  .then(() => pulumi.runtime.disconnect())
  .then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
