/**
 * The claim script: claims a schedule's due tick and enqueues its jobs in
 * the same atomic step, so a tick is never lost between claim and push (a
 * process killed after the call has pushed; killed before, it has claimed
 * nothing) and never enqueued twice.
 *
 * The claim is a compare-and-set on the schedule's score in the due set:
 * the caller read tick T, computed the jobs for T (and any later ticks up to
 * its now) and the next tick N; the script pushes them and moves the score to
 * N only if the score is still T. A second process that read T too finds N
 * and is told `stale`. Clock skew cannot duplicate a tick: every tick value
 * is claimed once, whoever's clock says it is due.
 *
 * The caller builds the payloads from the schedule's spec; the script refuses
 * (`respec`, with the stored spec) when the stored spec digest differs, e.g.
 * after a deploy changed the schedule. A schedule whose owners' leases have
 * all expired is dropped instead of enqueued (`expired`).
 *
 * Every key a schedule writes is checked for its type before the first
 * write (Lua does not roll back): a queue or hash of the wrong type makes
 * that schedule `broken`, with the reason, and nothing of it is written; the
 * other schedules of the claim go on. A successful claim clears the
 * `broken` mark a process may have left on the schedule.
 *
 * A schedule shared with a sidekiq-cron job also adds sidekiq-cron's claim
 * member for each tick (`cron_job:<name>:enqueued`) and pushes only the ticks
 * whose member was new, so edgekiq and Ruby's sidekiq-cron poller enqueue
 * each tick once between them (see `sidekiq_cron.ts`).
 *
 * @module
 */
import { defineScript, type ScriptRedis } from "../../transport/script.ts";
import type { RedisReply } from "../../transport/transport.ts";
import { dropSchedule, isLive, LEASE_LUA } from "./lua_common.ts";

/** What happened to one schedule of a claim (`ok` lists the jids it pushed). */
export type ClaimOutcome =
  | { status: "ok"; pushed: string[] }
  | { status: "stale" }
  | { status: "expired" }
  | { status: "respec"; spec: string; specDigest: string }
  | { status: "broken"; reason: string };

/** ARGV fields per job in a claim. */
export const CLAIM_JOB_STRIDE = 5;

/**
 * KEYS: `edgekiq:periodic:due`, `queues`, q queue lists, then per schedule
 * its hash and, when it shares ticks with sidekiq-cron, that job's
 * `cron_job:<name>` hash, `cron_job:<name>:enqueued` and
 * `cron_job:<name>:jid_history`.
 * ARGV: now (epoch s), sidekiq-cron's time text for now, q, q queue names, m,
 * then per schedule: name, expected tick, next tick, spec digest, last tick,
 * sidekiq-cron flag (0/1), k, then k × (queue index 1..q, payload JSON, jid,
 * tick, sidekiq-cron claim member).
 * Returns one outcome per schedule: `{"ok", jids...}`, `{"stale"}`,
 * `{"expired"}`, `{"respec", spec, digest}` or `{"broken", reason}`.
 */
export const PERIODIC_CLAIM = defineScript<ClaimOutcome[]>({
  name: "periodicClaim",
  // Safe to send again after a lost reply: a second run finds its work done and changes nothing.
  idempotent: true,
  keys: [
    "edgekiq:periodic:due",
    "queues",
    "...queue:<name> lists",
    "...(schedule hash[, cron_job:<n>, :enqueued, :jid_history])",
  ],
  argv: [
    "now",
    "cron time",
    "q",
    "...queue names",
    "m",
    "...(name, expected, next, sdig, last, cron, k, ...(queue index, json, jid, tick, member))",
  ],
  lua: LEASE_LUA + `
-- Why a key cannot be written as a want, or nil.
local function wrong(key, want)
  local t = redis.call("TYPE", key).ok
  if t ~= "none" and t ~= want then return key .. " holds a " .. t .. ", not a " .. want end
end
local now = tonumber(ARGV[1])
local q = tonumber(ARGV[3])
local m = tonumber(ARGV[4 + q])
local a = 5 + q
local key = 3 + q
local out = {}
for i = 1, m do
  local name, expected, nxt, sdig, last = ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4]
  local cron, k = ARGV[a + 5] == "1", tonumber(ARGV[a + 6])
  local jobs = a + 7
  a = jobs + 5 * k
  local h = KEYS[key]
  local cronJob, enqueued, history = KEYS[key + 1], KEYS[key + 2], KEYS[key + 3]
  key = key + (cron and 4 or 1)
  local score = redis.call("ZSCORE", KEYS[1], name)
  local problem = wrong(h, "hash")
  -- Every key this schedule writes, checked before its first write.
  if not problem and k > 0 then problem = wrong(KEYS[2], "set") end
  for j = jobs, jobs + 5 * k - 1, 5 do problem = problem or wrong(KEYS[2 + tonumber(ARGV[j])], "list") end
  if not problem and cron then
    problem = wrong(cronJob, "hash") or wrong(enqueued, "zset") or wrong(history, "list")
  end
  local f = problem and {} or redis.call("HMGET", h, "sdig", "spec")
  if not score or tonumber(score) ~= tonumber(expected) then
    out[i] = {"stale"}
  elseif problem then
    out[i] = {"broken", problem}
  elseif not f[2] then
    redis.call("ZREM", KEYS[1], name)
    out[i] = {"expired"}
  elseif f[1] ~= sdig then
    out[i] = {"respec", f[2], f[1]}
  elseif not live(h, now) then
    drop(h, KEYS[1], name)
    out[i] = {"expired"}
  else
    -- sidekiq-cron's own claim: a member per tick in cron_job:<name>:enqueued. Whoever adds it first pushes.
    local disabled = cron and redis.call("HGET", cronJob, "status") == "disabled"
    local pushed = {"ok"}
    for j = jobs, jobs + 5 * k - 1, 5 do
      if not disabled and (not cron or redis.call("ZADD", enqueued, "NX", ARGV[j + 3], ARGV[j + 4]) == 1) then
        local target = tonumber(ARGV[j])
        redis.call("SADD", KEYS[2], ARGV[3 + target])
        redis.call("LPUSH", KEYS[2 + target], ARGV[j + 1])
        pushed[#pushed + 1] = ARGV[j + 2]
        if cron and redis.call("EXISTS", cronJob) == 1 then
          redis.call("HSET", cronJob, "last_enqueue_time", ARGV[2])
          redis.call("LPUSH", history, '{"jid":"' .. ARGV[j + 2] .. '","enqueued":"' .. ARGV[2] .. '"}')
          redis.call("LTRIM", history, 0, 9)
        end
      end
    end
    if cron then redis.call("ZREMRANGEBYSCORE", enqueued, 0, "(" .. (now - 86400)) end
    redis.call("HSET", h, "last", last, "last_at", ARGV[1])
    redis.call("HDEL", h, "broken", "broken_at")
    if #pushed > 1 then redis.call("HSET", h, "last_jid", pushed[#pushed]) end
    redis.call("ZADD", KEYS[1], nxt, name)
    out[i] = pushed
  end
end
return out
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const now = Number(argv[0]);
    const cronTime = argv[1];
    const q = Number(argv[2]);
    const m = Number(argv[3 + q]);
    let a = 4 + q;
    let key = 2 + q;
    const out: RedisReply[] = [];
    for (let i = 0; i < m; i++) {
      const [name, expected, next, sdig, last] = argv.slice(a, a + 5);
      const cron = argv[a + 5] === "1";
      const k = Number(argv[a + 6]);
      const jobs = a + 7;
      a = jobs + CLAIM_JOB_STRIDE * k;
      const h = keys[key];
      const [cronJob, enqueued, history] = keys.slice(key + 1, key + 4);
      key += cron ? 4 : 1;
      const score = redis.call("ZSCORE", keys[0], name);
      const wrong = (key: string, want: string): string | null => {
        const type = redis.call("TYPE", key) as string;
        return type !== "none" && type !== want ? `${key} holds a ${type}, not a ${want}` : null;
      };
      let problem = wrong(h, "hash") ?? (k > 0 ? wrong(keys[1], "set") : null);
      for (let j = jobs; j < jobs + CLAIM_JOB_STRIDE * k; j += CLAIM_JOB_STRIDE) {
        problem ??= wrong(keys[1 + Number(argv[j])], "list");
      }
      if (cron) problem ??= wrong(cronJob, "hash") ?? wrong(enqueued, "zset") ?? wrong(history, "list");
      const [storedSdig, spec] = problem ? [null, null] : redis.call("HMGET", h, "sdig", "spec") as (string | null)[];
      if (score === null || Number(score) !== Number(expected)) out.push(["stale"]);
      else if (problem) out.push(["broken", problem]);
      else if (spec === null) {
        redis.call("ZREM", keys[0], name);
        out.push(["expired"]);
      } else if (storedSdig !== sdig) out.push(["respec", spec, storedSdig ?? ""]);
      else if (!isLive(redis, h, now)) {
        dropSchedule(redis, h, keys[0], name);
        out.push(["expired"]);
      } else {
        const disabled = cron && redis.call("HGET", cronJob, "status") === "disabled";
        const pushed = ["ok"];
        for (let j = jobs; j < jobs + CLAIM_JOB_STRIDE * k; j += CLAIM_JOB_STRIDE) {
          if (disabled || (cron && redis.call("ZADD", enqueued, "NX", argv[j + 3], argv[j + 4]) !== 1)) continue;
          const target = Number(argv[j]);
          redis.call("SADD", keys[1], argv[2 + target]);
          redis.call("LPUSH", keys[1 + target], argv[j + 1]);
          pushed.push(argv[j + 2]);
          if (cron && redis.call("EXISTS", cronJob) === 1) {
            redis.call("HSET", cronJob, "last_enqueue_time", cronTime);
            redis.call("LPUSH", history, `{"jid":"${argv[j + 2]}","enqueued":"${cronTime}"}`);
            redis.call("LTRIM", history, 0, 9);
          }
        }
        if (cron) redis.call("ZREMRANGEBYSCORE", enqueued, 0, `(${now - 86400}`);
        redis.call("HSET", h, "last", last, "last_at", argv[0]);
        redis.call("HDEL", h, "broken", "broken_at");
        if (pushed.length > 1) redis.call("HSET", h, "last_jid", pushed[pushed.length - 1]);
        redis.call("ZADD", keys[0], next, name);
        out.push(pushed);
      }
    }
    return out;
  },
  decode(reply: RedisReply): ClaimOutcome[] {
    return (reply as string[][]).map(([status, ...rest]): ClaimOutcome =>
      status === "ok"
        ? { status, pushed: rest }
        : status === "respec"
        ? { status, spec: rest[0], specDigest: rest[1] }
        : status === "broken"
        ? { status, reason: rest[0] }
        : { status: status as "stale" | "expired" }
    );
  },
});
