/**
 * The batch feature's small scripts: cancel a batch, and read what a worker
 * keeps of a batch chain (its callbacks' queues, whether it is a flow,
 * whether it is cancelled).
 *
 * @module
 */
import { defineScript, type ScriptRedis } from "../../transport/script.ts";
import type { RedisReply } from "../../transport/redis_values.ts";

/**
 * Marks a batch cancelled: its queued jobs are skipped when fetched, its
 * running ones see `ctx.stopping`, its callbacks (and its children's) are
 * not pushed.
 *
 * KEYS: the batch's hash, the cancelled index.
 * ARGV: bid, now (ms).
 * Reply: 1 if the batch exists (cancelled now or before), 0 if not.
 */
export const CANCEL_BATCH = defineScript<boolean>({
  name: "cancelBatch",
  idempotent: true,
  keys: ["batch", "cancelled batches"],
  argv: ["bid", "now"],
  lua: `
local exp = redis.call("HGET", KEYS[1], "exp")
if not exp then return 0 end
redis.call("HSETNX", KEYS[1], "cancelled", ARGV[2])
redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", ARGV[2])
redis.call("ZADD", KEYS[2], tonumber(ARGV[2]) + tonumber(exp), ARGV[1])
return 1
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const exp = redis.call("HGET", keys[0], "exp") as string | null;
    if (exp === null) return 0;
    redis.call("HSETNX", keys[0], "cancelled", argv[1]);
    redis.call("ZREMRANGEBYSCORE", keys[1], "-inf", argv[1]);
    redis.call("ZADD", keys[1], Number(argv[1]) + Number(exp), argv[0]);
    return 1;
  },
  decode: (reply) => Number(reply) === 1,
});

/** What a worker keeps of one batch. */
export interface BatchInfo {
  /** Whether it exists (a job of an expired batch counts nowhere). */
  readonly exists: boolean;
  /** The queues its callbacks go to. */
  readonly queues: readonly string[];
  /** Whether it is a flow (its jobs' return values are kept). */
  readonly flow: boolean;
  /** Whether it was cancelled. */
  readonly cancelled: boolean;
}

const FIELDS = ["exp", "cbq:complete", "cbq:success", "cbq:death", "flow", "cancelled"];

/**
 * Reads each batch of a chain.
 *
 * KEYS: one batch hash per batch.
 * ARGV: none.
 * Reply: per batch, its exp, callback queues (complete, success, death), flow and cancelled fields.
 */
export const READ_BATCH_INFO = defineScript<BatchInfo[]>({
  name: "readBatchInfo",
  idempotent: true,
  keys: ["...batch"],
  argv: [],
  lua: `
local out = {}
for i = 1, #KEYS do
  out[i] = redis.call("HMGET", KEYS[i], "${FIELDS.join('", "')}")
end
return out
`,
  twin(redis: ScriptRedis, keys: string[]): RedisReply {
    return keys.map((key) => redis.call("HMGET", key, ...FIELDS));
  },
  decode(reply) {
    return (reply as (string | null)[][]).map((row) => {
      const queues = [...new Set(row.slice(1, 4).filter((q): q is string => typeof q === "string"))];
      return {
        exists: typeof row[0] === "string",
        queues,
        flow: typeof row[4] === "string",
        cancelled: typeof row[5] === "string",
      };
    });
  },
});

/** A flow's children as its batch keeps them: jid (null: not pushed), class, and a sub-flow's batch id. */
export type FlowOrder = ([jid: string | null, className: string] | [jid: string, className: string, bid: string])[];

/** A flow's children as its parent job reads them. */
export interface FlowChildrenReply {
  /** Per child, in the order the flow named them. */
  readonly order: Readonly<FlowOrder>;
  /** Per child in order: its state in the batch (null: not registered). */
  readonly states: readonly (string | null)[];
  /** jid -> return value JSON. */
  readonly results: ReadonlyMap<string, string>;
  /** jid -> failure JSON. */
  readonly failed: ReadonlyMap<string, string>;
}

/**
 * Reads flow batches' children for their parent jobs: the parents that
 * start together read in one call.
 *
 * KEYS: per flow, the batch's hash, members, failures, results.
 * ARGV: none.
 * Reply: per flow, false if it is gone, else the order JSON, then per child
 * in order its state, then the results hash and the failures hash, flat.
 */
export const READ_FLOW_CHILDREN = defineScript<(FlowChildrenReply | undefined)[]>({
  name: "readFlowChildren",
  idempotent: true,
  keys: ["...per flow: batch, members, failed, results"],
  argv: [],
  lua: `
local out = {}
for f = 1, #KEYS / 4 do
  local b = (f - 1) * 4
  local order = redis.call("HGET", KEYS[b + 1], "order")
  if order then
    -- Every child's state in one HMGET (a command from Lua costs more than its own work); a child not pushed has none.
    local states, jids, at = {}, {}, {}
    for i, entry in ipairs(cjson.decode(order)) do
      states[i] = false
      if type(entry[1]) == "string" then
        jids[#jids + 1] = entry[1]
        at[#jids] = i
      end
    end
    for from = 1, #jids, 1000 do
      local last = math.min(from + 999, #jids)
      local got = redis.call("HMGET", KEYS[b + 2], unpack(jids, from, last))
      for x = from, last do states[at[x]] = got[x - from + 1] end
    end
    out[f] = {order, states, redis.call("HGETALL", KEYS[b + 4]), redis.call("HGETALL", KEYS[b + 3])}
  else
    out[f] = false
  end
end
return out
`,
  twin(redis: ScriptRedis, keys: string[]): RedisReply {
    const out: RedisReply[] = [];
    for (let b = 0; b < keys.length; b += 4) {
      const order = redis.call("HGET", keys[b], "order") as string | null;
      if (order === null) {
        out.push(null);
        continue;
      }
      const states = (JSON.parse(order) as [string | null, string][]).map(([jid]) =>
        typeof jid === "string" ? redis.call("HGET", keys[b + 1], jid) : null
      );
      out.push([order, states, redis.call("HGETALL", keys[b + 3]), redis.call("HGETALL", keys[b + 2])]);
    }
    return out;
  },
  decode(reply) {
    // A Map, not an object: jids as property names make every object a slow dictionary.
    const hash = (flat: string[]) => {
      const out = new Map<string, string>();
      for (let i = 0; i + 1 < flat.length; i += 2) out.set(String(flat[i]), String(flat[i + 1]));
      return out;
    };
    return (Array.isArray(reply) ? reply : []).map((one) => {
      if (!Array.isArray(one)) return undefined;
      const [order, states, results, failed] = one as [string, (string | null)[], string[], string[]];
      return {
        order: JSON.parse(order),
        states: states.map((s) => (typeof s === "string" ? s : null)),
        results: hash(results),
        failed: hash(failed),
      };
    });
  },
});
