#!/usr/bin/env node
// The CLI runs precompiled JavaScript: `npm run build` (tsc -b) produces dist/.
// Exit through process.exitCode, never process.exit(): piped output must drain first.
const crypto = require("crypto");
const fs = require("fs");
const path = require("path");
const { spawnSync } = require("child_process");
const INTERNAL_ERROR = 3;
const ROOT = path.join(__dirname, "..");

/**
 * The project's sources whose text differs from what dist/ was built from. tsc -b records
 * each source's SHA-256 in dist/.tsbuildinfo; a checkout, a pull or an edit without a build
 * leaves dist/ stale, and a stale CLI would write an old fleet. Undefined: nothing built yet.
 */
function changedSources() {
  let info;
  try {
    info = JSON.parse(fs.readFileSync(path.join(ROOT, "dist", ".tsbuildinfo"), "utf8"));
  } catch {
    return undefined;
  }
  const changed = [];
  info.fileNames.forEach((name, i) => {
    if (name.includes("node_modules/")) return;
    const file = path.join(ROOT, "dist", name);
    const version = typeof info.fileInfos[i] === "string" ? info.fileInfos[i] : info.fileInfos[i].version;
    let text;
    try {
      text = fs.readFileSync(file);
    } catch {
      return changed.push(`${path.relative(ROOT, file)} (removed)`);
    }
    if (crypto.createHash("sha256").update(text).digest("hex") !== version) changed.push(path.relative(ROOT, file));
  });
  return changed;
}

/** Rebuilds dist/ when a source changed since the last build; false when the build fails. */
function upToDate() {
  const changed = changedSources();
  if (!changed || changed.length === 0) return true;
  const shown = changed.slice(0, 3).join(", ") + (changed.length > 3 ? ` and ${changed.length - 3} more` : "");
  console.error(`clusterra: ${changed.length} source file(s) changed since dist/ was built (${shown}); rebuilding with tsc -b`);
  let compiler;
  try {
    compiler = require.resolve("typescript/bin/tsc", { paths: [ROOT] });
  } catch {
    console.error("clusterra: TypeScript is not installed here (npm ci installs it); nothing was run");
    return false;
  }
  // The compiler's words go to stderr: stdout is the command's own (--json).
  const tsc = spawnSync(process.execPath, [compiler, "-b"], { cwd: ROOT, stdio: ["ignore", 2, 2] });
  if (tsc.status !== 0) {
    console.error("clusterra: the build failed (above); nothing was run");
    return false;
  }
  return true;
}

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

// V8's compiled code for the CLI's modules (Pulumi's SDK and the AWS provider are large) is
// kept between runs, beside npm's other caches; Node before 22.1 has no such cache. The folder
// is facts/project.ts cacheDir(ROOT, "compile"), written out: nothing compiled may load first.
require("module").enableCompileCache?.(path.join(ROOT, "node_modules", ".cache", "clusterra", "compile"));

const cli = upToDate() ? loadCli() : undefined;
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
