/**
 * The `edgekiq` command's configuration: the config file and the jobs
 * module's `config` export (validated, every problem with its path), their
 * merge with the flags, where the Redis URL comes from, and which adapter a
 * URL picks.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseArgs, UsageError } from "../src/cli/args.ts";
import { parseConfig, parseConfigText, resolveOptions } from "../src/cli/config.ts";
import { chooseTransport } from "../src/cli/main.ts";
import { redact } from "../src/cli/redact.ts";

const noEnv = () => undefined;

function usage(fn: () => unknown, re: RegExp) {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof UsageError, `expected a UsageError, got ${error}`);
    assert.equal(error.exitCode, 2);
    assert.match(error.message, re);
    return true;
  });
}

describe("cli: config", () => {
  it("accepts the documented keys and normalises queues", () => {
    const config = parseConfig({
      queues: [" critical , 3 ", ["low", 1], "default"],
      concurrency: 4,
      timeout: 2.5,
      capsules: { serial: { queues: ["serial"], concurrency: 1 } },
      environments: { production: { concurrency: 20 } },
    }, "edgekiq.json");
    assert.deepEqual(config.queues, ["critical,3", "low,1", "default"]);
    assert.equal(config.environments?.production.concurrency, 20);
  });

  it("reports every problem with its path", () => {
    usage(
      () => parseConfigText(JSON.stringify({ queues: ["ok", 7, "a b"], concurrency: 0, timout: 5 }), "edgekiq.json"),
      /^invalid config edgekiq\.json: config\.queues\[1\]: must be "name", "name,weight" or \["name", weight\] \(weight 0-1000\); config\.queues\[2\]: .*; config\.concurrency: must be a whole number from 1 to 10000; config\.timout: unknown key$/,
    );
    usage(
      () => parseConfig({ environments: { prod: { timeout: "soon" } } }, "c.json"),
      /config\.environments\.prod\.timeout: must be a number of seconds > 0 and at most 86400/,
    );
    usage(
      () => parseConfig({ capsules: { serial: { queues: [] } } }, "c.json"),
      /config\.capsules\.serial\.queues: must name at least one queue/,
    );
    usage(() => parseConfig({ redisUrl: "mysql://x" }, "c.json"), /config\.redisUrl: must be a redis:\/\//);
    usage(() => parseConfig([1, 2], "c.json"), /config: must be a JSON object/);
    usage(() => parseConfigText("{ nope", "c.json"), /invalid config c\.json: not JSON/);
    usage(
      () => parseConfig({ middleware: [1] }, "jobs.ts (export config)", "module"),
      /config\.middleware\[0\]: must be a function/,
    );
  });

  it("merges flags over the environment section over the file over the module", () => {
    const file = parseConfig({
      queues: ["a"],
      concurrency: 3,
      environments: { production: { concurrency: 7, tag: "prod" } },
    }, "f");
    const mod = parseConfig({ concurrency: 2, timeout: 9, tag: "mod", queues: ["m"] }, "m", "module");
    const env = (name: string) => ({ APP_ENV: "production" } as Record<string, string>)[name];
    const merged = resolveOptions(parseArgs([]), file, mod, env, "app");
    assert.deepEqual([merged.environment, merged.queues, merged.concurrency, merged.timeout, merged.tag], [
      "production",
      ["a"],
      7,
      9,
      "prod",
    ]);
    const flagged = resolveOptions(parseArgs(["-c", "11", "-q", "z", "-e", "development"]), file, mod, env, "app");
    assert.deepEqual([flagged.environment, flagged.queues, flagged.concurrency, flagged.tag], [
      "development",
      ["z"],
      11,
      "mod",
    ]);
    const plain = resolveOptions(parseArgs([]), undefined, undefined, noEnv, "app");
    assert.deepEqual([plain.queues, plain.concurrency, plain.timeout, plain.tag], [["default"], 10, 25, "app"]);
  });

  it("finds Redis: flag, config, REDIS_URL, UPSTASH_REDIS_REST_URL, default", () => {
    const env = (vars: Record<string, string>) => (name: string) => vars[name];
    const pick = (argv: string[], file: object | undefined, vars: Record<string, string>) => {
      const o = resolveOptions(parseArgs(argv), file && parseConfig(file, "f"), undefined, env(vars), "t");
      return [o.redisUrl, o.redisUrlSource];
    };
    assert.deepEqual(pick(["--redis-url", "redis://a:1"], { redisUrl: "redis://b:2" }, { REDIS_URL: "redis://c:3" }), [
      "redis://a:1",
      "--redis-url",
    ]);
    assert.deepEqual(pick([], { redisUrl: "redis://b:2" }, { REDIS_URL: "redis://c:3" }), [
      "redis://b:2",
      "config.redisUrl",
    ]);
    assert.deepEqual(pick([], undefined, { REDIS_URL: "redis://c:3" }), ["redis://c:3", "REDIS_URL"]);
    assert.deepEqual(pick([], undefined, { UPSTASH_REDIS_REST_URL: "https://u" }), [
      "https://u",
      "UPSTASH_REDIS_REST_URL",
    ]);
    assert.deepEqual(pick([], undefined, {}), ["redis://127.0.0.1:6379", "default"]);
    usage(() => pick([], undefined, { REDIS_URL: "nonsense" }), /REDIS_URL must be a URL/);
  });

  it("chooses the adapter by scheme and runtime, and needs a token for REST", () => {
    assert.deepEqual(chooseTransport("redis://h:1", "node", noEnv), { kind: "ioredis", url: "redis://h:1" });
    assert.deepEqual(chooseTransport("rediss://h:1", "deno", noEnv), { kind: "ioredis", url: "rediss://h:1" });
    assert.deepEqual(chooseTransport("redis://h:1", "bun", noEnv), { kind: "bun", url: "redis://h:1" });
    assert.deepEqual(chooseTransport("redis-cluster://h:1", "bun", noEnv), {
      kind: "cluster",
      url: "redis-cluster://h:1",
    });
    assert.deepEqual(chooseTransport("rediss-cluster://h:1", "node", noEnv), {
      kind: "cluster",
      url: "rediss-cluster://h:1",
    });
    const token = (name: string) => (name === "EDGEKIQ_REDIS_TOKEN" ? "tok" : undefined);
    assert.deepEqual(chooseTransport("https://x.upstash.io", "node", token), {
      kind: "upstash",
      url: "https://x.upstash.io",
      token: "tok",
    });
    usage(
      () => chooseTransport("https://x.upstash.io", "node", noEnv),
      /needs a token: set UPSTASH_REDIS_REST_TOKEN or EDGEKIQ_REDIS_TOKEN/,
    );
    assert.equal(redact("redis://user:secret@h:6379/0"), "redis://user:***@h:6379/0");
  });
});
