/**
 * Ready-made `each` sources for iterable jobs: an array, a numeric range,
 * and keyset pagination over any store. Each takes the cursor `each`
 * received and yields `[item, cursor]` pairs, the cursor being where to
 * resume once that item is done.
 *
 * For arrays and ranges the cursor written is the same number Sidekiq's
 * `array_enumerator` writes: the index of the next item.
 *
 * @module
 */
import { IterationError } from "../../errors.ts";
import { describeValue } from "../../describe_value.ts";

/** One step of an iteration: an item, and the cursor to resume from once it is done. */
export type IterationStep<I, C> = readonly [item: I, cursor: C];

/**
 * Walks an array from the saved index. The cursor is the index of the next
 * item (`i + 1` once item `i` is done), as Sidekiq's `array_enumerator`.
 *
 * @example
 * ```ts
 * each: (ctx, cursor) => iterateArray(["a", "b", "c"], cursor),
 * ```
 */
export function* iterateArray<T>(items: readonly T[], cursor: number | null): Generator<IterationStep<T, number>> {
  if (!Array.isArray(items)) {
    throw new IterationError(`Cannot iterate as 'items' must be an array: current value is ${describeValue(items)}`);
  }
  const start = cursor ?? 0;
  if (!Number.isInteger(start) || start < 0) {
    throw new IterationError(
      `Cannot resume iterateArray as the cursor must be an index >= 0: current value is ${describeValue(cursor)}`,
    );
  }
  for (let i = start; i < items.length; i++) yield [items[i], i + 1];
}

/** A numeric range for {@link iterateRange}. */
export interface RangeOptions {
  /** The first number. */
  from: number;
  /** Where to stop: the range ends before it (as `for (n = from; n < to; n += step)`). */
  to: number;
  /** The step; default 1. Negative walks down (`n > to`). */
  step?: number;
}

/**
 * Walks numbers from `from` up to (not including) `to`. The cursor is the
 * next number: ids, timestamps or offsets resume where they stopped.
 * `from`, `to` and `step` must lie within `Number.MAX_SAFE_INTEGER`, where
 * every step still moves (bigger ids: page them with {@link iterateKeyset}
 * and string keys); otherwise it throws an `IterationError`.
 *
 * @example
 * ```ts
 * each: (ctx, cursor) => iterateRange({ from: 1, to: 1_000_001, step: 1000 }, cursor), // batch starts
 * ```
 */
export function* iterateRange(range: RangeOptions, cursor: number | null): Generator<IterationStep<number, number>> {
  const { from, to, step = 1 } = range ?? ({} as RangeOptions);
  for (const [name, value] of [["from", from], ["to", to], ["step", step]] as const) {
    if (typeof value !== "number" || !Number.isFinite(value)) {
      throw new IterationError(
        `Cannot iterate as '${name}' must be a finite number: current value is ${describeValue(value)}`,
      );
    }
    // Past 2^53 `n + step` can round back to `n`: the job would re-run one item forever.
    if (Math.abs(value) > Number.MAX_SAFE_INTEGER) {
      throw new IterationError(
        `Cannot iterate as '${name}' must be between -Number.MAX_SAFE_INTEGER and Number.MAX_SAFE_INTEGER: ` +
          `current value is ${describeValue(value)}`,
      );
    }
  }
  if (step === 0) throw new IterationError("Cannot iterate as 'step' must not be 0: current value is 0");
  const start = cursor ?? from;
  const ahead = (n: number) => (step > 0 ? n < to : n > to);
  // A cursor past the end is where a finished range stops (its last `n + step`); one still to walk must be safe.
  if (
    typeof start !== "number" || !Number.isFinite(start) || (Math.abs(start) > Number.MAX_SAFE_INTEGER && ahead(start))
  ) {
    throw new IterationError(
      `Cannot resume iterateRange as the cursor must be a number within Number.MAX_SAFE_INTEGER: current value is ${
        describeValue(cursor)
      }`,
    );
  }
  for (let n = start; ahead(n);) {
    const next = n + step;
    // A fractional step can be too small to change a large number (2^52 + 0.5 is 2^52).
    if (next === n) {
      throw new IterationError(
        `Cannot iterate as step ${step} does not move past ${n}: the numbers are too large for it`,
      );
    }
    yield [n, next];
    n = next;
  }
}

/** Keyset pagination for {@link iterateKeyset}. */
export interface KeysetOptions<T, K> {
  /**
   * The next rows after `after` (every row when null), at most `limit`, in
   * key order: `WHERE id > $after ORDER BY id LIMIT $limit`.
   */
  fetchPage(after: K | null, limit: number): Promise<readonly T[]> | readonly T[];
  /** A row's key, the cursor once that row is done (JSON: a number, a string, or an array of them for a compound key). */
  key(row: T): K;
  /** Rows per page; default 100. A shorter page is the last one. */
  pageSize?: number;
}

/**
 * Walks a table (or any ordered store) page by page, by key: each page
 * starts after the last key seen, so rows added or removed meanwhile never
 * shift it (unlike OFFSET). The cursor is the key of the last row done.
 *
 * @example
 * ```ts
 * each: (ctx, cursor) => iterateKeyset({
 *   fetchPage: (after, limit) => sql`SELECT * FROM users WHERE id > ${after ?? 0} ORDER BY id LIMIT ${limit}`,
 *   key: (user) => user.id,
 * }, cursor),
 * ```
 */
export async function* iterateKeyset<T, K>(
  options: KeysetOptions<T, K>,
  cursor: K | null,
): AsyncGenerator<IterationStep<T, K>> {
  const { fetchPage, key, pageSize = 100 } = options ?? ({} as KeysetOptions<T, K>);
  if (typeof fetchPage !== "function") {
    throw new IterationError(
      `Cannot iterate as 'fetchPage' must be a function: current value is ${describeValue(fetchPage)}`,
    );
  }
  if (typeof key !== "function") {
    throw new IterationError(`Cannot iterate as 'key' must be a function: current value is ${describeValue(key)}`);
  }
  if (!Number.isInteger(pageSize) || pageSize < 1) {
    throw new IterationError(
      `Cannot iterate as 'pageSize' must be a whole number >= 1: current value is ${describeValue(pageSize)}`,
    );
  }
  let after = cursor;
  for (;;) {
    const rows = await fetchPage(after, pageSize);
    if (!Array.isArray(rows)) {
      throw new IterationError(
        `Cannot iterate as 'fetchPage' must return an array: current value is ${describeValue(rows)}`,
      );
    }
    for (const row of rows) yield [row, key(row)];
    if (rows.length < pageSize) return;
    const last = key(rows[rows.length - 1]);
    // A page that ends where it started would be fetched forever.
    if (JSON.stringify(last) === JSON.stringify(after)) {
      throw new IterationError(
        `Cannot iterate as 'fetchPage' returned a page ending at its own cursor ${describeValue(after)}`,
      );
    }
    after = last;
  }
}
