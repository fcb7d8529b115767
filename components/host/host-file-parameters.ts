import * as pulumi from "@pulumi/pulumi";
import * as ssm from "@pulumi/aws/ssm";
import { hostFileParameterName, hostFileParameterValue, hostFileProblem, type HostFile } from "./host-files";

export interface HostFileParametersArgs {
  /** The parameters' path (no trailing slash): the host's role reads it, and only it. */
  readonly prefix: string;
  /** The files rendered before the deploy's values are known: their paths and modes are final, their contents are not (a component's outputs go into those). */
  readonly shape: readonly HostFile[];
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
    // Checked here, before any value is known: a bad path or mode is the program's own mistake,
    // and a file already over its tier without the deploy's values stays over with them.
    const problems = args.shape.map((f) => hostFileProblem(args.prefix, f)).filter((p): p is string => p !== undefined);
    if (problems.length > 0) throw new Error(`${args.host}: ${problems.join("; ")}`);
    this.parameters = args.shape.map(({ path: p }) => {
      // A value the deploy's ids push over the tier is not refused in here: an error inside an
      // output is a rejected promise the SDK reports as a serialization error and a crash. The
      // policy pack's AWS limits check refuses it, naming this parameter. (A path missing from
      // the files cannot happen: one function renders both, with and without the values.)
      const value = args.files.apply((files) => {
        const file = files.find((f) => f.path === p);
        if (!file) throw new Error(`${args.host}: no content for ${p}`);
        return hostFileParameterValue(file);
      });
      // Always the Standard tier (free): a tier that followed the size would replace the parameter
      // when a file shrank back (and the host would lose the file for that moment).
      return new ssm.Parameter(`${name}${p.replace(/\//g, "-")}`, { name: hostFileParameterName(args.prefix, { path: p }), type: "String", tier: "Standard", insecureValue: value, description: `${p} on ${args.host}, written by its host-files sync` }, { parent: this });
    });
    this.registerOutputs({ count: this.parameters.length });
  }
}
