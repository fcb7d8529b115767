import * as pulumi from "@pulumi/pulumi";
import * as ssm from "@pulumi/aws/ssm";
import { hostFileParameterName, hostFileParameterValue, hostFileProblem, type HostFile } from "./host-files";

export interface HostFileParametersArgs {
  /** The parameters' path (no trailing slash): the host's role reads it, and only it. */
  readonly prefix: string;
  /** The files' paths, known before their contents are (a component's outputs go into those). */
  readonly paths: readonly string[];
  /** The files, path for path. */
  readonly files: pulumi.Output<readonly HostFile[]>;
  /** Whose files they are, for each parameter's description. */
  readonly host: string;
}

/**
 * One String parameter per host file (components/host/host-files.ts): a change to a script
 * is a change to its parameter, in place, and reaches the running host through its sync. Not
 * secret (scripts and units name parameters and roles, never their values): `insecureValue`,
 * which plans show (the provider hides `value` as a secret whatever it holds).
 */
export class HostFileParameters extends pulumi.ComponentResource {
  /** Every parameter: the host's instance depends on them, so its first boot finds them all. */
  public readonly parameters: ssm.Parameter[];

  constructor(name: string, args: HostFileParametersArgs, opts?: pulumi.ComponentResourceOptions) {
    super("clusterra:host:HostFileParameters", name, {}, opts);
    this.parameters = args.paths.map((p) => {
      const value = args.files.apply((files) => {
        const file = files.find((f) => f.path === p);
        if (!file) throw new Error(`${args.host}: no content for ${p}`);
        const problem = hostFileProblem(args.prefix, file);
        if (problem) throw new Error(`${args.host}: ${problem}`);
        return hostFileParameterValue(file);
      });
      // Always the Standard tier (free): a tier that followed the size would replace the parameter
      // when a file shrank back (and the host would lose the file for that moment). A file over
      // it is refused (hostFileProblem), and the AWS limits check holds every value to its tier.
      return new ssm.Parameter(`${name}${p.replace(/\//g, "-")}`, { name: hostFileParameterName(args.prefix, { path: p }), type: "String", tier: "Standard", insecureValue: value, description: `${p} on ${args.host}, written by its host-files sync` }, { parent: this });
    });
    this.registerOutputs({ count: this.parameters.length });
  }
}
