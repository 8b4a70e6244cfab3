/**
 * `-C config/sidekiq.yml`: Sidekiq's own config file, so a Rails team runs
 * edgekiq workers from the file its Ruby workers read. Parsed with the
 * `yaml` package; keys are read with or without Ruby's leading colon
 * (`:concurrency:` or `concurrency:`), as Sidekiq symbolizes them; a
 * top-level mapping whose name is not a setting is an environment section
 * (`production:`), as Sidekiq merges `opts[environment]`. Each key maps to
 * the edgekiq option of the same meaning and is then checked by the same
 * schema as a JSON config; a key edgekiq has no use for is refused with
 * what to do instead, never silently ignored.
 *
 * @module
 */
import { parseDocument } from "yaml";
import { sanitize } from "../sanitize.ts";
import { UsageError } from "./args.ts";
import { type CliConfig, parseConfig } from "./config.ts";

/**
 * Sidekiq keys edgekiq reads, by their Sidekiq name. Each maps to the
 * edgekiq config key of the same name and meaning (`queues` entries may be
 * `name` or `[name, weight]`; `capsules` is Sidekiq 7's
 * `{ name: { concurrency, queues } }`). The edgekiq-only keys of a JSON
 * config (`redisUrl`, `prefix`, `fetch`, ...) are accepted too.
 */
const SETTINGS = new Set([
  "concurrency",
  "queues",
  "timeout",
  "verbose",
  "tag",
  "labels",
  "require",
  "capsules",
  // edgekiq's own, for a file shared by nobody else
  "redisUrl",
  "json",
  "prefix",
  "shards",
  "fetch",
  "timeFormat",
]);

/** Keys Sidekiq knows that have no effect here, and why accepting them is honest. */
const IGNORED: Record<string, string> = {
  // Sidekiq drops it too (`opts.delete(:strict)`): queues without weights are checked in order.
  strict: "",
};

/** Sidekiq keys edgekiq refuses, with what to do instead. */
const REFUSED: Record<string, string> = {
  environment: "choose the environment with -e/--environment, APP_ENV or NODE_ENV",
  max_retries: "set retry on each job: defineJob({ retry })",
  dead_max_jobs: "the dead set keeps Sidekiq's defaults (10,000 jobs, 6 months)",
  dead_timeout_in_seconds: "the dead set keeps Sidekiq's defaults (10,000 jobs, 6 months)",
  average_scheduled_poll_interval: "set averageScheduledPollInterval in createWorker() (the CLI uses 5 s over TCP)",
  poll_interval_average: "set pollIntervalAverage in createWorker()",
  pidfile: "removed in Sidekiq 6: use your process manager",
  logfile: "removed in Sidekiq 6: edgekiq logs to standard output",
  schedule: "periodic jobs are declared in code: see docs/periodic.md",
  scheduler: "periodic jobs are declared in code: see docs/periodic.md",
  cron: "periodic jobs are declared in code: see docs/periodic.md",
  redis: "pass --redis-url or set REDIS_URL",
};

/** Ruby's `:key` written as a YAML key reads as the string ":key". */
function symbol(key: unknown): string {
  return String(key).replace(/^:/, "");
}

/** Strips Ruby's leading colons from every mapping key, at every depth (Sidekiq's `deep_symbolize_keys!`). */
function symbolize(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(symbolize);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [symbol(k), symbolize(v)]));
  }
  return value;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The settings of one level (the file or an environment section), refused keys reported. */
function settingsOf(
  section: Record<string, unknown>,
  where: string,
  problems: string[],
  environments?: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(section)) {
    const shown = `${where}${sanitize(key, 60)}`;
    if (SETTINGS.has(key)) out[key] = value;
    else if (key in IGNORED) continue;
    else if (key in REFUSED) problems.push(`${shown}: not supported by edgekiq: ${REFUSED[key]}`);
    else if (environments && isMapping(value)) environments[key] = value;
    else {
      problems.push(
        `${shown}: unknown key (known: ${[...SETTINGS].join(", ")}; a top-level mapping is an environment section)`,
      );
    }
  }
  return out;
}

/**
 * Parses a `sidekiq.yml` into the CLI's config, validated like a JSON
 * config file. Throws a {@link UsageError} naming every problem: YAML
 * syntax (with its line), ERB, refused or unknown keys, bad values.
 *
 * @example
 * ```ts
 * parseSidekiqYaml(":concurrency: 5\n:queues:\n  - [critical, 2]\n  - default\nproduction:\n  :concurrency: 20\n", "sidekiq.yml");
 * // { concurrency: 5, queues: ["critical,2", "default"], environments: { production: { concurrency: 20 } } }
 * ```
 */
export function parseSidekiqYaml(text: string, origin: string): CliConfig {
  const shownOrigin = sanitize(origin, 200);
  const erb = text.split("\n").findIndex((line) => line.includes("<%"));
  if (erb !== -1) {
    throw new UsageError(
      `invalid config ${shownOrigin}: line ${erb + 1} uses ERB (<%= ... %>), which edgekiq does not run ` +
        "(it is Ruby): write the value itself, or pass it as a flag (-c, -q, -t) or in the environment " +
        "(REDIS_URL); a file Sidekiq also reads can keep its ERB if edgekiq gets its own file",
    );
  }
  // Sidekiq reads it with YAML.safe_load(aliases: true): aliases allowed,
  // no Ruby objects. The yaml package bounds alias expansion (no
  // "billion laughs") and rejects unknown tags (!ruby/object).
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  const errors = [...doc.errors, ...doc.warnings];
  if (errors.length) {
    // The first line of the message ends "at line 2, column 1:" before an excerpt.
    const said = errors[0].message.split("\n")[0].replace(/:$/, "");
    throw new UsageError(`invalid config ${shownOrigin}: not YAML: ${sanitize(said, 200)}`);
  }
  let parsed: unknown;
  try {
    parsed = symbolize(doc.toJS({ maxAliasCount: 100 }) ?? {});
  } catch (error) {
    throw new UsageError(`invalid config ${shownOrigin}: not YAML: ${sanitize((error as Error).message, 200)}`);
  }
  if (!isMapping(parsed)) {
    throw new UsageError(`invalid config ${shownOrigin}: config: must be a mapping of Sidekiq settings`);
  }
  const problems: string[] = [];
  const sections: Record<string, unknown> = {};
  const config: Record<string, unknown> = settingsOf(parsed, "config.", problems, sections);
  const environments: Record<string, unknown> = {};
  for (const [name, section] of Object.entries(sections)) {
    environments[name] = settingsOf(section as Record<string, unknown>, `config.${sanitize(name, 60)}.`, problems);
  }
  if (problems.length) throw new UsageError(`invalid config ${shownOrigin}: ${problems.join("; ")}`);
  if (Object.keys(environments).length) config.environments = environments;
  try {
    return parseConfig(config, shownOrigin);
  } catch (error) {
    // The schema names sections `config.environments.<name>`; the file has them at the top.
    if (error instanceof UsageError) {
      throw new UsageError(error.message.replace(/config\.environments(\.|\[)/g, "config$1"));
    }
    throw error;
  }
}
