/**
 * A small structured logger: plain `time level message key=value` lines on a
 * terminal, one JSON object per line with `json: true`. Child loggers carry
 * context (a job's class, jid and queue) into every line.
 *
 * Logged text often comes from a payload someone else wrote, so every line
 * is made safe: control characters and invisible formatting marks are
 * escaped (`\x1b`, `\u202e`) and long values cut to `maxFieldLength`
 * characters with the original length (`aaaa… (1048576 chars)`), in both
 * formats. A value that cannot be serialised is logged as a placeholder:
 * logging never throws.
 *
 * @module
 */
import { escapeJson, sanitize, truncate } from "./sanitize.ts";

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
  /** Longest field value written, in characters; default 500. The message may be four times as long. */
  maxFieldLength?: number;
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
  const max = options.maxFieldLength ?? 500;
  const make = (context: LogFields): Logger => {
    const log = (level: LogLevel) => (message: string, fields?: LogFields) => {
      if (RANK[level] < min) return;
      const all = fields ? { ...context, ...fields } : context;
      const time = new Date().toISOString();
      write(json ? jsonLine(time, level, message, all, max) : plainLine(time, level, message, all, max), level);
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

/** A value as JSON text, or a placeholder when it has none (a cycle, a BigInt, a throwing getter). */
function toJson(value: unknown): string {
  // An Error's own fields are not enumerable: JSON would write {}.
  if (value instanceof Error) return JSON.stringify(`${value.name}: ${value.message}`);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return '"[unserialisable]"';
  }
}

function plainLine(time: string, level: LogLevel, message: unknown, fields: LogFields, max: number): string {
  let line = `${time} ${level.toUpperCase().padEnd(5)} ${sanitize(String(message), 4 * max)}`;
  for (const key in fields) {
    const v = fields[key];
    let text: string;
    if (typeof v === "string") {
      const short = truncate(v, max);
      // Bare when nothing could split the line or fool a reader; else quoted, with escapes.
      text = /[\s"=]/.test(short) || sanitize(short, Infinity) !== short ? JSON.stringify(short) : short;
    } else text = truncate(toJson(v), max);
    line += ` ${sanitize(key, 100)}=${sanitize(text, Infinity)}`;
  }
  return line;
}

function jsonLine(time: string, level: LogLevel, message: unknown, fields: LogFields, max: number): string {
  const out: Record<string, unknown> = { time, level, msg: truncate(String(message), 4 * max) };
  for (const key in fields) {
    const v = fields[key];
    if (typeof v === "string") out[key] = truncate(v, max);
    else if (typeof v === "number" || typeof v === "boolean" || v === null || v === undefined) out[key] = v;
    else {
      // A short structure stays a structure; a long one becomes its cut-down JSON text.
      const text = toJson(v);
      let value: unknown = truncate(text, max);
      if (text.length <= max) {
        try {
          value = JSON.parse(text);
        } catch {
          // A function or a symbol: its text it is.
        }
      }
      out[key] = value;
    }
  }
  return escapeJson(toJson(out));
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
