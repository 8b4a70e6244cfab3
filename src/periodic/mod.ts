/**
 * Periodic (cron) jobs without a leader: schedules declared in code, their
 * next due ticks in Redis, and one script that claims a due tick and pushes
 * its job atomically, so any number of processes (and serverless cron
 * calls) enqueue each tick exactly once.
 *
 * The engine drives it with three calls:
 * - {@link registerPeriodic} at start and then every poll cycle (it sends
 *   nothing while its lease is fresh);
 * - the poll check asks "is anything due?" with {@link periodicDueLua}
 *   folded into its script (no extra command), or on its own one command;
 * - {@link enqueueDuePeriodic} when something is due.
 *
 * @example
 * ```ts
 * const periodic: PeriodicSchedule[] = [{ cron: "*" + "/5 * * * *", job: Report, tz: "Europe/Berlin" }];
 * await registerPeriodic(client, periodic, { owner: "reports" });
 * const { enqueued } = await enqueueDuePeriodic({ client, schedules: periodic });
 * ```
 *
 * @module
 */
import type { ScriptRedis } from "../transport/script.ts";

export { registerPeriodic } from "./register.ts";
export type { RegisterPeriodicOptions, RegisterPeriodicResult } from "./register.ts";
export { enqueueDuePeriodic } from "./enqueue.ts";
export type { EnqueueDuePeriodicOptions, EnqueueDuePeriodicResult } from "./enqueue.ts";
export type {
  CronSchedule,
  EverySchedule,
  MissedPolicy,
  PeriodicSchedule,
  PeriodicScheduleBase,
  PeriodicSpec,
} from "./schedule.ts";

/**
 * The Lua expression the poll check adds to know whether a periodic tick is
 * due: 1 if one is, else 0. `key` and `now` are Lua expressions for the
 * `edgekiq:periodic:due` key (pass it in KEYS) and now in epoch seconds.
 *
 * @example
 * ```ts
 * const lua = `local periodic = ${periodicDueLua("KEYS[6]", "ARGV[1]")}`;
 * // local periodic = #redis.call("ZRANGE", KEYS[6], "-inf", ARGV[1], "BYSCORE", "LIMIT", 0, 1)
 * ```
 */
export function periodicDueLua(key: string, now: string): string {
  return `#redis.call("ZRANGE", ${key}, "-inf", ${now}, "BYSCORE", "LIMIT", 0, 1)`;
}

/**
 * The twin of {@link periodicDueLua} for the memory transport: 1 or 0.
 *
 * @example
 * ```ts
 * const periodic = periodicDueTwin(redis, keys[5], argv[0]);
 * ```
 */
export function periodicDueTwin(redis: ScriptRedis, key: string, now: string | number): number {
  return (redis.call("ZRANGE", key, "-inf", now, "BYSCORE", "LIMIT", 0, 1) as string[]).length;
}
