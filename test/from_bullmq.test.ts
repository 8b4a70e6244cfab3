/**
 * docs/from-bullmq.md's worked migration, run as written: the BullMQ app
 * (bullmq is a devDependency) and its edgekiq version, each against a private
 * redis-server, must send the mail, print its result, run the digest flow and
 * exit 0 on SIGTERM; the entry points the page names must be the package's
 * (test/readme.test.ts type-checks its TypeScript).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runtimeName } from "./support/child.ts";
import { redisAvailable } from "./support/matrix.ts";
import { suiteRedis } from "./support/suite_redis.ts";
import { spawnProcess } from "./fixtures/cli-spawn.ts";
import { blocks, root, snippet, withLocalImports, writeProgram } from "./support/readme.ts";

const FILE = "docs/from-bullmq.md";

describe("docs/from-bullmq.md", () => {
  it("every block of the migration is run below", () => {
    assert.deepEqual(
      blocks(FILE).filter((b) => b.heading.startsWith("Before") || b.heading.startsWith("After")).map((b) => b.id),
      ["Before: BullMQ › ts #0", "After: edgekiq › ts #0"],
    );
  });

  it("names only entry points the package has", () => {
    const exports = Object.keys(JSON.parse(readFileSync(join(root, "package.json"), "utf8")).exports);
    const named = new Set(
      [...readFileSync(join(root, FILE), "utf8").matchAll(/`edgekiq(\/[\w-]+)?`/g)].map((m) => m[1] ? `.${m[1]}` : "."),
    );
    for (const entry of named) assert.ok(exports.includes(entry), `${entry} is no entry point`);
    for (const entry of ["./batches", "./events", "./features", "./web", "./api"]) assert.ok(named.has(entry), entry);
  });
});

describe("docs/from-bullmq.md: the migration runs", { skip: !redisAvailable() && "no redis" }, () => {
  const suite = suiteRedis();
  const running = suite.running;

  /** Runs a program until it printed both results, then SIGTERMs it: it must exit 0 by itself. */
  const runToTerm = async (cmd: string, args: string[]) => {
    const proc = spawnProcess(cmd, args, { cwd: root, env: {} });
    running.push(proc);
    await proc.waitFor(/^sent \{\s*sent: "?'?ada@example\.com/m, 45_000);
    await proc.waitFor(/^digest( \{ digest: 2 \}| completed \w+)$/m, 30_000);
    proc.kill("SIGTERM");
    const code = await proc.exitWithin(30_000);
    assert.equal(code, 0, proc.output());
    return proc.stdout();
  };

  it("before: the BullMQ app (on Node)", { timeout: 120_000 }, async () => {
    const code = snippet("Before: BullMQ", { file: FILE });
    const port = new URL(suite.url).port;
    assert.match(code, /port: 6379 }/);
    const file = writeProgram("from-bullmq-before.ts", code.replace("port: 6379 }", `port: ${port} }`));
    const out = await runToTerm("node", ["--import", "tsx", file]);
    assert.match(out, /sent \{ sent: 'ada@example\.com' \}/);
    assert.match(out, /digest \{ digest: 2 \}/);
  });

  it(`after: the edgekiq app (on ${runtimeName})`, { timeout: 120_000 }, async () => {
    const code = withLocalImports(snippet("After: edgekiq", { file: FILE }));
    assert.match(code, /"redis:\/\/127\.0\.0\.1:6379"/);
    const file = writeProgram(
      "from-bullmq-after.ts",
      code.replace('"redis://127.0.0.1:6379"', JSON.stringify(suite.url)),
    );
    const [cmd, pre] = runtimeName === "node"
      ? ["node", ["--import", "tsx"]]
      : runtimeName === "bun"
      ? [process.execPath, []]
      : [process.execPath, ["run", "-A"]];
    const out = await runToTerm(cmd as string, [...pre as string[], file]);
    assert.match(out, /sent \{\s*sent: "?'?ada@example\.com"?'?,?\s*\}/); // Bun prints it on three lines
    assert.match(out, /INFO\s+digest .*digest=2|"msg":"digest".*"digest":2/, "the flow's parent read both children");
  });
});
