/**
 * Values Helm would ignore. Helm accepts any key; a chart reads only what its templates
 * name. A key path of ours is used when the chart's values.yaml has it, or its templates
 * read it (`.Values.a.b`, `index .Values "a" "b"`), or it lies under a value the templates
 * take whole (`toYaml .Values.a`, a `{}` default) or under a map they iterate (`range
 * .Values.nodesets`: its keys are names, their fields those of the default entries or read
 * from the loop variable), or one a variable holds that is handed to a named template whole).
 */
import * as fs from "fs";
import * as path from "path";
import { parse } from "yaml";

/** What a chart declares and reads. */
export interface ChartModel {
  readonly defaults: Record<string, unknown>;
  /** Dotted paths the templates read under .Values. */
  readonly reads: ReadonlySet<string>;
  /** Dotted paths the templates take whole (toYaml, tpl, with ... toYaml .). */
  readonly whole: ReadonlySet<string>;
  /** Dotted paths the templates iterate with range. */
  readonly ranged: ReadonlySet<string>;
  /** Every `.field` the templates read from anything (loop variables included). */
  readonly fields: ReadonlySet<string>;
  /** Fields of a loop variable the templates take whole (`toYaml $nodeset.podSpec`). */
  readonly wholeFields: ReadonlySet<string>;
  /** Fields dug out of a loop variable into one handed straight to a named template (`$login := $loginset | dig "login" dict`, `include "..." $login`): whole even where values.yaml lists some of their keys. */
  readonly dugWhole: ReadonlySet<string>;
  /** Subcharts by the key their values sit under (name or alias). */
  readonly subcharts: ReadonlyMap<string, ChartModel>;
}

const models = new Map<string, ChartModel>();

function templateText(dir: string): string {
  if (!fs.existsSync(dir)) return "";
  return fs.readdirSync(dir, { withFileTypes: true }).map((e) => (e.isDirectory() ? templateText(path.join(dir, e.name)) : /\.(yaml|yml|tpl|txt|json)$/.test(e.name) ? fs.readFileSync(path.join(dir, e.name), "utf8") : "")).join("\n");
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const isMap = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

/** Reads a chart folder (its values.yaml, templates and charts/ subcharts), once per folder. */
export function chartModel(chartDir: string): ChartModel {
  const known = models.get(chartDir);
  if (known) return known;
  const valuesFile = path.join(chartDir, "values.yaml");
  const defaults = fs.existsSync(valuesFile) ? ((parse(fs.readFileSync(valuesFile, "utf8")) as Record<string, unknown> | null) ?? {}) : {};
  const text = templateText(path.join(chartDir, "templates"));
  const reads = new Set<string>();
  const whole = new Set<string>();
  const ranged = new Set<string>();
  const wholeFields = new Set<string>();
  const ident = "[A-Za-z_][A-Za-z0-9_]*";
  for (const m of text.matchAll(new RegExp(`\\.Values((?:\\.${ident})+)`, "g"))) reads.add(m[1].slice(1));
  for (const m of text.matchAll(/index\s+\$?\.Values((?:\s+"[^"]+")+)/g)) reads.add([...m[1].matchAll(/"([^"]+)"/g)].map((x) => x[1]).join("."));
  for (const action of text.matchAll(/\{\{-?([\s\S]*?)-?\}\}/g)) {
    const body = action[1];
    const paths = [...body.matchAll(new RegExp(`\\.Values((?:\\.${ident})+)(?![.A-Za-z0-9_])`, "g"))].map((m) => m[1].slice(1));
    if (/\b(toYaml|toJson|toPrettyJson|tpl|merge|mustMerge|mergeOverwrite|deepCopy|omit|pick)\b/.test(body)) {
      paths.forEach((p) => whole.add(p));
      for (const m of body.matchAll(new RegExp(`\\$${ident}((?:\\.${ident})+)(?![.A-Za-z0-9_])`, "g"))) wholeFields.add(m[1].split(".").pop() as string);
    }
    if (/^\s*range\b/.test(body)) paths.forEach((p) => ranged.add(p));
  }
  // `$c := .Values.a.b ...` handed whole to a named template (`include "t" $c`, which formats
  // it with toYaml), directly or inside another variable (`$t := dict "spec" $c`): a.b taken
  // whole, as slurm's `controller.slurmctld` and `controller.podSpec`.
  // Only an action that is an assignment (`{{ $c := ... }}`), never `range $k, $v := ...`, whose entries are checked as a collection.
  const assigned = [...text.matchAll(new RegExp(`\\{\\{-?\\s*\\$(${ident})\\s*:=([^}]*)`, "g"))].map((m) => ({ name: m[1], expr: m[2] }));
  const included = new Set([...text.matchAll(new RegExp(`\\binclude\\s+"[^"]+"\\s+\\$(${ident})\\b`, "g"))].map((m) => m[1]));
  const handedStraight = new Set(included);
  const dugWhole = new Set<string>();
  for (let grew = true; grew; ) {
    grew = false;
    for (const a of assigned) {
      if (!included.has(a.name)) continue;
      for (const v of a.expr.matchAll(new RegExp(`\\$(${ident})\\b`, "g"))) if (!included.has(v[1])) { included.add(v[1]); grew = true; }
    }
  }
  for (const a of assigned) {
    if (!included.has(a.name)) continue;
    const m = new RegExp(`^\\s*\\.Values((?:\\.${ident})+)(?![.A-Za-z0-9_])`).exec(a.expr);
    if (m) whole.add(m[1].slice(1));
    // `$login := $loginset | dig "login" dict`, handed straight to a template: that field of a loop variable taken whole.
    const dug = new RegExp(`^\\s*\\$${ident}\\s*\\|\\s*dig\\s+"(${ident})"`).exec(a.expr);
    if (dug && handedStraight.has(a.name)) dugWhole.add(dug[1]);
  }
  // `with .Values.a` ... `toYaml .` before its end: a taken whole.
  for (const m of text.matchAll(new RegExp(`\\{\\{-?\\s*with\\s+\\$?\\.Values((?:\\.${ident})+)\\s*-?\\}\\}([\\s\\S]*?)\\{\\{-?\\s*end`, "g"))) {
    if (/\b(toYaml|toJson|tpl)\s+\.\s*[|}-]/.test(m[2])) whole.add(m[1].slice(1));
  }
  const fields = new Set([...text.matchAll(new RegExp(`\\.(${ident})`, "g"))].map((m) => m[1]));
  const subcharts = new Map<string, ChartModel>();
  const chartsDir = path.join(chartDir, "charts");
  const deps = ((parse(fs.readFileSync(path.join(chartDir, "Chart.yaml"), "utf8")) as { dependencies?: { name: string; alias?: string }[] }).dependencies ?? []);
  if (fs.existsSync(chartsDir)) {
    for (const e of fs.readdirSync(chartsDir, { withFileTypes: true })) {
      if (!e.isDirectory() || !fs.existsSync(path.join(chartsDir, e.name, "Chart.yaml"))) continue;
      const name = String((parse(fs.readFileSync(path.join(chartsDir, e.name, "Chart.yaml"), "utf8")) as { name: string }).name);
      const model = chartModel(path.join(chartsDir, e.name));
      subcharts.set(name, model);
      for (const d of deps) if (d.name === name && d.alias) subcharts.set(d.alias, model);
    }
  }
  const model = { defaults, reads, whole, ranged, fields, wholeFields, dugWhole, subcharts };
  models.set(chartDir, model);
  return model;
}

/** The union of the fields of a collection's default entries (a map of maps). */
function entryShape(defaults: unknown): Record<string, unknown> {
  if (!isMap(defaults)) return {};
  return Object.values(defaults).filter(isMap).reduce<Record<string, unknown>>((acc, entry) => ({ ...acc, ...entry }), {});
}

/**
 * Every key path of `values` the chart would ignore, dotted (`controller.extraConff`).
 * Lists are values, not checked inside.
 */
export function ignoredValues(chart: ChartModel, values: Record<string, unknown>): string[] {
  const ignored: string[] = [];
  const readBelow = (p: string) => chart.reads.has(p) || [...chart.reads].some((r) => r.startsWith(`${p}.`));
  const walk = (prefix: string, ours: Record<string, unknown>, defaults: unknown, inCollection: boolean): void => {
    for (const [key, value] of Object.entries(ours)) {
      const p = prefix ? `${prefix}.${key}` : key;
      if (chart.whole.has(p)) continue;
      const has = isMap(defaults) && key in defaults;
      const inDefaults = has ? (defaults as Record<string, unknown>)[key] : undefined;
      if (!prefix && key === "global") continue;
      if (!prefix && chart.subcharts.has(key) && !has) {
        if (isMap(value)) ignored.push(...ignoredValues(chart.subcharts.get(key) as ChartModel, value).map((s) => `${key}.${s}`));
        continue;
      }
      if (inCollection && ((!has && chart.wholeFields.has(key)) || chart.dugWhole.has(key))) continue;
      if (has || readBelow(p) || (inCollection && chart.fields.has(key))) {
        if (!isMap(value)) continue;
        if (chart.ranged.has(p)) {
          // Entries merged over a `<entry>Defaults` sibling (slurm's nodesetDefaults) have its fields too.
          const shape = { ...entryShape(inDefaults), ...(isMap(defaults) && isMap(defaults[`${key.replace(/s$/, "")}Defaults`]) ? (defaults[`${key.replace(/s$/, "")}Defaults`] as Record<string, unknown>) : {}) };
          for (const [name, entry] of Object.entries(value)) if (isMap(entry)) walk(`${p}.${name}`, entry, { ...shape, ...(isMap(inDefaults) && isMap(inDefaults[name]) ? inDefaults[name] : {}) }, true);
          continue;
        }
        // A `{}` default, a map keyed by labels (kubernetes.io/os: no template can name that
        // key), or a path read but nothing under it: the chart takes the map whole.
        if ((has && isMap(inDefaults) && (Object.keys(inDefaults).length === 0 || Object.keys(inDefaults).some((k) => !IDENTIFIER.test(k)))) || (!has && !inCollection && ![...chart.reads].some((r) => r.startsWith(`${p}.`)))) continue;
        walk(p, value, inDefaults, inCollection);
        continue;
      }
      ignored.push(p);
    }
  };
  walk("", values, chart.defaults, false);
  return ignored;
}
