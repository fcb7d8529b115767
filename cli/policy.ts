/**
 * `clusterra policy check`: the command over the policy engine (planning/policy-check.ts).
 */
import { DeploymentFileError, checkDeploymentFile, formatReport, type PolicyReport } from "../planning/policy-check";
import { PROJECT_ROOT } from "../config";

const USAGE = "usage: clusterra policy check <resources.json> [--json] [--tenants a,b,...]";

/**
 * `clusterra policy check <resources.json> [--json] [--tenants a,b]` (args after
 * `policy`). Exit 0: no mandatory violation; 1: a mandatory policy failed; 2: usage
 * error or a missing, unreadable or non-deployment file (one line, no stack trace).
 */
export async function runPolicyCommand(
  args: readonly string[],
  out: (s: string) => void = (s) => process.stdout.write(s + "\n"),
  err: (s: string) => void = (s) => process.stderr.write(s + "\n"),
  root = PROJECT_ROOT,
): Promise<number> {
  const rest = [...args];
  if (rest[0] === "check") rest.shift();
  else if (rest[0] === "--help" || rest[0] === "-h" || rest.length === 0) {
    (rest.length === 0 ? err : out)(USAGE);
    return rest.length === 0 ? 2 : 0;
  } else {
    err(`clusterra policy: unknown command "${rest[0]}"; ${USAGE}`);
    return 2;
  }
  let json = false;
  let tenants: string[] | undefined;
  const files: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    if (a === "--json") json = true;
    else if (a === "--tenants" || a.startsWith("--tenants=")) {
      const v = a.includes("=") ? a.slice(a.indexOf("=") + 1) : rest[++i];
      if (v === undefined) {
        err(`clusterra policy check: --tenants needs a comma-separated list; ${USAGE}`);
        return 2;
      }
      tenants = v.split(",").map((t) => t.trim()).filter((t) => t.length > 0);
    } else if (a === "--help" || a === "-h") {
      out(USAGE);
      return 0;
    } else if (a.startsWith("-")) {
      err(`clusterra policy check: unknown option ${a}; ${USAGE}`);
      return 2;
    } else files.push(a);
  }
  if (files.length !== 1) {
    err(`clusterra policy check: expected one deployment file, got ${files.length}; ${USAGE}`);
    return 2;
  }
  let report: PolicyReport;
  try {
    report = checkDeploymentFile(files[0], { tenants, root });
  } catch (e) {
    if (e instanceof DeploymentFileError) {
      err(`clusterra policy check: ${e.message}`);
      return 2;
    }
    throw e;
  }
  out(json ? JSON.stringify(report, null, 2) : formatReport(report));
  return report.passed ? 0 : 1;
}
