/**
 * Every example is exercised: the edge app in-process over the Upstash REST
 * gateway, its platform entry files imported or served for a moment, the
 * long-lived workers run briefly on their own runtime against a private
 * redis-server (then stopped by a signal), and the CLI jobs module drained.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createClient, drain, memoryTransport, type Transport } from "../mod.ts";
import { parseConfig } from "../src/cli/config.ts";
import { runtimeName } from "./support/child.ts";
import { redisAvailable } from "./support/matrix.ts";
import { suiteEdge } from "./support/suite_edge.ts";
import { type Spawned, spawnProcess } from "./fixtures/cli-spawn.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const SECRET = "examples-secret";
const TOKEN = "examples-token";

/** Each example and the test that covers it; a new example without a test fails here. */
const covered = [
  "bun-worker.ts",
  "cli-jobs.ts",
  "deno-worker.ts",
  "edge-bun.ts",
  "edge-cloudflare.ts",
  "edge-deno.ts",
  "edge-vercel.ts",
  "edge-worker.ts",
  "node-worker.ts",
  "quickstart.ts", // run by its own test (npm start)
];

it("examples: every file is covered below", () => {
  assert.deepEqual(readdirSync(join(root, "examples")).filter((f) => f.endsWith(".ts")).sort(), covered);
});

describe("examples: cli-jobs.ts", () => {
  it("exports jobs and a valid config, and its jobs run", { timeout: 60_000 }, async () => {
    const mod = await import("../examples/cli-jobs.ts");
    const config = parseConfig(mod.config, "examples/cli-jobs.ts", "module");
    const transport = memoryTransport();
    const client = createClient({ transport });
    await mod.Thumbnail.performAsync(client, "cat.png", 128);
    await client.push(mod.Cleanup, []);
    const result = await drain({ transport, jobs: mod, queues: config.queues, budgetMs: 5_000 });
    assert.deepEqual([result.processed, result.failed, result.remaining], [2, 0, 0]);
    await assert.rejects(mod.Thumbnail.performAsync(client, "cat.png", 0), /Invalid arguments for job Thumbnail/);
  });
});

// ---------------------------------------------------------------------------

const binaries = {
  node: ["node", ["--import", "tsx"]],
  bun: [runtimeName === "bun" ? process.execPath : join(root, "node_modules/.bin/bun"), []],
  deno: [runtimeName === "deno" ? process.execPath : join(root, "node_modules/.bin/deno"), ["run", "-A"]],
} as const;

/** Runs an example on its own runtime, whichever runtime runs this test. */
function run(runtime: keyof typeof binaries, file: string, env: Record<string, string>, extra: string[] = []): Spawned {
  const [cmd, pre] = binaries[runtime];
  return spawnProcess(cmd, [...pre, ...extra, join("examples", file)], { cwd: root, env });
}

describe("examples: against redis", { skip: !redisAvailable() && "no redis" }, () => {
  const edge = suiteEdge({ token: TOKEN });
  let redis: Transport;
  const running: Spawned[] = [];
  before(() => void (redis = edge.redis));
  after(() => {
    for (const p of running) p.kill("SIGKILL");
  });

  const edgeEnv = () => ({
    UPSTASH_REDIS_REST_URL: edge.gateway.url,
    UPSTASH_REDIS_REST_TOKEN: TOKEN,
    CRON_SECRET: SECRET,
  });
  const auth = { authorization: `Bearer ${SECRET}` };

  describe("the edge app, in-process", () => {
    // deno-lint-ignore no-explicit-any
    let edge: any;
    before(async () => {
      Object.assign(process.env, edgeEnv()); // the app reads process.env when there are no bindings
      edge = await import("../examples/edge-worker.ts");
    });

    it("edge-worker.ts: POST /enqueue, then scheduled() runs the job", { timeout: 60_000 }, async () => {
      await redis.call("FLUSHDB");
      const res = await edge.app.request("/enqueue", {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ name: "Ada" }),
      });
      assert.equal(res.status, 200);
      const { jid } = await res.json();
      assert.equal((await edge.app.request("/enqueue", { method: "POST", headers: auth, body: "{}" })).status, 400);
      assert.equal((await edge.app.request("/enqueue", { method: "POST", body: "{}" })).status, 401);
      await edge.scheduled({});
      assert.equal(await redis.call("HGET", "greetings", "Ada"), `hello Ada (job ${jid})`);
    });

    it("edge-cloudflare.ts: the module worker is edge-worker's default export", { timeout: 60_000 }, async () => {
      const cf = await import("../examples/edge-cloudflare.ts");
      assert.equal(cf.default, edge.default);
      assert.equal(typeof cf.default.fetch, "function");
      assert.equal(typeof cf.default.scheduled, "function");
    });

    it(
      "edge-vercel.ts: the exported handler serves /api/cron/tick (GET, as Vercel Cron calls it)",
      { timeout: 60_000 },
      async () => {
        await redis.call("FLUSHDB");
        await createClient({ transport: redis }).push("Greet", ["Grace"]);
        const vercel = await import("../examples/edge-vercel.ts");
        assert.equal(vercel.config.runtime, "edge");
        const res = await vercel.default(new Request("http://app.vercel.test/api/cron/tick", { headers: auth }));
        assert.equal(res.status, 200);
        assert.equal((await res.json()).drain.processed, 1);
        assert.match(String(await redis.call("HGET", "greetings", "Grace")), /^hello Grace/);
      },
    );
  });

  const serveAndTick = async (runtime: "bun" | "deno", file: string, listening: RegExp, extra: string[] = []) => {
    await redis.call("FLUSHDB");
    const proc = run(runtime, file, { ...edgeEnv(), PORT: "0" }, extra);
    running.push(proc);
    const [, url] = await proc.waitFor(listening);
    await createClient({ transport: redis }).push("Greet", [runtime]);
    const res = await fetch(new URL("/cron/tick", url), { method: "POST", headers: auth });
    assert.equal(res.status, 200, proc.output());
    assert.equal((await res.json()).drain.processed, 1);
    assert.match(String(await redis.call("HGET", "greetings", runtime)), new RegExp(`^hello ${runtime}`));
    proc.kill("SIGKILL");
    await proc.exited;
  };

  it("edge-bun.ts: Bun.serve answers the cron routes", { timeout: 60_000 }, async () => {
    await serveAndTick("bun", "edge-bun.ts", /listening on (http:\/\/\S+)/);
  });

  it("edge-deno.ts: Deno.serve answers the cron routes (Deno.cron registered)", { timeout: 60_000 }, async () => {
    await serveAndTick("deno", "edge-deno.ts", /Listening on (http:\/\/\S+)/, ["--unstable-cron"]);
  });

  const workerExample = async (
    runtime: keyof typeof binaries,
    file: string,
    done: RegExp,
    signal: "SIGTERM" | "SIGINT" | "SIGHUP",
  ) => {
    await redis.call("FLUSHDB");
    const proc = run(runtime, file, { REDIS_URL: edge.url });
    running.push(proc);
    await proc.waitFor(done);
    proc.kill(signal);
    assert.equal(await proc.exited, 0, proc.output());
    assert.match(proc.output(), /stopped/);
    assert.deepEqual(await redis.call("SMEMBERS", "processes"), []);
  };

  it("node-worker.ts: runs its job on Node, stops on SIGTERM, exits 0", { timeout: 60_000 }, async () => {
    await workerExample("node", "node-worker.ts", /welcome mail sent/, "SIGTERM");
  });

  it("bun-worker.ts: runs its job on Bun with Bun's RedisClient, stops on SIGINT", { timeout: 60_000 }, async () => {
    await workerExample("bun", "bun-worker.ts", /counted.*words=4/, "SIGINT");
  });

  it("deno-worker.ts: runs its job on Deno, stops on its own SIGHUP listener", { timeout: 60_000 }, async () => {
    await workerExample("deno", "deno-worker.ts", /pinged.*host=example\.com/, "SIGHUP");
  });
});
