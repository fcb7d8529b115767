/**
 * One line of the journey's report: a step of the user's path that passed or failed, and
 * why. Every part of the journey (Kubernetes, Slurm) reports in this shape; the runner
 * prints one line per step and the summary `journey: N passed, M failed`.
 */
export interface JourneyStep {
  /** What the step proves, in the journey's words ("slurmd registers with slurmctld"). */
  readonly name: string;
  /** Whether it did. */
  readonly passed: boolean;
  /** Evidence: what was seen (the failure's cause, or the figure that proves success). */
  readonly detail: string;
  /** Not run here (by hand, without root or a tool), with how to run it in detail. */
  readonly skipped?: boolean;
  /**
   * A failure an open issue owns (its number and title), shown as FAILED with the issue named
   * and counted apart: the journey goes on showing it until that issue lands the fix.
   */
  readonly knownIssue?: string;
  /**
   * A report, not a check: what the journey itself did, or what a stand-in wrote. Printed as
   * `note`, apart from the checks, and never counted as passed or failed.
   */
  readonly note?: true;
}

/** A step that passed when `ok`, with the same detail either way. */
export function step(name: string, ok: boolean, detail: string): JourneyStep {
  return { name, passed: ok, detail };
}

/** A report of what the journey did or a stand-in wrote: no verdict (README, "The journey": checks and notes). */
export function note(name: string, detail: string): JourneyStep {
  return { name, passed: false, detail, note: true };
}

/** One printed line per step. */
export function formatStep(s: JourneyStep): string {
  const verdict = s.note ? "note   " : s.skipped ? "skipped" : s.passed ? "passed" : "FAILED";
  return `${verdict}  ${s.name}${s.detail ? `: ${s.detail}` : ""}${!s.passed && s.knownIssue ? ` [known: ${s.knownIssue}]` : ""}`;
}
