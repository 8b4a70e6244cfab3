/**
 * A failed job's outcome is decided once and written once (issue: "a failed
 * outcome write walks the job through its retries, and a lost reply writes
 * two retry entries"). The outcome write fails while Redis refuses writes
 * (OOM) or loses its reply; the job must end with exactly one entry, with
 * the retry count of one failure, and its hooks must run once.
 */
import { it } from "node:test";
import assert from "node:assert/strict";
import { createClient, defineJob, type Transport } from "../mod.ts";
import type { Script } from "../src/transport/script.ts";
import { TransportError } from "../src/transport/transport_error.ts";
import { heldCount } from "./support/held.ts";
import { waitFor } from "./support/matrix.ts";
import { eachTarget } from "./support/targets.ts";
import { testWorker } from "./support/worker.ts";

/**
 * The target, with its outcome writes (the settle script, or a basic fetch's
 * MULTI) failing the first `times` attempts: `"oom"` refuses them unapplied,
 * `"lost"` applies them and then loses the reply.
 */
function flakyOutcomes(inner: Transport, fault: "oom" | "lost", times: number): Transport & { attempts: () => number } {
  let attempts = 0;
  const fail = () =>
    fault === "oom"
      ? new TransportError("oom", "OOM command not allowed when used memory > 'maxmemory'.")
      : new TransportError("connection", "Connection is closed.", { maybeApplied: true });
  // Any outcome write: the settle script, or a plain ZADD to `retry`/`dead` (the old engine's, and basic fetch's).
  const outcome = (command: string, key: unknown) => command === "ZADD" && (key === "retry" || key === "dead");
  const attempt = async <T>(send: () => Promise<T>): Promise<T> => {
    attempts++;
    if (attempts > times) return send();
    if (fault === "lost") await send();
    throw fail();
  };
  return new Proxy(inner, {
    get(t, prop, receiver) {
      if (prop === "attempts") return () => attempts;
      if (prop === "call") {
        return (command: string, ...args: (string | number)[]) =>
          outcome(command, args[0]) ? attempt(() => t.call(command, ...args)) : t.call(command, ...args);
      }
      if (prop === "pipeline") {
        return (commands: (string | number)[][], options?: { atomic?: boolean }) =>
          commands.some(([c, k]) => outcome(String(c), k))
            ? attempt(() => t.pipeline(commands as never, options))
            : t.pipeline(commands as never, options);
      }
      if (prop === "script") {
        return (script: Script<unknown>, keys: string[], args: (string | number)[]) =>
          script.name === "settle" ? attempt(() => t.script(script, keys, args)) : t.script(script, keys, args);
      }
      const value = Reflect.get(t, prop, receiver);
      return typeof value === "function" ? value.bind(t) : value;
    },
  }) as Transport & { attempts: () => number };
}

async function set(redis: Transport, name: string): Promise<Record<string, unknown>[]> {
  return ((await redis.call("ZRANGE", name, 0, -1)) as string[]).map((raw) => JSON.parse(raw));
}

eachTarget("a failed job's outcome, written once", (t) => {
  it("a retry write refused 4 times (OOM) lands once, as the first failure's retry (not dead with retry_count 6)", async () => {
    const Fails = defineJob({ name: "Fails", retry: 3, perform: () => Promise.reject(new Error("boom")) });
    const jid = await createClient({ transport: t.redis }).push(Fails, []);
    const flaky = flakyOutcomes(t.redis, "oom", 4);
    t.worker = testWorker(flaky, { jobs: [Fails], onError: () => {} });
    await t.worker.run();
    await waitFor(async () => (await set(t.redis, "retry")).length === 1, "the retry written after the outage", 20_000);
    await waitFor(async () => (await heldCount(t.redis, t.worker!.identity)) === 0, "then acknowledged");
    assert.equal(flaky.attempts(), 5);
    const [entry] = await set(t.redis, "retry");
    assert.equal(entry.jid, jid);
    assert.equal(entry.retry_count, 0, "one failure, one count");
    assert.deepEqual(await set(t.redis, "dead"), []);
  });

  it("a retry write whose reply is lost is not written twice", async () => {
    const Fails = defineJob({ name: "Fails", retry: 5, perform: () => Promise.reject(new Error("boom")) });
    await createClient({ transport: t.redis }).push(Fails, []);
    const flaky = flakyOutcomes(t.redis, "lost", 2);
    t.worker = testWorker(flaky, { jobs: [Fails], onError: () => {} });
    await t.worker.run();
    await waitFor(() => flaky.attempts() >= 3, "written again after the lost replies", 20_000);
    await waitFor(async () => (await heldCount(t.redis, t.worker!.identity)) === 0, "acknowledged");
    const retries = await set(t.redis, "retry");
    assert.equal(retries.length, 1, JSON.stringify(retries));
    assert.equal(retries[0].retry_count, 0);
  });

  it("a job with dead: false is not lost while its retry cannot be written", async () => {
    const Fails = defineJob({ name: "Fails", retry: 3, dead: false, perform: () => Promise.reject(new Error("x")) });
    await createClient({ transport: t.redis }).push(Fails, []);
    t.worker = testWorker(flakyOutcomes(t.redis, "oom", 4), { jobs: [Fails], onError: () => {} });
    await t.worker.run();
    await waitFor(async () => (await set(t.redis, "retry")).length === 1, "kept for its retry", 20_000);
  });

  it("runs the exhausted hook and the death handlers once, however often the dead write fails", async () => {
    let exhausted = 0;
    let deaths = 0;
    const Dies = defineJob({
      name: "Dies",
      retry: 0,
      retriesExhausted: () => void exhausted++,
      perform: () => Promise.reject(new Error("x")),
    });
    await createClient({ transport: t.redis }).push(Dies, []);
    const flaky = flakyOutcomes(t.redis, "oom", 3);
    t.worker = testWorker(flaky, { jobs: [Dies], deathHandlers: [() => void deaths++], onError: () => {} });
    await t.worker.run();
    await waitFor(async () => (await set(t.redis, "dead")).length === 1, "buried after the outage", 20_000);
    await waitFor(() => deaths === 1, "death handlers after the burial");
    assert.equal(exhausted, 1);
    assert.equal(flaky.attempts(), 4);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(deaths, 1);
  });
}, ["memory", "ioredis"]);
