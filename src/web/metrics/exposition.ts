/**
 * Prometheus's text exposition format (version 0.0.4), written by hand.
 * The one well-kept exposition library, prom-client, needs Node's
 * built-ins, and edgekiq/web runs on Bun, Deno and Cloudflare Workers too;
 * the format itself is a few lines (a `# HELP` and a `# TYPE` per family,
 * then one `name{label="value"} number` per sample), so a writer that
 * escapes labels and help text is all it takes. OpenMetrics is not served:
 * every Prometheus-compatible scraper reads this format, and what the
 * other one adds (exemplars, `# EOF`, units) is nothing edgekiq reports.
 *
 * @module
 */
import { ConfigError } from "../../errors.ts";

/** Label names to values, in the order they are written. */
export type MetricLabels = Readonly<Record<string, string>>;

/** One sample of a counter or a gauge. */
export interface MetricSample {
  readonly labels?: MetricLabels;
  readonly value: number;
}

/** One histogram: cumulative counts at each upper bound (`le`, ascending), their sum and count. */
export interface HistogramSample {
  readonly labels?: MetricLabels;
  /** `[le, count of observations <= le]`, ascending by `le`; `+Inf` is added when missing. */
  readonly buckets: ReadonlyArray<readonly [le: number, count: number]>;
  readonly sum: number;
  readonly count: number;
}

/**
 * A metric family: its name, help text, type and samples. A counter's name
 * ends in `_total` (the sample's own name, as Prometheus's convention has
 * it); a histogram's samples are written as `<name>_bucket{le}`,
 * `<name>_sum` and `<name>_count`.
 */
export type MetricFamily =
  | {
    readonly name: string;
    readonly help: string;
    readonly type: "counter" | "gauge";
    readonly samples: readonly MetricSample[];
  }
  | {
    readonly name: string;
    readonly help: string;
    readonly type: "histogram";
    readonly samples: readonly HistogramSample[];
  };

/** The Content-Type of {@link renderExposition}'s text. */
export const EXPOSITION_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/**
 * Writes metric families in the text format. Families are written in the
 * order given; a name given twice (or already in `seen`, which collects
 * the names written, for text written in parts), a name or label name the format does not
 * allow, or a counter whose name does not end in `_total` is refused (a
 * scraper would reject the whole page for it).
 *
 * @example
 * ```ts
 * renderExposition([
 *   { name: "edgekiq_queue_size", help: "Jobs waiting.", type: "gauge", samples: [{ labels: { queue: "default" }, value: 3 }] },
 * ]);
 * // # HELP edgekiq_queue_size Jobs waiting.
 * // # TYPE edgekiq_queue_size gauge
 * // edgekiq_queue_size{queue="default"} 3
 * ```
 */
export function renderExposition(families: readonly MetricFamily[], seen: Set<string> = new Set()): string {
  const out: string[] = [];
  for (const family of families) {
    const { name, help, type } = family;
    if (!METRIC_NAME.test(name)) refuse(`its name is not a metric name: ${JSON.stringify(name)}`);
    if (seen.has(name)) refuse(`the family ${name} is given twice`);
    if (type === "counter" && !name.endsWith("_total")) refuse(`the counter ${name} does not end in _total`);
    seen.add(name);
    out.push(`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} ${type}`);
    if (family.type === "histogram") {
      for (const sample of family.samples) {
        let sawInf = false;
        for (const [le, count] of sample.buckets) {
          sawInf ||= le === Infinity;
          out.push(`${name}_bucket${labels(sample.labels, formatNumber(le))} ${formatNumber(count)}`);
        }
        if (!sawInf) out.push(`${name}_bucket${labels(sample.labels, "+Inf")} ${formatNumber(sample.count)}`);
        out.push(`${name}_sum${labels(sample.labels)} ${formatNumber(sample.sum)}`);
        out.push(`${name}_count${labels(sample.labels)} ${formatNumber(sample.count)}`);
      }
    } else {
      for (const sample of family.samples) out.push(`${name}${labels(sample.labels)} ${formatNumber(sample.value)}`);
    }
  }
  return out.length ? `${out.join("\n")}\n` : "";
}

function refuse(why: string): never {
  throw new ConfigError(`Cannot write metrics as ${why}`);
}

function labels(given: MetricLabels | undefined, le?: string): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(given ?? {})) {
    if (!LABEL_NAME.test(key) || key.startsWith("__") || key === "le" && le !== undefined) {
      refuse(`a label is not a label name: ${JSON.stringify(key)}`);
    }
    parts.push(`${key}="${escapeLabel(String(value))}"`);
  }
  if (le !== undefined) parts.push(`le="${le}"`);
  return parts.length ? `{${parts.join(",")}}` : "";
}

/** A label value as the format quotes it: backslash, double quote and line feed escaped. */
function escapeLabel(value: string): string {
  return value.replace(/[\\"\n]/g, (ch) => (ch === "\n" ? "\\n" : `\\${ch}`));
}

/** Help text: backslash and line feed escaped. */
function escapeHelp(value: string): string {
  return value.replace(/[\\\n]/g, (ch) => (ch === "\n" ? "\\n" : "\\\\"));
}

/** A sample value: Go's float syntax, which Prometheus parses (`+Inf`, `-Inf`, `NaN`). */
function formatNumber(n: number): string {
  if (n === Infinity) return "+Inf";
  if (n === -Infinity) return "-Inf";
  if (Number.isNaN(n)) return "NaN";
  return String(n);
}
