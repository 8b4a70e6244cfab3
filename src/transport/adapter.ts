/**
 * The request core the network adapters share, so each adapter only says
 * how to send one command, a batch, and (TCP) a blocking command. The core
 * adds what must be the same everywhere: counting, the retry rule for lost
 * replies (see `transport.ts`), scripts by EVALSHA, abortable views
 * (`withSignal`), and blocking calls that resolve `null` when aborted.
 *
 * @module
 */
import { TransportError } from "./transport_error.ts";
import { runScript, type Script, scriptSha } from "./script.ts";
import { unsentBehind } from "./pool.ts";
import {
  type BlockOptions,
  type BlockThenReplies,
  type Command,
  countTrip,
  isBlockingCommand,
  isIdempotent,
  type PipelineOptions,
  type PrimaryReply,
  type RedisArg,
  type RedisReply,
  type ScriptCall,
  type Transport,
  type TransportCounters,
} from "./transport.ts";

/** What a network adapter provides; every method rejects with a `TransportError`. */
export interface Adapter {
  /** A short name: `ioredis`, `bun`, `upstash`. */
  readonly kind: string;
  /** See {@link Transport.ordered}. */
  readonly ordered?: boolean;
  /** See {@link Transport.keyspace}. */
  readonly keyspace?: "cluster";
  /** See {@link Transport.endpoint}: credentials masked. */
  readonly endpoint?: string;
  /** The adapter's counters; the core counts requests, the adapter what it sends by itself. */
  readonly counters: TransportCounters;
  /**
   * Sends one command. `signal`, when given, aborts the request: an HTTP
   * adapter cancels it; a TCP one may ignore it (the core stops waiting).
   */
  send(command: Command, signal?: AbortSignal): Promise<RedisReply>;
  /** Sends commands in one round trip, wrapped in MULTI/EXEC when `atomic`; see `pipelineReplies`. */
  batch(commands: readonly Command[], atomic: boolean, signal?: AbortSignal): Promise<RedisReply[]>;
  /** Runs a blocking command (see {@link Transport.block}); absent on HTTP. */
  block?(command: Command, signal: AbortSignal): Promise<RedisReply>;
  /**
   * Runs a blocking command with `then` right behind it on the same
   * connection (see {@link Transport.blockThen}): the blocking command's
   * reply, and how `then` settled. Optional.
   */
  blockThen?(
    command: Command,
    then: Command,
    signal: AbortSignal,
  ): Promise<[RedisReply, PromiseSettledResult<RedisReply>]>;
  /** See {@link Transport.eachPrimary}: only a cluster's adapter has it. */
  eachPrimary?(command: Command): Promise<PrimaryReply[]>;
  /** Closes every connection; pending blocking calls reject. */
  close(): Promise<void>;
}

/**
 * Builds a {@link Transport} over an adapter.
 *
 * @example
 * ```ts
 * return adapterTransport({ kind: "mine", counters: newCounters(), send, batch, close });
 * ```
 */
export function adapterTransport(adapter: Adapter): Transport {
  return view(adapter, { closed: false }, undefined);
}

/**
 * A signal that never fires, for blocking calls made through `call()`. Made
 * on first use: workerd forbids creating one at module scope.
 */
let never: AbortSignal | undefined;

function view(adapter: Adapter, state: { closed: boolean }, signal: AbortSignal | undefined): Transport {
  const counters = adapter.counters;

  // One request (a command, a batch, one EVALSHA): counted per attempt, and
  // sent a second time only when idempotent and its reply may have been lost.
  const request = async <T>(what: string, size: number, idempotent: boolean, send: () => Promise<T>): Promise<T> => {
    for (let attempt = 0;; attempt++) {
      if (signal?.aborted) throw aborted(what, signal, false);
      countTrip(counters, size);
      try {
        return await untilAborted(send(), what, signal);
      } catch (error) {
        const retry = attempt === 0 && idempotent && error instanceof TransportError &&
          error.kind === "connection" && error.maybeApplied && !state.closed && !signal?.aborted;
        if (!retry) throw error;
      }
    }
  };

  const send = (command: Command, idempotent = isIdempotent([command])): Promise<RedisReply> =>
    request(command[0].toUpperCase(), 1, idempotent, () => adapter.send(command, signal));

  const block = (command: Command, options: BlockOptions): Promise<RedisReply> => {
    if (!adapter.block) {
      return Promise.reject(
        new TransportError(
          "command",
          `Cannot run ${command[0]} over HTTP: the ${adapter.kind} transport does not block (blocking is false)`,
          { maybeApplied: false },
        ),
      );
    }
    const combined = signal ? anySignal(signal, options.signal) : options.signal;
    if (combined.aborted) return Promise.resolve(null);
    countTrip(counters, 1);
    return adapter.block(command, combined);
  };

  const blockThen = async <R>(
    command: Command,
    then: ScriptCall<R>,
    options: BlockOptions,
  ): Promise<BlockThenReplies<R>> => {
    const combined = signal ? anySignal(signal, options.signal) : options.signal;
    const sha = await scriptSha(then.script);
    let settled: PromiseSettledResult<RedisReply>;
    let reply: RedisReply = null;
    if (combined.aborted) {
      settled = unsentBehind(then.script.name);
    } else {
      countTrip(counters, 2);
      const evalsha: Command = ["EVALSHA", sha, then.keys.length, ...then.keys, ...then.args];
      [reply, settled] = await adapter.blockThen!(command, evalsha, combined);
    }
    let after: Promise<R>;
    if (settled.status === "fulfilled") {
      const value = settled.value;
      after = Promise.resolve().then(() => then.script.decode(value));
    } else if (settled.reason instanceof TransportError && settled.reason.kind === "noscript") {
      // Never ran (the server lost its scripts: a restart, SCRIPT FLUSH): EVAL runs it and loads it again.
      const evalCommand: Command = ["EVAL", then.script.lua, then.keys.length, ...then.keys, ...then.args];
      after = send(evalCommand, then.script.idempotent).then((reply) => then.script.decode(reply));
    } else {
      after = Promise.reject(settled.reason);
    }
    // Handled here too, so a caller that gave up on the reply cannot leave an unhandled rejection behind.
    after.catch(() => {});
    return { reply, after };
  };

  return {
    kind: adapter.kind,
    blocking: adapter.block !== undefined,
    ordered: adapter.ordered,
    endpoint: adapter.endpoint,
    ...(adapter.keyspace ? { keyspace: adapter.keyspace } : {}),
    counters,
    call(command: string, ...args: RedisArg[]): Promise<RedisReply> {
      if (isBlockingCommand([command, ...args])) {
        return block([command, ...args], { signal: never ??= new AbortController().signal });
      }
      return send([command, ...args]);
    },
    block,
    ...(adapter.blockThen ? { blockThen } : {}),
    pipeline(commands: readonly Command[], options: PipelineOptions = {}): Promise<RedisReply[]> {
      if (commands.length === 0) return Promise.resolve([]);
      const atomic = options.atomic === true;
      return request(
        `${atomic ? "MULTI block" : "pipeline"} of ${commands.length}`,
        commands.length,
        isIdempotent(commands),
        () => adapter.batch(commands, atomic, signal),
      );
    },
    script<R>(script: Script<R>, keys: readonly string[], args: readonly RedisArg[]): Promise<R> {
      return runScript((name, ...a) => send([name, ...a], script.idempotent), script, keys, args);
    },
    withSignal(next: AbortSignal): Transport {
      return view(adapter, state, signal ? anySignal(signal, next) : next);
    },
    ...(adapter.eachPrimary ? { eachPrimary: adapter.eachPrimary } : {}),
    close(): Promise<void> {
      state.closed = true;
      return adapter.close();
    },
  };
}

function aborted(what: string, signal: AbortSignal, sent: boolean): TransportError {
  const reason = signal.reason instanceof Error ? signal.reason.message : String(signal.reason ?? "aborted");
  return new TransportError(
    "connection",
    sent
      ? `Cannot wait for the reply to ${what} any longer as its request was aborted (${reason}): it may have been applied`
      : `Cannot send ${what} as its request was aborted (${reason})`,
    { cause: signal.reason, maybeApplied: sent },
  );
}

/** Rejects as soon as `signal` fires; the request itself may still complete (and is then ignored). */
function untilAborted<T>(promise: Promise<T>, what: string, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(aborted(what, signal, true));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/**
 * A signal that fires when either fires: `AbortSignal.any` where the runtime
 * has it (Node 20.3+, Bun, Deno, workerd), else linked by hand.
 *
 * @example
 * ```ts
 * const both = anySignal(budget.signal, AbortSignal.timeout(10_000));
 * ```
 */
export function anySignal(a: AbortSignal, b: AbortSignal): AbortSignal {
  const any = (AbortSignal as { any?: (signals: AbortSignal[]) => AbortSignal }).any;
  if (any) return any([a, b]);
  const controller = new AbortController();
  for (const s of [a, b]) {
    if (s.aborted) {
      controller.abort(s.reason);
      break;
    }
    s.addEventListener("abort", () => controller.abort(s.reason), { once: true });
  }
  return controller.signal;
}
