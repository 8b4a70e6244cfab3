/**
 * A script that carries another's writes: one call runs `carried` (features'
 * coalesced outcome writes, framed as `frameWrites` says) and then `base`
 * (the fetch), atomically. A job's outcome then reaches Redis in the call
 * that fetches the next jobs, with no call of its own; its acknowledgement
 * goes in a later call, once the call that wrote its outcome has answered,
 * so a job is never acknowledged before its outcome is written.
 *
 * If `carried` fails, `base` does not run and the call answers the error:
 * nothing of the fetch is done (the carried writes apply once each, so what
 * they wrote before the error changes nothing when they are sent again).
 *
 * @module
 */
import { defineScript, type Script } from "../transport/script.ts";
import type { RedisArg } from "../transport/redis_values.ts";

const composed = new WeakMap<Script<unknown>, WeakMap<Script<unknown>, Script<unknown>>>();

/**
 * `base` with `carried`'s writes first. KEYS: base's, then carried's. ARGV:
 * base's, then carried's, then the number of carried KEYS and of carried
 * ARGV. Reply: base's.
 *
 * @example
 * ```ts
 * const script = carrying(FETCH, BATCH_OUTCOME);
 * await transport.script(script, ...withCarried(fetchKeys, fetchArgs, frameWrites(writes)));
 * ```
 */
export function carrying<R>(base: Script<R>, carried: Script<unknown>): Script<R> {
  let byCarried = composed.get(base);
  if (!byCarried) composed.set(base, byCarried = new WeakMap());
  const known = byCarried.get(carried);
  if (known) return known as Script<R>;
  const script = defineScript<R>({
    name: `${base.name}+${carried.name}`,
    keys: [...base.keys, `...${carried.name} keys`],
    argv: [...base.argv, `...${carried.name} args`, "#carried keys", "#carried args"],
    // Each script's body runs as a function of its own KEYS and ARGV (Lua's globals, shadowed by the parameters).
    lua: `
local function carried_writes(KEYS, ARGV)
${carried.lua}
end
local function base_call(KEYS, ARGV)
${base.lua}
end
local nk, na = tonumber(ARGV[#ARGV - 1]), tonumber(ARGV[#ARGV])
local bk, ba = #KEYS - nk, #ARGV - 2 - na
local keys, args, ck, ca = {}, {}, {}, {}
for i = 1, bk do keys[i] = KEYS[i] end
for i = 1, ba do args[i] = ARGV[i] end
for i = 1, nk do ck[i] = KEYS[bk + i] end
for i = 1, na do ca[i] = ARGV[ba + i] end
local reply = carried_writes(ck, ca)
if type(reply) == "table" and reply.err then return reply end
return base_call(keys, args)
`,
    twin(redis, keys, argv) {
      const nk = Number(argv[argv.length - 2]);
      const na = Number(argv[argv.length - 1]);
      const bk = keys.length - nk;
      const ba = argv.length - 2 - na;
      // The twin throws where the Lua answers an error: base does not run either way.
      carried.twin(redis, keys.slice(bk), argv.slice(ba, ba + na));
      return base.twin(redis, keys.slice(0, bk), argv.slice(0, ba));
    },
    decode: base.decode,
  });
  byCarried.set(carried, script);
  return script;
}

/**
 * KEYS and ARGV of a {@link carrying} call: base's (extended in place), with
 * the carried ones and their counts after them.
 *
 * @example
 * ```ts
 * const [keys, args] = withCarried(fetchKeys, fetchArgs, frameWrites(writes));
 * ```
 */
export function withCarried(
  keys: string[],
  args: RedisArg[],
  [ck, ca]: [string[], RedisArg[]],
): [string[], RedisArg[]] {
  for (const key of ck) keys.push(key);
  for (const arg of ca) args.push(arg);
  args.push(ck.length, ca.length);
  return [keys, args];
}
