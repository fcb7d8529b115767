/**
 * The part of Go's text/template the fleet's ApplicationSet writes (goTemplate: true,
 * missingkey=error), evaluated as ArgoCD's ApplicationSet controller evaluates it, so
 * `fleet check` and the journey see the Applications it generates. Anything else in a
 * template is refused by name: the fleet writes nothing this does not read.
 *
 *   {{ .a.b }}                      a field (a missing key is an error, as missingkey=error)
 *   {{ index .a "k" }}              a map entry by a key that is not an identifier ("" when missing, as Go's)
 *   {{ if X }} … {{ else }} … {{ end }}   X a field, or `eq A B` with fields and "strings"
 *   {{ toJson .a }}                 a value as JSON (sprig's toJson: YAML reads it as a flow value)
 *   {{ toJson (index .a "k") }}     the same of a map entry
 *   {{- … -}}                       trims the spaces on that side
 */
export class GoTemplateError extends Error {}

type Token = { kind: "text"; text: string } | { kind: "action"; body: string };

function tokens(template: string): Token[] {
  const out: Token[] = [];
  let rest = template;
  while (rest.length) {
    const open = rest.indexOf("{{");
    if (open < 0) {
      out.push({ kind: "text", text: rest });
      break;
    }
    const close = rest.indexOf("}}", open);
    if (close < 0) throw new GoTemplateError(`unclosed action at ${JSON.stringify(rest.slice(open, open + 20))}`);
    let text = rest.slice(0, open);
    let body = rest.slice(open + 2, close);
    if (body.startsWith("- ")) {
      text = text.replace(/\s+$/, "");
      body = body.slice(1);
    }
    out.push({ kind: "text", text });
    let after = rest.slice(close + 2);
    if (body.endsWith(" -")) {
      body = body.slice(0, -1);
      after = after.replace(/^\s+/, "");
    }
    out.push({ kind: "action", body: body.trim() });
    rest = after;
  }
  return out;
}

/** A field path (`.a.b`) or a quoted string, as a value. */
function operand(word: string, data: unknown): unknown {
  if (/^"(?:[^"\\]|\\.)*"$/.test(word)) return JSON.parse(word) as string;
  if (!/^(\.[A-Za-z_][A-Za-z0-9_]*)+$/.test(word)) throw new GoTemplateError(`unsupported operand ${JSON.stringify(word)} (fields and "strings" only)`);
  let v = data;
  for (const key of word.slice(1).split(".")) {
    if (!v || typeof v !== "object" || !(key in (v as Record<string, unknown>))) throw new GoTemplateError(`map has no entry for key "${key}" (in ${word})`);
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

function words(body: string): string[] {
  return body.match(/"(?:[^"\\]|\\.)*"|\S+/g) ?? [];
}

function evaluate(body: string, data: unknown): unknown {
  const [head, ...args] = words(body);
  if (head === "index") {
    if (args.length !== 2) throw new GoTemplateError(`index takes a map and one key: {{${body}}}`);
    const map = operand(args[0], data);
    const key = operand(args[1], data);
    if (!map || typeof map !== "object") throw new GoTemplateError(`index of a value that is not a map (in {{${body}}})`);
    // As Go's: index of a missing key is the zero value, whatever missingkey says.
    return (map as Record<string, unknown>)[String(key)] ?? "";
  }
  if (head === "toJson") {
    // One operand, or one parenthesized action (`toJson (index .a "k")`).
    const rest = body.slice(head.length).trim();
    if (rest.startsWith("(") && rest.endsWith(")")) return { json: JSON.stringify(evaluate(rest.slice(1, -1), data)) };
    if (args.length !== 1) throw new GoTemplateError(`toJson takes one operand or one (action): {{${body}}}`);
    return { json: JSON.stringify(operand(args[0], data)) };
  }
  if (head === "eq") {
    if (args.length !== 2) throw new GoTemplateError(`eq takes two operands here: {{${body}}}`);
    return operand(args[0], data) === operand(args[1], data);
  }
  if (args.length) throw new GoTemplateError(`unsupported action {{${body}}}`);
  return operand(head, data);
}

function truthy(v: unknown): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (v && typeof v === "object") return Object.keys(v).length > 0;
  return !!v;
}

/** Renders a template against its parameters; a GoTemplateError names what it cannot do. */
export function renderGoTemplate(template: string, data: unknown): string {
  const list = tokens(template);
  let i = 0;
  const block = (emit: boolean, until: readonly string[]): { out: string; stop: string } => {
    let out = "";
    while (i < list.length) {
      const t = list[i++];
      if (t.kind === "text") {
        if (emit) out += t.text;
        continue;
      }
      if (until.includes(t.body)) return { out, stop: t.body };
      if (t.body.startsWith("if ")) {
        const on = emit && truthy(evaluate(t.body.slice(3), data));
        const then = block(emit && on, ["else", "end"]);
        let text = then.out;
        if (then.stop === "else") text += block(emit && !on, ["end"]).out;
        else if (then.stop !== "end") throw new GoTemplateError(`{{${t.body}}} has no {{end}}`);
        out += text;
        continue;
      }
      if (t.body === "end" || t.body === "else") throw new GoTemplateError(`unexpected {{${t.body}}}`);
      if (emit) {
        const v = evaluate(t.body, data);
        if (v && typeof v === "object" && "json" in v && t.body.startsWith("toJson ")) {
          out += (v as { json: string }).json;
          continue;
        }
        if (v !== null && typeof v === "object") throw new GoTemplateError(`{{${t.body}}} is not a string`);
        out += String(v);
      }
    }
    if (until.length) throw new GoTemplateError(`missing {{${until.join("}} or {{")}}}`);
    return { out, stop: "" };
  };
  return block(true, []).out;
}
