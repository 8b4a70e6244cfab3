/**
 * The Redis Cluster transport: ioredis `Cluster` on Node, Bun and Deno, for
 * self-run Redis Cluster and managed cluster-mode Redis (ElastiCache, MemoryDB,
 * Azure clustered tiers, Redis Enterprise's OSS cluster API).
 *
 * What the cluster adds, and how each case keeps the transport rule (never
 * send a write twice when its reply may have been lost; see `transport.ts`):
 *
 * - MOVED and ASK: ioredis sends the command to the node that owns the slot.
 *   Redis answers a redirect without running the command, so this is a first
 *   run, not a resend.
 * - TRYAGAIN (a multi-key command during resharding) and CLUSTERDOWN (no
 *   primary for the slot yet, mid-failover): also answered without running
 *   anything; ioredis tries again after a short delay, bounded by
 *   `maxRedirections`.
 * - A primary that dies: commands that were never written to it ("Connection
 *   is closed") wait for the slot map to be refreshed and go to the promoted
 *   replica. Commands that were written and lost their reply are rejected as
 *   "connection" errors with `maybeApplied: true`, exactly as on one node;
 *   only idempotent ones (reads, scripts declared idempotent) are retried,
 *   once, by the shared request core.
 * - Scripts: EVALSHA routes by its KEYS, so a script runs on the node that
 *   owns its keys. All of one script's keys must share a slot (the cluster
 *   key layout, `keyspace: "cluster"`, gives every edgekiq key one hash tag).
 * - SCAN walks every primary in turn behind one cursor; other keyless
 *   commands (INFO, PING, TIME) go to any node.
 * - Blocking commands (BLMOVE for fetch) run on a dedicated connection to the
 *   primary that owns their key, aborted with `CLIENT UNBLOCK` sent to that
 *   same node; a MOVED reply (the slot moved) retries on the new owner.
 *
 * The transport reports `keyspace: "cluster"`, so clients and workers built on
 * it use the hash-tagged key layout (see `keys.ts` and docs/cluster.md).
 *
 * @module
 */
import { Cluster, type ClusterNode, type ClusterOptions, Redis, type RedisOptions } from "ioredis";
import { ConfigError } from "../../../errors.ts";
import { toTransportError, TransportError } from "../../transport_error.ts";
import { type Adapter, adapterTransport } from "../../adapter.ts";
import { type ConnectionPool, unsentBehind } from "../../pool.ts";
import { pipelineReplies, toReply } from "../../reply.ts";
import {
  type Command,
  countTrip,
  isIdempotent,
  newCounters,
  type PrimaryReply,
  type RedisReply,
  type Transport,
} from "../../transport.ts";
import { blockingPool, mapError, rejectLostReplies, watchFailures } from "../ioredis/connection.ts";
import { keySlot } from "../../../key_slot.ts";

export { hashTagOf, keySlot } from "../../../key_slot.ts";

/** Options for {@link clusterTransport}. */
export interface ClusterTransportOptions {
  /**
   * Seed nodes: `redis://host:port` URLs, `host:port` strings or `{ host, port }`.
   * ioredis learns the rest of the cluster from the first that answers.
   */
  nodes: readonly (string | { host: string; port: number })[];
  /** Extra ioredis options for every node connection (password, TLS, ...). */
  redisOptions?: RedisOptions;
  /** Extra ioredis `Cluster` options (natMap, dnsLookup, slotsRefreshTimeout, ...). */
  clusterOptions?: ClusterOptions;
  /**
   * What an acknowledged write promises. `"fast"` (the default): it is on the
   * primary; replication is asynchronous, so a failover right after it may
   * lose it. `"replicated"`: every write request (command, script, pipeline,
   * MULTI) is followed on the same connection by `WAIT <replicas> <waitMs>`,
   * and resolves only once that many replicas have it; if they do not answer
   * in time it rejects as a "connection" error with `maybeApplied: true` (the
   * write is on the primary, but a failover could still lose it). Blocking
   * fetches are not followed by WAIT: a lost fetch only leaves the job in its
   * queue, to be fetched again. See docs/cluster.md for the measured cost.
   */
  durability?: "fast" | "replicated";
  /** Replicas `"replicated"` waits for; default 1. */
  replicas?: number;
  /** How long `"replicated"` waits for them, in ms; default 1000. */
  waitMs?: number;
}

const noop = () => {};

/** Errors Redis answers without running the command: a blocking call may go again once the slot map is fresh. */
const REDIRECTED = /^(MOVED|ASK|TRYAGAIN|CLUSTERDOWN)\b/;

/**
 * Creates a transport over a Redis Cluster.
 *
 * @example
 * ```ts
 * import { clusterTransport } from "edgekiq/cluster";
 * import { createClient } from "edgekiq";
 * const transport = clusterTransport({ nodes: ["redis://10.0.0.1:6379", "redis://10.0.0.2:6379"] });
 * const client = createClient({ transport }); // keys in the cluster layout: {edgekiq}:queue:default, ...
 * await transport.close();
 * ```
 */
export function clusterTransport(options: ClusterTransportOptions): Transport {
  const seeds = parseSeeds(options.nodes);
  const durability = options.durability ?? "fast";
  if (durability !== "fast" && durability !== "replicated") {
    throw new ConfigError(
      `Cannot create cluster transport as 'durability' must be "fast" or "replicated": current value is ${
        JSON.stringify(durability)
      }`,
    );
  }
  const replicas = positive("replicas", options.replicas ?? 1);
  const waitMs = positive("waitMs", options.waitMs ?? 1000);
  const replicated = durability === "replicated";
  const redisOptions: RedisOptions = {
    maxRetriesPerRequest: 1,
    protocol: 2,
    autoResendUnfulfilledCommands: false,
    ...options.redisOptions,
  };
  if (redisOptions.protocol !== 2) {
    throw new ConfigError("Cannot use cluster transport with RESP3: leave 'protocol' at 2");
  }
  if (redisOptions.autoResendUnfulfilledCommands !== false) {
    throw new ConfigError(
      "Cannot use cluster transport with 'autoResendUnfulfilledCommands': it would run a command whose reply was lost twice",
    );
  }
  const cluster = new Cluster(seeds, {
    scaleReads: "master",
    // Redirects and "try again" answers were not run: following them is safe.
    maxRedirections: 16,
    retryDelayOnMoved: 0,
    retryDelayOnTryAgain: 100,
    retryDelayOnClusterDown: 100,
    // Never resend after "Connection is closed.": ioredis says that of commands already written to a primary that
    // died (their replies lost) as of those never sent, and would run the first kind twice. They reject as
    // maybe-applied instead (mapClusterError) and the slot map is refreshed at once (see `closed`).
    retryDelayOnFailover: 0,
    enableOfflineQueue: true,
    // Connect on the first command, once the listeners below are attached to every node connection.
    lazyConnect: true,
    ...options.clusterOptions,
    redisOptions,
  });
  cluster.on("error", noop); // surfaced through the commands that hit it
  // A node connection that closed may belong to a primary that died: learn the new owners now, not at the next
  // periodic refresh (commands are not resent after a close; the engine's own retries find the new primary).
  const closed = () => cluster.refreshSlotsCache(noop);
  cluster.on("+node", (node: Redis) => {
    watchFailures(node);
    rejectLostReplies(node);
    node.on("close", closed);
  });
  const counters = newCounters();
  const pools = new Map<string, { pool: ConnectionPool; control: Redis }>();
  // A node that left the map (a primary that died, a node removed) takes its blocking connections and their control
  // connection with it: a blocking call still waiting there rejects, and the next one goes to the slot's new owner.
  cluster.on("-node", (node: Redis) => {
    const address = addressOf(node);
    const entry = pools.get(address);
    if (!entry) return;
    pools.delete(address);
    entry.pool.close();
    entry.control.disconnect();
  });

  /** The pool of dedicated connections to the primary that serves `key`'s slot. */
  const poolFor = async (key: string) => {
    const slot = keySlot(key);
    const slots = () => (cluster as unknown as { slots: (string[] | undefined)[] }).slots;
    // The slot map arrives with the first answer: ask something cheap that routes by this key.
    if (!slots()[slot]?.[0]) await cluster.call("EXISTS", key).catch(noop);
    const address = slots()[slot]?.[0];
    if (!address) {
      throw new TransportError("connection", `Cannot find the cluster node serving slot ${slot} of '${key}'`, {
        maybeApplied: false,
      });
    }
    let entry = pools.get(address);
    if (!entry) {
      const [host, port] = splitAddress(address);
      const nodeOptions: RedisOptions = { ...redisOptions, host, port };
      const control = new Redis({ ...nodeOptions, lazyConnect: false });
      watchFailures(control);
      rejectLostReplies(control);
      const pool = blockingPool(
        () =>
          new Redis({
            ...nodeOptions,
            retryStrategy: () => null,
            autoResendUnfulfilledCommands: false,
            enableOfflineQueue: true,
          }),
        control,
        counters,
      );
      entry = { pool, control };
      pools.set(address, entry);
    }
    return entry.pool;
  };

  /** Fails a write whose WAIT saw too few replicas: it is on the primary, but a failover may still lose it. */
  const checkWait = (what: string, acks: unknown): void => {
    if (Number(acks) >= replicas) return;
    throw new TransportError(
      "connection",
      `Cannot confirm that ${replicas} replica(s) hold ${what} as WAIT ${replicas} ${waitMs} answered ${
        String(acks)
      }: it is on the primary, but a failover may lose it`,
      { maybeApplied: true },
    );
  };

  /**
   * Runs a pipeline that carries a WAIT. ioredis follows MOVED for a pipeline
   * only when no command in it succeeded, and WAIT succeeds even on the wrong
   * node, so a stale slot map would make such a pipeline fail with MOVED for
   * good. When every other command was redirected (none ran: they share one
   * slot), refresh the slot map and send it again: a first run, not a resend.
   */
  const execWithWait = async (build: () => ReturnType<Cluster["pipeline"]>): Promise<[Error | null, unknown][]> => {
    for (let attempt = 0;; attempt++) {
      let results: [Error | null, unknown][] | null;
      try {
        results = await build().exec();
      } catch (error) {
        throw mapClusterError(error);
      }
      if (!results) throw toTransportError(new Error("EXECABORT Transaction discarded"), { maybeApplied: false });
      const others = results.slice(0, -1);
      const redirected = others.length > 0 && others.every(([error]) => error && REDIRECTED.test(error.message));
      if (!redirected || attempt >= 16) return results;
      await new Promise<void>((resolve) => cluster.refreshSlotsCache(() => resolve()));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  /** Resolves once the cluster is connected and knows its slots (rejects, as unsent, if it cannot get there). */
  const untilReady = (): Promise<void> =>
    new Promise((resolve, reject) => {
      let settled = false;
      const settle = (error?: Error | null) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error) reject(toTransportError(error, { maybeApplied: false }));
        else resolve();
      };
      // Bounded: ioredis calls back when a connect or reconnect has loaded the slots, which may never come.
      const timer = setTimeout(() => settle(new Error("Cluster isn't ready: no slot map within 10 s")), 10_000);
      if (cluster.status === "wait") cluster.connect().catch(noop);
      (cluster as unknown as { delayUntilReady(callback: (error?: Error | null) => void): void }).delayUntilReady(
        settle,
      );
    });

  /**
   * Runs a MULTI block and its WAIT as one pipeline: one node, one
   * connection, so the WAIT counts the replicas that hold this very
   * transaction (a WAIT sent after it, on whatever node owns the key by
   * then, could confirm a write a failover lost). Queued commands that were
   * redirected abort the block (EXECABORT: nothing ran), so it is sent again
   * to the new owner: a first run, not a resend. Returns the block's replies
   * and the WAIT's.
   */
  const execAtomicWithWait = async (commands: readonly Command[]): Promise<[[Error | null, unknown][], unknown]> => {
    for (let attempt = 0;; attempt++) {
      // ioredis treats the inner exec() of a pipeline as EXEC only once it knows the slots (before that it defers
      // the exec() itself, and the block would end at the wrong command): wait as its own exec() does.
      if (!cluster.slots.length) await untilReady();
      // ioredis's pipeline has multi() (the nesting its README documents), but its types leave it out.
      const pipeline = (cluster.pipeline() as unknown as { multi(): ReturnType<Cluster["pipeline"]> }).multi();
      for (const [name, ...args] of commands) pipeline.call(name, ...args);
      // Inside a pipeline's MULTI, exec() queues EXEC and returns the pipeline (ioredis's documented nesting).
      (pipeline as unknown as { exec(): unknown }).exec();
      pipeline.call("WAIT", replicas, waitMs);
      let raw: [Error | null, unknown][] | null;
      try {
        raw = await pipeline.exec();
      } catch (error) {
        throw mapClusterError(error);
      }
      if (!raw || raw.length !== commands.length + 3) {
        throw toTransportError(new Error("EXECABORT Transaction discarded"), { maybeApplied: false });
      }
      const [execError, execReply] = raw[commands.length + 1];
      const [waitError, acks] = raw[commands.length + 2];
      if (execError) {
        const queued = raw.slice(1, commands.length + 1);
        const redirected = queued.some(([error]) => error && REDIRECTED.test(error.message));
        if (redirected && /EXECABORT/.test(execError.message) && attempt < 16) {
          await new Promise<void>((resolve) => cluster.refreshSlotsCache(() => resolve()));
          await new Promise((resolve) => setTimeout(resolve, 100));
          continue;
        }
        // A command refused while queueing (nothing ran), or the connection lost ("Connection is closed.": the
        // block may have run, and mapClusterError says maybe applied): report the first command's error.
        const refused = queued.find(([error]) => error)?.[0];
        throw mapClusterError(refused ?? execError);
      }
      if (!Array.isArray(execReply)) {
        throw toTransportError(new Error("EXECABORT Transaction discarded"), { maybeApplied: false });
      }
      if (waitError) throw mapClusterError(waitError);
      const results = execReply.map((reply): [Error | null, unknown] =>
        reply instanceof Error ? [reply, undefined] : [null, reply]
      );
      return [results, acks];
    }
  };

  const clusterSend = async (command: Command): Promise<RedisReply> => {
    const [name, ...args] = command;
    if (replicated && !isIdempotent([command])) {
      // One pipeline: the write and its WAIT go to the same node, on the same connection.
      counters.commands += 1;
      const results = await execWithWait(() => cluster.pipeline().call(name, ...args).call("WAIT", replicas, waitMs));
      const [[error, value], [waitError, acks]] = results;
      if (error) throw mapClusterError(error);
      if (waitError) throw mapClusterError(waitError);
      checkWait(name.toUpperCase(), acks);
      return toReply(value);
    }
    try {
      // A command without arguments has no key: ioredis sends it to a random node, which may not be connected yet,
      // and a command queued there before its connection is set up is replayed with a broken SELECT (an uncaught
      // TypeError inside ioredis). Any primary answers it alike, so a ready one is asked.
      const ready = args.length === 0 ? cluster.nodes("master").find((node) => node.status === "ready") : undefined;
      return toReply(await (ready ?? cluster).call(name, ...args));
    } catch (error) {
      throw mapClusterError(error);
    }
  };

  /**
   * Runs a blocking call on the primary that serves its key's slot. Not run
   * (the slot moved or has no primary yet): refresh the map and go to the new
   * owner, at most five times; `aborted()` answers an abort met meanwhile.
   */
  const onSlotOwner = async <T>(
    command: Command,
    signal: AbortSignal,
    run: (pool: ConnectionPool) => Promise<T>,
    aborted: () => T,
  ): Promise<T> => {
    const key = blockingKey(command);
    for (let attempt = 0;; attempt++) {
      const pool = await poolFor(key);
      try {
        return await run(pool);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        if (attempt >= 5 || !REDIRECTED.test(message) || signal.aborted) throw error;
        await new Promise<void>((resolve) => cluster.refreshSlotsCache(() => resolve()));
        await new Promise((resolve) => setTimeout(resolve, 50 * (attempt + 1)));
        if (signal.aborted) return aborted();
      }
    }
  };

  const adapter: Adapter = {
    kind: "cluster",
    keyspace: "cluster",
    endpoint: `redis-cluster://${seeds.map((s) => `${s.host}:${s.port}`).join(",")}`,
    // Commands to different nodes travel on different connections.
    ordered: false,
    counters,
    send(command) {
      if (command[0].toUpperCase() === "SCAN") return scanAll(cluster, command, clusterSend);
      return clusterSend(command);
    },
    async eachPrimary([name, ...args]) {
      let primaries = primariesOf(cluster);
      if (primaries.length === 0) {
        // Not connected yet: the slot map (and so the primaries) comes with the first command's connection.
        await clusterSend(["PING"]);
        primaries = primariesOf(cluster);
      }
      // One command per primary, side by side: one round trip's wait.
      countTrip(counters, primaries.length);
      return await Promise.all(primaries.map(async (node): Promise<PrimaryReply> => {
        try {
          return { node: addressOf(node), reply: toReply(await node.call(name, ...args)) };
        } catch (error) {
          return { node: addressOf(node), error: mapError(error, node) };
        }
      }));
    },
    async batch(commands, atomic) {
      const wait = replicated && !isIdempotent(commands);
      const build = () => {
        const batch = atomic ? cluster.multi() : cluster.pipeline();
        for (const [name, ...args] of commands) batch.call(name, ...args);
        if (wait) batch.call("WAIT", replicas, waitMs);
        return batch;
      };
      let results: [Error | null, unknown][] | null;
      let acks: unknown;
      if (wait && atomic) {
        [results, acks] = await execAtomicWithWait(commands);
      } else if (wait) {
        results = await execWithWait(build);
        acks = results.pop()?.[1];
      } else {
        try {
          results = await build().exec();
        } catch (error) {
          throw mapClusterError(error);
        }
      }
      if (!results) throw toTransportError(new Error("EXECABORT Transaction discarded"), { maybeApplied: false });
      if (wait) {
        counters.commands += 1;
        checkWait(`${atomic ? "MULTI block" : "pipeline"} of ${commands.length}`, acks);
      }
      return pipelineReplies(results.map(([error, value]) => (error ? { error: mapClusterError(error) } : { value })));
    },
    block: (command, signal) => onSlotOwner(command, signal, (pool) => pool.block(command, signal), () => null),
    // The script's keys share the blocking command's slot (a capsule's keys are hash-tagged), so one node runs both.
    // Not with "replicated": a script written behind a wait has no WAIT after it (the caller blocks, then scripts).
    ...(replicated ? {} : {
      blockThen: (command, then, signal) =>
        onSlotOwner(
          command,
          signal,
          (pool) => pool.blockThen(command, then, signal),
          () => [null, unsentBehind(then[0])],
        ),
    }),
    async close() {
      for (const { pool, control } of pools.values()) {
        pool.close();
        control.disconnect();
      }
      pools.clear();
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        cluster.quit().catch(noop),
        new Promise((resolve) => (timer = setTimeout(resolve, 1000))),
      ]);
      clearTimeout(timer);
      cluster.disconnect();
    },
  };
  return adapterTransport(adapter);
}

function positive(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new ConfigError(
      `Cannot create cluster transport as '${name}' must be a whole number >= 1: current value is ${
        JSON.stringify(value)
      }`,
    );
  }
  return value;
}

function parseSeeds(nodes: ClusterTransportOptions["nodes"]): { host: string; port: number }[] {
  if (!Array.isArray(nodes) || nodes.length === 0) {
    throw new ConfigError(
      `Cannot create cluster transport as 'nodes' must be a non-empty list of seed nodes: current value is ${
        JSON.stringify(nodes)
      }`,
    );
  }
  return nodes.map((node) => {
    if (typeof node === "object" && node && typeof node.host === "string" && Number.isInteger(node.port)) {
      return { host: node.host, port: node.port };
    }
    if (typeof node === "string") {
      const text = node.includes("://") ? node : `redis://${node}`;
      try {
        const url = new URL(text);
        return { host: url.hostname.replace(/^\[|\]$/g, ""), port: Number(url.port || 6379) };
      } catch { /* reported below */ }
    }
    throw new ConfigError(
      `Cannot create cluster transport as each of 'nodes' must be "host:port", a redis:// URL or { host, port }: current value is ${
        JSON.stringify(node)
      }`,
    );
  });
}

/** The key a blocking command waits on, which decides its node: after STREAMS for XREAD, after numkeys for BLMPOP. */
function blockingKey([name, ...args]: Command): string {
  const upper = name.toUpperCase();
  if (upper === "XREAD" || upper === "XREADGROUP") {
    const streams = args.findIndex((a) => String(a).toUpperCase() === "STREAMS");
    return String(args[streams + 1] ?? "");
  }
  if (upper === "BLMPOP" || upper === "BZMPOP") return String(args[2] ?? "");
  return String(args[0] ?? "");
}

function splitAddress(address: string): [string, number] {
  const colon = address.lastIndexOf(":");
  return [address.slice(0, colon), Number(address.slice(colon + 1))];
}

/**
 * SCAN over every primary behind one cursor: the cursor carries the primary's
 * index (low byte) and that primary's own cursor. Primaries are taken in
 * address order; a topology change mid-scan may repeat or miss keys that
 * moved, as SCAN itself allows for keys changed during the walk.
 */
async function scanAll(
  cluster: Cluster,
  [, cursor, ...rest]: Command,
  sendTo: (command: Command) => Promise<RedisReply>,
): Promise<RedisReply> {
  const primaries = primariesOf(cluster);
  if (primaries.length === 0) return await sendTo(["SCAN", cursor ?? "0", ...rest]);
  const whole = BigInt(String(cursor ?? "0"));
  let index = Number(whole & 0xffn);
  let nodeCursor = whole >> 8n;
  for (;;) {
    const node = primaries[index];
    if (!node) return ["0", []];
    let reply: RedisReply;
    try {
      reply = toReply(await node.call("SCAN", String(nodeCursor), ...rest));
    } catch (error) {
      throw mapError(error, node);
    }
    const [next, items] = reply as [string, RedisReply[]];
    if (next !== "0") return [String((BigInt(next) << 8n) | BigInt(index)), items];
    index += 1;
    nodeCursor = 0n;
    if (index >= primaries.length) return ["0", items];
    // This primary is done: hand back what it found, continue on the next one.
    if (items.length > 0) return [String(BigInt(index)), items];
  }
}

/** The primaries known now, in address order (SCAN's walk and `eachPrimary` both go this way). */
function primariesOf(cluster: Cluster): Redis[] {
  return cluster.nodes("master").sort((a, b) => addressOf(a).localeCompare(addressOf(b)));
}

function addressOf(node: Redis | ClusterNode): string {
  const options = (node as Redis).options ?? {};
  return `${options.host}:${options.port}`;
}

function mapClusterError(error: unknown): TransportError {
  if (error instanceof TransportError) return error;
  const message = error instanceof Error ? error.message : String(error);
  // "Connection is closed." may follow a write that reached the primary (its reply lost): maybe applied.
  if (/Connection is closed/.test(message)) return toTransportError(error, { maybeApplied: true });
  const unsent =
    /Stream isn't writeable|ECONNREFUSED|ENOTFOUND|EAI_AGAIN|isn't ready|Failed to refresh slots cache|None of startup nodes/
      .test(message);
  return toTransportError(error, unsent ? { maybeApplied: false } : {});
}
