// `npm test`: the suite without its end-to-end tests (tagged #end-to-end; `npm run
// test:end-to-end` runs them, and CI runs both). Files run in parallel, at least two at a
// time: each worker plans the example environment once (test/setup.ts) and the rest is
// CPU-bound, so two cores halve the minute (four workers at most).
const os = require("os");

module.exports = {
  spec: ["dist/test/**/*.test.js"],
  require: ["dist/test/setup.js"],
  grep: "#end-to-end",
  invert: true,
  parallel: true,
  // Each worker holds a planned example environment (about 250 MiB): a few are enough.
  jobs: Math.min(4, Math.max(2, os.availableParallelism())),
  timeout: 20000,
  "enable-source-maps": true,
};
