/**
 * The guarded push script for a set of guards: their fragments composed
 * around the plain push (see `write_guard.ts` for the order: every guard's
 * read-only check, then the write, then every guard's own writes). One script
 * per combination of guards, built once and cached.
 *
 * @module
 */
import { defineScript, type Script, type ScriptRedis } from "./transport/script.ts";
import type { RedisReply } from "./transport/redis_values.ts";
import { decodeGuarded, GUARD_STATUS, type GuardedJob, type GuardedWrite, type GuardFragment } from "./write_guard.ts";

const { pushed: PUSHED, duplicate: DUPLICATE, replaced: REPLACED, rescheduled: RESCHEDULED, already: ALREADY } =
  GUARD_STATUS;

const scripts = new Map<string, Script<GuardedWrite[]>>();

/**
 * The script that writes jobs guarded by `fragments`, in that order (give
 * them sorted by name: the order is part of the script's identity).
 *
 * KEYS: `queues`, `schedule`, then per job: its queue list, then each
 * guard's keys. ARGV: per job: queue name, jid, payload, run time (epoch
 * seconds, `""` for now), then each guard's args.
 * Reply: per job, a status code and the jid of the other job a guard met
 * (`""` if none).
 *
 * @example
 * ```ts
 * const script = guardedPush([uniqueGuard]);
 * await transport.script(script, [k.queues, k.schedule, k.queue("default"), lock, copy, registry], [...]);
 * ```
 */
export function guardedPush(fragments: readonly GuardFragment[]): Script<GuardedWrite[]> {
  const id = fragments.map((f) => f.name).join("+");
  let script = scripts.get(id);
  if (script) return script;
  const perKeys = 1 + fragments.reduce((n, f) => n + f.keys, 0);
  const perArgs = 4 + fragments.reduce((n, f) => n + f.args, 0);
  const table = fragments.map((f) =>
    `{check = ${f.name}_check, write = ${f.name}_write, apply = ${f.name}_apply, k = ${f.keys}, a = ${f.args}}`
  );
  script = defineScript<GuardedWrite[]>({
    name: `guardedPush[${id}]`,
    keys: ["queues", "schedule", `...(queue:<name>, ${fragments.map((f) => `${f.keys} ${f.name} keys`).join(", ")})`],
    argv: [`...(queue, jid, payload, run time, ${fragments.map((f) => `${f.args} ${f.name} args`).join(", ")})`],
    lua: `
local PUSHED, DUPLICATE, REPLACED, RESCHEDULED, ALREADY = ${PUSHED}, ${DUPLICATE}, ${REPLACED}, ${RESCHEDULED}, ${ALREADY}
-- A queue is added to the queues set once per call, not once per job (a bulk push names one queue).
local registered = {}
local function push(j, raw, score)
  if score == "" then
    if not registered[j.queue] then
      redis.call("SADD", j.queues, j.queue)
      registered[j.queue] = true
    end
    redis.call("LPUSH", j.qkey, raw)
  else
    redis.call("ZADD", j.schedule, score, raw)
  end
end
${fragments.map((f) => `local ${f.name}_write, ${f.name}_apply\n${f.lua}`).join("\n")}
local guards = {${table.join(", ")}}
local out = {}
for i = 0, #ARGV / ${perArgs} - 1 do
  local kb, ab = 3 + i * ${perKeys}, 1 + i * ${perArgs}
  local views = {}
  local gk, ga = kb + 1, ab + 4
  for g = 1, #guards do
    local v = {qkey = KEYS[kb], queue = ARGV[ab], jid = ARGV[ab + 1], payload = ARGV[ab + 2], score = ARGV[ab + 3],
      queues = KEYS[1], schedule = KEYS[2], keys = {}, args = {}}
    for x = 1, guards[g].k do v.keys[x] = KEYS[gk + x - 1] end
    for x = 1, guards[g].a do v.args[x] = ARGV[ga + x - 1] end
    gk, ga = gk + guards[g].k, ga + guards[g].a
    views[g] = v
  end
  local code, other, owner, plan = PUSHED, "", 0, nil
  for g = 1, #guards do
    local c, o, p = guards[g].check(views[g])
    if c ~= PUSHED then
      code, other, owner, plan = c, o or "", g, p
      break
    end
  end
  if code == PUSHED then
    push(views[1], views[1].payload, views[1].score)
  elseif code == REPLACED or code == RESCHEDULED then
    guards[owner].write(views[owner], plan)
  end
  if code == PUSHED or code == REPLACED then
    for g = 1, #guards do if guards[g].apply then guards[g].apply(views[g], code) end end
  elseif code == RESCHEDULED and guards[owner].apply then
    guards[owner].apply(views[owner], code)
  end
  out[#out + 1] = code
  out[#out + 1] = other
end
return out
`,
    twin(redis: ScriptRedis, keys: string[], argv: string[]): RedisReply {
      const out: RedisReply[] = [];
      for (let i = 0; i < argv.length / perArgs; i++) {
        const kb = 2 + i * perKeys;
        const ab = i * perArgs;
        let gk = kb + 1;
        let ga = ab + 4;
        const views: GuardedJob[] = fragments.map((f) => {
          const view = {
            qkey: keys[kb],
            queue: argv[ab],
            jid: argv[ab + 1],
            payload: argv[ab + 2],
            score: argv[ab + 3],
            queues: keys[0],
            schedule: keys[1],
            keys: keys.slice(gk, gk + f.keys),
            args: argv.slice(ga, ga + f.args),
          };
          gk += f.keys;
          ga += f.args;
          return view;
        });
        const push = (j: GuardedJob) => (raw: string, score: string) => {
          if (score === "") {
            redis.call("SADD", j.queues, j.queue);
            redis.call("LPUSH", j.qkey, raw);
          } else redis.call("ZADD", j.schedule, score, raw);
        };
        let code = PUSHED;
        let other = "";
        let owner = -1;
        let plan: unknown;
        for (let g = 0; g < fragments.length; g++) {
          const [c, o, p] = fragments[g].twin.check(redis, views[g]);
          if (c !== PUSHED) {
            [code, other, owner, plan] = [c, o ?? "", g, p];
            break;
          }
        }
        if (code === PUSHED) push(views[0])(views[0].payload, views[0].score);
        else if (code === REPLACED || code === RESCHEDULED) {
          fragments[owner].twin.write?.(redis, views[owner], plan, push(views[owner]));
        }
        if (code === PUSHED || code === REPLACED) {
          fragments.forEach((f, g) => f.twin.apply?.(redis, views[g], code));
        } else if (code === RESCHEDULED) fragments[owner].twin.apply?.(redis, views[owner], code);
        out.push(code, other);
      }
      return out;
    },
    decode: decodeGuarded,
  });
  scripts.set(id, script);
  return script;
}
