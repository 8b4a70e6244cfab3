/**
 * The registration script: one owner's schedule set goes into Redis, or its
 * lease is extended, in one atomic step.
 *
 * An owner's record (`edgekiq:periodic:owner:<owner>`) holds the digest of
 * the schedule set it registered, its lease expiry and the names. Each
 * schedule's hash gets a `lease:<owner>` field. Registering the same set
 * again only extends the leases (and re-creates a schedule dropped
 * meanwhile). A different set replaces the owner's record: schedules it no
 * longer has lose this owner's lease and are dropped unless another owner
 * still declares them. In `refresh` mode (a process that registered before)
 * a different live set wins: the caller is `superseded` and writes nothing,
 * so old processes of a rolling deploy do not flip the schedules back.
 *
 * A new or re-timed schedule starts at the first tick given by the caller,
 * unless that is not after the tick it last enqueued (its tombstone), in
 * which case at the strict first tick after now.
 *
 * @module
 */
import { defineScript, type ScriptRedis } from "../../transport/script.ts";
import type { RedisReply } from "../../transport/transport.ts";
import { holds, KEY_TYPES_LUA, refusal } from "../../scripts/key_types.ts";
import { dropSchedule, isLive, LEASE_LUA } from "./lua_common.ts";

/** What a registration did. */
export interface RegisterReply {
  /**
   * `registered` (the set was written), `unchanged` (leases extended),
   * `superseded` (another set of this owner is newer; nothing written) or
   * `remove` (the caller must call again with these names' keys).
   */
  status: "registered" | "unchanged" | "superseded" | "remove";
  /** With `remove`: the names the owner no longer declares. */
  names: string[];
}

/** Arguments per schedule in ARGV. */
export const REGISTER_STRIDE = 6;

/**
 * KEYS: `edgekiq:periodic:due`, the owner's record, the n schedule hashes,
 * then the r hashes of schedules this owner no longer declares.
 * ARGV: mode (`claim`|`refresh`), owner, digest, now, lease expiry, record
 * TTL, n, r, then n × (name, spec JSON, spec digest, timing digest, first
 * tick, strict first tick), then r names.
 */
export const PERIODIC_REGISTER = defineScript<RegisterReply>({
  name: "periodicRegister",
  keys: ["edgekiq:periodic:due", "edgekiq:periodic:owner:<owner>", "...schedule hashes", "...removed hashes"],
  argv: [
    "mode",
    "owner",
    "digest",
    "now",
    "expires",
    "ttl",
    "n",
    "r",
    "...(name, spec, sdig, timing, first, strict)",
    "...removed names",
  ],
  lua: LEASE_LUA + KEY_TYPES_LUA + `
local mode, owner, digest, now, expires = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]
local n, r = tonumber(ARGV[7]), tonumber(ARGV[8])
local due, reg, lease = KEYS[1], KEYS[2], "lease:" .. owner
-- Every key is checked before the first write (Lua does not roll back).
if not holds(due, "zset") then return refuse(due, "zset") end
for j = 2, #KEYS do
  if not holds(KEYS[j], "hash") then return refuse(KEYS[j], "hash") end
end
local cur = redis.call("HGET", reg, "digest")
local alive = cur and (tonumber(redis.call("HGET", reg, "expires")) or 0) >= now
if alive and cur ~= digest and mode == "refresh" then return {"superseded"} end
local same = alive and cur == digest
local wanted, names = {}, {}
for i = 1, n do
  local name = ARGV[3 + 6 * i]
  wanted[name] = true
  names[i] = name
end
local gone = {}
if cur and not same then
  for name in string.gmatch(redis.call("HGET", reg, "names") or "", "[^\\n]+") do
    if not wanted[name] then gone[name] = true end
  end
end
local given = {}
for j = 1, r do given[ARGV[8 + 6 * n + j]] = 2 + n + j end
local missing = {}
for name in pairs(gone) do
  if not given[name] then missing[#missing + 1] = name end
end
if #missing > 0 then
  for name in pairs(gone) do
    if given[name] then missing[#missing + 1] = name end
  end
  return {"remove", unpack(missing)}
end
for i = 1, n do
  local b = 8 + 6 * (i - 1)
  local name, sdig, timing = ARGV[b + 1], ARGV[b + 3], ARGV[b + 4]
  local h = KEYS[2 + i]
  local f = redis.call("HMGET", h, "sdig", "timing", "paused", "last")
  if f[1] ~= sdig then redis.call("HSET", h, "name", name, "spec", ARGV[b + 2], "sdig", sdig) end
  if f[2] ~= timing then
    local first = ARGV[b + 5]
    local t, last = tonumber(first), tonumber(f[4])
    if last and t and t <= last then first = ARGV[b + 6] end
    if not f[2] then redis.call("PERSIST", h) end
    redis.call("HSET", h, "timing", timing)
    if f[3] ~= "1" then redis.call("ZADD", due, first, name) end
  end
  redis.call("HSET", h, lease, expires)
end
for name, slot in pairs(given) do
  if gone[name] then
    local h = KEYS[slot]
    redis.call("HDEL", h, lease)
    if redis.call("HEXISTS", h, "timing") == 1 and not live(h, now) then drop(h, due, name) end
  end
end
if same then
  redis.call("HSET", reg, "expires", expires)
else
  redis.call("DEL", reg)
  redis.call("HSET", reg, "digest", digest, "expires", expires, "names", table.concat(names, "\\n"))
end
redis.call("EXPIRE", reg, ARGV[6])
if same then return {"unchanged"} end
return {"registered"}
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const [mode, owner, digest, nowText, expires, ttl] = argv;
    const now = Number(nowText);
    const n = Number(argv[6]);
    const r = Number(argv[7]);
    const [due, reg] = keys;
    const lease = `lease:${owner}`;
    if (!holds(redis, due, "zset")) throw refusal(due, "zset");
    for (const key of keys.slice(1)) if (!holds(redis, key, "hash")) throw refusal(key, "hash");
    const cur = redis.call("HGET", reg, "digest") as string | null;
    const alive = cur !== null && Number(redis.call("HGET", reg, "expires") ?? 0) >= now;
    if (alive && cur !== digest && mode === "refresh") return ["superseded"];
    const same = alive && cur === digest;
    const names = Array.from({ length: n }, (_, i) => argv[8 + REGISTER_STRIDE * i]);
    const wanted = new Set(names);
    const gone = new Set<string>();
    if (cur !== null && !same) {
      for (const name of String(redis.call("HGET", reg, "names") ?? "").split("\n")) {
        if (name && !wanted.has(name)) gone.add(name);
      }
    }
    const given = new Map<string, number>();
    for (let j = 0; j < r; j++) given.set(argv[8 + REGISTER_STRIDE * n + j], 2 + n + j);
    if ([...gone].some((name) => !given.has(name))) return ["remove", ...gone];
    for (let i = 0; i < n; i++) {
      const b = 8 + REGISTER_STRIDE * i;
      const [name, spec, sdig, timing, firstText, strict] = argv.slice(b, b + REGISTER_STRIDE);
      const h = keys[2 + i];
      const [oldSdig, oldTiming, paused, last] = redis.call("HMGET", h, "sdig", "timing", "paused", "last") as (
        | string
        | null
      )[];
      if (oldSdig !== sdig) redis.call("HSET", h, "name", name, "spec", spec, "sdig", sdig);
      if (oldTiming !== timing) {
        const first = last !== null && Number(firstText) <= Number(last) ? strict : firstText;
        if (oldTiming === null) redis.call("PERSIST", h);
        redis.call("HSET", h, "timing", timing);
        if (paused !== "1") redis.call("ZADD", due, first, name);
      }
      redis.call("HSET", h, lease, expires);
    }
    for (const [name, slot] of given) {
      if (!gone.has(name)) continue;
      redis.call("HDEL", keys[slot], lease);
      if (redis.call("HEXISTS", keys[slot], "timing") === 1 && !isLive(redis, keys[slot], now)) {
        dropSchedule(redis, keys[slot], due, name);
      }
    }
    if (same) redis.call("HSET", reg, "expires", expires);
    else {
      redis.call("DEL", reg);
      redis.call("HSET", reg, "digest", digest, "expires", expires, "names", names.join("\n"));
    }
    redis.call("EXPIRE", reg, ttl);
    return [same ? "unchanged" : "registered"];
  },
  decode(reply: RedisReply): RegisterReply {
    const [status, ...names] = reply as string[];
    return { status: status as RegisterReply["status"], names };
  },
});
