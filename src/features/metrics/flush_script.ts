/**
 * The metrics flush script: adds one or more batches of per-class counts to
 * Sidekiq's metric hashes and histograms, at most once each. A batch is
 * numbered by its tracker; the script keeps the highest number it applied
 * (one key per tracker) and skips any batch at or below it, so a flush resent
 * after a lost reply, or a late duplicate of one, counts nothing twice.
 *
 * The number is recorded *before* the first write. Lua does not roll back: a
 * flush that fails half-way (a `BITFIELD` refused after the `HINCRBY`s) has
 * written what it wrote, and the tracker, which cannot tell how far it got,
 * sends it again. Marked first, the resend is skipped: what the failed run
 * did not write is lost (metrics are advisory), nothing is counted twice.
 * Checking every key's type first would still leave other mid-way errors.
 *
 * @module
 */
import { defineScript, type ScriptRedis } from "../../transport/script.ts";
import type { RedisReply } from "../../transport/transport.ts";

/**
 * KEYS: the tracker's `edgekiq:metrics:<id>`, then every hash and histogram
 * key the batches name (by their 1-based index in KEYS).
 *
 * ARGV: the tracker key's TTL, the highest batch number sent, then each batch:
 * `seq, nk, [keyIndex, ttl] x nk, nf, [field, increment] x nf, nh,
 * [keyIndex, ttl, n, [bucket, increment] x n] x nh`. Every field is added to
 * each of the nk hashes; each histogram gets `BITFIELD key OVERFLOW SAT
 * INCRBY u16 #bucket increment ...` and its TTL.
 *
 * Returns the number of batches applied (0 when every one was a repeat).
 */
export const METRICS_FLUSH = defineScript<number>({
  name: "metricsFlush",
  // Safe to send again after a lost reply: a second run finds its work done and changes nothing.
  idempotent: true,
  keys: ["edgekiq:metrics:<tracker>", "...j|<bucket> and histogram keys"],
  argv: ["trackerTtl", "highestSeq", "...batches"],
  lua: `
local last = tonumber(redis.call("GET", KEYS[1]) or "0") or 0
-- Applied from here on, even if a write below fails: at most once.
redis.call("SET", KEYS[1], math.max(last, tonumber(ARGV[2])), "EX", ARGV[1])
local applied = 0
local i = 3
while i <= #ARGV do
  local seq = tonumber(ARGV[i])
  local fresh = seq > last
  local nk = tonumber(ARGV[i + 1])
  local k0 = i + 2
  local nf = tonumber(ARGV[k0 + 2 * nk])
  local f0 = k0 + 2 * nk + 1
  i = f0 + 2 * nf
  if fresh then
    for k = 0, nk - 1 do
      local key = KEYS[tonumber(ARGV[k0 + 2 * k])]
      for f = 0, nf - 1 do
        redis.call("HINCRBY", key, ARGV[f0 + 2 * f], ARGV[f0 + 2 * f + 1])
      end
      redis.call("EXPIRE", key, ARGV[k0 + 2 * k + 1])
    end
  end
  local nh = tonumber(ARGV[i])
  i = i + 1
  for h = 1, nh do
    local key = KEYS[tonumber(ARGV[i])]
    local ttl = ARGV[i + 1]
    local n = tonumber(ARGV[i + 2])
    i = i + 3
    if fresh then
      if n > 0 then
        local cmd = {"BITFIELD", key, "OVERFLOW", "SAT"}
        for s = 0, n - 1 do
          cmd[#cmd + 1] = "INCRBY"
          cmd[#cmd + 1] = "u16"
          cmd[#cmd + 1] = "#" .. ARGV[i + 2 * s]
          cmd[#cmd + 1] = ARGV[i + 2 * s + 1]
        end
        redis.call(unpack(cmd))
      end
      redis.call("EXPIRE", key, ttl)
    end
    i = i + 2 * n
  end
  if fresh then
    last = seq
    applied = applied + 1
  end
end
return applied
`,
  twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
    let last = Number(redis.call("GET", keys[0]) ?? 0) || 0;
    redis.call("SET", keys[0], Math.max(last, Number(argv[1])), "EX", argv[0]);
    let applied = 0;
    let i = 2;
    const key = (arg: string): string => keys[Number(arg) - 1];
    while (i < argv.length) {
      const seq = Number(argv[i]);
      const fresh = seq > last;
      const nk = Number(argv[i + 1]);
      const k0 = i + 2;
      const nf = Number(argv[k0 + 2 * nk]);
      const f0 = k0 + 2 * nk + 1;
      i = f0 + 2 * nf;
      if (fresh) {
        for (let k = 0; k < nk; k++) {
          const hash = key(argv[k0 + 2 * k]);
          for (let f = 0; f < nf; f++) redis.call("HINCRBY", hash, argv[f0 + 2 * f], argv[f0 + 2 * f + 1]);
          redis.call("EXPIRE", hash, argv[k0 + 2 * k + 1]);
        }
      }
      const nh = Number(argv[i]);
      i += 1;
      for (let h = 0; h < nh; h++) {
        const gram = key(argv[i]);
        const ttl = argv[i + 1];
        const n = Number(argv[i + 2]);
        i += 3;
        if (fresh) {
          if (n > 0) {
            const cmd: string[] = ["OVERFLOW", "SAT"];
            for (let s = 0; s < n; s++) cmd.push("INCRBY", "u16", `#${argv[i + 2 * s]}`, argv[i + 2 * s + 1]);
            redis.call("BITFIELD", gram, ...cmd);
          }
          redis.call("EXPIRE", gram, ttl);
        }
        i += 2 * n;
      }
      if (fresh) {
        last = seq;
        applied++;
      }
    }
    return applied;
  },
  decode: (reply) => Number(reply),
});
