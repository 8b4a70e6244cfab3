/**
 * docs/from-sidekiq.md, run as written against Ruby Sidekiq (Debian's 6.4) and
 * a private redis-server: its worked example (Ruby's `perform_async`, the
 * `edgekiq` command with the YAML config, a job handed back to Ruby) and its
 * ActiveJob program (a wrapper pushed as Rails' adapter pushes it runs here
 * with its own arguments; `performLater` writes one Ruby reads). Every code
 * block of the page is run here; test/readme.test.ts type-checks its TypeScript.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { runtimeName } from "./support/child.ts";
import { redisAvailable } from "./support/matrix.ts";
import { suiteRedis } from "./support/suite_redis.ts";
import { rubyJson, rubySkip } from "./support/ruby.ts";
import { type Spawned, spawnProcess } from "./fixtures/cli-spawn.ts";
import { blocks, root, snippet, withLocalImports, writeProgram } from "./support/readme.ts";

const FILE = "docs/from-sidekiq.md";

/** How a TypeScript program runs on this runtime. */
const runner: [string, string[]] = runtimeName === "node"
  ? ["node", ["--import", "tsx"]]
  : runtimeName === "bun"
  ? [process.execPath, []]
  : [process.execPath, ["run", "-A"]];

/** A Ruby script that waits (bounded) for a job on `queue` and prints Sidekiq's view of it and of the processes. */
const RUBY_READ = `
require "json"
require "sidekiq"
require "sidekiq/api"
Redis.silence_deprecations = true if Redis.respond_to?(:silence_deprecations=)
queue = Sidekiq::Queue.new(ARGV.fetch(0))
deadline = Time.now + 20
sleep 0.05 while queue.size.zero? && Time.now < deadline
job = queue.first
tags = Sidekiq::ProcessSet.new.map { |p| p["tag"] }
puts JSON.generate({ "class" => job&.klass, "display_class" => job&.display_class, "args" => job&.args, "tags" => tags })
`;

describe("docs/from-sidekiq.md", { skip: (!redisAvailable() && "no redis") || rubySkip() }, () => {
  const suite = suiteRedis();
  const running = suite.running;

  const stopped = (proc: Spawned) => {
    proc.kill("SIGTERM");
    return proc.exitWithin(30_000);
  };

  it("every block is one a test below runs or type-checks", () => {
    assert.deepEqual(blocks(FILE).map((b) => b.id), [
      "ActiveJob › ts #0",
      "The Rails side › ruby #0",
      "The Node side › ts #0",
      "The Node side › yaml #0",
      "The Node side › sh #0",
    ]);
  });

  it("the worked example: Ruby pushes, the command runs it with the YAML config, Ruby reads the job handed back", {
    timeout: 120_000,
  }, async () => {
    const jobs = writeProgram("from-sidekiq-jobs.ts", withLocalImports(snippet("The Node side", { file: FILE })));
    const yml = writeProgram("sidekiq_node.yml", snippet("The Node side", { file: FILE, lang: "yaml" }));
    const sh = snippet("The Node side", { file: FILE, lang: "sh" }).trim();
    // The block's command, with its two files pointed at the ones written here and its Redis at the test's.
    const match = sh.match(/^REDIS_URL=redis:\/\/127\.0\.0\.1:6379 npx tsx node_modules\/\.bin\/edgekiq (.*)$/);
    assert.ok(match, `the command is as this test expects it: ${sh}`);
    const args = match[1]!.split(/\s+/).map((a) =>
      a === "./jobs.ts" ? jobs : a === "config/sidekiq_node.yml" ? yml : a
    );
    assert.deepEqual(args.filter((a) => a.startsWith("-")), ["-r", "-C", "-e"]);
    const [cmd, pre] = runner;
    const worker = spawnProcess(cmd, [...pre, join(root, "src/cli.ts"), ...args], {
      cwd: root,
      env: { REDIS_URL: suite.url },
    });
    running.push(worker);
    await worker.waitFor(/edgekiq worker started/, 45_000);

    const push = writeProgram("from-sidekiq-push.rb", snippet("The Rails side", { file: FILE, lang: "ruby" }));
    const pushed = spawnSync("ruby", [push], { env: { ...process.env, REDIS_URL: suite.url }, encoding: "utf8" });
    assert.equal(pushed.status, 0, pushed.stderr);

    await worker.waitFor(/resized.*photoId=42.*size=thumb|resized.*"photoId":42/, 30_000);
    const read = writeProgram("from-sidekiq-read.rb", RUBY_READ);
    const seen = await rubyJson<{ class: string; args: unknown[]; tags: string[] }>(read, {
      env: { REDIS_URL: suite.url },
      args: ["mailers"],
    });
    assert.equal(seen.class, "PhotoReadyMailer");
    assert.deepEqual(seen.args, [42]);
    assert.ok(seen.tags.includes("photos"), `Sidekiq's ProcessSet sees the worker's tag: ${seen.tags}`);
    // `production:` set concurrency 20 under -e production.
    assert.match(worker.output(), /"msg":"edgekiq worker started".*"concurrency":20/);

    assert.equal(await stopped(worker), 0, worker.output());
  });

  it("ActiveJob: a wrapper pushed as Rails does runs by its wrapped name; performLater writes one Ruby reads", {
    timeout: 120_000,
  }, async () => {
    const program = writeProgram("from-sidekiq-activejob.ts", withLocalImports(snippet("ActiveJob", { file: FILE })));
    const [cmd, pre] = runner;
    const proc = spawnProcess(cmd, [...pre, program], { cwd: root, env: { REDIS_URL: suite.url } });
    running.push(proc);
    await proc.waitFor(/edgekiq worker started/, 45_000);

    // WelcomeJob.perform_later(user, "hi"): ActiveJob::Core#serialize's hash, pushed as Rails' Sidekiq adapter does.
    const serialized = {
      job_class: "WelcomeJob",
      job_id: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
      provider_job_id: null,
      queue_name: "mailers",
      priority: null,
      arguments: [{ _aj_globalid: "gid://shop/User/42" }, "hi"],
      executions: 0,
      exception_executions: {},
      locale: "en",
      timezone: "UTC",
      enqueued_at: new Date().toISOString(),
    };
    await rubyJson("activejob_push", {
      env: { REDIS_URL: suite.url },
      args: ["WelcomeJob", JSON.stringify(serialized)],
    });
    await proc.waitFor(/welcome.*gid:\/\/shop\/User\/42.*hi|welcome.*"user":"gid:\/\/shop\/User\/42"/, 30_000);

    const read = writeProgram("from-sidekiq-read.rb", RUBY_READ);
    const seen = await rubyJson<{ class: string; display_class: string; args: Array<Record<string, unknown>> }>(read, {
      env: { REDIS_URL: suite.url },
      args: ["default"],
    });
    assert.equal(seen.display_class, "ReceiptJob", "Sidekiq's API unwraps it as Rails' jobs");
    assert.equal(seen.args[0]!.job_class, "ReceiptJob");
    assert.deepEqual(seen.args[0]!.arguments, [42]);

    assert.equal(await stopped(proc), 0, proc.output());
  });
});
