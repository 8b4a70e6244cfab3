/**
 * The batch outcome script: records jobs' outcomes in their batches (and
 * seals registrations), claims and fires callbacks, all in one atomic step
 * per call. It takes many items at once: the outcomes of jobs that finish
 * together are coalesced by the settler into one call (`OutcomeWrite.coalesce`),
 * so a batch job costs well under one extra command on average.
 *
 * @module
 */
import { defineScript, type ScriptRedis } from "../../transport/script.ts";
import type { RedisArg, RedisReply } from "../../transport/redis_values.ts";
import type { Keys } from "../../keys.ts";
import { COUNTING_LUA, CountingTwin, type Ctx, type LevelKeys } from "./counting.ts";
import { bidChain } from "./bid.ts";

/** How a job's run counts in its batch: `ok` (succeeded or discarded), `fail` (will retry), `dead` (never again). */
export type MemberKind = "ok" | "fail" | "dead";

/** One item of the outcome script: a job's outcome, or the seal of a registration. */
export interface OutcomeItem {
  /** `job`: a job's outcome; `seal`: a registration (`member`, `o:<id>`) is over. */
  readonly op: "job" | "seal";
  /** The batch whose chain (it and its ancestors) the item names: the job's batch, or the one it is a callback of. */
  readonly bid: string;
  /** The job's jid, or the registration's member. */
  readonly member: string;
  /** The level the member belongs to: 1 (the batch), 2 (its parent: a child batch's callback), 0 (none). */
  readonly level: number;
  /** The event the job is the callback of (of level 1), or `""`. */
  readonly callback: string;
  readonly kind: MemberKind;
  /** JSON of what failed (`fail`, `dead`); for `seal`, a flow's children in order; else `""`. */
  readonly info: string;
  /** JSON of the job's return value (a flow's child), else `""`. */
  readonly result: string;
  /** Epoch ms. */
  readonly now: number;
  /** Queues callbacks of the chain go to, as known (one missing is pushed through `schedule`). */
  readonly queues: readonly string[];
}

/** A batch chain's ids and its levels' keys (what every item of that chain names). */
export interface ChainKeys {
  /** The batch and its ancestors, the batch first. */
  readonly chain: readonly string[];
  /** Per level: hash, members, failures, results. */
  readonly keys: readonly string[];
}

/**
 * The chain of `bid` and its keys.
 *
 * @example
 * ```ts
 * chainKeys(keys(), "a.b"); // { chain: ["a.b", "a"], keys: ["edgekiq:batch:a.b", ...] }
 * ```
 */
export function chainKeys(k: Keys, bid: string): ChainKeys {
  const chain = bidChain(bid);
  const keys: string[] = [];
  for (const b of chain) keys.push(k.batch(b), k.batchJobs(b), k.batchFailed(b), k.batchResults(b));
  return { chain, keys };
}

/**
 * One item's KEYS and ARGV, unframed (the settler frames coalesced items).
 * `chain` may be given when known (a worker keeps it per batch).
 *
 * @example
 * ```ts
 * const { keys, args } = outcomeItem(k, { op: "job", bid, member: jid, level: 1, callback: "", kind: "ok", info: "", result: "", now: Date.now(), queues: ["default"] });
 * ```
 */
export function outcomeItem(
  k: Keys,
  item: OutcomeItem,
  chain: ChainKeys = chainKeys(k, item.bid),
): { keys: readonly string[]; args: RedisArg[] } {
  const keys = keysFor(k, chain, item.queues);
  const args: RedisArg[] = [item.op, item.now, chain.chain.length, ...chain.chain];
  args.push(item.member, item.level, item.callback, item.kind, item.info, item.result, item.queues.length);
  for (const queue of item.queues) args.push(queue);
  return { keys, args };
}

/**
 * An item's KEYS: one array per chain and queue list, made once and shared
 * by every item that names them (the settler sends a shared array once per call).
 */
function keysFor(k: Keys, chain: ChainKeys, queues: readonly string[]): readonly string[] {
  const kept = madeKeys.get(chain);
  if (kept?.queues === queues) return kept.keys;
  const keys = [...chain.keys, k.queues, k.schedule, k.dead];
  for (const queue of queues) keys.push(k.queue(queue));
  madeKeys.set(chain, { queues, keys });
  return keys;
}

const madeKeys = new WeakMap<ChainKeys, { queues: readonly string[]; keys: readonly string[] }>();

/**
 * KEYS, per item: per level (the batch, then each ancestor): its hash,
 * members, failures, results; then `queues`, `schedule`, `dead`; then one
 * queue key per callback queue named in ARGV.
 * ARGV: per item, framed by the settler: number of keys (`-n`: the keys of
 * item n of this call, sent once), number of args,
 * then op, now (ms), L, L batch ids, member, member level, callback event,
 * kind, failure JSON (a seal: a flow's children in order, or `""`), result
 * JSON, number of queues, the queue names.
 * Reply: 1. Applies once per item (every change is a guarded state move).
 */
export const BATCH_OUTCOME = defineScript<number>({
  name: "batchOutcome",
  idempotent: true,
  keys: ["...per item: (per level: batch, members, failed, results), queues, schedule, dead, ...callback queues"],
  argv: [
    "...per item: #keys, #args, op, now, L, ...bids, member, level, callback, kind, info, result, #queues, ...queues",
  ],
  lua: COUNTING_LUA + `
local contexts, placed, n = {}, {}, 0
local a, next_key = 1, 1
while a <= #ARGV do
  local nk, na = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  local x = a + 2
  local kb = next_key
  n = n + 1
  if nk < 0 then
    kb = placed[-nk]
  else
    next_key = next_key + nk
  end
  placed[n] = kb
  local L = tonumber(ARGV[x + 2])
  local s = kb + L * 4
  local c = contexts[KEYS[kb]]
  if not c or c.L ~= L then
    c = {L = L, k = {}, bids = {}, qk = {}, queues = KEYS[s], schedule = KEYS[s + 1], dead = KEYS[s + 2]}
    for lv = 1, L do
      local b = kb + (lv - 1) * 4
      c.k[lv] = {meta = KEYS[b], jobs = KEYS[b + 1], failed = KEYS[b + 2], results = KEYS[b + 3]}
      c.bids[lv] = ARGV[x + 2 + lv]
    end
    contexts[KEYS[kb]] = c
  end
  c.now = tonumber(ARGV[x + 1])
  local y = x + 3 + L
  for q = 1, tonumber(ARGV[y + 6]) do c.qk[ARGV[y + 6 + q]] = KEYS[s + 2 + q] end
  local member, level, callback, kind = ARGV[y], tonumber(ARGV[y + 1]), ARGV[y + 2], ARGV[y + 3]
  if ARGV[x] == "seal" then
    if ARGV[y + 4] ~= "" and redis.call("EXISTS", c.k[1].meta) == 1 then
      redis.call("HSET", c.k[1].meta, "order", ARGV[y + 4])
    end
    local state, count = mark(c, 1, member, "2")
    if state then check(c, 1, count) end
  else
    if callback ~= "" and redis.call("EXISTS", c.k[1].meta) == 1 then
      redis.call("HSET", c.k[1].meta, "done:" .. callback, c.now .. ":" .. kind)
    end
    if level > 0 and level <= L then job_outcome(c, level, member, kind, ARGV[y + 4], ARGV[y + 5]) end
  end
  a = a + 2 + na
end
return 1
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const model = new CountingTwin(redis);
    const contexts = new Map<string, Ctx>();
    const placed: number[] = [];
    let a = 0;
    let nextKey = 0;
    while (a < argv.length) {
      const nk = Number(argv[a]);
      const na = Number(argv[a + 1]);
      const x = a + 2;
      const kb = nk < 0 ? placed[-nk - 1] : nextKey;
      if (nk >= 0) nextKey += nk;
      placed.push(kb);
      const L = Number(argv[x + 2]);
      const s = kb + L * 4;
      let c = contexts.get(keys[kb]);
      if (!c || c.L !== L) {
        const k: LevelKeys[] = [];
        const bids: string[] = [];
        for (let lv = 1; lv <= L; lv++) {
          const b = kb + (lv - 1) * 4;
          k[lv] = { meta: keys[b], jobs: keys[b + 1], failed: keys[b + 2], results: keys[b + 3] };
          bids[lv] = argv[x + 2 + lv];
        }
        c = { L, now: 0, k, bids, queues: keys[s], schedule: keys[s + 1], dead: keys[s + 2], qk: new Map() };
        contexts.set(keys[kb], c);
      }
      c.now = Number(argv[x + 1]);
      const y = x + 3 + L;
      for (let q = 1; q <= Number(argv[y + 6]); q++) c.qk.set(argv[y + 6 + q], keys[s + 2 + q]);
      const [member, level, callback, kind] = [argv[y], Number(argv[y + 1]), argv[y + 2], argv[y + 3]];
      const meta = c.k[1].meta;
      if (argv[x] === "seal") {
        if (argv[y + 4] !== "" && redis.call("EXISTS", meta) === 1) redis.call("HSET", meta, "order", argv[y + 4]);
        const [state, count] = model.mark(c, 1, member, "2");
        if (state !== null) model.check(c, 1, count);
      } else {
        if (callback !== "" && redis.call("EXISTS", meta) === 1) {
          redis.call("HSET", meta, `done:${callback}`, `${c.now}:${kind}`);
        }
        if (level > 0 && level <= L) model.jobOutcome(c, level, member, kind, argv[y + 4], argv[y + 5]);
      }
      a += 2 + na;
    }
    return 1;
  },
  decode: () => 1,
});
