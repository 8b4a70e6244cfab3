/**
 * The promote script: move due jobs from `schedule` or `retry` to their
 * queues. The poller reads up to a batch of due entries, rewrites each in
 * JavaScript (enqueued_at, client middleware), then this script moves them
 * all in one round trip. `ZREM` guards each move, so two pollers racing for
 * one entry move it once.
 *
 * @module
 */
import { defineScript, type ScriptRedis } from "../transport/script.ts";
import type { RedisReply } from "../transport/transport.ts";
import { holds, KEY_TYPES_LUA, refusal } from "./key_types.ts";

/** What one promotion did. */
export interface PromoteResult {
  /** Entries moved out of the set (to a queue, to the dead set, or dropped). */
  readonly moved: number;
  /** Entries left in place because the queue they go to holds another type (read past them). */
  readonly stuck: number;
}

/**
 * Lua: `validUtf8(s)`, whether a string is valid UTF-8. Redis strings are
 * bytes; a JavaScript string is not, so an entry another producer wrote with
 * invalid bytes reads back changed (U+FFFD in place of each bad sequence)
 * and a `ZREM` of what was read never matches it. Such entries are found
 * here, by their real bytes, and buried as they are; the fetch path does the
 * same for queued jobs (`bury_invalid.ts`).
 */
export const UTF8_LUA = `
local function validUtf8(s)
  if not string.find(s, "[\\128-\\255]") then return true end
  local i, n = 1, #s
  while i <= n do
    local c = string.byte(s, i)
    if c < 128 then
      i = i + 1
    else
      local len = (c >= 194 and c <= 223) and 2 or (c >= 224 and c <= 239) and 3 or (c >= 240 and c <= 244) and 4 or 0
      if len == 0 or i + len - 1 > n then return false end
      for j = i + 1, i + len - 1 do
        local d = string.byte(s, j)
        if d < 128 or d > 191 then return false end
      end
      local d = string.byte(s, i + 1)
      if (c == 224 and d < 160) or (c == 237 and d > 159) or (c == 240 and d < 144) or (c == 244 and d > 143) then
        return false
      end
      i = i + len
    end
  end
  return true
end
`;

/**
 * KEYS: the sorted set, `queues`, `dead`, then queue lists k1..km.
 * ARGV: m, queue names for k1..km, now (epoch seconds), bury-invalid limit
 * (0 = skip), then triples of (raw entry, new payload, target) where target
 * is a queue index 1..m, 0 for the dead set (an entry that cannot be read),
 * or -1 to drop it (client middleware stopped the push).
 * With a bury-invalid limit, due entries (up to that many) whose bytes are
 * not valid UTF-8 move to the dead set as they are.
 * Every key is checked before the first write: `queues` and `dead` of the
 * wrong type refuse the whole call with nothing written; an entry whose
 * queue holds another type is left where it is (stuck) and the others move.
 * Reply: [moved, stuck].
 */
export const PROMOTE = defineScript<PromoteResult>({
  name: "promote",
  // Safe to send again after a lost reply: a second run finds its work done and changes nothing.
  idempotent: true,
  keys: ["schedule|retry", "queues", "dead", "...queue:<name> lists"],
  argv: ["m", "...queue names", "now", "buryInvalid", "...(raw, payload, target) triples"],
  lua: UTF8_LUA + KEY_TYPES_LUA + `
local m = tonumber(ARGV[1])
if not holds(KEYS[2], "set") then return refuse(KEYS[2], "set") end
if not holds(KEYS[3], "zset") then return refuse(KEYS[3], "zset") end
local broken = {}
for j = 1, m do broken[j] = not holds(KEYS[3 + j], "list") end
local now = ARGV[m + 2]
local moved, stuck = 0, 0
local limit = tonumber(ARGV[m + 3])
if limit > 0 then
  for _, raw in ipairs(redis.call("ZRANGE", KEYS[1], "-inf", now, "BYSCORE", "LIMIT", 0, limit)) do
    if not validUtf8(raw) then
      redis.call("ZREM", KEYS[1], raw)
      redis.call("ZADD", KEYS[3], now, raw)
      moved = moved + 1
    end
  end
end
for i = m + 4, #ARGV, 3 do
  local target = tonumber(ARGV[i + 2])
  if target > 0 and broken[target] then
    stuck = stuck + 1
  elseif redis.call("ZREM", KEYS[1], ARGV[i]) == 1 then
    if target == 0 then
      redis.call("ZADD", KEYS[3], now, ARGV[i + 1])
    elseif target > 0 then
      redis.call("SADD", KEYS[2], ARGV[1 + target])
      redis.call("LPUSH", KEYS[3 + target], ARGV[i + 1])
    end
    moved = moved + 1
  end
end
return {moved, stuck}
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const m = Number(argv[0]);
    if (!holds(redis, keys[1], "set")) throw refusal(keys[1], "set");
    if (!holds(redis, keys[2], "zset")) throw refusal(keys[2], "zset");
    const broken = Array.from({ length: m }, (_, j) => !holds(redis, keys[3 + j], "list"));
    const now = argv[m + 1];
    // The memory transport holds JavaScript strings: nothing in it can be invalid UTF-8.
    let moved = 0;
    let stuck = 0;
    for (let i = m + 3; i < argv.length; i += 3) {
      const target = Number(argv[i + 2]);
      if (target > 0 && broken[target - 1]) {
        stuck++;
        continue;
      }
      if (redis.call("ZREM", keys[0], argv[i]) !== 1) continue;
      if (target === 0) redis.call("ZADD", keys[2], now, argv[i + 1]);
      else if (target > 0) {
        redis.call("SADD", keys[1], argv[target]);
        redis.call("LPUSH", keys[2 + target], argv[i + 1]);
      }
      moved++;
    }
    return [moved, stuck];
  },
  decode: (reply) => {
    const [moved, stuck] = reply as number[];
    return { moved: Number(moved), stuck: Number(stuck) };
  },
});
