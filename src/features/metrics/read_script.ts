/**
 * The metrics read script: every bucket hash, histogram and deploy-mark hash
 * a metrics query needs, in one call. Sidekiq's Query sends a pipeline of up
 * to 480 HGETALLs plus one BITFIELD_RO per minute; on Upstash each of those
 * is a billed command, a script is one.
 *
 * @module
 */
import { defineScript, type ScriptRedis } from "../../transport/script.ts";
import type { RedisReply } from "../../transport/transport.ts";
import { HISTOGRAM_READ } from "./histogram.ts";

/**
 * KEYS: nh metric hashes, then ng histograms, then deploy-mark hashes.
 * ARGV: nh, ng, nf, then nf hash fields (none: whole hashes).
 * Returns one reply per key, in KEYS order: the hash as HGETALL (or HMGET
 * of the fields), the histogram's 26 counters, each mark hash as HGETALL.
 */
export const METRICS_READ = defineScript<RedisReply[]>({
  name: "metricsRead",
  // Safe to send again after a lost reply: a second run finds its work done and changes nothing.
  idempotent: true,
  keys: ["...j|<bucket>", "...histogram keys", "...<day>-marks"],
  argv: ["nh", "ng", "nf", "...fields"],
  lua: `
local nh = tonumber(ARGV[1])
local ng = tonumber(ARGV[2])
local nf = tonumber(ARGV[3])
local gets = {}
for b = 0, 25 do
  gets[#gets + 1] = "GET"
  gets[#gets + 1] = "u16"
  gets[#gets + 1] = "#" .. b
end
local out = {}
for i = 1, #KEYS do
  if i <= nh and nf > 0 then
    out[i] = redis.call("HMGET", KEYS[i], unpack(ARGV, 4, 3 + nf))
  elseif i > nh and i <= nh + ng then
    out[i] = redis.call("BITFIELD_RO", KEYS[i], unpack(gets))
  else
    out[i] = redis.call("HGETALL", KEYS[i])
  end
end
return out
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    const nh = Number(argv[0]), ng = Number(argv[1]), nf = Number(argv[2]);
    const fields = argv.slice(3, 3 + nf);
    return keys.map((key, i) => {
      if (i < nh && nf > 0) return redis.call("HMGET", key, ...fields);
      if (i >= nh && i < nh + ng) return redis.call("BITFIELD_RO", key, ...HISTOGRAM_READ);
      return redis.call("HGETALL", key);
    });
  },
  decode: (reply) => (Array.isArray(reply) ? reply : []),
});
