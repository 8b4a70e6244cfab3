/**
 * The make-flow script: a flow whose children are all leaves, made in one
 * call. The three calls of `add()` (open a registration, push the children
 * guarded, seal) exist so that a batch filled over many calls cannot
 * complete before its last push; a flow whose every child goes in one
 * atomic step needs no registration at all. The batch, its children's
 * membership and the children themselves are written together, and what is
 * left is exactly what open, push and seal leave (less the sealed
 * registration's own member).
 *
 * @module
 */
import { defineScript, type ScriptRedis } from "../../transport/script.ts";
import type { RedisReply } from "../../transport/redis_values.ts";
import { UNIT } from "./counting.ts";

/** Members written per `HSET` (a bound on Lua's `unpack`). */
const CHUNK = 1000;

/**
 * KEYS: the batch's hash, its members, failures and results, the `batches`
 * index, `queues`, then one queue key per queue the children go to.
 * ARGV: bid, now (ms), expiry (ms), time format (`s`, `ms`), description,
 * the children in order (JSON), number of callbacks, per callback: event,
 * queue, jid, payload; then number of queues and their names (in KEYS'
 * order); then per child: its queue (1-based, in that list), jid, payload,
 * flow policy (`""`, `i`, `c`).
 *
 * A batch that exists already is this same call resent (its reply lost):
 * the first wrote everything, so nothing is written again. Reply: 1 when
 * written, 0 when it was there.
 */
export const MAKE_FLOW = defineScript<number>({
  name: "makeFlow",
  idempotent: true,
  keys: ["batch", "members", "failed", "results", "batches", "queues", "...queue:<name> per children's queue"],
  argv: [
    "bid",
    "now",
    "expiry ms",
    "time format",
    "description",
    "order",
    "#callbacks",
    "...(event, queue, jid, payload) per callback",
    "#queues",
    "...queue names",
    "...(queue index, jid, payload, policy) per child",
  ],
  lua: `
local meta, jobs = KEYS[1], KEYS[2]
if redis.call("EXISTS", meta) == 1 then return 0 end
local bid, now, expiry = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local fields = {"created", now, "exp", expiry, "tf", ARGV[4], "failures", 0, "kids", 0, "kpend", 0, "holds", 0,
  "flow", "1", "order", ARGV[6]}
if ARGV[5] ~= "" then
  fields[#fields + 1] = "desc"
  fields[#fields + 1] = ARGV[5]
end
local a = 8
for _ = 1, tonumber(ARGV[7]) do
  local event = ARGV[a]
  for _, v in ipairs({"cbq:" .. event, ARGV[a + 1], "cbj:" .. event, ARGV[a + 2], "cb:" .. event, ARGV[a + 3]}) do
    fields[#fields + 1] = v
  end
  a = a + 4
end
local nq = tonumber(ARGV[a])
for q = 1, nq do redis.call("SADD", KEYS[6], ARGV[a + q]) end
a = a + nq + 1
local members, n = {}, 0
while a <= #ARGV do
  redis.call("LPUSH", KEYS[6 + tonumber(ARGV[a])], ARGV[a + 2])
  members[#members + 1] = ARGV[a + 1]
  members[#members + 1] = "0" .. ARGV[a + 3]
  n = n + 1
  if #members >= ${2 * CHUNK} then
    redis.call("HSET", jobs, unpack(members))
    members = {}
  end
  a = a + 4
end
if #members > 0 then redis.call("HSET", jobs, unpack(members)) end
fields[#fields + 1] = "total"
fields[#fields + 1] = n
fields[#fields + 1] = "count"
fields[#fields + 1] = n * ${UNIT + 1}
redis.call("HSET", meta, unpack(fields))
for i = 1, 4 do redis.call("PEXPIRE", KEYS[i], expiry) end
redis.call("ZREMRANGEBYSCORE", KEYS[5], "-inf", now)
redis.call("ZADD", KEYS[5], now + expiry, bid)
return 1
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const [meta, jobs] = keys;
    if (redis.call("EXISTS", meta) === 1) return 0;
    const now = Number(argv[1]);
    const expiry = Number(argv[2]);
    const fields: (string | number)[] = ["created", now, "exp", expiry, "tf", argv[3], "failures", 0, "kids", 0];
    fields.push("kpend", 0, "holds", 0, "flow", "1", "order", argv[5]);
    if (argv[4] !== "") fields.push("desc", argv[4]);
    let a = 7;
    for (let i = 0; i < Number(argv[6]); i++, a += 4) {
      const event = argv[a];
      fields.push(`cbq:${event}`, argv[a + 1], `cbj:${event}`, argv[a + 2], `cb:${event}`, argv[a + 3]);
    }
    const nq = Number(argv[a]);
    for (let q = 1; q <= nq; q++) redis.call("SADD", keys[5], argv[a + q]);
    a += nq + 1;
    let n = 0;
    for (; a < argv.length; a += 4, n++) {
      redis.call("LPUSH", keys[5 + Number(argv[a])], argv[a + 2]);
      redis.call("HSET", jobs, argv[a + 1], "0" + argv[a + 3]);
    }
    redis.call("HSET", meta, ...fields, "total", n, "count", n * (UNIT + 1));
    for (let i = 0; i < 4; i++) redis.call("PEXPIRE", keys[i], expiry);
    redis.call("ZREMRANGEBYSCORE", keys[4], "-inf", now);
    redis.call("ZADD", keys[4], now + expiry, argv[0]);
    return 1;
  },
  decode: (reply) => Number(reply),
});
