/**
 * Test helpers for features' coalesced outcome writes (`frameWrites`): read
 * a call's frames, a script that marks each value its frames carry, and a
 * transport that shows every script call to a test first.
 */
import type { Transport } from "../../src/transport/transport.ts";
import type { RedisArg } from "../../src/transport/redis_values.ts";
import { defineScript, type Script } from "../../src/transport/script.ts";

/** Coalesced writes' frames (see `frameWrites`): each one's number of keys, how many writes it carries, and their args. */
export function framesOf(argv: readonly unknown[]): { nk: number; writes: number; args: string[] }[] {
  const frames: { nk: number; writes: number; args: string[] }[] = [];
  for (let a = 0; a < argv.length;) {
    const nk = Number(argv[a]);
    const na = Number(argv[a + 1]);
    if (na < 0) {
      frames.push({ nk, writes: -na, args: String(argv[a + 2]).split("\n") });
      a += 3;
    } else {
      frames.push({ nk, writes: 1, args: argv.slice(a + 2, a + 2 + na).map(String) });
      a += 2 + na;
    }
  }
  return frames;
}

/** The memory twin's Redis, as a script's `twin` gets it. */
type TwinRedis = Parameters<NonNullable<Parameters<typeof defineScript<unknown>>[0]["twin"]>>[0];

/**
 * A coalescing outcome script named `name` that runs `lua` (a Lua statement
 * on `value`) for the first arg of every write its frames carry (a run's
 * values too), and `twin` likewise on the memory transport.
 */
export function eachValueScript(
  name: string,
  options: { keys: string[]; lua: string; twin: (redis: TwinRedis, keys: string[], value: string) => void },
): Script<unknown> {
  return defineScript<unknown>({
    name,
    idempotent: true,
    keys: options.keys,
    argv: ["...per write: #keys, #args or -m, value or m values joined by newlines"],
    lua: `
local a = 1
while a <= #ARGV do
  local na = tonumber(ARGV[a + 1])
  for value in string.gmatch(ARGV[a + 2], "[^\\n]+") do ${options.lua} end
  a = a + (na < 0 and 3 or 2 + na)
end
return 1`,
    twin(redis, keys, argv) {
      for (const frame of framesOf(argv)) for (const value of frame.args) options.twin(redis, keys, value);
      return 1;
    },
  });
}

/** {@link eachValueScript} that sets `<prefix>:<value>` to 1 for every value. */
export function markScript(name: string, prefix: string): Script<unknown> {
  return eachValueScript(name, {
    keys: ["...per write: its key"],
    lua: `redis.call("SET", "${prefix}:" .. value, 1)`,
    twin: (redis, _keys, value) => void redis.call("SET", `${prefix}:${value}`, 1),
  });
}

/**
 * `inner`, with every script call going through `around` (which runs it, or
 * not, with `run`). The drain's budget-bound view (`withSignal`) is hidden:
 * it would bypass the wrapper.
 */
export function aroundScripts(
  inner: Transport,
  around: (script: Script<unknown>, keys: string[], argv: RedisArg[], run: () => Promise<unknown>) => Promise<unknown>,
): Transport {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === "script") {
        return (script: Script<unknown>, keys: string[], argv: RedisArg[]) =>
          around(script, keys, argv, () => target.script(script, keys, argv));
      }
      if (prop === "withSignal") return undefined;
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as Transport;
}
