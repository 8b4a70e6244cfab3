/**
 * `edgekiq top` under a real terminal: tmux runs the binary on this runtime
 * against a private redis-server with seeded queues, a process with a
 * running job, retries and dead jobs; the test reads the screen with
 * capture-pane, types keys with send-keys, and checks in Redis that each
 * action took effect (and that a refused confirmation did nothing). On the
 * way out, by `q`, Ctrl-C or SIGINT, the terminal is given back: the
 * alternate screen is left and the line discipline is canonical again.
 * Then the pure parts: keys, widths and the layout.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createClient } from "../mod.ts";
import { parseKeys } from "../src/cli/key_input.ts";
import { displayWidth, fitWidth } from "../src/cli/text_width.ts";
import { layoutTop } from "../src/cli/top_screen.ts";
import type { Transport } from "../src/transport/transport.ts";
import { runtimeName } from "./support/child.ts";
import { redisAvailable } from "./support/matrix.ts";
import { suiteRedis } from "./support/suite_redis.ts";
import { startTmux, tmuxAvailable, type TmuxSession } from "./support/tmux.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const IDENTITY = "web.1:4242:0a1b2c3d4e5f";

/** The CLI on this runtime, as an argv. */
function cli(args: string[]): string[] {
  return runtimeName === "deno"
    ? [process.execPath, "run", "-A", "src/cli.ts", ...args]
    : runtimeName === "bun"
    ? [process.execPath, "src/cli.ts", ...args]
    : [process.execPath, "--import", "tsx", "src/cli.ts", ...args];
}

async function seed(redis: Transport): Promise<void> {
  await redis.call("FLUSHDB");
  const client = createClient({ transport: redis });
  for (let i = 0; i < 5; i++) await client.push("HardJob", [i], { queue: "critical" });
  for (let i = 0; i < 3; i++) await client.push("MailJob", [i]);
  const now = Date.now() / 1000;
  // A live process (its heartbeat hash, as a worker writes it) running one job.
  await redis.call("SADD", "processes", IDENTITY);
  await redis.call(
    "HSET",
    IDENTITY,
    "info",
    JSON.stringify({ hostname: "web.1", pid: 4242, tag: "shop", concurrency: 10, queues: ["default"] }),
    "busy",
    "1",
    "beat",
    String(now),
    "quiet",
    "false",
    "concurrency",
    "10",
  );
  await redis.call("EXPIRE", IDENTITY, 600);
  const running = { class: "SlowJob", jid: "0123456789abcdef01234567", args: [] };
  await redis.call(
    "HSET",
    `${IDENTITY}:work`,
    "default:0",
    JSON.stringify({ queue: "default", payload: JSON.stringify(running), run_at: Math.floor(now - 12) }),
  );
  for (let i = 0; i < 3; i++) {
    const job = {
      class: "FlakyJob",
      jid: `retry${i}00000000000000000`,
      args: [i],
      queue: "default",
      retry: true,
      retry_count: i,
      error_class: "RuntimeError",
      // Hostile text from Redis: must show escaped, never drive the terminal.
      error_message: `boom\u001b[2J ${i}`,
    };
    await redis.call("ZADD", "retry", String(now + 60 * (i + 1)), JSON.stringify(job));
  }
  const dead = { class: "DeadJob", jid: "dead0000000000000000000", args: [], queue: "default", error_class: "E" };
  await redis.call("ZADD", "dead", String(now - 3600), JSON.stringify(dead));
}

/** The pid of the pane's child (the CLI), for signals. */
function childPid(tmux: TmuxSession): number {
  const shell = tmux.display("pane_pid");
  const out = spawnSync("ps", ["-o", "pid=", "--ppid", shell], { encoding: "utf8" }).stdout.trim();
  return Number(out.split(/\s+/)[0]);
}

/** The terminal came back: alternate screen left, canonical mode and echo on. */
function assertRestored(tmux: TmuxSession, screen: string): void {
  assert.match(screen, /EXITED 0/);
  assert.equal(tmux.display("alternate_on"), "0", "left the alternate screen");
  const stty = tmux.after();
  assert.match(stty, /(^|\s)icanon(\s|$)/, `canonical mode restored:\n${stty}`);
  assert.match(stty, /(^|\s)echo(\s|$)/, `echo restored:\n${stty}`);
}

const skip = !tmuxAvailable() ? "no tmux" : !redisAvailable() ? "no redis" : false;

describe(`cli: edgekiq top in a real terminal, on ${runtimeName}`, { skip }, () => {
  const suite = suiteRedis();

  it("shows stats, queues, the process and its job, retries and dead; keys act on the selection", {
    timeout: 90_000,
  }, async () => {
    await seed(suite.redis);
    const tmux = startTmux(cli(["top", "--redis-url", suite.url, "--interval", "0.5"]), {
      columns: 120,
      rows: 32,
      cwd: root,
    });
    try {
      let screen = await tmux.waitFor(/Processes \(1\)/, 40_000);
      assert.equal(tmux.display("alternate_on"), "1", "draws on the alternate screen");
      assert.match(screen, /Busy 1\/10 +Enqueued 8 +Scheduled 0 +Retries 3 +Dead 1 +Processes 1/);
      assert.match(screen, /^ {2}critical +5 +latency /m);
      assert.match(screen, /^ {2}default +3 +latency /m);
      assert.match(screen, /^> web\.1:4242:0a1b2c3d4e5f +\[shop\] +busy 1\/10 +running/m);
      assert.match(screen, /SlowJob +0123456789abcdef01234567 +on default +for \d+/);
      assert.match(screen, /^Retries \(3\)$/m);
      assert.match(screen, /FlakyJob +retried 0 +RuntimeError: boom\\x1b\[2J 0/);
      assert.match(screen, /ago +DeadJob/);

      // Quiet the selected process: TSTP lands in its signal list.
      tmux.keys("t");
      await tmux.waitFor(/asked web\.1:4242:0a1b2c3d4e5f to quiet/);
      assert.deepEqual(await suite.redis.call("LRANGE", `${IDENTITY}-signals`, 0, -1), ["TSTP"]);
      assert.match(tmux.screen(), /busy 1\/10 +quieting…/);
      // Stop asks first; anything but y cancels, and nothing is sent.
      tmux.keys("s");
      await tmux.waitFor(/Stop web\.1:4242:0a1b2c3d4e5f\? \[y\/N\]/);
      tmux.keys("n");
      await tmux.waitFor(/^cancelled/m);
      assert.deepEqual(await suite.redis.call("LRANGE", `${IDENTITY}-signals`, 0, -1), ["TSTP"]);

      // Retries: select the second entry and retry it now.
      tmux.keys("Tab", "Down");
      screen = await tmux.waitFor(/^> in .*retried 1 /m);
      assert.match(screen, /^▸ Retries/m);
      tmux.keys("r");
      await tmux.waitFor(/retried FlakyJob retry100000000000000000: back on its queue/);
      assert.equal(await suite.redis.call("ZCARD", "retry"), 2);
      const requeued = (await suite.redis.call("LRANGE", "queue:default", 0, -1)) as string[];
      assert.ok(requeued.some((raw) => JSON.parse(raw).jid === "retry100000000000000000"));
      screen = await tmux.waitFor(/Retries 2 /);
      assert.match(screen, /Enqueued 9 /);

      // Kill asks first; y moves the selected retry to Dead.
      tmux.keys("x");
      await tmux.waitFor(/Kill FlakyJob .*\(move it to Dead\)\? \[y\/N\]/);
      tmux.keys("y");
      await tmux.waitFor(/^killed FlakyJob/m);
      assert.equal(await suite.redis.call("ZCARD", "retry"), 1);
      assert.equal(await suite.redis.call("ZCARD", "dead"), 2);
      await tmux.waitFor(/Dead \(2\)/);

      tmux.keys("q");
      assertRestored(tmux, await tmux.waitFor(/EXITED \d+/));
    } finally {
      tmux.close();
    }
  });

  it("Ctrl-C and SIGINT quit and give the terminal back", { timeout: 90_000 }, async () => {
    await seed(suite.redis);
    for (const how of ["ctrl-c", "SIGINT"] as const) {
      const tmux = startTmux(cli(["top", "--redis-url", suite.url]), { columns: 100, rows: 30, cwd: root });
      try {
        await tmux.waitFor(/Processes \(1\)/, 40_000);
        if (how === "ctrl-c") tmux.keys("C-c");
        else process.kill(childPid(tmux), "SIGINT");
        assertRestored(tmux, await tmux.waitFor(/EXITED \d+/));
      } finally {
        tmux.close();
      }
    }
  });

  it("without a terminal it says so and exits 2, before contacting Redis", { timeout: 60_000 }, async () => {
    const [cmd, ...argv] = cli(["top", "--redis-url", "redis://127.0.0.1:1"]);
    const child = spawnSync(cmd, argv, {
      cwd: root,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    assert.equal(child.status, 2, child.stderr);
    assert.match(child.stderr, /edgekiq top needs a terminal/);
  });
});

describe("cli: top's parts", () => {
  it("parses keys, arrows and unknown escape sequences", () => {
    assert.deepEqual(parseKeys("\x1b[Bjq"), ["down", "j", "q"]);
    assert.deepEqual(parseKeys("\t\x1b[Z\x1bOA\x03"), ["tab", "backtab", "up", "ctrl-c"]);
    assert.deepEqual(parseKeys("\x1b[1;5Cx"), ["x"], "an unknown CSI sequence is dropped whole");
  });

  it("measures cells: wide characters take two, and fitting never splits one", () => {
    assert.equal(displayWidth("キュー"), 6);
    assert.equal(displayWidth("e\u0301"), 1);
    assert.equal(displayWidth("🚀"), 2);
    assert.equal(fitWidth("キューキュー", 5), "キュ…");
    assert.equal(displayWidth(fitWidth("キューキュー", 5)), 5);
    assert.equal(fitWidth("ab", 5, { pad: true, align: "right" }), "   ab");
  });

  it("shares the rows so no section is pushed off the screen", () => {
    const layout = layoutTop(24, { queues: 100, processes: 2, retries: 1000, dead: 1000 });
    assert.deepEqual(layout, { queues: 4, processes: 2, retries: 5, dead: 4 });
    assert.deepEqual(layoutTop(40, { queues: 2, processes: 1, retries: 0, dead: 0 }), {
      queues: 2,
      processes: 1,
      retries: 0,
      dead: 0,
    });
  });
});
