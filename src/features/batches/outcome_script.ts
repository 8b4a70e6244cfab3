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
 * One item's KEYS, head and ARGV, unframed: the settler frames coalesced
 * items (`frameWrites`), sending the keys and head once per call for every
 * item of one batch chain and queue list. `chain` may be given when known
 * (a worker keeps it per batch).
 *
 * @example
 * ```ts
 * const item = outcomeItem(k, { op: "job", bid, member: jid, level: 1, callback: "", kind: "ok", info: "", result: "", now: Date.now(), queues: ["default"] });
 * await transport.script(BATCH_OUTCOME, ...frameWrites([item]));
 * ```
 */
export function outcomeItem(
  k: Keys,
  item: OutcomeItem,
  chain: ChainKeys = chainKeys(k, item.bid),
): { keys: readonly string[]; head: readonly RedisArg[]; args: RedisArg[] } {
  if (item.op === "job" && item.kind === "ok" && item.level === 1 && item.callback === "" && item.info === "") {
    return successItem(k, chain, item);
  }
  const placed = placeFor(k, chain, item.queues, item.now);
  const args: RedisArg[] = [item.op, item.member, item.kind, item.level, item.callback, item.info, item.result];
  // Trailing defaults are left out.
  let n = args.length;
  while (n > 3 && args[n - 1] === ITEM_DEFAULTS[n - 1]) n--;
  args.length = n;
  return { keys: placed.keys, head: placed.head, args };
}

/**
 * The common item, a job's success in its own batch: its member alone (it
 * joins a run of them: see frameWrites), or for a flow's child its member
 * and its result. What {@link outcomeItem} makes of such an item, without
 * the item (a worker makes one per batch job).
 *
 * @example
 * ```ts
 * const { keys, head, args } = successItem(k, chain, { member: jid, result: "", now: Date.now(), queues });
 * ```
 */
export function successItem(
  k: Keys,
  chain: ChainKeys,
  item: Pick<OutcomeItem, "member" | "result" | "now" | "queues">,
): { keys: readonly string[]; head: readonly RedisArg[]; args: RedisArg[] } {
  const placed = placeFor(k, chain, item.queues, item.now);
  return {
    keys: placed.keys,
    head: placed.head,
    args: item.result === "" ? [item.member] : [item.member, item.result],
  };
}

/** What an item's args from the fourth on are when left out: level 1, no callback, failure or result. */
const ITEM_DEFAULTS: readonly RedisArg[] = ["", "", "", 1, "", "", ""];

/**
 * An item's KEYS and head: made once per chain and queue list and shared by
 * every item that names them (the settler sends a shared pair once per call).
 */
function placeFor(k: Keys, chain: ChainKeys, queues: readonly string[], now: number): Placement {
  let placed = placements.get(chain);
  if (placed?.queues !== queues) {
    const keys = [...chain.keys, k.queues, k.schedule, k.dead];
    for (const queue of queues) keys.push(k.queue(queue));
    placed = { queues, keys, head: [now, chain.chain.length, ...chain.chain, queues.length, ...queues] };
    placements.set(chain, placed);
  }
  // The head's time is the call's: a call carries one burst of work, its items' times within it. Items of one
  // millisecond share one head.
  if (placed.head[0] !== now) placed.head = [now, ...placed.head.slice(1)];
  return placed;
}

/** A chain's keys for a queue list, and its latest head (the time first). */
interface Placement {
  readonly queues: readonly string[];
  readonly keys: readonly string[];
  head: readonly RedisArg[];
}

const placements = new WeakMap<ChainKeys, Placement>();

/**
 * KEYS, per placed item: per level (the batch, then each ancestor): its
 * hash, members, failures, results; then `queues`, `schedule`, `dead`;
 * then one queue key per callback queue named in its head.
 * ARGV: per item, framed by the settler (`frameWrites`): number of keys
 * (`-n`: the keys and head of item n of this call, sent once), number of
 * args, then (where the keys are sent) the head: now (ms), L, L batch ids,
 * number of queues, the queue names; then either the member alone (a job's
 * success at level 1) or op, member, kind and, where not their defaults,
 * member level (1), callback event (`""`), failure JSON (a seal: a flow's
 * children in order; `""`), result JSON (`""`); or, for a success at level 1
 * with a result (a flow's child), the member and the result. A negative number of args
 * (-m) frames a run of m successes of the keys of item n: their members in
 * one arg, joined by newlines; or, for flow children's, `""`, their members
 * so joined, then their m results.
 * Reply: 1. Applies once per item (every change is a guarded state move).
 */
export const BATCH_OUTCOME = defineScript<number>({
  name: "batchOutcome",
  idempotent: true,
  keys: [
    "...per placed item: (per level: batch, members, failed, results), queues, schedule, dead, ...callback queues",
  ],
  argv: [
    '...per item: #keys or -n, #args or -m, [now, L, ...bids, #queues, ...queues], member | member, result | op, member, kind, [level, callback, info, result] | m members joined by newlines | "", m members joined by newlines, m results',
  ],
  lua: COUNTING_LUA + `
local function apply_item(c, op, member, kind, level, callback, info, result)
  if op == "seal" then
    if info ~= "" and redis.call("EXISTS", c.k[1].meta) == 1 then
      redis.call("HSET", c.k[1].meta, "order", info)
    end
    local state, count = mark(c, 1, member, "2")
    if state then check(c, 1, count) end
  else
    if callback ~= "" and redis.call("EXISTS", c.k[1].meta) == 1 then
      redis.call("HSET", c.k[1].meta, "done:" .. callback, c.now .. ":" .. kind)
    end
    if level > 0 and level <= c.L then job_outcome(c, level, member, kind, info, result) end
  end
end
-- Redis keeps what a failing script wrote before its error, so an error (a key of the wrong type) must not cut the
-- call short: a success's state is written at once and its count change only at the end, and the write-by-write retry
-- that follows the error finds that state done and changes nothing. Every item and every due change is applied, and
-- the first error is answered after them.
local failed
local function attempt(ok, err)
  if not ok and not failed then failed = err end
end
local contexts, made, placed, n = {}, {}, {}, 0
-- A run of successes (see frameWrites), read with one HMGET and written with one HSET per thousand members:
-- a command from Lua costs more than its own work. The common member, a job waiting with no flow policy ("0"), is
-- marked done here and its count change put off (as mark's is) in the same step as its write; any other state takes
-- apply_item's path. A member named twice counts once.
-- With values (a run of flow children's successes), ARGV[values + i - 1] is the i-th member's result: one HSET more
-- per thousand members writes the results of those marked done here.
local function run_ok(c, members, values)
  local jobs = c.k[1].jobs
  c.due = c.due or {}
  local list, at, seen = {}, {}, {}
  local i = 0
  for member in string.gmatch(members, "[^\\n]+") do
    if not seen[member] then
      seen[member] = true
      list[#list + 1] = member
      at[#list] = values and values + i
    end
    i = i + 1
  end
  local others, kept = {}, false
  for from = 1, #list, 1000 do
    local last = math.min(from + 999, #list)
    local states = redis.call("HMGET", jobs, unpack(list, from, last))
    local writes, results, d = {}, {}, 0
    for x = from, last do
      local member, s = list[x], states[x - from + 1]
      if s == "0" then
        writes[#writes + 1] = member
        writes[#writes + 1] = "2"
        d = d - UNIT - 1
        local value = values and ARGV[at[x]]
        if value and value ~= "" then
          results[#results + 1] = member
          results[#results + 1] = value
        end
      elseif s then
        others[#others + 1] = x
      end
    end
    if #writes > 0 then
      redis.call("HSET", jobs, unpack(writes))
      c.due[1] = (c.due[1] or 0) + d
    end
    if #results > 0 then
      redis.call("HSET", c.k[1].results, unpack(results))
      kept = true
    end
  end
  if kept then ttl_like(c, 1, c.k[1].results, true) end
  for _, x in ipairs(others) do
    attempt(pcall(apply_item, c, "job", list[x], "ok", 1, "", "", values and ARGV[at[x]] or ""))
  end
end
local a, next_key = 1, 1
while a <= #ARGV do
  local nk, na = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  local x, e = a + 2, a + 2 + na
  local c
  if na < 0 then
    -- A run of successes of item -nk's keys (see frameWrites): n counts each as an item, whatever happens to it
    -- (a later item's -n names its place).
    c = placed[-nk]
    n = n - na
    if ARGV[x] == "" then
      -- Members and their values (see frameWrites).
      attempt(pcall(run_ok, c, ARGV[x + 1], x + 2))
      e = x + 2 - na
    else
      attempt(pcall(run_ok, c, ARGV[x]))
      e = x + 1
    end
  else
    if nk < 0 then
      c = placed[-nk]
    else
      local kb = next_key
      next_key = next_key + nk
      local L = tonumber(ARGV[x + 1])
      local s = kb + L * 4
      c = contexts[KEYS[kb]]
      if not c or c.L ~= L then
        c = {L = L, k = {}, bids = {}, qk = {}, queues = KEYS[s], schedule = KEYS[s + 1], dead = KEYS[s + 2]}
        for lv = 1, L do
          local b = kb + (lv - 1) * 4
          c.k[lv] = {meta = KEYS[b], jobs = KEYS[b + 1], failed = KEYS[b + 2], results = KEYS[b + 3]}
          c.bids[lv] = ARGV[x + 1 + lv]
        end
        contexts[KEYS[kb]] = c
        made[#made + 1] = c
      end
      c.now = tonumber(ARGV[x])
      local nq = tonumber(ARGV[x + L + 2])
      for q = 1, nq do c.qk[ARGV[x + L + 2 + q]] = KEYS[s + 2 + q] end
      x = x + L + 3 + nq
    end
    n = n + 1
    placed[n] = c
    if e - x == 1 then
      attempt(pcall(apply_item, c, "job", ARGV[x], "ok", 1, "", "", ""))
    elseif e - x == 2 then
      attempt(pcall(apply_item, c, "job", ARGV[x], "ok", 1, "", "", ARGV[x + 1]))
    else
      local level = x + 3 < e and tonumber(ARGV[x + 3]) or 1
      local callback = x + 4 < e and ARGV[x + 4] or ""
      local info = x + 5 < e and ARGV[x + 5] or ""
      local result = x + 6 < e and ARGV[x + 6] or ""
      attempt(pcall(apply_item, c, ARGV[x], ARGV[x + 1], ARGV[x + 2], level, callback, info, result))
    end
  end
  a = e
end
for _, c in ipairs(made) do attempt(pcall(apply_due, c)) end
if failed then return type(failed) == "table" and failed or redis.error_reply(tostring(failed)) end
return 1
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const model = new CountingTwin(redis);
    // As the Lua: every item and due change is applied, then the first error thrown (see its comment).
    let failed: { error: unknown } | undefined;
    const attempt = (apply: () => void) => {
      try {
        apply();
      } catch (error) {
        failed ??= { error };
      }
    };
    const contexts = new Map<string, Ctx>();
    const made: Ctx[] = [];
    const placed: Ctx[] = [];
    let a = 0;
    let nextKey = 0;
    const apply = (
      c: Ctx,
      op: string,
      member: string,
      kind: string,
      level: number,
      callback = "",
      info = "",
      result = "",
    ) =>
      attempt(() => {
        const meta = c.k[1].meta;
        if (op === "seal") {
          if (info !== "" && redis.call("EXISTS", meta) === 1) redis.call("HSET", meta, "order", info);
          const [state, count] = model.mark(c, 1, member, "2");
          if (state !== null) model.check(c, 1, count as number | undefined);
        } else {
          if (callback !== "" && redis.call("EXISTS", meta) === 1) {
            redis.call("HSET", meta, `done:${callback}`, `${c.now}:${kind}`);
          }
          if (level > 0 && level <= c.L) model.jobOutcome(c, level, member, kind, info, result);
        }
      });
    while (a < argv.length) {
      const nk = Number(argv[a]);
      const na = Number(argv[a + 1]);
      let x = a + 2;
      if (na < 0) {
        // A run of successes of item -nk's keys (see frameWrites).
        const c = placed[-nk - 1];
        const values = argv[x] === "" ? x + 2 : undefined;
        const members = argv[values === undefined ? x : x + 1].split("\n");
        members.forEach((member, i) => {
          placed.push(c);
          apply(c, "job", member, "ok", 1, "", "", values === undefined ? "" : argv[values + i]);
        });
        a = values === undefined ? x + 1 : values + members.length;
        continue;
      }
      const e = x + na;
      let c: Ctx;
      if (nk < 0) c = placed[-nk - 1];
      else {
        const kb = nextKey;
        nextKey += nk;
        const L = Number(argv[x + 1]);
        const s = kb + L * 4;
        let known = contexts.get(keys[kb]);
        if (!known || known.L !== L) {
          const k: LevelKeys[] = [];
          const bids: string[] = [];
          for (let lv = 1; lv <= L; lv++) {
            const b = kb + (lv - 1) * 4;
            k[lv] = { meta: keys[b], jobs: keys[b + 1], failed: keys[b + 2], results: keys[b + 3] };
            bids[lv] = argv[x + 1 + lv];
          }
          known = { L, now: 0, k, bids, queues: keys[s], schedule: keys[s + 1], dead: keys[s + 2], qk: new Map() };
          contexts.set(keys[kb], known);
          made.push(known);
        }
        c = known;
        c.now = Number(argv[x]);
        const nq = Number(argv[x + L + 2]);
        for (let q = 1; q <= nq; q++) c.qk.set(argv[x + L + 2 + q], keys[s + 2 + q]);
        x += L + 3 + nq;
      }
      placed.push(c);
      if (e - x === 1) apply(c, "job", argv[x], "ok", 1);
      else if (e - x === 2) apply(c, "job", argv[x], "ok", 1, "", "", argv[x + 1]);
      else {
        apply(
          c,
          argv[x],
          argv[x + 1],
          argv[x + 2],
          x + 3 < e ? Number(argv[x + 3]) : 1,
          x + 4 < e ? argv[x + 4] : "",
          x + 5 < e ? argv[x + 5] : "",
          x + 6 < e ? argv[x + 6] : "",
        );
      }
      a = e;
    }
    for (const c of made) attempt(() => model.applyDue(c));
    if (failed) throw failed.error;
    return 1;
  },
  decode: () => 1,
});
