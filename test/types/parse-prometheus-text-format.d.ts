/** The parser the Prometheus endpoint's tests read the page with (it ships no types). */
declare module "parse-prometheus-text-format" {
  /** Families as the parser returns them: `type` in upper case, samples' values as strings. */
  export default function parsePrometheusTextFormat(text: string): unknown[];
}
