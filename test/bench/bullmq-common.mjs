/**
 * Shared helpers for the BullMQ benchmark scripts (plain Node ESM, so BullMQ
 * runs exactly as its users run it).
 */
import process from "node:process";
import IORedis from "ioredis";

/** `--name value` pairs from argv. */
export function args() {
  const out = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    if (!argv[i].startsWith("--")) continue;
    const next = argv[i + 1];
    if (next === undefined || next.startsWith("--")) out[argv[i].slice(2)] = "true";
    else out[argv[i].slice(2)] = argv[++i];
  }
  return out;
}

/** BullMQ connection options for a redis:// URL (BullMQ opens its own connections). */
export function connection(url) {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port || 6379), maxRetriesPerRequest: null };
}

/** An admin connection for INFO and checks. */
export function adminConnection(url) {
  return new IORedis(url, { maxRetriesPerRequest: null, lazyConnect: false });
}

export async function serverCommands(admin) {
  const info = await admin.info("stats");
  return Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? NaN);
}

export function rssMB() {
  return round(process.memoryUsage().rss / 1048576, 1);
}

/** Redis's main-thread CPU so far, in µs (INFO cpu). */
export async function redisCpuUs(admin) {
  const info = await admin.info("cpu");
  const field = (name) => Number(new RegExp(`^${name}:([\\d.]+)`, "m").exec(info)?.[1] ?? 0);
  return Math.round((field("used_cpu_sys_main_thread") + field("used_cpu_user_main_thread")) * 1e6);
}

/** The highest RSS this process reached, in MB. */
export function peakRssMB() {
  return round(process.resourceUsage().maxRSS / 1024, 1);
}

/** A job argument of `bytes` ASCII characters (the same text as the edgekiq side's filler()). */
export function filler(bytes) {
  const unit = "edgekiq-scaling-payload-0123456789abcdefghijklmnopqrstuvwxyz-";
  return unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
}

export function round(n, digits = 2) {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

export function percentile(sorted, p) {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

/** Seeds N jobs with Queue.addBulk in chunks of 1,000 (fewer for large payloads). */
export async function seed(
  queue,
  jobs,
  name = "noop",
  opts = { removeOnComplete: true, removeOnFail: true },
  payload = 0,
) {
  const pad = payload > 0 ? filler(payload) : undefined;
  const chunk = Math.max(1, Math.min(1000, Math.floor(8e6 / Math.max(payload, 1))));
  for (let i = 0; i < jobs; i += chunk) {
    const n = Math.min(chunk, jobs - i);
    await queue.addBulk(
      Array.from({ length: n }, (_, j) => ({ name, data: pad ? { i: i + j, pad } : { i: i + j }, opts })),
    );
  }
}

/** Runs main with an internal deadline; prints the result (or error) as the last line and exits. */
export function main(fn) {
  const a = args();
  const limit = Number(a.deadline ?? 600) * 1000;
  const timer = setTimeout(() => {
    process.stdout.write(JSON.stringify({ error: `internal deadline of ${limit / 1000} s passed` }) + "\n");
    process.exit(2);
  }, limit);
  fn(a).then(
    (result) => {
      clearTimeout(timer);
      process.stdout.write(JSON.stringify(result) + "\n");
      process.exit(0);
    },
    (error) => {
      process.stderr.write(String(error?.stack ?? error) + "\n");
      process.stdout.write(JSON.stringify({ error: String(error?.message ?? error) }) + "\n");
      process.exit(1);
    },
  );
}
