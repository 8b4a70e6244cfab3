/**
 * A small structured logger: plain `time level message key=value` lines on a
 * terminal, one JSON object per line with `json: true`. Child loggers carry
 * context (a job's class, jid and queue) into every line.
 *
 * @module
 */

/** Log levels, least to most severe. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** Extra structured fields on a log line. */
export type LogFields = Record<string, unknown>;

/**
 * The logger interface every part of edgekiq logs through. Bring your own by
 * implementing these five methods.
 */
export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  /** A logger that adds `fields` to every line. */
  child(fields: LogFields): Logger;
}

/** Options for {@link createLogger}. */
export interface LoggerOptions {
  /** Lowest level written; default `"info"`. */
  level?: LogLevel;
  /** One JSON object per line instead of plain text. */
  json?: boolean;
  /** Where lines go; default `console.log` / `console.error` by level. */
  write?: (line: string, level: LogLevel) => void;
}

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };

/**
 * Creates a logger.
 *
 * @example
 * ```ts
 * const logger = createLogger({ json: true, level: "debug" });
 * logger.child({ jid: "abc" }).info("start", { queue: "default" });
 * // {"time":"...","level":"info","msg":"start","jid":"abc","queue":"default"}
 * ```
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const min = RANK[options.level ?? "info"];
  const write = options.write ??
    ((line: string, level: LogLevel) => (level === "error" || level === "warn" ? console.error : console.log)(line));
  const json = options.json ?? false;
  const make = (context: LogFields): Logger => {
    const log = (level: LogLevel) => (message: string, fields?: LogFields) => {
      if (RANK[level] < min) return;
      const all = fields ? { ...context, ...fields } : context;
      const time = new Date().toISOString();
      write(json ? JSON.stringify({ time, level, msg: message, ...all }) : plain(time, level, message, all), level);
    };
    return {
      debug: log("debug"),
      info: log("info"),
      warn: log("warn"),
      error: log("error"),
      child: (fields) => make({ ...context, ...fields }),
    };
  };
  return make({});
}

function plain(time: string, level: LogLevel, message: string, fields: LogFields): string {
  let line = `${time} ${level.toUpperCase().padEnd(5)} ${message}`;
  for (const key in fields) {
    const v = fields[key];
    line += ` ${key}=${typeof v === "string" && !/\s/.test(v) ? v : JSON.stringify(v)}`;
  }
  return line;
}

/**
 * A logger that drops everything; the default for tests and libraries.
 *
 * @example
 * ```ts
 * const worker = createWorker({ transport, jobs, logger: silentLogger });
 * ```
 */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  child: () => silentLogger,
};
