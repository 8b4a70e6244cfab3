/**
 * The counting model every batch and flow shares, as Lua and its JavaScript
 * twin (the memory transport runs the twin; both must do the same thing).
 *
 * A batch is a hash of counts and a hash of members, each with its state:
 * `0` waiting, `1` ran and failed (a job retrying or dead, a child batch
 * complete but not successful), `2` done (succeeded, discarded, ignored, a
 * registration sealed). A member's state only moves forward, and every count
 * moves only with a state change, so an outcome written twice (a lost reply,
 * a job run again after SIGKILL) changes nothing the second time: the counts
 * are exact under at-least-once execution. Members are jobs (by jid), child
 * batches (`b:<bid>`) and open registrations (`o:<id>`); a flow member's
 * state carries its failure policy after the digit (`i` ignore, `c`
 * continue; none: fail the parent).
 *
 * One field, `count`, decides: `open * 2^26 + left`, where `left` counts
 * the members not done and `open` those that have not run (waiting jobs
 * and children, open registrations). A batch is **complete** when `open` is
 * 0 (every job ran, every child completed, every registration sealed) and
 * **successful** when `left` is 0. Both travel in one number so that a
 * job's outcome is at most three commands inside the script (read its state,
 * write it, `HINCRBY count`, whose reply says whether anything may be due);
 * the claims are read only when `open` reaches 0. A success's change to the
 * count is only ever a decrease, so it is put off (`due`) and summed per
 * batch: one `HINCRBY` per batch per call, and a check then, unless
 * something reads the count first (it takes what is due with it). A count
 * read while a decrease is due elsewhere in the call is too high, never too
 * low, so nothing fires early, and the check after the due change catches
 * what it delayed. The other fields (`total`,
 * `failures`, `kids`, `kpend`, `holds`) are for the status. Each event is
 * claimed once (`fired:<event>`, set by the script that sees it happen), so
 * its callback is pushed once however many processes finish jobs at the
 * same moment.
 *
 * A child batch's callbacks run in its parent: each is registered there as a
 * waiting job when it is pushed, and the child's entry moves to `1` on
 * complete and `2` on success, so a parent completes only after its
 * children's callbacks have run. The `death` event is claimed by the first
 * job that dies, and told to every ancestor. In a flow (a batch whose
 * success callback is the parent job), a child that dies applies its policy:
 * fail the parent (it is buried in the dead set, never run), ignore the
 * failure (the child counts as done), or continue (the parent runs now).
 *
 * @module
 */
import type { ScriptRedis } from "../../transport/script.ts";
import type { RedisReply } from "../../transport/redis_values.ts";

/**
 * The payload field a flow's parent finds its children in (order, states,
 * results, failures as JSON, the form `readFlowChildren` answers), written
 * when its success fires because every child succeeded and they fit in
 * {@link EMBED_MAX} bytes; otherwise it reads them from Redis.
 */
export const EMBED_FIELD = "edgekiq_children";

/** Most bytes of children's data a flow parent's payload carries. */
export const EMBED_MAX = 16_384;

/** `count` is `open * UNIT + left`: 2^26 members of each kind at most, exact in a Lua number (a double). */
export const UNIT = 67_108_864;

/**
 * Lua: the model's functions over a context `c` = `{L, now, k[lv] = {meta,
 * jobs, failed, results}, bids[lv], queues, schedule, dead, qk[queue] =
 * key}`; level 1 is the batch itself, level L its root.
 */
export const COUNTING_LUA = `
local UNIT = ${UNIT}
local check, fire, died
local function digit(s) return string.sub(s, 1, 1) end
local function policy(s) return string.sub(s, 2) end
local function ttl_like(c, lv, key, once)
  -- once: a key only ever added to (a flow's results) is aligned once per call, as a batch's expiry does not move
  -- inside an outcome call (only add() moves it); one that can be emptied and made again (failed) every time.
  if once then
    c.aligned = c.aligned or {}
    if c.aligned[key] then return end
    c.aligned[key] = true
  end
  local ms = redis.call("PTTL", c.k[lv].meta)
  if ms > 0 then redis.call("PEXPIRE", key, ms) end
end
local function wire_time(c, lv)
  if redis.call("HGET", c.k[lv].meta, "tf") == "ms" then return string.format("%d", c.now) end
  return string.format("%.3f", c.now / 1000)
end
local SIDE = {["b:"] = "kpend", ["o:"] = "holds"}
-- A level's count change put off until something reads it (see the module's "due").
local function take_due(c, lv)
  local d = c.due and c.due[lv] or 0
  if d ~= 0 then c.due[lv] = 0 end
  return d
end
local function mark(c, lv, m, to, s, defer)
  local k = c.k[lv]
  s = s or redis.call("HGET", k.jobs, m)
  if not s then return false end
  local d = digit(s)
  if d == "2" or d == to then return s end
  redis.call("HSET", k.jobs, m, to .. policy(s))
  local side = SIDE[string.sub(m, 1, 2)]
  local delta = d == "0" and -UNIT or 0
  if to == "2" then
    delta = delta - 1
    if side then redis.call("HINCRBY", k.meta, side, -1) end
  end
  if not side and (d == "1" or to == "1") then redis.call("HINCRBY", k.meta, "failures", to == "1" and 1 or -1) end
  if defer then
    c.due = c.due or {}
    c.due[lv] = (c.due[lv] or 0) + delta
    return s, false
  end
  return s, redis.call("HINCRBY", k.meta, "count", delta + take_due(c, lv))
end
local function register(c, lv, m, state)
  local k = c.k[lv]
  if redis.call("HSETNX", k.jobs, m, state) == 0 then return end
  redis.call("HINCRBY", k.meta, "total", 1)
  if digit(state) == "1" then
    redis.call("HINCRBY", k.meta, "failures", 1)
    redis.call("HINCRBY", k.meta, "count", 1)
  else
    redis.call("HINCRBY", k.meta, "count", UNIT + 1)
  end
end
local function cancelled(c, lv)
  for l = lv, c.L do
    if redis.call("HEXISTS", c.k[l].meta, "cancelled") == 1 then return true end
  end
  return false
end
local function kid_policy(c, lv)
  if lv >= c.L then return "" end
  local s = redis.call("HGET", c.k[lv + 1].jobs, "b:" .. c.bids[lv])
  return s and policy(s) or ""
end
-- A flow's children as its parent reads them (order, states, results, failures), when every child has succeeded (their
-- states are final) and it all fits in ${EMBED_MAX} bytes: the parent then reads them from its payload, not from Redis.
local function children_of(c, lv)
  local k = c.k[lv]
  local order = redis.call("HGET", k.meta, "order")
  -- A flow too wide to fit is known by its order alone, before its results are read.
  if not order or #order > ${EMBED_MAX} then return nil end
  local size = #order
  local results, failed = redis.call("HGETALL", k.results), redis.call("HGETALL", k.failed)
  for i = 2, #results, 2 do size = size + #results[i] + 40 end
  for i = 2, #failed, 2 do size = size + #failed[i] + 40 end
  if size > ${EMBED_MAX} then return nil end
  local jids = {}
  for i, entry in ipairs(cjson.decode(order)) do jids[i] = type(entry[1]) == "string" and entry[1] or "" end
  local states = redis.call("HMGET", k.jobs, unpack(jids))
  for i = 1, #jids do states[i] = states[i] or false end
  return cjson.encode({order, states, results, failed})
end
local function push_callback(c, lv, event, settled)
  local v = redis.call("HMGET", c.k[lv].meta, "cb:" .. event, "cbq:" .. event, "cbj:" .. event)
  local raw, queue, jid = v[1], v[2], v[3]
  if not raw then return "" end
  if lv < c.L then register(c, lv + 1, jid, "0" .. (event == "success" and kid_policy(c, lv) or "")) end
  local body = string.sub(raw, 1, -2)
  local children = settled and event == "success" and children_of(c, lv)
  if children then body = body .. ',"${EMBED_FIELD}":' .. children end
  local qkey = c.qk[queue]
  if qkey then
    redis.call("SADD", c.queues, queue)
    redis.call("LPUSH", qkey, body .. ',"enqueued_at":' .. wire_time(c, lv) .. "}")
  else
    redis.call("ZADD", c.schedule, c.now / 1000, body .. "}")
  end
  return jid
end
fire = function(c, lv, event, settled)
  local note = cancelled(c, lv) and "cancelled" or push_callback(c, lv, event, settled)
  redis.call("HSET", c.k[lv].meta, "fired:" .. event, c.now .. ":" .. note)
  if lv < c.L and event ~= "death" then
    mark(c, lv + 1, "b:" .. c.bids[lv], event == "complete" and "1" or "2")
  end
end
check = function(c, lv, count)
  local meta = c.k[lv].meta
  if not count then
    local d = take_due(c, lv)
    count = d ~= 0 and redis.call("HINCRBY", meta, "count", d) or tonumber(redis.call("HGET", meta, "count"))
  end
  if not count or count >= UNIT then return end
  local v = redis.call("HMGET", meta, "fired:complete", "fired:success")
  local fired = false
  if not v[1] then
    redis.call("HSET", meta, "fired:complete", "")
    fire(c, lv, "complete")
    fired = true
  end
  if not v[2] and count == 0 then
    redis.call("HSET", meta, "fired:success", "")
    fire(c, lv, "success", true)
    fired = true
  end
  if fired and lv < c.L then check(c, lv + 1) end
end
local function fail_parent(c, lv, m)
  local k = c.k[lv]
  if redis.call("HSETNX", k.meta, "fired:success", "") == 0 then return end
  redis.call("HSET", k.meta, "fired:success", c.now .. ":failed")
  local v = redis.call("HMGET", k.meta, "cb:success", "cbj:success")
  local raw, jid = v[1], v[2]
  if not raw then return end
  local why = redis.call("HGET", k.failed, m) or "null"
  local ok, w = pcall(cjson.decode, why)
  local what = m
  if ok and type(w) == "table" and type(w.job) == "string" then
    what = w.job .. " " .. m .. " (" .. tostring(w.class) .. ": " .. tostring(w.message) .. ")"
  end
  local message = "Cannot run this flow job as its child " .. what .. " failed"
  redis.call("ZADD", c.dead, c.now / 1000, string.sub(raw, 1, -2) ..
    ',"error_class":"Edgekiq::ChildFailed","error_message":' .. cjson.encode(message) .. ',"failed_at":' ..
    wire_time(c, lv) .. ',"edgekiq_child_failure":' .. why .. "}")
  if lv < c.L then
    local pol = kid_policy(c, lv)
    local up = c.k[lv + 1]
    register(c, lv + 1, jid, "1" .. pol)
    redis.call("HSET", up.failed, jid, '{"job":null,"class":"Edgekiq::ChildFailed","message":' ..
      cjson.encode(message) .. ',"dead":true}')
    ttl_like(c, lv + 1, up.failed)
    mark(c, lv + 1, "b:" .. c.bids[lv], "2")
    died(c, lv + 1, jid, pol)
  end
end
died = function(c, lv, m, pol)
  local k = c.k[lv]
  if redis.call("HSETNX", k.meta, "fired:death", "") == 1 then fire(c, lv, "death") end
  if redis.call("HEXISTS", k.meta, "flow") == 1 then
    if pol == "i" then
      mark(c, lv, m, "2")
    elseif pol == "c" then
      if redis.call("HSETNX", k.meta, "fired:success", "") == 1 then
        fire(c, lv, "success")
        if lv < c.L then check(c, lv + 1) end
      end
    else
      fail_parent(c, lv, m)
    end
  elseif lv < c.L then
    died(c, lv + 1, "b:" .. c.bids[lv], kid_policy(c, lv))
  end
  check(c, lv)
end
local function job_outcome(c, lv, m, kind, info, result)
  local k = c.k[lv]
  local s = redis.call("HGET", k.jobs, m)
  if not s or digit(s) == "2" then return end
  local count
  if kind == "ok" then
    s, count = mark(c, lv, m, "2", s, true)
    if digit(s) == "1" then redis.call("HDEL", k.failed, m) end
    if result ~= "" then
      redis.call("HSET", k.results, m, result)
      ttl_like(c, lv, k.results, true)
    end
    return
  end
  s, count = mark(c, lv, m, "1", s)
  redis.call("HSET", k.failed, m, info)
  ttl_like(c, lv, k.failed)
  if kind == "dead" then
    died(c, lv, m, policy(s))
    return
  end
  check(c, lv, count)
end
-- Applies a context's put-off count changes and checks each level they touched (the end of every call).
local function apply_due(c)
  if not c.due then return end
  for lv = 1, c.L do
    local d = take_due(c, lv)
    if d ~= 0 then check(c, lv, redis.call("HINCRBY", c.k[lv].meta, "count", d)) end
  end
end
`;

/** One batch level's keys. */
export interface LevelKeys {
  readonly meta: string;
  readonly jobs: string;
  readonly failed: string;
  readonly results: string;
}

/** The twin's context: as the Lua's `c`, levels from 1 (one per batch chain in a call, its time set per item). */
export interface Ctx {
  readonly L: number;
  now: number;
  readonly k: LevelKeys[];
  readonly bids: string[];
  readonly queues: string;
  readonly schedule: string;
  readonly dead: string;
  readonly qk: Map<string, string>;
  /** Keys only ever added to whose expiry this call already aligned with their batch's. */
  aligned?: Set<string>;
  /** Per level, count changes of successes put off until something reads the count, or the call ends. */
  due?: number[];
}

const SIDE: Record<string, string> = { "b:": "kpend", "o:": "holds" };

/**
 * The JavaScript twin of {@link COUNTING_LUA}, for the memory transport.
 *
 * @example
 * ```ts
 * const model = new CountingTwin(redis);
 * model.jobOutcome(c, 1, jid, "ok", "", "");
 * ```
 */
export class CountingTwin {
  #r: ScriptRedis;

  constructor(redis: ScriptRedis) {
    this.#r = redis;
  }

  #call(...args: (string | number)[]): RedisReply {
    return this.#r.call(args[0] as string, ...args.slice(1));
  }

  #hget(key: string, field: string): string | null {
    return this.#call("HGET", key, field) as string | null;
  }

  ttlLike(c: Ctx, lv: number, key: string, once = false): void {
    if (once) {
      c.aligned ??= new Set();
      if (c.aligned.has(key)) return;
      c.aligned.add(key);
    }
    const ms = Number(this.#call("PTTL", c.k[lv].meta));
    if (ms > 0) this.#call("PEXPIRE", key, ms);
  }

  wireTime(c: Ctx, lv: number): string {
    if (this.#hget(c.k[lv].meta, "tf") === "ms") return String(Math.floor(c.now));
    return (c.now / 1000).toFixed(3);
  }

  /** A level's put-off count change, taken (see {@link Ctx.due}). */
  #takeDue(c: Ctx, lv: number): number {
    const d = c.due?.[lv] ?? 0;
    if (d !== 0) c.due![lv] = 0;
    return d;
  }

  /**
   * Moves `m` to `to`; returns its state before (null: not a member) and the
   * batch's count after (if it moved), or false where `defer` put the change off.
   */
  mark(
    c: Ctx,
    lv: number,
    m: string,
    to: string,
    s?: string | null,
    defer = false,
  ): [string | null, number | undefined | false] {
    const k = c.k[lv];
    s ??= this.#hget(k.jobs, m);
    if (s === null) return [null, undefined];
    const d = s[0];
    if (d === "2" || d === to) return [s, undefined];
    this.#call("HSET", k.jobs, m, to + s.slice(1));
    const side = SIDE[m.slice(0, 2)];
    let delta = d === "0" ? -UNIT : 0;
    if (to === "2") {
      delta -= 1;
      if (side) this.#call("HINCRBY", k.meta, side, -1);
    }
    if (!side && (d === "1" || to === "1")) this.#call("HINCRBY", k.meta, "failures", to === "1" ? 1 : -1);
    if (defer) {
      c.due ??= [];
      c.due[lv] = (c.due[lv] ?? 0) + delta;
      return [s, false];
    }
    return [s, Number(this.#call("HINCRBY", k.meta, "count", delta + this.#takeDue(c, lv)))];
  }

  register(c: Ctx, lv: number, m: string, state: string): void {
    const k = c.k[lv];
    if (this.#call("HSETNX", k.jobs, m, state) === 0) return;
    this.#call("HINCRBY", k.meta, "total", 1);
    if (state[0] === "1") {
      this.#call("HINCRBY", k.meta, "failures", 1);
      this.#call("HINCRBY", k.meta, "count", 1);
    } else this.#call("HINCRBY", k.meta, "count", UNIT + 1);
  }

  cancelled(c: Ctx, lv: number): boolean {
    for (let l = lv; l <= c.L; l++) if (this.#call("HEXISTS", c.k[l].meta, "cancelled") === 1) return true;
    return false;
  }

  kidPolicy(c: Ctx, lv: number): string {
    if (lv >= c.L) return "";
    const s = this.#hget(c.k[lv + 1].jobs, `b:${c.bids[lv]}`);
    return s === null ? "" : s.slice(1);
  }

  /** A flow's children as its parent reads them, if they fit (see the Lua's `children_of`). */
  childrenOf(c: Ctx, lv: number): string | undefined {
    const k = c.k[lv];
    const order = this.#hget(k.meta, "order");
    if (order === null || order.length > EMBED_MAX) return undefined;
    const results = this.#call("HGETALL", k.results) as string[];
    const failed = this.#call("HGETALL", k.failed) as string[];
    let size = order.length;
    for (let i = 1; i < results.length; i += 2) size += results[i].length + 40;
    for (let i = 1; i < failed.length; i += 2) size += failed[i].length + 40;
    if (size > EMBED_MAX) return undefined;
    const jids = (JSON.parse(order) as [string | null][]).map(([jid]) => (typeof jid === "string" ? jid : ""));
    const states = (this.#call("HMGET", k.jobs, ...jids) as (string | null)[]).map((s) => s ?? false);
    // As cjson: an empty table is an object.
    const flat = (list: string[]) => (list.length ? list : {});
    return JSON.stringify([order, states, flat(results), flat(failed)]);
  }

  pushCallback(c: Ctx, lv: number, event: string, settled = false): string {
    const [raw, queue, jid] = this.#call("HMGET", c.k[lv].meta, `cb:${event}`, `cbq:${event}`, `cbj:${event}`) as (
      | string
      | null
    )[];
    if (raw === null) return "";
    if (lv < c.L) this.register(c, lv + 1, jid!, "0" + (event === "success" ? this.kidPolicy(c, lv) : ""));
    let body = raw.slice(0, -1);
    const children = settled && event === "success" ? this.childrenOf(c, lv) : undefined;
    if (children !== undefined) body += `,"${EMBED_FIELD}":${children}`;
    const qkey = c.qk.get(queue!);
    if (qkey !== undefined) {
      this.#call("SADD", c.queues, queue!);
      this.#call("LPUSH", qkey, `${body},"enqueued_at":${this.wireTime(c, lv)}}`);
    } else this.#call("ZADD", c.schedule, c.now / 1000, `${body}}`);
    return jid!;
  }

  fire(c: Ctx, lv: number, event: string, settled = false): void {
    const note = this.cancelled(c, lv) ? "cancelled" : this.pushCallback(c, lv, event, settled);
    this.#call("HSET", c.k[lv].meta, `fired:${event}`, `${c.now}:${note}`);
    if (lv < c.L && event !== "death") this.mark(c, lv + 1, `b:${c.bids[lv]}`, event === "complete" ? "1" : "2");
  }

  check(c: Ctx, lv: number, count?: number): void {
    const meta = c.k[lv].meta;
    if (count === undefined) {
      const d = this.#takeDue(c, lv);
      const read = d !== 0 ? this.#call("HINCRBY", meta, "count", d) : this.#hget(meta, "count");
      if (read === null) return;
      count = Number(read);
    }
    if (count >= UNIT) return;
    const [complete, success] = this.#call("HMGET", meta, "fired:complete", "fired:success") as (string | null)[];
    let fired = false;
    if (complete === null) {
      this.#call("HSET", meta, "fired:complete", "");
      this.fire(c, lv, "complete");
      fired = true;
    }
    if (success === null && count === 0) {
      this.#call("HSET", meta, "fired:success", "");
      this.fire(c, lv, "success", true);
      fired = true;
    }
    if (fired && lv < c.L) this.check(c, lv + 1);
  }

  failParent(c: Ctx, lv: number, m: string): void {
    const k = c.k[lv];
    if (this.#call("HSETNX", k.meta, "fired:success", "") === 0) return;
    this.#call("HSET", k.meta, "fired:success", `${c.now}:failed`);
    const [raw, jid] = this.#call("HMGET", k.meta, "cb:success", "cbj:success") as (string | null)[];
    if (raw === null) return;
    const why = this.#hget(k.failed, m) ?? "null";
    let what = m;
    try {
      const w = JSON.parse(why);
      if (w && typeof w === "object" && typeof w.job === "string") {
        what = `${w.job} ${m} (${String(w.class)}: ${String(w.message)})`;
      }
    } catch { /* not ours: named by its member id alone */ }
    const message = `Cannot run this flow job as its child ${what} failed`;
    this.#call(
      "ZADD",
      c.dead,
      c.now / 1000,
      `${raw.slice(0, -1)},"error_class":"Edgekiq::ChildFailed","error_message":${
        JSON.stringify(message)
      },"failed_at":${this.wireTime(c, lv)},"edgekiq_child_failure":${why}}`,
    );
    if (lv < c.L) {
      const pol = this.kidPolicy(c, lv);
      const up = c.k[lv + 1];
      this.register(c, lv + 1, jid!, "1" + pol);
      this.#call(
        "HSET",
        up.failed,
        jid!,
        `{"job":null,"class":"Edgekiq::ChildFailed","message":${JSON.stringify(message)},"dead":true}`,
      );
      this.ttlLike(c, lv + 1, up.failed);
      this.mark(c, lv + 1, `b:${c.bids[lv]}`, "2");
      this.died(c, lv + 1, jid!, pol);
    }
  }

  died(c: Ctx, lv: number, m: string, pol: string): void {
    const k = c.k[lv];
    if (this.#call("HSETNX", k.meta, "fired:death", "") === 1) this.fire(c, lv, "death");
    if (this.#call("HEXISTS", k.meta, "flow") === 1) {
      if (pol === "i") this.mark(c, lv, m, "2");
      else if (pol === "c") {
        if (this.#call("HSETNX", k.meta, "fired:success", "") === 1) {
          this.fire(c, lv, "success");
          if (lv < c.L) this.check(c, lv + 1);
        }
      } else this.failParent(c, lv, m);
    } else if (lv < c.L) this.died(c, lv + 1, `b:${c.bids[lv]}`, this.kidPolicy(c, lv));
    this.check(c, lv);
  }

  jobOutcome(c: Ctx, lv: number, m: string, kind: string, info: string, result: string): void {
    const k = c.k[lv];
    const state = this.#hget(k.jobs, m);
    if (state === null || state[0] === "2") return;
    if (kind === "ok") {
      const [s] = this.mark(c, lv, m, "2", state, true);
      if (s![0] === "1") this.#call("HDEL", k.failed, m);
      if (result !== "") {
        this.#call("HSET", k.results, m, result);
        this.ttlLike(c, lv, k.results, true);
      }
      return;
    }
    const [s, count] = this.mark(c, lv, m, "1", state);
    this.#call("HSET", k.failed, m, info);
    this.ttlLike(c, lv, k.failed);
    if (kind === "dead") this.died(c, lv, m, s!.slice(1));
    else this.check(c, lv, count as number);
  }

  /** Twin of Lua `apply_due`: a context's put-off count changes, applied and checked. */
  applyDue(c: Ctx): void {
    if (!c.due) return;
    for (let lv = 1; lv <= c.L; lv++) {
      const d = this.#takeDue(c, lv);
      if (d !== 0) this.check(c, lv, Number(this.#call("HINCRBY", c.k[lv].meta, "count", d)));
    }
  }
}
