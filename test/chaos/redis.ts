/**
 * The chaos suite's redis-server: a free loopback port (never 6379), its own
 * directory, optional AOF with `appendfsync always`, and the faults done to
 * it: crash (SIGKILL) and restart on the same port and directory.
 *
 * A watchdog shell owns each server and kills it when its stdin (a pipe from
 * the suite) closes, which the OS does even if the suite is SIGKILLed.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { freePort, redisCommand, sleep } from "../bench/support.ts";
import { redisServerPath } from "../support/redis.ts";

const WATCHDOG = `exec 3<&0
"$0" "$@" </dev/null &
pid=$!
(read _ <&3; kill -9 $pid 2>/dev/null) &
exec 3<&-
wait $pid`;

/** How the server is configured. */
export interface ChaosRedisOptions {
  /** Directory for its files (AOF, log). */
  dir: string;
  /**
   * AOF on: `always` fsyncs every write (what a restart must not lose);
   * `everysec` keeps a trace of every write for a post-mortem at little cost.
   */
  aof?: "always" | "everysec";
}

/** A redis-server the suite owns. */
export class ChaosRedis {
  readonly port: number;
  readonly url: string;
  #o: ChaosRedisOptions;
  #watchdog: ChildProcess | undefined;
  #pid = 0;

  private constructor(port: number, options: ChaosRedisOptions) {
    this.port = port;
    this.url = `redis://127.0.0.1:${port}`;
    this.#o = options;
  }

  /** Starts a server on a free port and waits for PING. */
  static async start(options: ChaosRedisOptions): Promise<ChaosRedis> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const redis = new ChaosRedis(await freePort(), options);
      if (await redis.#spawn()) return redis;
    }
    throw new Error("redis-server did not start five times (port races or a broken install)");
  }

  /** One admin command on a fresh connection (nothing pooled survives a fault). */
  call(...args: Array<string | number>): Promise<unknown> {
    return redisCommand(this.url, args.map(String), 10_000);
  }

  /** An admin command retried until it answers or `timeoutMs` passes (Redis may be down or paused). */
  async callPatiently(timeoutMs: number, ...args: Array<string | number>): Promise<unknown> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        return await redisCommand(this.url, args.map(String), Math.max(1000, deadline - Date.now()));
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await sleep(100);
      }
    }
  }

  /** `INFO <section>` as a map of fields. */
  async info(section: string): Promise<Map<string, string>> {
    const text = String(await this.call("INFO", section));
    const out = new Map<string, string>();
    for (const line of text.split("\r\n")) {
      const i = line.indexOf(":");
      if (i > 0) out.set(line.slice(0, i), line.slice(i + 1));
    }
    return out;
  }

  /** Kills the server with SIGKILL (a crash: only what AOF fsynced survives). */
  async crash(): Promise<void> {
    const exited = new Promise<void>((resolve) => this.#watchdog?.once("exit", () => resolve()));
    process.kill(this.#pid, "SIGKILL");
    await Promise.race([exited, sleep(5000)]);
  }

  /** Starts the server again on the same port and directory (it reloads its AOF). */
  async restart(): Promise<void> {
    const deadline = Date.now() + 20_000;
    while (!(await this.#spawn())) {
      if (Date.now() > deadline) throw new Error(`redis-server did not restart on port ${this.port}`);
      await sleep(200);
    }
  }

  /** Stops the server. */
  async stop(): Promise<void> {
    const child = this.#watchdog;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    child.stdin?.destroy();
    await Promise.race([exited, sleep(5000)]);
  }

  async #spawn(): Promise<boolean> {
    const binary = redisServerPath();
    if (!binary) throw new Error("redis-server is not on PATH");
    if (this.port === 6379) throw new Error("refusing to start a chaos redis-server on port 6379");
    const args = ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--daemonize", "no"];
    args.push("--dir", this.#o.dir, "--logfile", "redis.log", "--loglevel", "notice");
    if (this.#o.aof) args.push("--appendonly", "yes", "--appendfsync", this.#o.aof);
    else args.push("--appendonly", "no");
    const child = spawn("sh", ["-c", WATCHDOG, binary, ...args], { stdio: ["pipe", "ignore", "ignore"] });
    child.on("error", () => {});
    this.#watchdog = child;
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        if ((await redisCommand(this.url, ["PING"], 1000)) === "PONG") break;
      } catch { /* not up yet, or still loading its AOF */ }
      if (child.exitCode !== null || Date.now() > deadline) {
        child.stdin?.destroy();
        return false;
      }
      await sleep(20);
    }
    this.#pid = Number((await this.info("server")).get("process_id"));
    return true;
  }
}
