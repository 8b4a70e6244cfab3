/**
 * Option checks shared by the worker and the serverless drain, so every bad
 * number is refused with the same kind of message.
 *
 * @module
 */
import { ConfigError } from "../errors.ts";
import { describe } from "../payload.ts";

/**
 * Returns `value` if it is a whole number >= `min`; otherwise throws a
 * {@link ConfigError} naming the action, the option and the value.
 *
 * @example
 * ```ts
 * wholeNumber(-1, { action: "create capsule 'main'", name: "prefetch", min: 0 });
 * // ConfigError: Cannot create capsule 'main' as 'prefetch' must be a whole number >= 0: current value is -1
 * ```
 */
export function wholeNumber(value: unknown, options: { action: string; name: string; min: number }): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < options.min) {
    throw new ConfigError(
      `Cannot ${options.action} as '${options.name}' must be a whole number >= ${options.min}: current value is ${
        describe(value)
      }`,
    );
  }
  return value;
}
