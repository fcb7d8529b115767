#!/usr/bin/env node
// The CLI runs precompiled JavaScript: `npm run build` (tsc -b) produces dist/.
require("../dist/cli/main.js").main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(`clusterra: internal error: ${err && err.message ? err.message : err}`);
    process.exit(3);
  },
);
