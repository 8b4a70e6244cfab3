/**
 * A private Redis Cluster for tests: six `redis-server --cluster-enabled yes`
 * on free loopback ports (three primaries, one replica each), joined with
 * `redis-cli --cluster create`, ready once every node reports
 * `cluster_state:ok` and agrees on who serves all 16,384 slots. Stopped (and
 * its directories removed) by `stop()`, or by the watchdog of
 * `test/support/redis.ts` when the test process dies. Never touches 6379.
 *
 * @module
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { redisServerPath, startRedis, type TestRedis } from "./redis.ts";

/** One node of a {@link TestCluster}. */
export interface ClusterNode {
  port: number;
  /** Its redis-server process id (for SIGKILL in failover tests). */
  pid: number;
  server: TestRedis;
  /** Starts the node again on its port and directory (after a kill): it rejoins the cluster, as a replica if it lost its slots. */
  restart(): Promise<void>;
}

/** A running test cluster. */
export interface TestCluster {
  /** Every node, primaries and replicas, in start order. */
  nodes: ClusterNode[];
  /** `[{ host, port }]` seeds for ioredis `Cluster`. */
  seeds: { host: string; port: number }[];
  /** Runs redis-cli against one node and returns its stdout (throws on a non-zero exit). */
  cli(port: number, ...args: string[]): Promise<string>;
  /** The ports of the current primaries (asked of a live node). */
  primaries(): Promise<number[]>;
  /** The primary serving `slot` and its replicas' ports (asked of a live node). */
  owner(slot: number): Promise<{ primary: number; replicas: number[] }>;
  /** Waits until every live node reports `cluster_state:ok` and all slots are served. */
  waitOk(timeoutMs?: number): Promise<void>;
  /** Deletes every key on every primary (FLUSHALL on each) and SCRIPT FLUSH on every node. */
  flush(): Promise<void>;
  /** Stops every node and removes their directories. */
  stop(): Promise<void>;
}

/** The ports of the primaries a `CLUSTER NODES` table lists as up and connected. */
function livePrimaries(table: string): number[] {
  return table.split("\n").filter((l) => /\bmaster\b/.test(l) && !/\bfail\b/.test(l) && /connected/.test(l))
    .map((l) => Number(/:(\d+)@/.exec(l)?.[1]));
}

/** Whether redis-server and redis-cli are both on PATH. */
export function clusterAvailable(): boolean {
  return redisServerPath() !== null && spawnSync("sh", ["-c", "command -v redis-cli"]).status === 0;
}

function cliRun(port: number, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("redis-cli", ["-h", "127.0.0.1", "-p", String(port), ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "", err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code === 0) resolve(out);
      else reject(new Error(`redis-cli -p ${port} ${args.join(" ")} exited ${code}: ${err || out}`));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts a six-node cluster (or `options.primaries` × 2 nodes) and waits until
 * it is ready. `nodeTimeoutMs` is `cluster-node-timeout`: how long a primary
 * may be silent before its replica takes over (short, so failover tests are fast).
 *
 * @example
 * ```ts
 * const cluster = await startCluster();
 * try { console.log(cluster.seeds); } finally { await cluster.stop(); }
 * ```
 */
export async function startCluster(
  options: { primaries?: number; nodeTimeoutMs?: number } = {},
): Promise<TestCluster> {
  const count = (options.primaries ?? 3) * 2;
  const root = mkdtempSync(join(tmpdir(), "edgekiq-cluster-"));
  const nodes: ClusterNode[] = [];
  const stop = async () => {
    await Promise.allSettled(nodes.map((n) => n.server.stop()));
    rmSync(root, { recursive: true, force: true });
  };
  try {
    const started = await Promise.all(Array.from({ length: count }, async (_, i) => {
      const dir = join(root, `n${i}`);
      spawnSync("mkdir", ["-p", dir]);
      const args = [
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        join(dir, "nodes.conf"),
        "--cluster-node-timeout",
        String(options.nodeTimeoutMs ?? 1000),
        // A primary waits 5 s by default before a diskless full sync (for more replicas to join it): the
        // replicas' links, which ready waits for, would come up that much later.
        "--repl-diskless-sync-delay",
        "0",
      ];
      const node = { port: 0, pid: 0, server: undefined as unknown as TestRedis } as ClusterNode;
      const boot = async (port?: number) => {
        node.server = await startRedis({ dir, args, port });
        node.port = node.server.port;
        const info = await cliRun(node.port, ["INFO", "server"]);
        node.pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
      };
      node.restart = async () => {
        await node.server.stop().catch(() => {});
        await boot(node.port);
      };
      await boot();
      return node;
    }));
    nodes.push(...started);
    const addresses = nodes.map((n) => `127.0.0.1:${n.port}`);
    await cliRun(nodes[0].port, ["--cluster", "create", ...addresses, "--cluster-replicas", "1", "--cluster-yes"]);
  } catch (error) {
    await stop();
    throw error;
  }
  const alive = async (n: ClusterNode) => {
    try {
      return (await cliRun(n.port, ["PING"])).trim() === "PONG";
    } catch {
      return false;
    }
  };
  const cluster: TestCluster = {
    nodes,
    seeds: nodes.map((n) => ({ host: "127.0.0.1", port: n.port })),
    cli: (port, ...args) => cliRun(port, args),
    async primaries() {
      for (const n of nodes) {
        if (!(await alive(n))) continue;
        return livePrimaries(await cliRun(n.port, ["CLUSTER", "NODES"]));
      }
      throw new Error("no cluster node answers");
    },
    async owner(slot) {
      for (const n of nodes) {
        if (!(await alive(n))) continue;
        const lines = (await cliRun(n.port, ["CLUSTER", "NODES"])).trim().split("\n").map((l) => l.split(" "));
        const port = (f: string[]) => Number(/:(\d+)@/.exec(f[1])?.[1]);
        const primary = lines.find((f) =>
          f[2].includes("master") && !f[2].includes("fail") && f.slice(8).some((range) => {
            const [lo, hi = lo] = range.split("-").map(Number);
            return slot >= lo && slot <= hi;
          })
        );
        if (!primary) throw new Error(`no primary serves slot ${slot}`);
        const replicas = lines.filter((f) => f[3] === primary[0] && !f[2].includes("fail")).map(port);
        return { primary: port(primary), replicas };
      }
      throw new Error("no cluster node answers");
    },
    async waitOk(timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        let ok = true;
        for (const n of nodes) {
          if (!(await alive(n))) continue;
          const info = await cliRun(n.port, ["CLUSTER", "INFO"]).catch(() => "");
          if (!/cluster_state:ok/.test(info) || !/cluster_slots_ok:16384/.test(info)) ok = false;
          // A replica whose link is down (still syncing) would make WAIT answer 0.
          const replication = await cliRun(n.port, ["INFO", "replication"]).catch(() => "");
          if (/role:slave/.test(replication) && !/master_link_status:up/.test(replication)) ok = false;
          // Each node's own table must show the primaries as they are: right after `--cluster create` a node can
          // still list a replica as a primary for a while (gossip), and `primaries()` reads that table.
          const table = await cliRun(n.port, ["CLUSTER", "NODES"]).catch(() => "");
          if (livePrimaries(table).length !== count / 2) ok = false;
        }
        if (ok) return;
        if (Date.now() > deadline) throw new Error(`cluster not ok after ${timeoutMs} ms`);
        await sleep(50);
      }
    },
    async flush() {
      for (const port of await cluster.primaries()) await cliRun(port, ["FLUSHALL"]);
      for (const n of nodes) if (await alive(n)) await cliRun(n.port, ["SCRIPT", "FLUSH"]);
    },
    stop,
  };
  try {
    await cluster.waitOk();
  } catch (error) {
    await stop();
    throw error;
  }
  return cluster;
}

/**
 * SIGKILLs one node's redis-server (no clean shutdown: what a crashed host
 * does). Its pid is asked again first: the one read at start may be stale.
 *
 * @example
 * ```ts
 * await killNode(cluster.nodes[0]);
 * ```
 */
export async function killNode(node: ClusterNode): Promise<void> {
  const info = await cliRun(node.port, ["INFO", "server"]);
  const pid = Number(/process_id:(\d+)/.exec(info)?.[1]);
  if (!Number.isInteger(pid)) {
    throw new Error(`cannot read the pid of the node on :${node.port}: ${info.slice(0, 200)}`);
  }
  node.pid = pid;
  process.kill(pid, "SIGKILL");
}
