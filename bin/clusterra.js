#!/usr/bin/env node
// The CLI runs precompiled JavaScript: `npm run build` (tsc -b) produces dist/.
// Exit through process.exitCode, never process.exit(): piped output must drain first.
const path = require("path");
const INTERNAL_ERROR = 3;

function loadCli() {
  const entry = path.join(__dirname, "..", "dist", "cli", "main.js");
  try {
    return require(entry);
  } catch (err) {
    if (err && err.code === "MODULE_NOT_FOUND" && String(err.message).includes(entry)) {
      console.error(
        "clusterra: the CLI is not built yet (no dist/cli/main.js). Run `npm run build` once, " +
          "or use `npm run plan -- --stack <name>` / `npm run policy -- check <file>`, which build first.",
      );
      return undefined;
    }
    throw err;
  }
}

const cli = loadCli();
if (!cli) {
  process.exitCode = INTERNAL_ERROR;
} else {
  cli.main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      console.error(`clusterra: internal error: ${err && err.message ? err.message : err}`);
      process.exitCode = INTERNAL_ERROR;
    },
  );
}
