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
 * @module
 */
import { defineScript, type ScriptRedis } from "../transport/script.ts";
import type { RedisReply } from "../transport/transport.ts";
import { dropSchedule, isLive, LEASE_LUA } from "./lua_common.ts";

/** What happened to one schedule of a claim. */
export type ClaimOutcome =
  | { status: "ok" }
  | { status: "stale" }
  | { status: "expired" }
  | { status: "respec"; spec: string; specDigest: string };

/**
 * KEYS: `edgekiq:periodic:due`, `queues`, q queue lists, then m schedule hashes.
 * ARGV: now (epoch s), q, q queue names, m, then per schedule: name, expected
 * tick, next tick, spec digest, last tick, last jid (or ""), k, then k ×
 * (queue index 1..q, payload JSON).
 * Returns one outcome per schedule: `{status}` or `{"respec", spec, digest}`.
 */
export const PERIODIC_CLAIM = defineScript<ClaimOutcome[]>({
  name: "periodicClaim",
  keys: ["edgekiq:periodic:due", "queues", "...queue:<name> lists", "...schedule hashes"],
  argv: ["now", "q", "...queue names", "m", "...(name, expected, next, sdig, last, jid, k, ...(queue index, json))"],
  lua: LEASE_LUA + `
local now = tonumber(ARGV[1])
local q = tonumber(ARGV[2])
local m = tonumber(ARGV[3 + q])
local a = 4 + q
local out = {}
for i = 1, m do
  local name, expected, nxt, sdig, last, jid = ARGV[a], ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4], ARGV[a + 5]
  local k = tonumber(ARGV[a + 6])
  local jobs = a + 7
  a = jobs + 2 * k
  local h = KEYS[2 + q + i]
  local score = redis.call("ZSCORE", KEYS[1], name)
  local f = redis.call("HMGET", h, "sdig", "spec")
  if not score or tonumber(score) ~= tonumber(expected) then
    out[i] = {"stale"}
  elseif not f[2] then
    redis.call("ZREM", KEYS[1], name)
    out[i] = {"expired"}
  elseif f[1] ~= sdig then
    out[i] = {"respec", f[2], f[1]}
  elseif not live(h, now) then
    drop(h, KEYS[1], name)
    out[i] = {"expired"}
  else
    for j = jobs, jobs + 2 * k - 1, 2 do
      local target = tonumber(ARGV[j])
      redis.call("SADD", KEYS[2], ARGV[2 + target])
      redis.call("LPUSH", KEYS[2 + target], ARGV[j + 1])
    end
    redis.call("HSET", h, "last", last, "last_at", ARGV[1])
    if jid ~= "" then redis.call("HSET", h, "last_jid", jid) end
    redis.call("ZADD", KEYS[1], nxt, name)
    out[i] = {"ok"}
  end
end
return out
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const now = Number(argv[0]);
    const q = Number(argv[1]);
    const m = Number(argv[2 + q]);
    let a = 3 + q;
    const out: RedisReply[] = [];
    for (let i = 0; i < m; i++) {
      const [name, expected, next, sdig, last, jid] = argv.slice(a, a + 6);
      const k = Number(argv[a + 6]);
      const jobs = a + 7;
      a = jobs + 2 * k;
      const h = keys[2 + q + i];
      const score = redis.call("ZSCORE", keys[0], name);
      const [storedSdig, spec] = redis.call("HMGET", h, "sdig", "spec") as (string | null)[];
      if (score === null || Number(score) !== Number(expected)) out.push(["stale"]);
      else if (spec === null) {
        redis.call("ZREM", keys[0], name);
        out.push(["expired"]);
      } else if (storedSdig !== sdig) out.push(["respec", spec, storedSdig ?? ""]);
      else if (!isLive(redis, h, now)) {
        dropSchedule(redis, h, keys[0], name);
        out.push(["expired"]);
      } else {
        for (let j = jobs; j < jobs + 2 * k; j += 2) {
          const target = Number(argv[j]);
          redis.call("SADD", keys[1], argv[2 + target - 1]);
          redis.call("LPUSH", keys[1 + target], argv[j + 1]);
        }
        redis.call("HSET", h, "last", last, "last_at", argv[0]);
        if (jid !== "") redis.call("HSET", h, "last_jid", jid);
        redis.call("ZADD", keys[0], next, name);
        out.push(["ok"]);
      }
    }
    return out;
  },
  decode(reply: RedisReply): ClaimOutcome[] {
    return (reply as string[][]).map(([status, spec, specDigest]) =>
      status === "respec" ? { status, spec, specDigest } : { status } as ClaimOutcome
    );
  },
});
