/**
 * sidekiq-cron's formats, for schedules that share their ticks with a
 * sidekiq-cron job (`sidekiqCron: "<name>"`). Read from sidekiq-cron 1.8's
 * `Sidekiq::Cron::Job`: before pushing a tick, its poller adds the tick's
 * time (`previous_time(now).getutc.iso8601`, e.g. `2024-01-01T00:05:00Z`)
 * to the sorted set `cron_job:<name>:enqueued` and pushes only if the
 * member was new. edgekiq's claim script adds the same member in the same
 * atomic step as its push, so whichever side adds it first enqueues the
 * tick and the other does not. After a push it also writes what sidekiq-cron's
 * Web UI shows: `last_enqueue_time` (`%Y-%m-%d %H:%M:%S %z`) and the
 * `jid_history` list (its last 10 jids).
 *
 * @module
 */

/**
 * The claim member sidekiq-cron writes for a tick: ISO 8601 in UTC, whole
 * seconds, `Z`.
 *
 * @example
 * ```ts
 * sidekiqCronMember(1704067500); // "2024-01-01T00:05:00Z"
 * ```
 */
export function sidekiqCronMember(tick: number): string {
  return new Date(tick * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/**
 * A time as sidekiq-cron's `last_enqueue_time` holds it: `%Y-%m-%d %H:%M:%S %z`, in UTC.
 *
 * @example
 * ```ts
 * sidekiqCronTime(1704067501000); // "2024-01-01 00:05:01 +0000"
 * ```
 */
export function sidekiqCronTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace("T", " ").replace(/\.\d{3}Z$/, " +0000");
}
