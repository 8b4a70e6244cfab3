/**
 * The packaging test (`npm run test:packaging`, run by `.ci/run`): what a new
 * user gets from `npm install edgekiq`. It packs a fresh clone of HEAD (so
 * `prepack` must build `dist/`), checks the tarball's contents, installs it
 * into an empty project, and then, against a private redis-server:
 *
 * - the core works with no optional peer installed; the CLI without ioredis
 *   and `edgekiq/web` without hono fail with a message naming the package;
 * - every export loads and a short script pushes and runs jobs under Node
 *   ESM, Node `require`, Bun and Deno (`npm:` specifiers);
 * - docs/cli.md's commands run a worker from the installed bin:
 *   `npx edgekiq -r ./jobs.js`, `npx tsx node_modules/.bin/edgekiq -r ./jobs.ts`,
 *   `bunx --bun edgekiq -r ./jobs.ts`, `deno run -A npm:edgekiq -r ./jobs.ts`,
 *   and `exec node_modules/.bin/edgekiq` (the production form, which gets
 *   SIGTERM itself); `npx edgekiq -r ./jobs.ts` and plain `bunx` explain
 *   themselves in one line.
 *
 * Prints one line per step with its time, the tarball's size, and exits 1 if
 * any step failed. Uses the npm registry only for the peers (pinned to the
 * versions in package.json's devDependencies; usually from npm's cache).
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startRedis } from "../support/redis.ts";
import { type Spawned, spawnProcess } from "../fixtures/cli-spawn.ts";
import { checkTarballFiles } from "./tarball.ts";
import { jobsModule, runScript } from "./scripts.ts";

const repo = fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, "");
const pkg = JSON.parse(readFileSync(join(repo, "package.json"), "utf8"));
const tool = (name: string) => join(repo, "node_modules/.bin", name);
const work = mkdtempSync(join(tmpdir(), "edgekiq-packaging-"));
const app = join(work, "app");

let failures = 0;
async function step(name: string, fn: () => Promise<string | void> | string | void): Promise<void> {
  const started = performance.now();
  try {
    const detail = await fn();
    console.log(`ok   ${name} (${((performance.now() - started) / 1000).toFixed(1)} s)${detail ? `: ${detail}` : ""}`);
  } catch (error) {
    failures++;
    console.log(`FAIL ${name} (${((performance.now() - started) / 1000).toFixed(1)} s): ${(error as Error).message}`);
  }
}

interface Ran {
  code: number | null;
  /** stdout and stderr. */
  output: string;
  stdout: string;
}

/** Runs a command to completion (2 min at most); throws unless it exits with `expect`. */
function run(cmd: string, args: string[], options: { cwd?: string; expect?: number; env?: object } = {}): Ran {
  const result = spawnSync(cmd, args, {
    cwd: options.cwd ?? app,
    encoding: "utf8",
    timeout: 120_000,
    env: { ...process.env, NODE_TEST_CONTEXT: undefined, ...options.env },
  });
  // npm's own warnings (about this machine's npmrc, say) are not the program's output.
  const output = `${result.stdout ?? ""}${result.stderr ?? ""}`.replace(/^npm warn .*\n/gm, "");
  const expect = options.expect ?? 0;
  if (result.status !== expect) {
    throw new Error(
      `${cmd} ${args.join(" ")} exited ${result.status ?? result.signal} (expected ${expect}):\n${output}`,
    );
  }
  return { code: result.status, output, stdout: result.stdout ?? "" };
}

function must(condition: unknown, message: string): void {
  if (!condition) throw new Error(message);
}

let tarball = "";
const redis = await startRedis();

await step("npm pack a fresh clone of HEAD (prepack builds dist/)", () => {
  const clone = join(work, "clone");
  run("git", ["clone", "--quiet", repo, clone], { cwd: work });
  must(!existsSync(join(clone, "dist")), "a fresh clone has no dist/");
  symlinkSync(join(repo, "node_modules"), join(clone, "node_modules"), "dir");
  const packed = run("npm", ["pack", "--json", "--pack-destination", work], { cwd: clone });
  // stdout holds the prepack build's lines, then the JSON report.
  const [info] = JSON.parse(packed.stdout.slice(packed.stdout.search(/^\[/m)));
  tarball = join(work, info.filename);
  const problems = checkTarballFiles(info.files.map((f: { path: string }) => f.path), pkg);
  must(problems.length === 0, problems.join("; "));
  return `${info.entryCount} files, ${(info.size / 1024).toFixed(1)} kB packed, ${
    (info.unpackedSize / 1024).toFixed(1)
  } kB unpacked`;
});

await step("install the tarball alone into an empty project", () => {
  run("mkdir", ["-p", app], { cwd: work });
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
  run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", tarball]);
  for (const peer of Object.keys(pkg.peerDependencies)) {
    must(!existsSync(join(app, "node_modules", peer)), `optional peer ${peer} was installed with edgekiq`);
  }
  return `dependencies: ${Object.keys(pkg.dependencies ?? {}).join(", ") || "none"}`;
});

await step("core without optional peers: push and drain on the memory transport", () => {
  writeFileSync(join(app, "core.mjs"), runScript({ imports: "esm", transport: "memory", label: "core" }));
  return run("node", ["core.mjs"]).output.trim();
});

await step("the CLI without ioredis: one line naming it, exit 2", () => {
  const ran = run("node_modules/.bin/edgekiq", ["stats", "--redis-url", redis.url], { expect: 2 });
  must(
    /^edgekiq: redis:\/\/127\.0\.0\.1:\d+ needs the ioredis package, which is not installed: npm i ioredis\n$/.test(
      ran.output,
    ),
    `unexpected output:\n${ran.output}`,
  );
});

await step("edgekiq/web without hono: the error names hono", () => {
  const ran = run("node", ["-e", 'import("edgekiq/web").catch((e) => { console.log(e.message); process.exit(3); })'], {
    expect: 3,
  });
  must(/Cannot find package 'hono'/.test(ran.output), `unexpected output:\n${ran.output}`);
});

await step("install the optional peers and tsx at the tested versions", () => {
  const names = [...Object.keys(pkg.peerDependencies), "tsx"];
  const specs = names.map((name) => `${name}@${pkg.devDependencies[name]}`);
  run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", ...specs]);
  return specs.join(" ");
});

const entries = Object.keys(pkg.exports).map((subpath) => `edgekiq${subpath.slice(1)}`);
const env = { URL: redis.url, ENTRIES: entries.join(",") };

await step("Node ESM: every export loads; push and drain over ioredis", () => {
  writeFileSync(join(app, "node.mjs"), runScript({ imports: "esm", transport: "ioredis", label: "node-esm" }));
  return run("node", ["node.mjs"], { env }).output.trim();
});

await step("Node require(): every export loads; push and drain over ioredis", () => {
  writeFileSync(join(app, "node.cjs"), runScript({ imports: "require", transport: "ioredis", label: "node-require" }));
  return run("node", ["node.cjs"], { env }).output.trim();
});

await step("Node without require(esm): Node's own message says to use import()", () => {
  const ran = run("node", ["--no-experimental-require-module", "-e", 'require("edgekiq")'], { expect: 1 });
  must(/ERR_REQUIRE_ESM/.test(ran.output) && /dynamic import\(\)/.test(ran.output), ran.output);
  must(!/ERR_PACKAGE_PATH_NOT_EXPORTED/.test(ran.output), ran.output);
});

await step("Bun: every export loads; push and drain over Bun's RedisClient", () => {
  writeFileSync(join(app, "bun.mjs"), runScript({ imports: "esm", transport: "bun", label: "bun" }));
  return run(tool("bun"), ["bun.mjs"], { env }).output.trim();
});

await step("Deno (npm: specifiers): every export loads; push and drain over ioredis", () => {
  writeFileSync(join(app, "deno.ts"), runScript({ imports: "deno", transport: "ioredis", label: "deno" }));
  return run(tool("deno"), ["run", "-A", "deno.ts"], { env: { ...env, ENTRIES: entries.map((e) => `npm:${e}`) } })
    .output.trim();
});

writeFileSync(join(app, "jobs.js"), jobsModule("js"));
writeFileSync(join(app, "jobs.ts"), jobsModule("ts"));

await step("`npx edgekiq --help`, and `--version` from the bin under Node and `bun`", () => {
  must(/^Usage:/m.test(run("npx", ["edgekiq", "--help"]).output), "no usage text");
  const onBun = run(tool("bun"), ["node_modules/.bin/edgekiq", "--version"]).output.trim();
  must(/\(bun /.test(onBun), `\`bun node_modules/.bin/edgekiq\` runs on Bun: ${onBun}`);
  return `${run("node_modules/.bin/edgekiq", ["--version"]).output.trim()}; ${onBun}`;
});

/**
 * Starts a worker with `cmd args`, pushes a job to its queue with the
 * installed CLI, waits for the job's output, stops it with SIGTERM (to the
 * process itself when `direct`, else to its process group as a terminal
 * would, so a wrapper such as npx cannot swallow it), and checks it stopped
 * cleanly.
 */
async function worker(cmd: string, args: string[], queue: string, direct = false): Promise<string> {
  const child: Spawned = spawnProcess(cmd, [...args, "-q", queue], {
    cwd: app,
    env: { REDIS_URL: redis.url, NODE_TEST_CONTEXT: undefined },
    detached: !direct,
  });
  try {
    await child.waitFor(/edgekiq worker started/, 60_000);
    const jid = run("node_modules/.bin/edgekiq", ["enqueue", "Hello", "--args", `["${queue}"]`, "-q", queue], {
      env: { REDIS_URL: redis.url },
    }).output.trim();
    await child.waitFor(new RegExp(`hello ${queue} ${jid}`), 30_000);
    const runtime = child.output().match(/"runtime":"(\w+ [\d.]+)"/)?.[1];
    child.kill("SIGTERM");
    const code = await Promise.race([child.exited, new Promise((r) => setTimeout(() => r("timeout"), 30_000))]);
    must(/"msg":"stopped"/.test(child.output()), `no clean stop (exit ${code}):\n${child.output()}`);
    if (direct) must(code === 0, `exit ${code}:\n${child.output()}`);
    return `ran ${jid} on ${runtime}, stopped on SIGTERM (exit ${code})`;
  } finally {
    child.kill("SIGKILL");
  }
}

await step("npx edgekiq -r ./jobs.js", () => worker("npx", ["edgekiq", "-r", "./jobs.js"], "npx-js"));
await step(
  "exec node_modules/.bin/edgekiq -r ./jobs.js (gets SIGTERM itself)",
  () => worker("node_modules/.bin/edgekiq", ["-r", "./jobs.js"], "exec-js", true),
);
await step(
  "npx tsx node_modules/.bin/edgekiq -r ./jobs.ts",
  () => worker("npx", ["tsx", "node_modules/.bin/edgekiq", "-r", "./jobs.ts"], "tsx-ts"),
);
await step(
  "bunx --bun edgekiq -r ./jobs.ts",
  () => worker(tool("bunx"), ["--bun", "edgekiq", "-r", "./jobs.ts"], "bun-ts"),
);
await step(
  "deno run -A npm:edgekiq -r ./jobs.ts",
  () => worker(tool("deno"), ["run", "-A", "npm:edgekiq", "-r", "./jobs.ts"], "deno-ts"),
);

await step("npx edgekiq -r ./jobs.ts under plain Node: one line, exit 2", () => {
  const ran = run("npx", ["edgekiq", "-r", "./jobs.ts", "--redis-url", redis.url], { expect: 2 });
  must(ran.output.trim().split("\n").length === 1, ran.output);
  must(/is TypeScript, which Node cannot import by itself: run `npx tsx/.test(ran.output), ran.output);
});

await step("bunx edgekiq -r ./jobs.ts (Node, by the shebang): one line pointing at --bun, exit 2", () => {
  const ran = run(tool("bunx"), ["edgekiq", "-r", "./jobs.ts", "--redis-url", redis.url], { expect: 2 });
  must(ran.output.trim().split("\n").length === 1, ran.output);
  must(/bunx ran edgekiq under Node .*`bunx --bun edgekiq \.\.\.`/.test(ran.output), ran.output);
});

await redis.stop();
if (!failures) rmSync(work, { recursive: true, force: true });
else console.log(`left ${work} for inspection`);
console.log(failures ? `packaging: ${failures} step(s) failed` : "packaging: ok");
process.exit(failures ? 1 : 0);
