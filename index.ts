/**
 * Entry point Pulumi runs (Pulumi.yaml main: dist/, package.json main: dist/index.js).
 * Bad configuration ends the run with the list of issues, not a stack trace.
 */
import * as pulumi from "@pulumi/pulumi";
import { ConfigError } from "./config";
import { clusterraProgram } from "./program";

export = async (): Promise<Record<string, unknown>> => {
  try {
    return await clusterraProgram();
  } catch (e) {
    if (e instanceof ConfigError) throw new pulumi.RunError(`invalid configuration:\n${e.message}`);
    throw e;
  }
};
