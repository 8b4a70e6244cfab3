/**
 * Entry ops: what a feature writes when the admin API (or the dashboard)
 * deletes, enqueues or kills one job it did not run. The API's scripts apply
 * them in the same atomic step as the move, and only for entries that moved,
 * so a job deleted by one operator and retried by another at the same moment
 * never leaves a feature's state behind. Unique jobs release their lock this
 * way; the core knows only the two ops below.
 *
 * @module
 */
import type { Keys } from "./keys.ts";
import { defineScript, type ScriptRedis } from "./transport/script.ts";
import type { RedisArg, RedisReply } from "./transport/redis_values.ts";

/**
 * One write tied to one entry:
 * - `release`: delete `key` if it still holds `value` (a compare-and-delete,
 *   so a value written since by someone else stays);
 * - `acquire`: set `key` to `value` unless it exists, expiring in `ttlMs`.
 */
export type EntryOp =
  | readonly [op: "release", key: string, value: string]
  | readonly [op: "acquire", key: string, value: string, ttlMs: number];

/** What the API is doing with an entry. */
export type EntryAction = "delete" | "enqueue" | "kill";

/** Where the entry is. */
export type EntryHome = "queue" | "schedule" | "retry" | "dead";

/**
 * A feature's part in the admin API's moves.
 *
 * @example
 * ```ts
 * const entries: EntryHooks = {
 *   ops: (raw, action) => action === "enqueue" ? undefined : [["release", lockKeyOf(raw), jidOf(raw)]],
 * };
 * ```
 */
export interface EntryHooks {
  /**
   * The ops that go with `action` on the raw job `raw` found in `from`;
   * undefined (or empty) for a job the feature has nothing to do with. Must
   * be cheap for those: it runs for every entry the API moves.
   */
  ops(raw: string, action: EntryAction, context: { readonly keys: Keys; readonly from: EntryHome }):
    | readonly EntryOp[]
    | undefined;
  /**
   * A set naming the queues that may hold jobs this feature has ops for; a
   * queue (or, for a sorted set, any entry at all) outside it is cleared
   * without being read. Undefined: every clear reads the jobs it removes.
   */
  registry?(keys: Keys): string;
}

/** The entry ops of `hooks` for each of `raws`, as script KEYS and ARGV (indexes from 1). */
export interface EntryOpArgs {
  /** One key per op. */
  readonly keys: string[];
  /** Per op: entry index, op name, value, ttl ms (0 for a release). */
  readonly args: RedisArg[];
}

/**
 * Collects the ops every hook wants for `raws` (entry `i` is index `i + 1`).
 *
 * @example
 * ```ts
 * const ops = entryOps(client.features, raws, "delete", { keys: client.keys, from: "retry" });
 * if (ops.keys.length === 0) { ... } // nothing to do beyond the move
 * ```
 */
export function entryOps(
  hooks: readonly EntryHooks[],
  raws: readonly string[],
  action: EntryAction,
  context: { readonly keys: Keys; readonly from: EntryHome },
): EntryOpArgs {
  const keys: string[] = [];
  const args: RedisArg[] = [];
  if (hooks.length === 0) return { keys, args };
  raws.forEach((raw, i) => {
    for (const hook of hooks) {
      for (const op of hook.ops(raw, action, context) ?? []) {
        keys.push(op[1]);
        args.push(i + 1, op[0], op[2], op[0] === "acquire" ? op[3] : 0);
      }
    }
  });
  return { keys, args };
}

/**
 * Lua: `applyEntryOps(moved, firstKey, firstArg)` applies the ops in
 * `KEYS[firstKey..]` / `ARGV[firstArg..]` (four ARGV each) of the entries
 * whose flag in `moved` is 1. They run after the moves, so none of them may
 * fail: a key that is not a string is not a lock of ours and is left alone
 * (a GET on it would raise after the jobs moved), and a TTL is at least 1 ms.
 */
export const ENTRY_OPS_LUA = `
local function applyEntryOps(moved, firstKey, at)
  for j = firstKey, #KEYS do
    if moved[tonumber(ARGV[at])] == 1 then
      local op, value = ARGV[at + 1], ARGV[at + 2]
      local t = redis.call("TYPE", KEYS[j])
      t = type(t) == "table" and t.ok or t
      -- A string present: release if it is still the value; acquire finds it
      -- taken. Absent: acquire takes it. Another type: not ours, left alone.
      if t == "string" and op == "release" then
        if redis.call("GET", KEYS[j]) == value then redis.call("DEL", KEYS[j]) end
      elseif t == "none" and op == "acquire" then
        redis.call("SET", KEYS[j], value, "PX", math.max(1, math.floor(tonumber(ARGV[at + 3]) or 1)))
      end
    end
    at = at + 4
  end
end
`;

/**
 * The twin of {@link ENTRY_OPS_LUA}, for scripts' memory twins (0-based
 * `firstKey` and `firstArg`).
 *
 * @example
 * ```ts
 * applyEntryOpsTwin(redis, keys, argv, { moved: [1, 0], firstKey: 2, firstArg: 5 });
 * ```
 */
export function applyEntryOpsTwin(
  redis: ScriptRedis,
  keys: string[],
  argv: string[],
  at: { moved: readonly number[]; firstKey: number; firstArg: number },
): void {
  let a = at.firstArg;
  for (let j = at.firstKey; j < keys.length; j++, a += 4) {
    if (at.moved[Number(argv[a]) - 1] !== 1) continue;
    const [op, value] = [argv[a + 1], argv[a + 2]];
    const kind = redis.call("TYPE", keys[j]);
    const ttl = Math.max(1, Math.floor(Number(argv[a + 3]) || 1));
    if (kind === "string" && op === "release") {
      if (redis.call("GET", keys[j]) === value) redis.call("DEL", keys[j]);
    } else if (kind === "none" && op === "acquire") redis.call("SET", keys[j], value, "PX", ttl);
  }
}

/**
 * Applies entry ops on their own (entries already moved: a kill of a job
 * given as text, a sweep of a cleared queue).
 *
 * KEYS: one per op. ARGV: per op: entry index, op, value, ttl ms.
 * Reply: 1.
 */
export const APPLY_ENTRY_OPS = defineScript<number>({
  name: "applyEntryOps",
  // A second run finds its work done: a release of a gone value, an acquire of a set key.
  idempotent: true,
  keys: ["...one key per op"],
  argv: ["...(entry index, op, value, ttl ms) per op"],
  lua: ENTRY_OPS_LUA + `
local all = {}
for i = 1, #ARGV do all[i] = 1 end
applyEntryOps(all, 1, 1)
return 1
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    applyEntryOpsTwin(redis, keys, argv, { moved: argv.map(() => 1), firstKey: 0, firstArg: 0 });
    return 1;
  },
  decode: () => 1,
});
