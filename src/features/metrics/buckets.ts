/**
 * The UTC time buckets of Sidekiq's execution metrics, formatted as its Ruby
 * code formats them (`lib/sidekiq/metrics/{tracking,query,shared}.rb`,
 * `lib/sidekiq/deploy.rb`), and their lifetimes. For 14 Feb 2025, 08:05 UTC:
 *
 * | what                         | Sidekiq 8     | Sidekiq 7      |
 * | ---------------------------- | ------------- | -------------- |
 * | minute hash `j\|<bucket>`     | `250214\|8:05` | `20250214\|8:5` |
 * | 10-minute hash `j\|<bucket>`  | `250214\|8:0`  | (none)         |
 * | histogram `<prefix><Class>-` | `14-8:5`      | `14-08:5`      |
 * | deploy marks `<day>-marks`   | `20250214`    | `20250214`     |
 *
 * @module
 */

/** Lifetime of a 10-minute bucket: 3 days (Sidekiq 8's MID_TERM). */
export const MID_TERM = 3 * 24 * 60 * 60;
/** Lifetime of a minute bucket and of a histogram: 8 hours (SHORT_TERM, HISTOGRAM_TTL). */
export const SHORT_TERM = 8 * 60 * 60;
/** Lifetime of a day's deploy marks: 90 days (Sidekiq's MARK_TTL). */
export const MARK_TTL = 90 * 24 * 60 * 60;
/** How long one deploy label stays locked against a second mark: 60 seconds. */
export const DEPLOY_LOCK_TTL = 60;

const pad = (n: number): string => (n < 10 ? `0${n}` : String(n));
const date = (t: Date): string => `${pad(t.getUTCMonth() + 1)}${pad(t.getUTCDate())}`;

/**
 * Sidekiq 8's minute bucket, `%y%m%d|%-H:%M`.
 *
 * @example
 * ```ts
 * minuteBucket(new Date("2025-02-14T08:05:00Z")); // "250214|8:05"
 * ```
 */
export function minuteBucket(t: Date): string {
  return `${pad(t.getUTCFullYear() % 100)}${date(t)}|${t.getUTCHours()}:${pad(t.getUTCMinutes())}`;
}

/**
 * Sidekiq 8's 10-minute bucket: the minute bucket without its last digit.
 *
 * @example
 * ```ts
 * tenMinuteBucket(new Date("2025-02-14T08:43:00Z")); // "250214|8:4"
 * ```
 */
export function tenMinuteBucket(t: Date): string {
  return minuteBucket(t).slice(0, -1);
}

/**
 * Sidekiq 7's minute bucket, `%Y%m%d|%-H:%-M`.
 *
 * @example
 * ```ts
 * legacyMinuteBucket(new Date("2025-02-14T08:05:00Z")); // "20250214|8:5"
 * ```
 */
export function legacyMinuteBucket(t: Date): string {
  return `${utcDay(t)}|${t.getUTCHours()}:${t.getUTCMinutes()}`;
}

/**
 * Sidekiq 8's histogram window, `%-d-%-H:%-M`.
 *
 * @example
 * ```ts
 * histogramWindow(new Date("2025-02-14T08:05:00Z")); // "14-8:5"
 * ```
 */
export function histogramWindow(t: Date): string {
  return `${t.getUTCDate()}-${t.getUTCHours()}:${t.getUTCMinutes()}`;
}

/**
 * Sidekiq 7's histogram window, `%d-%H:%-M`.
 *
 * @example
 * ```ts
 * legacyHistogramWindow(new Date("2025-02-14T08:05:00Z")); // "14-08:5"
 * ```
 */
export function legacyHistogramWindow(t: Date): string {
  return `${pad(t.getUTCDate())}-${pad(t.getUTCHours())}:${t.getUTCMinutes()}`;
}

/**
 * The UTC day, `%Y%m%d`, as deploy-mark keys name it.
 *
 * @example
 * ```ts
 * utcDay(new Date("2025-02-14T08:05:00Z")); // "20250214"
 * ```
 */
export function utcDay(t: Date): string {
  return `${t.getUTCFullYear()}${date(t)}`;
}

/**
 * Epoch milliseconds as Ruby's `Time#utc.iso8601`: whole seconds and `Z`.
 *
 * @example
 * ```ts
 * iso8601(Date.UTC(2022, 6, 22, 22, 3)); // "2022-07-22T22:03:00Z"
 * ```
 */
export function iso8601(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19) + "Z";
}
