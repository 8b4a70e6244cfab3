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
import { describeValue } from "../describe_value.ts";

/** How a capsule orders its queues for each fetch. */
/** The largest queue weight accepted. */
export const MAX_WEIGHT = 1_000_000;

export type QueueMode = "strict" | "weighted" | "random";

/** A parsed queue list. */
export interface QueueList {
  /** Distinct queue names, in the order given. */
  readonly names: readonly string[];
  /** Each queue's weight (0 when none was given). */
  readonly weights: Readonly<Record<string, number>>;
  /** The mode the weights imply. */
  readonly mode: QueueMode;
  /**
   * The order to try queues in for the next fetch: all of them, or the
   * ones in `among` (a subset, in the list's order), ordered as the mode
   * says (a weighted order of a subset is the whole list's order with the
   * others left out, in distribution).
   */
  order(random?: () => number, among?: readonly string[]): string[];
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
      `Cannot configure queues as the list must name at least one queue: current value is ${describeValue(specs)}`,
    );
  }
  const names: string[] = [];
  const weights: Record<string, number> = Object.create(null);
  for (const spec of specs) {
    if (typeof spec !== "string") {
      throw new ConfigError(
        `Cannot configure queues as each entry must be a string: current value is ${describeValue(spec)}`,
      );
    }
    const [name, weightText, extra] = spec.split(",").map((s) => s.trim());
    if (!name || /\s/.test(name) || extra !== undefined) {
      throw new ConfigError(`Cannot configure queue as '${spec}' is not "name" or "name,weight"`);
    }
    const weight = weightText === undefined ? 0 : Number(weightText);
    if (!Number.isInteger(weight) || weight < 0 || weight > MAX_WEIGHT) {
      throw new ConfigError(
        `Cannot configure queue '${name}' as its weight must be a whole number from 0 to ${MAX_WEIGHT}: current value is ${
          describeValue(weightText)
        }`,
      );
    }
    if (!(name in weights)) names.push(name);
    weights[name] = weight;
  }
  const values = Object.values(weights);
  const mode: QueueMode = values.every((w) => w === 0)
    ? "strict"
    : values.every((w) => w === 1)
    ? "random"
    : "weighted";
  // Weighted order without replacement (Efraimidis-Spirakis): each queue
  // draws random^(1/weight) and the largest goes first, so a queue leads
  // with probability weight / total, as in Sidekiq's shuffled expanded list,
  // without building a list as long as the weights add up to.
  const order = mode === "strict" || names.length === 1
    ? (_random?: () => number, among: readonly string[] = names) => [...among]
    : (random: () => number = Math.random, among: readonly string[] = names) =>
      among
        .map((name) => [name, random() ** (1 / Math.max(weights[name], 1))] as const)
        .sort((a, b) => b[1] - a[1])
        .map(([name]) => name);
  return { names, weights, mode, order };
}
