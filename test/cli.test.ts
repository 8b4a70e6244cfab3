/**
 * The `edgekiq` command: argument and config parsing as units, the program
 * in-process on the memory transport, then the real binary spawned on this
 * runtime against a private redis-server.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createClient, defineJob, memoryTransport, TransportError, VERSION } from "../mod.ts";
import { keys } from "../src/extend.ts";
import type { Transport } from "../src/transport/transport.ts";
import { parseArgs, UsageError } from "../src/cli/args.ts";
import { runCli } from "../src/cli/main.ts";
import { redisAvailable, waitFor } from "./support/matrix.ts";
import { runtimeName } from "./support/child.ts";
import { spawnCli } from "./fixtures/cli-spawn.ts";
import { fakeHost } from "./fixtures/cli-host.ts";

function usage(fn: () => unknown, re: RegExp) {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof UsageError, `expected a UsageError, got ${error}`);
    assert.equal(error.exitCode, 2);
    assert.match(error.message, re);
    return true;
  });
}

describe("cli: parseArgs", () => {
  it("parses Sidekiq's worker flags, in every spelling", () => {
    const args = parseArgs([
      "-r",
      "jobs.ts",
      "-q",
      "critical,3",
      "--queue=default",
      "-c5",
      "--timeout",
      "8",
      "-g",
      "api",
      "-v",
    ]);
    assert.equal(args.command, "run");
    assert.equal(args.require, "jobs.ts");
    assert.deepEqual(args.queues, ["critical,3", "default"]);
    assert.equal(args.concurrency, 5);
    assert.equal(args.timeout, 8);
    assert.equal(args.tag, "api");
    assert.equal(args.verbose, true);
    assert.equal(args.json, undefined);
    assert.equal(parseArgs(["run", "--json"]).json, true);
    assert.equal(parseArgs(["--no-json"]).json, false);
  });

  it("parses enqueue and stats, help and version", () => {
    const e = parseArgs(["enqueue", "HardJob", "--args", '["bob", 5]', "-q", "low", "--in", "30"]);
    assert.deepEqual([e.command, e.className, e.args, e.queues, e.in], ["enqueue", "HardJob", ["bob", 5], ["low"], 30]);
    assert.equal(parseArgs(["stats", "--redis-url", "rediss://h:6380"]).redisUrl, "rediss://h:6380");
    assert.equal(parseArgs(["-h"]).command, "help");
    assert.equal(parseArgs(["stats", "--help"]).command, "help");
    assert.equal(parseArgs(["-V"]).command, "version");
  });

  it("names the flag in every usage error", () => {
    usage(() => parseArgs(["--concurency", "5"]), /unknown flag '--concurency'/);
    usage(() => parseArgs(["-x"]), /unknown flag '-x'/);
    usage(() => parseArgs(["-c", "0"]), /-c\/--concurrency must be a whole number from 1 to 10000: got '0'/);
    usage(() => parseArgs(["-c", "2.5"]), /-c\/--concurrency/);
    usage(() => parseArgs(["-t", "-1"]), /-t\/--timeout must be a number > 0 and at most 86400/);
    usage(() => parseArgs(["-c"]), /-c\/--concurrency needs a value/);
    usage(() => parseArgs(["-q", "a b"]), /-q\/--queue must be "name" or "name,weight": got 'a b'/);
    usage(() => parseArgs(["-q", "a,x"]), /-q\/--queue weight must be a whole number from 0 to 1000/);
    usage(
      () => parseArgs(["--redis-url", "localhost:6379"]),
      /--redis-url must use redis:\/\/.*: got a localhost:\/\/ URL/,
    );
    usage(() => parseArgs(["--verbose=yes"]), /--verbose takes no value/);
    usage(() => parseArgs(["-r", "a.ts", "-r", "b.ts"]), /-r\/--require given more than once/);
    usage(() => parseArgs(["frobnicate"]), /unknown command 'frobnicate'/);
    usage(() => parseArgs(["stats", "extra"]), /unexpected argument 'extra'/);
    usage(() => parseArgs(["stats", "-c", "3"]), /-c\/--concurrency is not valid with 'stats'/);
    usage(() => parseArgs(["enqueue"]), /enqueue needs a job class name/);
    usage(() => parseArgs(["enqueue", "X", "--args", "{}"]), /--args must be a JSON array/);
    usage(() => parseArgs(["enqueue", "X", "--args", "[1"]), /--args must be a JSON array/);
    usage(() => parseArgs(["enqueue", "X", "--in", "soon"]), /--in must be a number of seconds from 0 to 315360000/);
    usage(() => parseArgs(["enqueue", "X", "-q", "a", "-q", "b"]), /enqueue takes one -q\/--queue/);
    usage(() => parseArgs(["--json", "--no-json"]), /--json and --no-json/);
  });
});

describe("cli: the program, in-process on the memory transport", () => {
  it("prints help and version", async () => {
    const help = fakeHost(["--help"]);
    assert.equal(await runCli(help.host), 0);
    assert.match(help.out.join("\n"), /-r, --require <file>/);
    const version = fakeHost(["-V"]);
    assert.equal(await runCli(version.host), 0);
    assert.deepEqual(version.out, [`edgekiq ${VERSION} (node test)`]);
  });

  it("exits 2 with the message for bad flags, bad config and missing jobs", async () => {
    const cases: Array<[string[], RegExp, Parameters<typeof fakeHost>[1]?]> = [
      [["-c", "lots"], /^edgekiq: -c\/--concurrency must be a whole number from 1 to 10000: got 'lots'$/],
      [["-C", "missing.json"], /-C\/--config missing\.json: no such file/],
      [["-C", "bad.json"], /^edgekiq: invalid config bad\.json: config\.queues\[0\]: must be/, {
        files: { "bad.json": '{"queues": [1]}' },
      }],
      [[], /no jobs to run: pass -r\/--require/],
      [["-r", "nope.ts"], /-r\/--require nope\.ts: no such file/],
      [["-r", "empty.ts"], /-r\/--require empty\.ts exports no jobs/, { modules: { "empty.ts": { x: 1 } } }],
      [
        ["-r", "cfg.ts"],
        /invalid config cfg\.ts \(export config\): config\.concurrency: must be a whole number from 1/,
        {
          modules: { "cfg.ts": { config: { concurrency: -1 } } },
        },
      ],
      [["stats", "--redis-url", "https://x.upstash.io"], /needs a token/],
    ];
    for (const [argv, re, options] of cases) {
      const { host, err } = fakeHost(argv, options);
      assert.equal(await runCli(host), 2, `${argv.join(" ")}: ${err.join("\n")}`);
      assert.match(err[0], re, argv.join(" "));
    }
  });

  it("exits 1 naming the URL and its source when Redis cannot be reached", async () => {
    const refusing = memoryTransport();
    refusing.call = () => Promise.reject(new TransportError("connection", "connect ECONNREFUSED 10.0.0.1:6379"));
    const { host, err } = fakeHost(["stats"], { transport: refusing, env: { REDIS_URL: "redis://:pw@10.0.0.1:6379" } });
    assert.equal(await runCli(host), 1);
    assert.deepEqual(err, [
      "edgekiq: cannot reach Redis at redis://:***@10.0.0.1:6379 (from REDIS_URL): connect ECONNREFUSED 10.0.0.1:6379",
    ]);
  });

  it("enqueue pushes by class name and prints the jid; stats counts it", async () => {
    const { host, out, connected, transport } = fakeHost([
      "enqueue",
      "HardJob",
      "--args",
      '["bob", 5]',
      "-q",
      "critical",
    ], {
      env: { REDIS_URL: "redis://10.0.0.1:6379" },
    });
    assert.equal(await runCli(host), 0);
    assert.deepEqual(connected, [{ kind: "ioredis", url: "redis://10.0.0.1:6379" }]);
    const [raw] = (await transport.call("LRANGE", "queue:critical", 0, -1)) as string[];
    const payload = JSON.parse(raw);
    assert.deepEqual([payload.class, payload.args, payload.jid], ["HardJob", ["bob", 5], out[0]]);

    const later = fakeHost(["enqueue", "HardJob", "--in", "60"], { transport });
    assert.equal(await runCli(later.host), 0);
    const stats = fakeHost(["stats", "--json"], { transport });
    assert.equal(await runCli(stats.host), 0);
    const counts = JSON.parse(stats.out[0]);
    assert.equal(counts.queues.critical, 1);
    assert.equal(counts.enqueued, 1);
    assert.equal(counts.scheduledSize, 1);
    const text = fakeHost(["stats"], { transport });
    assert.equal(await runCli(text.host), 0);
    assert.match(text.out[0], /^processed\s+0\n.*scheduled\s+1\n.*queues:\n {2}critical {2}1$/s);
  });

  it(
    "run: loads the jobs module and its config, prints a banner, works, and stops on TERM",
    { timeout: 60_000 },
    async () => {
      const ran: unknown[][] = [];
      const Echo = defineJob({ name: "Echo", perform: (_ctx, ...args: unknown[]) => void ran.push(args) });
      const { host, out, signals, transport } = fakeHost([
        "-r",
        "jobs.ts",
        "-q",
        "critical,2",
        "-q",
        "default",
        "-t",
        "2",
      ], {
        modules: { "jobs.ts": { Echo, config: { concurrency: 3, tag: "shop" }, unrelated: 42 } },
      });
      await transport.call("FLUSHDB");
      const done = runCli(host);
      await waitFor(() => signals.has("SIGTERM"), "the worker to listen for signals");
      await createClient({ transport }).push(Echo, [1, "two"], { queue: "critical" });
      await waitFor(() => ran.length === 1, "the job to run");
      assert.deepEqual(ran[0], [1, "two"]);
      signals.get("SIGTERM")!();
      assert.equal(await done, 0);
      const banner = JSON.parse(out.find((line) => line.includes(`edgekiq ${VERSION} starting`))!);
      assert.equal(banner.runtime, "node test");
      assert.equal(banner.transport, "memory");
      assert.equal(banner.queues, "critical,2 default");
      assert.equal(banner.concurrency, 3);
      assert.equal(banner.jobs, "Echo");
      assert.ok(out.some((line) => JSON.parse(line).msg === "stopped"), "logs its stop");
      assert.deepEqual(await transport.call("SMEMBERS", keys().processes), []);
    },
  );
});

// ---------------------------------------------------------------------------
// The real binary on this runtime.

const cli = (args: string[], env: Record<string, string> = {}) => spawnCli(args, env);

describe(`cli: the binary on ${runtimeName}`, () => {
  it("--version prints the version; a bad flag exits 2 naming it", { timeout: 60_000 }, async () => {
    const version = cli(["--version"]);
    assert.equal(await version.exited, 0, version.output());
    assert.match(version.stdout(), new RegExp(`^edgekiq ${VERSION.replace(/\./g, "\\.")} \\(${runtimeName} `));
    const bad = cli(["-c", "many"]);
    assert.equal(await bad.exited, 2, bad.output());
    assert.match(bad.output(), /edgekiq: -c\/--concurrency must be a whole number from 1 to 10000: got 'many'/);
    const down = cli(["stats", "--redis-url", "redis://127.0.0.1:1"]);
    assert.equal(await down.exited, 1, down.output());
    assert.match(down.output(), /^edgekiq: cannot reach Redis at redis:\/\/127\.0\.0\.1:1 \(from --redis-url\): .*\n$/);
    const config = cli(["-C", "test/fixtures/cli-bad-config.json", "-r", "test/fixtures/cli-jobs.ts"]);
    assert.equal(await config.exited, 2, config.output());
    assert.match(
      config.output(),
      /config\.queues\[1\]: must be .*; config\.concurrency: must be a whole number from 1 to 10000; config\.timout: unknown key/,
    );
  });

  describe("against redis", { skip: !redisAvailable() && "no redis" }, () => {
    let server: { url: string; stop(): Promise<void> } | null = null;
    let redis: Transport;
    before(async () => {
      const { testRedis } = await import("./support/redis.ts");
      server = await testRedis();
      const { ioredisTransport } = await import("../src/transport/adapters/ioredis/ioredis_transport.ts");
      redis = ioredisTransport({ url: server!.url });
    });
    after(async () => {
      await redis?.close();
      await server?.stop();
    });

    it("enqueue prints a jid; stats sees it", { timeout: 60_000 }, async () => {
      await redis.call("FLUSHDB");
      const push = cli(["enqueue", "EchoJob", "--args", '["hi", 2]', "--queue", "low"], { REDIS_URL: server!.url });
      assert.equal(await push.exited, 0, push.output());
      const jid = push.stdout().trim();
      assert.match(jid, /^[0-9a-f]{24}$/);
      const [raw] = (await redis.call("LRANGE", "queue:low", 0, -1)) as string[];
      assert.equal(JSON.parse(raw).jid, jid);
      const stats = cli(["stats", "--json", "--redis-url", server!.url]);
      assert.equal(await stats.exited, 0, stats.output());
      const counts = JSON.parse(stats.stdout());
      assert.deepEqual([counts.queues, counts.enqueued, counts.processesSize], [{ low: 1 }, 1, 0]);
    });

    it("enqueue -r pushes into the job's own queue with its retry, and refuses bad args", {
      timeout: 60_000,
    }, async () => {
      await redis.call("FLUSHDB");
      const jobs = ["-r", "test/fixtures/cli-jobs.ts"];
      const push = cli(["enqueue", "Thumbnail", ...jobs, "--args", '["a.png", 64]'], { REDIS_URL: server!.url });
      assert.equal(await push.exited, 0, push.output());
      const [raw] = (await redis.call("LRANGE", "queue:media", 0, -1)) as string[];
      assert.deepEqual([JSON.parse(raw).jid, JSON.parse(raw).retry], [push.stdout().trim(), 3]);
      const bad = cli(["enqueue", "Thumbnail", ...jobs, "--args", '["a.png", "wide"]'], { REDIS_URL: server!.url });
      assert.equal(await bad.exited, 2, bad.output());
      assert.match(bad.output(), /^edgekiq: Invalid arguments for job Thumbnail: args\[1\]: /);
      assert.equal(await redis.call("LLEN", "queue:media"), 1);
    });

    it("run -r: processes a job, stops on SIGTERM and exits 0 by itself", { timeout: 60_000 }, async () => {
      await redis.call("FLUSHDB");
      const worker = cli([
        "run",
        "-r",
        "test/fixtures/cli-jobs.ts",
        "-C",
        "test/fixtures/cli-config.json",
        "-e",
        "test",
        "--json",
      ], {
        REDIS_URL: server!.url,
      });
      await worker.waitFor(/"msg":"edgekiq worker started"/, 30_000);
      const banner = JSON.parse(worker.stdout().split("\n").find((l) => l.includes("starting"))!);
      assert.equal(banner.queues, "critical,2 default");
      assert.equal(banner.concurrency, 4, "the config file's test section wins over the module's config");
      const jid = await createClient({ transport: redis }).push("SlowJob", [200]);
      await worker.waitFor(new RegExp(`performing ${jid}`));
      worker.kill("SIGTERM");
      assert.equal(await worker.exited, 0, worker.output());
      assert.match(worker.output(), new RegExp(`performed ${jid}`), "the running job finished before exit");
      assert.doesNotMatch(worker.output(), /kept the process alive/);
      assert.deepEqual(await redis.call("SMEMBERS", "processes"), []);
      const info = await redis.call("LLEN", "queue:default");
      assert.equal(info, 0);
    });
  });
});
