/**
 * The mover of a grouped queue: feeds the plain queue list from the groups
 * with work, one job per named group per pass, the least recently served group
 * first, until the queue holds `target` jobs. The core's fetch is
 * unchanged (it reads the plain list), a lone group gets every slot
 * (work-conserving), a paused group is not in the ready set (no
 * head-of-line blocking), and a group's own list is FIFO.
 *
 * @module
 */
import { holds, KEY_TYPES_LUA } from "../../scripts/key_types.ts";
import { defineScript, type ScriptRedis } from "../../transport/script.ts";
import type { RedisReply } from "../../transport/transport.ts";

/** What a move did. */
export interface GroupMove {
  /** Jobs moved to the queue. */
  readonly moved: number;
  /** Groups with work left after it. */
  readonly ready: number;
  /** The queue's length after it. */
  readonly queued: number;
  /** The next groups in turn after it (as many as the move's candidates at most): the next move's candidates. */
  readonly next: readonly string[];
}

/** Lua's `unpack` takes a bounded number of values: pushes and re-scores are sent in chunks of this many. */
const CHUNK = 1000;

/**
 * KEYS: the queue list, its ready groups (sorted set by turn), then the
 * lists of the groups named in ARGV, in order.
 * ARGV: target length of the queue, how many next groups to reply, then
 * the candidate groups (the next in turn: `ZRANGE ready 0 n-1`, or the
 * previous move's reply).
 * Reply: `{moved, ready groups left, queue length, next group, ...}`.
 *
 * A candidate no longer in the ready set (paused, emptied by another mover
 * since it was read) is passed over; so is one served since (its turn is
 * past the candidates' window, `ZRANGE ready n-1 n-1`), and one whose list
 * is of another type (its pop fails; nothing is written for it). A group served
 * goes to the back of the turn; a group emptied leaves the ready set.
 * About two calls per job moved (RPOP, LLEN): the candidates' turns are read,
 * the pushes made and the turn re-scored in one call each per move.
 */
export const GROUP_MOVE = defineScript<GroupMove>({
  name: "groupMove",
  keys: ["queue:<name>", "edgekiq:groups:<queue>", "edgekiq:group:<queue>,<group>", "..."],
  argv: ["target length", "next groups to reply", "group", "..."],
  lua: KEY_TYPES_LUA + `
if not holds(KEYS[1], "list") or not holds(KEYS[2], "zset") then return {0, 0, 0} end
local want = tonumber(ARGV[1]) - redis.call("LLEN", KEYS[1])
local last = redis.call("ZRANGE", KEYS[2], -1, -1, "WITHSCORES")
local turn = (tonumber(last[2]) or 0) + 1
-- A candidate served since the list was read (by another process: it is back at the turn's end) waits its turn.
local edge = math.huge
if want > 0 and #ARGV > 2 then
  local e = redis.call("ZRANGE", KEYS[2], #ARGV - 3, #ARGV - 3, "WITHSCORES")
  if e[2] then edge = tonumber(e[2]) end
end
local live = {}
if want > 0 and #ARGV > 2 then
  local scores = redis.call("ZMSCORE", KEYS[2], unpack(ARGV, 3))
  for i = 3, #ARGV do
    local score = scores[i - 2]
    live[i] = score and tonumber(score) <= edge
  end
end
local raws, turns, gone = {}, {}, {}
while want > 0 do
  local any = false
  for i = 3, #ARGV do
    if want > 0 and live[i] then
      local raw = redis.pcall("RPOP", KEYS[i])
      if type(raw) == "table" then
        live[i] = false
      else
        if raw then
          raws[#raws + 1] = raw
          want, any = want - 1, true
        end
        if redis.call("LLEN", KEYS[i]) == 0 then
          gone[#gone + 1] = ARGV[i]
          live[i] = false
        else
          turns[#turns + 1] = turn
          turns[#turns + 1] = ARGV[i]
          turn = turn + 1
        end
      end
    end
  end
  if not any then break end
end
for i = 1, #raws, ${CHUNK} do redis.call("LPUSH", KEYS[1], unpack(raws, i, math.min(i + ${CHUNK} - 1, #raws))) end
for i = 1, #turns, ${CHUNK} do
  redis.call("ZADD", KEYS[2], "XX", unpack(turns, i, math.min(i + ${CHUNK} - 1, #turns)))
end
for i = 1, #gone, ${CHUNK} do redis.call("ZREM", KEYS[2], unpack(gone, i, math.min(i + ${CHUNK} - 1, #gone))) end
local out = {#raws, redis.call("ZCARD", KEYS[2]), redis.call("LLEN", KEYS[1])}
local n = tonumber(ARGV[2])
if n > 0 then
  for _, group in ipairs(redis.call("ZRANGE", KEYS[2], 0, n - 1)) do out[#out + 1] = group end
end
return out
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    if (!holds(redis, keys[0], "list") || !holds(redis, keys[1], "zset")) return [0, 0, 0];
    let want = Number(argv[0]) - (redis.call("LLEN", keys[0]) as number);
    const last = redis.call("ZRANGE", keys[1], -1, -1, "WITHSCORES") as string[];
    let turn = (Number(last[1]) || 0) + 1;
    let edge = Infinity;
    if (want > 0 && argv.length > 2) {
      const e = redis.call("ZRANGE", keys[1], argv.length - 3, argv.length - 3, "WITHSCORES") as string[];
      if (e[1] !== undefined) edge = Number(e[1]);
    }
    const live: boolean[] = [];
    if (want > 0 && argv.length > 2) {
      const scores = redis.call("ZMSCORE", keys[1], ...argv.slice(2)) as (string | null)[];
      for (let i = 2; i < argv.length; i++) live[i] = scores[i - 2] !== null && Number(scores[i - 2]) <= edge;
    }
    const raws: string[] = [];
    const turns: (string | number)[] = [];
    const gone: string[] = [];
    while (want > 0) {
      let any = false;
      for (let i = 2; i < argv.length; i++) {
        if (!(want > 0 && live[i])) continue;
        if (!holds(redis, keys[i], "list")) {
          live[i] = false;
          continue;
        }
        const raw = redis.call("RPOP", keys[i]) as string | null;
        if (raw !== null) {
          raws.push(raw);
          want--;
          any = true;
        }
        if (redis.call("LLEN", keys[i]) === 0) {
          gone.push(argv[i]);
          live[i] = false;
        } else turns.push(turn++, argv[i]);
      }
      if (!any) break;
    }
    if (raws.length) redis.call("LPUSH", keys[0], ...raws);
    if (turns.length) redis.call("ZADD", keys[1], "XX", ...turns);
    if (gone.length) redis.call("ZREM", keys[1], ...gone);
    const out: RedisReply[] = [raws.length, redis.call("ZCARD", keys[1]), redis.call("LLEN", keys[0])];
    const n = Number(argv[1]);
    if (n > 0) out.push(...(redis.call("ZRANGE", keys[1], 0, n - 1) as string[]));
    return out;
  },
  decode(reply): GroupMove {
    const [moved, ready, queued, ...next] = Array.isArray(reply) ? reply : [];
    return {
      moved: Number(moved) || 0,
      ready: Number(ready) || 0,
      queued: Number(queued) || 0,
      next: next.map(String),
    };
  },
});
