/**
 * Redis's own cost of a benchmark phase: main-thread CPU, commands and
 * socket reads, from one INFO before and one after.
 */
import { redisCommand } from "./support.ts";

/** Redis's own counters at one moment: main-thread CPU, commands processed, calls per command. */
export interface RedisSnapshot {
  /** used_cpu_sys_main_thread + used_cpu_user_main_thread, in µs. */
  cpuUs: number;
  /** total_commands_processed (commands inside Lua scripts included). */
  commands: number;
  /** INFO commandstats calls per command. */
  calls: Record<string, number>;
  /** total_reads_processed: socket reads Redis handled, about one per client round trip. */
  reads: number;
  /** used_memory: bytes the data set and Redis's own structures take. */
  memory: number;
  /** performance.now() when taken. */
  at: number;
}

/** What Redis spent between two snapshots. */
export interface RedisCost {
  cpuUs: number;
  commands: number;
  calls: Record<string, number>;
  reads: number;
  seconds: number;
}

/**
 * One `INFO cpu stats commandstats memory`: Redis's main-thread CPU (where
 * every command runs; background threads and forks excluded), command
 * counts and memory in use.
 */
export async function redisSnapshot(url: string): Promise<RedisSnapshot> {
  const text = String(await redisCommand(url, ["INFO", "cpu", "stats", "commandstats", "memory"]));
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, "m").exec(text)?.[1] ?? NaN);
  const main = field("used_cpu_sys_main_thread") + field("used_cpu_user_main_thread");
  const calls: Record<string, number> = {};
  for (const m of text.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls[m[1]] = Number(m[2]);
  return {
    // Redis before 6.2 has no main-thread fields: the process total is the next best thing.
    cpuUs: Math.round((Number.isFinite(main) ? main : field("used_cpu_sys") + field("used_cpu_user")) * 1e6),
    commands: field("total_commands_processed"),
    calls,
    reads: field("total_reads_processed"),
    memory: field("used_memory"),
    at: performance.now(),
  };
}

/** The cost between two snapshots, less the INFO command that took the first. */
export function costBetween(before: RedisSnapshot, after: RedisSnapshot): RedisCost {
  const calls: Record<string, number> = {};
  for (const [name, n] of Object.entries(after.calls)) {
    const delta = n - (before.calls[name] ?? 0) - (name === "info" ? 1 : 0);
    if (delta > 0) calls[name] = delta;
  }
  return {
    cpuUs: after.cpuUs - before.cpuUs,
    commands: after.commands - before.commands - 1,
    calls,
    reads: after.reads - before.reads - 1,
    seconds: (after.at - before.at) / 1000,
  };
}

/** Redis's cost per job: main-thread CPU µs, commands, and calls per command. */
export interface JobCost {
  us: number;
  commands: number;
  /** Socket reads Redis handled (about one per round trip) per job. */
  reads: number;
  calls: Record<string, number>;
}

/** A cost per job, rounded for the report. */
export function perJob(cost: RedisCost, jobs: number): JobCost {
  const calls: Record<string, number> = {};
  for (const [name, n] of Object.entries(cost.calls)) calls[name] = Math.round((n / jobs) * 1000) / 1000;
  return {
    us: Math.round((cost.cpuUs / jobs) * 100) / 100,
    commands: Math.round((cost.commands / jobs) * 1000) / 1000,
    reads: Math.round((cost.reads / jobs) * 1000) / 1000,
    calls,
  };
}

/**
 * The longest single command Redis ran since the last call (a script counts
 * as one), in ms, from its slow log: how long it kept every other client
 * waiting. Needs `slowlog-log-slower-than` set low (the scaling run sets 1
 * ms); resets the log.
 */
export async function longestCommandMs(url: string): Promise<number> {
  const entries = (await redisCommand(url, ["SLOWLOG", "GET", "128"])) as unknown[][];
  await redisCommand(url, ["SLOWLOG", "RESET"]);
  let longest = 0;
  for (const entry of entries ?? []) longest = Math.max(longest, Number(entry[2]));
  return Math.round(longest / 100) / 10;
}
