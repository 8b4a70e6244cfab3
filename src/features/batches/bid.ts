/**
 * Batch ids. A root batch's id is Sidekiq Pro's shape (`SecureRandom.urlsafe_base64(10)`:
 * 14 URL-safe characters); a child batch's id is its parent's id, a dot and
 * 14 more. The id is its own ancestry: a job's outcome, knowing only its
 * `bid`, names every ancestor's keys (a script must be given all its keys)
 * without reading Redis first.
 *
 * @module
 */
import { PayloadError } from "../../errors.ts";
import { describeValue } from "../../describe_value.ts";
import { fillRandom } from "../../random_bytes.ts";

/** The deepest a batch may be nested (a root is depth 1). */
export const MAX_BATCH_DEPTH = 10;

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
/** A root's 14 characters, then a dot and 14 more per level, at most {@link MAX_BATCH_DEPTH} levels. */
const BID = new RegExp(`^[A-Za-z0-9_-]{14}(?:\\.[A-Za-z0-9_-]{14}){0,${MAX_BATCH_DEPTH - 1}}$`);

/**
 * A new batch id: a root's, or a child's of `parent`.
 *
 * @example
 * ```ts
 * const root = newBid();          // "q0tJ3bS-w5bQZf"
 * const child = newBid(root);     // "q0tJ3bS-w5bQZf.Xy3..."
 * ```
 */
export function newBid(parent?: string): string {
  const bytes = fillRandom(new Uint8Array(14));
  let part = "";
  for (const b of bytes) part += ALPHABET[b & 63];
  if (parent === undefined) return part;
  if (bidChain(parent).length >= MAX_BATCH_DEPTH) {
    throw new PayloadError(
      `Cannot open a child batch of ${parent} as batches nest at most ${MAX_BATCH_DEPTH} deep`,
    );
  }
  return `${parent}.${part}`;
}

/**
 * Whether `value` is a batch id this feature made.
 *
 * @example
 * ```ts
 * isBid("q0tJ3bS-w5bQZf"); // true
 * ```
 */
export function isBid(value: unknown): value is string {
  if (typeof value !== "string" || value.length > 15 * MAX_BATCH_DEPTH) return false;
  if (seen.has(value)) return true;
  const ok = BID.test(value);
  if (ok) {
    if (seen.size >= 10_000) seen.clear();
    seen.add(value);
  }
  return ok;
}

/** Ids found valid: every job of a batch carries the same one. */
const seen = new Set<string>();

/**
 * Checks a batch id given by a user (`BatchSet.find`, `batches.find`).
 *
 * @example
 * ```ts
 * checkBid("q0tJ3bS-w5bQZf", "find a batch");
 * ```
 */
export function checkBid(value: unknown, action: string): string {
  if (!isBid(value)) {
    throw new PayloadError(
      `Cannot ${action} as the batch id must be one a batch was given (14 URL-safe characters, a dot before each child's): current value is ${
        describeValue(value)
      }`,
    );
  }
  return value;
}

/**
 * A batch and its ancestors, the batch first: `"a.b.c"` -> `["a.b.c", "a.b", "a"]`.
 *
 * @example
 * ```ts
 * bidChain("a.b"); // ["a.b", "a"]
 * ```
 */
export function bidChain(bid: string): string[] {
  const chain = [bid];
  for (let at = bid.lastIndexOf("."); at > 0; at = bid.lastIndexOf(".", at - 1)) chain.push(bid.slice(0, at));
  return chain;
}

/**
 * The parent's id of a child batch; undefined for a root.
 *
 * @example
 * ```ts
 * parentBid("a.b"); // "a"
 * ```
 */
export function parentBid(bid: string): string | undefined {
  const at = bid.lastIndexOf(".");
  return at < 0 ? undefined : bid.slice(0, at);
}
