/**
 * The admin API's argument checks, in edgekiq's error style: `Cannot
 * <action> as '<field>' must be <rule>: current value is <v>`.
 *
 * @module
 */
import { ConfigError } from "../errors.ts";
import { describeValue } from "../describe_value.ts";

/** A ConfigError in edgekiq's message style: `Cannot <action> as '<field>' must be <rule>: current value is <v>`. */
export function invalid(action: string, field: string, rule: string, value: unknown): ConfigError {
  return new ConfigError(`Cannot ${action} as '${field}' must be ${rule}: current value is ${describeValue(value)}`);
}

/** Checks a `(start, count)` page request. */
export function checkPage(action: string, start: number, count: number): void {
  if (!Number.isInteger(start) || start < 0) throw invalid(action, "start", "a whole number >= 0", start);
  if (!Number.isInteger(count) || count <= 0) throw invalid(action, "count", "a whole number > 0", count);
}

/** Checks a jid argument. */
export function checkJid(action: string, jid: unknown): asserts jid is string {
  if (typeof jid !== "string" || jid === "") throw invalid(action, "jid", "a non-empty string", jid);
}
