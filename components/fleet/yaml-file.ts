import { dump } from "js-yaml";

/**
 * One document as the fleet writes it. js-yaml rather than `yaml`'s stringify: about three
 * times faster (writing YAML is nearly all of `fleet write`'s time, `npm run bench`), and it
 * quotes every string YAML 1.1 would read as something else (`on`, `yes`, `0755`), the YAML
 * Helm and ArgoCD parse (go-yaml v2 through sigs.k8s.io/yaml). No line folding, no anchors.
 */
export function yamlDocument(document: unknown): string {
  return dump(document, { lineWidth: -1, noRefs: true });
}

/** A generated YAML file: a header saying where it comes from (`stack <name>`), then the documents. */
export function yamlFile(source: string, ...documents: unknown[]): string {
  const header = `# Generated from ${source}; edit the stack file, not this one.\n`;
  return header + documents.map(yamlDocument).join("---\n");
}
