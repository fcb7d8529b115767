/**
 * The Pulumi program: reads and validates the stack's configuration, then builds the
 * central, tenant or connector side. The same function runs under `pulumi up` and,
 * offline, under `clusterra plan`.
 */
import * as pulumi from "@pulumi/pulumi";
import { configFromRuntime, PROJECT_ROOT } from "./config";
import type { StackConfig } from "./config/types";

/** `root`: the repository whose stack files the cross-stack checks read (a plan may name another). */
export async function clusterraProgram(root = PROJECT_ROOT): Promise<Record<string, unknown>> {
  const config = configFromRuntime(pulumi.getStack(), pulumi.runtime.allConfig(), root);
  return buildStack(config);
}

async function buildStack(config: StackConfig): Promise<Record<string, unknown>> {
  // Each side's module loads only when its kind runs: a tenant plan never loads central code.
  switch (config.kind) {
    case "central":
      return (await import("./components/central/stack")).centralStack(config);
    case "tenant":
      return (await import("./components/tenant/stack")).tenantStack(config);
    case "connector":
      return (await import("./components/connector/stack")).connectorStack(config);
  }
}
