#!/usr/bin/env node
// The CLI runs precompiled JavaScript: `npm run build` (tsc -b) produces dist/.
// Exit through process.exitCode, never process.exit(): piped output must drain first.
require("../dist/cli/main.js").main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    console.error(`clusterra: internal error: ${err && err.message ? err.message : err}`);
    process.exitCode = 3;
  },
);
