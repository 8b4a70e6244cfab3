/**
 * The one rule for a queue name, shared by job definitions, pushes, worker
 * configuration and the CLI: a name a worker can be told to listen to.
 * Commas separate a name from its weight (`critical,3`) and whitespace
 * separates flags on a command line, so neither may appear in a name;
 * control and invisible formatting characters are refused because names are
 * printed in logs, `edgekiq stats` and the dashboard. Anything else Sidekiq
 * accepts (`mailers`, `low-priority`, `app:emails`, `é`) is fine.
 *
 * @module
 */
import { hasUnsafeChars } from "./sanitize.ts";

/** The rule in words, for error messages: `'queue' must be ${QUEUE_NAME_RULE}`. */
export const QUEUE_NAME_RULE = "a non-empty string without spaces, commas or control characters";

/**
 * The rule as a pattern (no whitespace, no comma, at least one character),
 * for schema libraries; {@link isQueueName} also refuses the invisible
 * formatting characters `\s` does not cover.
 */
export const QUEUE_NAME_PATTERN: RegExp = /^[^\s,]+$/;

/**
 * Whether `name` is a queue name a worker can listen to.
 *
 * @example
 * ```ts
 * isQueueName("critical");   // true
 * isQueueName("a b");        // false
 * isQueueName("critical,3"); // false: that is a name with a weight
 * ```
 */
export function isQueueName(name: unknown): name is string {
  return typeof name === "string" && QUEUE_NAME_PATTERN.test(name) && !hasUnsafeChars(name);
}
