/**
 * Queue lists and their modes, as Sidekiq's `Capsule#queues=`:
 * - strict: no weights given; always fetch in the listed order;
 * - weighted: `name,weight`; each fetch shuffles a list holding each queue
 *   `weight` times, then de-duplicates, so a queue comes first in proportion
 *   to its weight and none starves;
 * - random: every weight 1; a fresh random order per fetch.
 *
 * @module
 */
import { ConfigError } from "../errors.ts";
import { describe } from "../payload.ts";

/** How a capsule orders its queues for each fetch. */
export type QueueMode = "strict" | "weighted" | "random";

/** A parsed queue list. */
export interface QueueList {
  /** Distinct queue names, in the order given. */
  readonly names: readonly string[];
  /** Each queue's weight (0 when none was given). */
  readonly weights: Readonly<Record<string, number>>;
  /** The mode the weights imply. */
  readonly mode: QueueMode;
  /** The order to try queues in for the next fetch. */
  order(random?: () => number): string[];
}

/**
 * Parses `["critical,3", "default"]` into a {@link QueueList}.
 *
 * @example
 * ```ts
 * const list = parseQueues(["critical,3", "default,1"]);
 * list.mode;    // "weighted"
 * list.order(); // ["critical", "default"] three times out of four
 * ```
 */
export function parseQueues(specs: readonly string[]): QueueList {
  if (!Array.isArray(specs) || specs.length === 0) {
    throw new ConfigError(
      `Cannot configure queues as the list must name at least one queue: current value is ${describe(specs)}`,
    );
  }
  const names: string[] = [];
  const weights: Record<string, number> = Object.create(null);
  const expanded: string[] = [];
  for (const spec of specs) {
    if (typeof spec !== "string") {
      throw new ConfigError(
        `Cannot configure queues as each entry must be a string: current value is ${describe(spec)}`,
      );
    }
    const [name, weightText, extra] = spec.split(",").map((s) => s.trim());
    if (!name || /\s/.test(name) || extra !== undefined) {
      throw new ConfigError(`Cannot configure queue as '${spec}' is not "name" or "name,weight"`);
    }
    const weight = weightText === undefined ? 0 : Number(weightText);
    if (!Number.isInteger(weight) || weight < 0) {
      throw new ConfigError(
        `Cannot configure queue '${name}' as its weight must be a whole number >= 0: current value is ${
          describe(weightText)
        }`,
      );
    }
    if (!(name in weights)) names.push(name);
    weights[name] = weight;
    for (let i = 0; i < Math.max(weight, 1); i++) expanded.push(name);
  }
  const values = Object.values(weights);
  const mode: QueueMode = values.every((w) => w === 0)
    ? "strict"
    : values.every((w) => w === 1)
    ? "random"
    : "weighted";
  const order = mode === "strict" || names.length === 1 ? () => [...names] : (random: () => number = Math.random) => {
    const pool = expanded.slice();
    for (let i = pool.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [pool[i], pool[j]] = [pool[j], pool[i]];
    }
    return [...new Set(pool)];
  };
  return { names, weights, mode, order };
}
