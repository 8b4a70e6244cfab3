/**
 * The framing of coalesced outcome writes (`OutcomeWrite.coalesce`): many
 * writes of one script as one call's KEYS and ARGV.
 *
 * @module
 */
import type { RedisArg } from "../transport/redis_values.ts";

/** What is framed of a write: its keys, the args that go with them, and its own args. */
export interface FramedWrite {
  readonly keys: readonly string[];
  readonly head?: readonly RedisArg[];
  readonly args: readonly RedisArg[];
}

/**
 * KEYS and ARGV for `writes` in one call: ARGV per write its number of
 * keys, its number of args, then its args. KEYS are the writes' keys one
 * after another, except that a write whose `keys` is the very array of an
 * earlier write of the call sends none, nor its `head` (the args that go
 * with those keys), and frames its number of keys as `-n`, n being that
 * earlier write's place in the call (from 1). Where the keys are sent, the
 * head comes first among the write's args and is counted in them.
 *
 * A run of such later writes in a row that name the same keys and have one
 * arg each, a non-empty string without a newline (a batch job's plain
 * success: its jid), is framed as one: `-n`, minus the number of writes,
 * and their args joined by newlines. Each write then costs one short
 * string in the call, not three args: a client pays per arg to frame a
 * command, and Redis to make each into a Lua string. A run of writes with
 * two args each, the first such a string (a flow child's success: its jid
 * and its result), is framed as `-n`, minus the number of writes, `""`
 * (which no one-arg run can be), their first args joined by newlines, then
 * each write's second arg: the script reads a run in one go either way.
 *
 * @example
 * ```ts
 * const [keys, args] = frameWrites([{ keys: ["a"], head: ["h"], args: [1] }, { keys: same, args: [2] }]);
 * await transport.script(SCRIPT, keys, args);
 * ```
 */
export function frameWrites(writes: readonly FramedWrite[]): [string[], RedisArg[]] {
  const keys: string[] = [];
  const args: RedisArg[] = [];
  const placed = new Map<readonly string[], number>();
  for (let i = 0; i < writes.length; i++) {
    const write = writes[i];
    const earlier = placed.get(write.keys);
    if (earlier === undefined) {
      placed.set(write.keys, i + 1);
      for (const key of write.keys) keys.push(key);
      const head = write.head ?? NO_HEAD;
      args.push(write.keys.length, head.length + write.args.length);
      for (const arg of head) args.push(arg);
      for (const arg of write.args) args.push(arg);
      continue;
    }
    const width = runWidth(write.args);
    let end = i;
    while (end < writes.length && writes[end].keys === write.keys && runWidth(writes[end].args) === width) end++;
    if (width > 0 && end - i > 1) {
      let joined = writes[i].args[0] as string;
      for (let j = i + 1; j < end; j++) joined += "\n" + (writes[j].args[0] as string);
      if (width === 1) args.push(-earlier, i - end, joined);
      else {
        args.push(-earlier, i - end, "", joined);
        for (let j = i; j < end; j++) args.push(writes[j].args[1]);
      }
      i = end - 1;
      continue;
    }
    args.push(-earlier, write.args.length);
    for (const arg of write.args) args.push(arg);
  }
  return [keys, args];
}

/**
 * How many args a write brings to a run: 1 or 2 where its first is a
 * non-empty string without a newline (and it has no more); 0: it cannot
 * join one.
 */
function runWidth(args: readonly RedisArg[]): number {
  const arg = args[0];
  if (args.length > 2 || typeof arg !== "string" || arg === "" || arg.includes("\n")) return 0;
  return args.length;
}

const NO_HEAD: readonly RedisArg[] = [];
