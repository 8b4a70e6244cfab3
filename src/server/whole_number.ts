/**
 * Option checks shared by the worker and the serverless drain, so every bad
 * number is refused with the same kind of message.
 *
 * @module
 */
import { ConfigError } from "../errors.ts";
import { describeValue } from "../describe_value.ts";

/**
 * Returns `value` if it is a whole number >= `min` (and <= `max`, when
 * given); otherwise throws a {@link ConfigError} naming the action, the
 * option and the value.
 *
 * @example
 * ```ts
 * wholeNumber(-1, { action: "create capsule 'main'", name: "prefetch", min: 0 });
 * // ConfigError: Cannot create capsule 'main' as 'prefetch' must be a whole number >= 0: current value is -1
 * wholeNumber(0, { action: "create jobEvents()", name: "maxLen", min: 1, max: 100_000_000 });
 * // ConfigError: Cannot create jobEvents() as 'maxLen' must be a whole number from 1 to 100000000: current value is 0
 * ```
 */
export function wholeNumber(
  value: unknown,
  options: { action: string; name: string; min: number; max?: number },
): number {
  const { action, name, min, max } = options;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || (max !== undefined && value > max)) {
    const range = max === undefined ? `>= ${min}` : `from ${min} to ${max}`;
    throw new ConfigError(
      `Cannot ${action} as '${name}' must be a whole number ${range}: current value is ${describeValue(value)}`,
    );
  }
  return value;
}
