/**
 * The memory transport: the embedded default and the engine behind
 * `edgekiq/testing`. Redis 7's data types and commands in one JavaScript
 * heap, with real blocking pops, MULTI semantics for atomic pipelines, and
 * scripts run through their JavaScript twins. Web-standard only, so it runs
 * on the edge too. Nothing is shared between processes and nothing survives
 * a restart.
 *
 * @module
 */
import { toTransportError, TransportError } from "../../transport_error.ts";
import { ReplyError } from "./command_args.ts";
import { blockTimeout } from "./list_commands.ts";
import { resolveLast, xreadArgs } from "./stream_commands.ts";
import { Store } from "./store.ts";
import type { Script } from "../../script.ts";
import {
  type BlockOptions,
  type Command,
  countTrip,
  newCounters,
  type RedisArg,
  type RedisReply,
  type Transport,
} from "../../transport.ts";

/** A client parked in a blocking pop. */
interface Waiter {
  keys: string[];
  /** Serves the waiter from one of `ready` if it can; true when it is done. */
  serve(ready: Set<string>): boolean;
  /** Ends the wait with `null` and clears its timer. */
  cancel(): void;
}

const BLOCKING = new Set(["BRPOP", "BLPOP", "BLMOVE", "BRPOPLPUSH"]);

/** The blocking commands the memory transport waits on: list pops, and XREAD with BLOCK. */
function isBlocking([name, ...args]: Command): boolean {
  return BLOCKING.has(name) || (name === "XREAD" && args.some((a) => String(a).toUpperCase() === "BLOCK"));
}

// setTimeout overflows past 2^31-1 ms (24.8 days) and would fire at once, so
// long timeouts wait in steps.
const MAX_DELAY = 2 ** 31 - 1;

function mapError(error: unknown): unknown {
  return error instanceof ReplyError ? toTransportError(error) : error;
}

/**
 * Lua hands integers back to Redis truncated and has no floats in replies;
 * twins return plain JavaScript, so their replies are shaped the same way.
 */
function luaReply(reply: RedisReply): RedisReply {
  if (typeof reply === "number") return Math.trunc(reply);
  if (Array.isArray(reply)) return reply.map(luaReply);
  return reply;
}

/**
 * Creates a memory transport with an empty keyspace. Share one instance
 * between a client and a worker in one program.
 *
 * Blocking pops (BRPOP, BLPOP, BLMOVE, BRPOPLPUSH) and XREAD with BLOCK
 * really wait, and a push (or XADD) wakes the longest-waiting client first,
 * as Redis serves them. `close()`
 * answers every pending blocking pop with `null` (a timeout) and clears every
 * timer, so a closing worker is never left hanging and the process can exit.
 * The data stays readable after `close()`; blocking pops then no longer wait.
 *
 * @example
 * ```ts
 * const transport = memoryTransport();
 * await createClient({ transport }).push(HardJob, ["bob", 5]);
 * const worker = createWorker({ transport, jobs: [HardJob] });
 * ```
 */
export function memoryTransport(): Transport {
  const store = new Store();
  const counters = newCounters();
  const waiters: Waiter[] = [];
  let closed = false;

  const run = (command: string, args: readonly RedisArg[]): RedisReply => {
    try {
      return store.exec(command, args);
    } catch (error) {
      throw mapError(error);
    }
  };

  // Redis serves blocked clients after each command (or EXEC, or script),
  // oldest first per key; a served BLMOVE pushes too, so repeat until quiet.
  const serveBlocked = (): void => {
    const pushed = store.db.pushed;
    while (pushed.size > 0) {
      const ready = new Set(pushed);
      pushed.clear();
      for (const w of waiters.slice()) {
        if (w.keys.some((k) => ready.has(k)) && w.serve(ready)) waiters.splice(waiters.indexOf(w), 1);
      }
    }
  };

  /**
   * XREAD ... BLOCK: read now; if nothing came, wait for an entry after the
   * IDs as they were at the call (`$` is the last ID then).
   */
  const blockRead = (args: readonly RedisArg[], signal?: AbortSignal): Promise<RedisReply> => {
    const a = args.map(String);
    let request: string[];
    let immediate: RedisReply;
    let ms: number | undefined;
    let keys: string[];
    try {
      const parsed = xreadArgs(a);
      const resolved = resolveLast(store.db, parsed.streams);
      keys = resolved.map(([key]) => key);
      const options = parsed.count === Infinity ? [] : ["COUNT", String(parsed.count)];
      request = [...options, "STREAMS", ...keys, ...resolved.map(([, id]) => id)];
      immediate = run("XREAD", request);
      ms = parsed.blockMs;
    } catch (error) {
      return Promise.reject(mapError(error));
    }
    if (immediate !== null || closed || ms === undefined) return Promise.resolve(immediate);
    return wait(keys, ms, signal, () => run("XREAD", request));
  };

  const block = (command: string, args: readonly RedisArg[], signal?: AbortSignal): Promise<RedisReply> => {
    if (signal?.aborted) return Promise.resolve(null);
    if (command === "XREAD") return blockRead(args, signal);
    let immediate: RedisReply;
    let ms: number;
    try {
      immediate = run(command, args); // checks arity, timeout and types, and pops if it can
      ms = blockTimeout(String(args[command === "BLMOVE" ? 4 : command === "BRPOPLPUSH" ? 2 : args.length - 1]));
    } catch (error) {
      return Promise.reject(mapError(error));
    } finally {
      serveBlocked(); // a BLMOVE that moved at once may feed another waiter
    }
    if (immediate !== null || closed) return Promise.resolve(immediate);
    const a = args.map(String);
    const isMove = command === "BLMOVE" || command === "BRPOPLPUSH";
    const keys = isMove ? [a[0]] : a.slice(0, -1);
    return wait(keys, ms, signal, (ready) => {
      const key = keys.find((k) => ready.has(k) && store.hasItems(k));
      if (key === undefined) return null;
      if (command === "BRPOP" || command === "BLPOP") {
        return [key, run(command === "BRPOP" ? "RPOP" : "LPOP", [key])];
      }
      return run("LMOVE", command === "BLMOVE" ? a.slice(0, 4) : [a[0], a[1], "RIGHT", "LEFT"]);
    });
  };

  /**
   * Parks a client on `keys` for up to `ms` (0: forever) or until `signal`
   * aborts; `attempt` is tried each time one of its keys gains items, and
   * a reply other than null ends the wait with it.
   */
  const wait = (
    keys: string[],
    ms: number,
    signal: AbortSignal | undefined,
    attempt: (ready: Set<string>) => RedisReply,
  ): Promise<RedisReply> => {
    return new Promise((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const settle = (reply: RedisReply) => {
        signal?.removeEventListener("abort", abort);
        resolve(reply);
      };
      const abort = () => {
        const i = waiters.indexOf(waiter);
        if (i >= 0) waiters.splice(i, 1);
        waiter.cancel();
      };
      const waiter: Waiter = {
        keys,
        serve(ready) {
          let reply: RedisReply;
          try {
            reply = attempt(ready);
          } catch (error) {
            clearTimeout(timer);
            signal?.removeEventListener("abort", abort);
            reject(error);
            return true;
          }
          if (reply === null) return false;
          clearTimeout(timer);
          settle(reply);
          return true;
        },
        cancel() {
          clearTimeout(timer);
          settle(null);
        },
      };
      // An abort answers the waiter with null at once: it is out of the
      // waiters list, so no later push can serve it.
      signal?.addEventListener("abort", abort, { once: true });
      if (ms > 0) {
        const deadline = Date.now() + ms;
        const arm = () => {
          const left = deadline - Date.now();
          timer = setTimeout(() => {
            if (deadline > Date.now()) return arm();
            const i = waiters.indexOf(waiter);
            if (i >= 0) waiters.splice(i, 1);
            settle(null);
          }, Math.min(Math.max(left, 0), MAX_DELAY));
        };
        arm();
      }
      waiters.push(waiter);
    });
  };

  const transport: Transport = {
    kind: "memory",
    endpoint: "memory",
    blocking: true,
    // Commands apply synchronously, as they are called.
    ordered: true,
    counters,
    call(command: string, ...args: RedisArg[]): Promise<RedisReply> {
      countTrip(counters, 1);
      const upper = command.toUpperCase();
      if (isBlocking([upper, ...args])) return block(upper, args);
      try {
        return Promise.resolve(run(command, args));
      } catch (error) {
        return Promise.reject(error);
      } finally {
        serveBlocked();
      }
    },
    block([command, ...args]: Command, options: BlockOptions): Promise<RedisReply> {
      if (options.signal.aborted) return Promise.resolve(null);
      countTrip(counters, 1);
      const upper = command.toUpperCase();
      if (isBlocking([upper, ...args])) return block(upper, args, options.signal);
      return Promise.reject(
        new TransportError(
          "command",
          `Cannot block on ${command}: the memory transport blocks on ${[...BLOCKING]} and XREAD ... BLOCK`,
          { maybeApplied: false },
        ),
      );
    },
    // Requests apply at once, as they are called: there is nothing to abort.
    withSignal(): Transport {
      return transport;
    },
    pipeline(commands: readonly Command[], options = {}): Promise<RedisReply[]> {
      if (commands.length === 0) return Promise.resolve([]);
      countTrip(counters, commands.length);
      if (options.atomic) {
        // MULTI refuses to queue an unknown command or a wrong arity, and EXEC
        // then discards everything. Other errors surface at EXEC, per command.
        for (const [name, ...args] of commands) {
          const problem = store.check(name, args);
          if (problem) {
            return Promise.reject(
              new TransportError("command", `EXECABORT Transaction discarded because of previous errors: ${problem}`),
            );
          }
        }
      }
      const replies: RedisReply[] = [];
      let failure: unknown;
      for (const [name, ...args] of commands) {
        // Blocking commands do not block here, as inside MULTI: the store runs them once.
        try {
          replies.push(run(name, args));
        } catch (error) {
          failure ??= error;
          replies.push(null);
        }
        // Outside MULTI each command is its own; blocked clients may be served between them.
        if (!options.atomic) serveBlocked();
      }
      serveBlocked();
      return failure === undefined ? Promise.resolve(replies) : Promise.reject(failure);
    },
    script<R>(script: Script<R>, keys: readonly string[], args: readonly RedisArg[]): Promise<R> {
      countTrip(counters, 1);
      let reply: RedisReply;
      try {
        // Synchronous, so nothing interleaves: the same atomicity as Lua.
        reply = luaReply(script.twin({ call: (name, ...a) => run(name, a) }, keys.map(String), args.map(String)));
      } catch (error) {
        return Promise.reject(toTransportError(mapError(error)));
      } finally {
        serveBlocked();
      }
      try {
        return Promise.resolve(script.decode(reply));
      } catch (error) {
        return Promise.reject(error);
      }
    },
    close(): Promise<void> {
      closed = true;
      for (const w of waiters.splice(0)) w.cancel();
      return Promise.resolve();
    },
  };
  return transport;
}
