/**
 * The README's code, kept true: every fenced block of README.md is either run
 * here or skipped with its reason in `PLAN` (a block with no entry fails the
 * suite, so a new block cannot go untested). Its "Using it" program runs on
 * Node, Bun and Deno against a private redis-server, stopped by SIGTERM, and
 * must exit by itself within the shutdown timeout (nothing of the worker's,
 * the Redis connection included, may keep it alive); a script that ends with
 * `await worker.stop()` must exit too. Its TypeScript blocks type-check, its
 * quick start runs, the npm scripts it names exist, its entry-point table is
 * the packages' export maps, its dependency list is package.json's, and its
 * links resolve.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { runtimeName } from "./support/child.ts";
import { redisAvailable } from "./support/matrix.ts";
import { suiteRedis } from "./support/suite_redis.ts";
import { spawnProcess } from "./fixtures/cli-spawn.ts";
import { blocks, relativeLinks, root, snippet, snippetsDir, withLocalImports, writeProgram } from "./support/readme.ts";

const binaries = {
  node: ["node", ["--import", "tsx"]],
  bun: [runtimeName === "bun" ? process.execPath : join(root, "node_modules/.bin/bun"), []],
  deno: [runtimeName === "deno" ? process.execPath : join(root, "node_modules/.bin/deno"), ["run", "-A"]],
} as const;

/** The worker's default shutdown timeout (`-t`, `timeout`): 25 s. */
const SHUTDOWN_TIMEOUT_MS = 25_000;

describe("README programs", { skip: !redisAvailable() && "no redis" }, () => {
  const suite = suiteRedis();
  const running = suite.running;

  const start = (runtime: keyof typeof binaries, file: string) => {
    const [cmd, pre] = binaries[runtime];
    const proc = spawnProcess(cmd, [...pre, file], { cwd: root, env: {} });
    running.push(proc);
    return proc;
  };

  /** The "Using it" program, its imports and Redis URL pointed at this checkout and the test's server. */
  const usingIt = () => {
    const code = withLocalImports(snippet("Using it"));
    assert.match(code, /"redis:\/\/127\.0\.0\.1:6379"/, "the README's program names the default Redis URL");
    return code.replace('"redis://127.0.0.1:6379"', JSON.stringify(suite.url));
  };

  for (const runtime of ["node", "bun", "deno"] as const) {
    it(`"Using it", as written, on ${runtime}: SIGTERM stops it and the process exits by itself`, {
      timeout: 90_000,
    }, async () => {
      const file = writeProgram(`using-it-${runtime}.ts`, usingIt());
      const proc = start(runtime, file);
      await proc.waitFor(/edgekiq worker started/, 45_000);
      // A job ran (its fetch fails offline, which is a retry: the worker is busy with real work).
      await proc.waitFor(/working/, 30_000);
      const signalled = Date.now();
      proc.kill("SIGTERM");
      const code = await proc.exitWithin(SHUTDOWN_TIMEOUT_MS);
      assert.equal(code, 0, `exit within the shutdown timeout, by itself:\n${proc.output()}`);
      assert.ok(Date.now() - signalled < SHUTDOWN_TIMEOUT_MS);
      assert.match(proc.output(), /stopped/);
    });
  }

  for (const runtime of ["node", "bun", "deno"] as const) {
    it(`a script that ends with await worker.stop() exits on ${runtime}`, { timeout: 90_000 }, async () => {
      // The README's program as a one-off script: once a job has run, stop, and nothing after.
      const code = usingIt().replace(
        /await worker\.run\(\);.*\nawait worker\.stopped;\n/,
        `await worker.run();
while (Number(await transport.call("ZCARD", "retry")) === 0) await new Promise((r) => setTimeout(r, 20));
await worker.stop();
console.log("script done");
`,
      );
      assert.match(code, /await worker\.stop\(\);/, "the program was rewritten");
      const file = writeProgram(`stop-script-${runtime}.ts`, code);
      const proc = start(runtime, file);
      const exited = await proc.exitWithin(60_000);
      assert.equal(exited, 0, proc.output());
      assert.match(proc.output(), /script done/);
    });
  }
});

describe("docs/features.md: Job events and results", () => {
  for (const runtime of ["node", "bun", "deno"] as const) {
    it(`runs as written on ${runtime} (memory transport) and exits`, { timeout: 90_000 }, async () => {
      const program = withLocalImports(snippet("Job events and results", { file: "docs/features.md" }));
      const file = writeProgram(`events-${runtime}.ts`, program);
      const [cmd, pre] = binaries[runtime];
      const proc = spawnProcess(cmd, [...pre, file], { cwd: root, env: {} });
      const code = await proc.exitWithin(60_000);
      if (code !== 0) proc.kill("SIGKILL");
      assert.equal(code, 0, proc.output());
      const out = proc.stdout();
      assert.match(out, /month: "?'?2025-01"?'?,\s*rows: 42/, "waitFor's value");
      const [, jid] = out.match(/^progress (\w+)$/m) ?? [];
      assert.ok(jid, `a progress event:\n${out}`);
      assert.match(out, new RegExp(`^progress ${jid}\\ncompleted ${jid}$`, "m"), "then completed");
    });
  }
});

/**
 * What happens to each README block. `run`: a test below executes it;
 * `skip`: why it cannot run here (what does check it is named).
 */
const PLAN: Record<string, { run: string } | { skip: string }> = {
  "Quick start › sh #0": {
    run: "`npm start` runs here; `npm ci` is skipped: the checkout under test already has its node_modules",
  },
  "Install › sh #0": {
    skip: "clones, packs and installs into another directory; `npm run test:packaging` (test/packaging/smoke.ts) " +
      "does these steps from a fresh clone in CI. Here: the tarball name it names is package.json's",
  },
  "Using it › ts #0": { run: "type-checked, and run on Node, Bun and Deno above (SIGTERM, worker.stop())" },
  "Tests › sh #0": { skip: "runs the suite this test is part of; here: each npm script it names exists" },
};

/** Pages whose TypeScript blocks are type-checked here (the guides' are also run by their own tests). */
const TYPE_CHECKED = ["README.md", "docs/from-sidekiq.md", "docs/from-bullmq.md"];

const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const denoJson = JSON.parse(readFileSync(join(root, "deno.json"), "utf8"));
const readme = readFileSync(join(root, "README.md"), "utf8");
/** The README's text under `heading`, up to the next heading of any level. */
const section = (heading: string) => {
  const from = readme.indexOf(`\n## ${heading}\n`);
  assert.ok(from >= 0, `the README has a '## ${heading}' section`);
  const rest = readme.slice(from + heading.length + 5);
  const end = rest.search(/^#+ /m);
  return end < 0 ? rest : rest.slice(0, end);
};

describe("README: every code block is run or skipped with a reason", () => {
  it("each block has a plan, and each plan a block", () => {
    assert.deepEqual(blocks().map((b) => b.id).sort(), Object.keys(PLAN).sort());
  });

  it("the quick start runs from the checkout and exits 0", { timeout: 90_000 }, async () => {
    const block = blocks().find((b) => b.id === "Quick start › sh #0")!;
    assert.deepEqual(block.code.trim().split("\n"), ["npm ci", "npm start"]);
    const proc = spawnProcess("npm", ["start"], { cwd: root, env: {} });
    const code = await proc.exitWithin(60_000);
    if (code !== 0) proc.kill("SIGKILL");
    assert.equal(code, 0, proc.output());
    assert.match(proc.output(), /succeeded on retry/, "the flaky job was retried and ran");
  });

  it("its TypeScript blocks, and the guides', type-check against this checkout (one tsc run)", {
    skip: runtimeName !== "node" && "tsc runs once, under Node",
    timeout: 180_000,
  }, () => {
    const ts = TYPE_CHECKED.flatMap((file) => blocks(file).filter((b) => b.lang === "ts").map((b) => ({ file, b })));
    assert.ok(ts.some(({ file }) => file === "README.md"));
    const files = ts.map(({ file, b }, i) =>
      writeProgram(`check-${file.replace(/\W/g, "_")}-${i}.ts`, withLocalImports(b.code))
    );
    writeProgram(
      "tsconfig.check.json",
      JSON.stringify({
        extends: "../../../tsconfig.test.json",
        compilerOptions: { types: ["node"] },
        include: files.map((f) => f.split("/").pop()),
      }),
    );
    const tsc = spawnSync(
      process.execPath,
      [join(root, "node_modules/typescript/bin/tsc"), "-p", join(snippetsDir, "tsconfig.check.json")],
      { cwd: root, encoding: "utf8" },
    );
    assert.equal(tsc.status, 0, `tsc:\n${tsc.stdout}${tsc.stderr}`);
  });

  it("the npm scripts its shell blocks name exist", () => {
    const named = blocks().filter((b) => b.lang === "sh").flatMap((b) =>
      [...b.code.matchAll(/\bnpm (?:run ([\w:-]+)|(test|start)\b)/g)].map((m) => m[1] ?? m[2]!)
    );
    assert.ok(named.includes("test") && named.includes("test:all") && named.includes("start"), named.join(" "));
    for (const script of named) assert.ok(pkg.scripts[script], `package.json has no script '${script}'`);
    assert.match(readme, /npm run test:packaging/);
    assert.ok(pkg.scripts["test:packaging"]);
  });

  it("the install block's tarball is what npm pack writes", () => {
    const block = blocks().find((b) => b.id === "Install › sh #0")!;
    const tarball = `${pkg.name}-${pkg.version}.tgz`;
    assert.ok(block.code.includes(`npm pack`) && block.code.includes(`npm i ../edgekiq/${tarball}`), block.code);
    assert.equal(pkg.scripts.prepack, "npm run build", "npm pack builds dist/ first");
  });
});

describe("README: its claims match the packages", () => {
  it("the entry-point table is package.json's and deno.json's export maps, each once", () => {
    const listed = [...section("Entry points").matchAll(/^\| `(edgekiq[\w/-]*)` /gm)].map((m) => m[1]!);
    const asSpecifier = (key: string) => key === "." ? "edgekiq" : `edgekiq/${key.slice(2)}`;
    assert.deepEqual([...listed].sort(), Object.keys(pkg.exports).map(asSpecifier).sort());
    assert.deepEqual([...listed].sort(), Object.keys(denoJson.exports).map(asSpecifier).sort());
    assert.equal(new Set(listed).size, listed.length);
    // Listed once: no other "Entry points:" list elsewhere in the README.
    assert.equal(readme.match(/entry points:/gi)?.length ?? 0, 0);
  });

  it("the dependency list names every dependency and every optional peer, each in its place", () => {
    const [deps, peers] = section("Dependencies").split("**Optional peers**");
    const named = (s: string) => new Set([...s.matchAll(/`(@?[a-z][\w./-]*)`/g)].map((m) => m[1]!));
    const [inDeps, inPeers] = [named(deps!), named(peers!)];
    for (const dep of Object.keys(pkg.dependencies)) {
      assert.ok(inDeps.has(dep) && !inPeers.has(dep), `'${dep}' is named as a dependency`);
    }
    for (const peer of Object.keys(pkg.peerDependencies)) {
      assert.ok(inPeers.has(peer) && !inDeps.has(peer), `'${peer}' is named as an optional peer`);
      assert.equal(pkg.peerDependenciesMeta[peer]?.optional, true, `${peer} is an optional peer`);
    }
  });

  it("says the package is not yet published", () => {
    assert.match(section("Install"), /not yet published/);
  });

  for (
    const file of [
      "README.md",
      ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`),
    ]
  ) {
    it(`${file}: every relative link resolves`, () => {
      const base = file.includes("/") ? join(root, "docs") : root;
      for (const target of relativeLinks(file)) {
        const path = join(base, target);
        assert.ok(existsSync(path), `${file} links to ${target}, which does not exist`);
      }
    });
  }
});
