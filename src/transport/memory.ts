/**
 * The memory transport: the embedded default and the engine behind
 * `edgekiq/testing`. Redis's data types and commands in one JavaScript heap,
 * with real blocking pops, MULTI semantics for atomic pipelines, and scripts
 * run through their JavaScript twins. Web-standard only, so it runs on the
 * edge too. It is not the production path: nothing is shared between
 * processes and nothing survives a restart.
 *
 * @module
 */
import { toTransportError, TransportError } from "../errors.ts";
import { ReplyError, Store } from "./memory/store.ts";
import type { Script } from "./script.ts";
import { type Command, countTrip, newCounters, type RedisArg, type RedisReply, type Transport } from "./transport.ts";

interface Waiter {
  keys: string[];
  /** Tries to serve this waiter; true when done. */
  serve(): boolean;
  timer?: ReturnType<typeof setTimeout>;
}

const BLOCKING = new Set(["BRPOP", "BLPOP", "BLMOVE", "BRPOPLPUSH"]);

/**
 * Creates a memory transport with an empty keyspace. Share one instance
 * between a client and a worker in one program.
 *
 * Pending blocking pops resolve to `null` (a timeout) when the transport is
 * closed, so a closing worker is never left hanging and no timer stays open.
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
  let waiters: Waiter[] = [];
  let closed = false;

  // A push wakes the oldest waiter on that key first, as Redis serves
  // blocked clients in arrival order.
  store.onPush = (key) => {
    if (waiters.length === 0) return;
    queueMicrotask(() => {
      for (const w of waiters.slice()) {
        if (w.keys.includes(key) && w.serve()) waiters = waiters.filter((x) => x !== w);
      }
    });
  };

  const run = (command: string, args: RedisArg[]): RedisReply => {
    try {
      return store.exec(command, args);
    } catch (error) {
      throw error instanceof ReplyError ? toTransportError(error) : error;
    }
  };

  const block = (command: string, args: RedisArg[]): Promise<RedisReply> => {
    const a = args.map(String);
    const isMove = command === "BLMOVE" || command === "BRPOPLPUSH";
    const timeout = Number(a[a.length - 1]);
    if (!Number.isFinite(timeout) || timeout < 0) {
      return Promise.reject(new TransportError("command", "ERR timeout is not a float or out of range"));
    }
    const keys = isMove ? [a[0]] : a.slice(0, -1);
    const immediate = run(command, args);
    if (immediate !== null || closed) return Promise.resolve(immediate);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        keys,
        serve() {
          if (closed) {
            clearTimeout(waiter.timer);
            resolve(null);
            return true;
          }
          if (store.firstNonEmpty(keys) === undefined) return false;
          clearTimeout(waiter.timer);
          try {
            resolve(run(command, args));
          } catch (error) {
            reject(error);
          }
          return true;
        },
      };
      if (timeout > 0) {
        waiter.timer = setTimeout(() => {
          waiters = waiters.filter((x) => x !== waiter);
          resolve(null);
        }, timeout * 1000);
      }
      waiters.push(waiter);
    });
  };

  const transport: Transport = {
    kind: "memory",
    blocking: true,
    counters,
    call(command, ...args) {
      countTrip(counters, 1);
      const cmd = command.toUpperCase();
      if (BLOCKING.has(cmd)) return block(cmd, args);
      try {
        return Promise.resolve(run(command, args));
      } catch (error) {
        return Promise.reject(error);
      }
    },
    pipeline(commands: readonly Command[], options = {}) {
      countTrip(counters, commands.length);
      if (options.atomic) {
        // MULTI: a command Redis would refuse to queue aborts the whole EXEC.
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
        try {
          replies.push(run(name, args));
        } catch (error) {
          failure ??= error;
          replies.push(null);
        }
      }
      return failure ? Promise.reject(failure) : Promise.resolve(replies);
    },
    script<R>(script: Script<R>, keys: readonly string[], args: readonly RedisArg[]): Promise<R> {
      countTrip(counters, 1);
      try {
        const reply = script.twin({ call: (cmd, ...a) => run(cmd, a) }, keys.map(String), args.map(String));
        return Promise.resolve(script.decode(reply));
      } catch (error) {
        return Promise.reject(error instanceof TransportError ? error : toTransportError(error));
      }
    },
    close() {
      closed = true;
      const pending = waiters;
      waiters = [];
      for (const w of pending) w.serve();
      return Promise.resolve();
    },
  };
  return transport;
}
