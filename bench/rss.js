// Preloaded into each benchmarked process: writes its peak resident memory (KiB) at exit.
const fs = require("fs");
process.on("exit", () => {
  if (process.env.BENCH_RSS_FILE) fs.writeFileSync(process.env.BENCH_RSS_FILE, String(process.resourceUsage().maxRSS));
});
