/**
 * Many read-only commands as one script call. Upstash bills a pipeline of k
 * commands as k and a script as one, so `Stats.fetch()` and a dashboard page,
 * which read every process's heartbeat and every queue's length, cost the
 * same whatever the size of the fleet. Every key read is passed in KEYS
 * (Cluster and Upstash route and lock by them), and only read commands are
 * allowed.
 *
 * @module
 */
import { ConfigError } from "../errors.ts";
import { defineScript, type ScriptRedis } from "../transport/script.ts";
import type { Command, RedisArg, RedisReply, Transport } from "../transport/transport.ts";

/** The commands a batch may run: reads only, each with its keys first. */
const READS: ReadonlySet<string> = new Set([
  "GET",
  "MGET",
  "HGET",
  "HMGET",
  "HGETALL",
  "LLEN",
  "LINDEX",
  "LRANGE",
  "SCARD",
  "SMEMBERS",
  "ZCARD",
  "ZRANGE",
]);

/**
 * KEYS: every key each command reads, in command order.
 * ARGV: per command: its name, its key count, its other-argument count, then those arguments.
 */
export const READ_BATCH = defineScript<RedisReply[]>({
  name: "readBatch",
  // Safe to send again after a lost reply: a second run finds its work done and changes nothing.
  idempotent: true,
  keys: ["...each command's keys, in order"],
  argv: ["...(name, keyCount, argCount, args...) per command"],
  lua: `
local reads = {GET=1, MGET=1, HGET=1, HMGET=1, HGETALL=1, LLEN=1, LINDEX=1, LRANGE=1, SCARD=1, SMEMBERS=1, ZCARD=1, ZRANGE=1}
local out, k, a = {}, 1, 1
while a <= #ARGV do
  local name, nk, na = ARGV[a], tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  a = a + 3
  if not reads[name] then return redis.error_reply("ERR readBatch runs read commands only, not " .. name) end
  local args = {}
  for j = 1, nk do args[j] = KEYS[k]; k = k + 1 end
  for j = 1, na do args[nk + j] = ARGV[a]; a = a + 1 end
  out[#out + 1] = redis.call(name, unpack(args))
end
return out
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const out: RedisReply[] = [];
    let k = 0;
    for (let a = 0; a < argv.length;) {
      const [name, nk, na] = [argv[a], Number(argv[a + 1]), Number(argv[a + 2])];
      a += 3;
      if (!READS.has(name)) throw new Error(`ERR readBatch runs read commands only, not ${name}`);
      const args = [...keys.slice(k, k + nk), ...argv.slice(a, a + na)];
      k += nk;
      a += na;
      out.push(redis.call(name, ...args));
    }
    return out;
  },
  decode: (reply) => (Array.isArray(reply) ? reply : []),
});

/** How many keys a read command names: MGET names all its arguments, the rest one. */
function keyCount(command: Command): number {
  return command[0] === "MGET" ? command.length - 1 : 1;
}

/**
 * Runs read-only commands in one script call; replies come back in order,
 * shaped as a pipeline's would be (nil as `null`).
 *
 * @example
 * ```ts
 * const [processed, queues] = await readBatch(transport, [["GET", "stat:processed"], ["SCARD", "queues"]]);
 * ```
 */
export async function readBatch(transport: Transport, commands: readonly Command[]): Promise<RedisReply[]> {
  if (commands.length === 0) return [];
  const keys: string[] = [];
  const argv: RedisArg[] = [];
  for (const command of commands) {
    const name = command[0].toUpperCase();
    if (!READS.has(name)) throw new ConfigError(`Cannot batch '${command[0]}' as only read commands may be batched`);
    const nk = keyCount(command);
    keys.push(...command.slice(1, 1 + nk).map(String));
    argv.push(name, nk, command.length - 1 - nk, ...command.slice(1 + nk));
  }
  return await transport.script(READ_BATCH, keys, argv);
}
