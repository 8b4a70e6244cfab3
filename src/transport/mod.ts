/**
 * `edgekiq/transport`: for those who write a Redis transport (a client this
 * package has no adapter for). Implement {@link Transport}, map the client's
 * errors with {@link toTransportError} (so the engine tells a lost reply
 * from a refused command), count with {@link newCounters}, run scripts with
 * {@link runScript} (EVALSHA, falling back to EVAL on NOSCRIPT), and pass
 * the conformance suite in the repository's `test/transport/`.
 *
 * @example
 * ```ts
 * import { newCounters, runScript, toTransportError, type Transport } from "edgekiq/transport";
 * const counters = newCounters();
 * const send = (command: string, ...args: (string | number)[]) =>
 *   client.send(command, args).catch((e) => { throw toTransportError(e); });
 * const transport: Transport = {
 *   kind: "my-client", blocking: false, ordered: true, counters,
 *   call: send,
 *   pipeline: (commands) => Promise.all(commands.map(([c, ...a]) => send(c, ...a))),
 *   script: (script, keys, args) => runScript(send, script, keys, args),
 *   block: () => Promise.reject(new Error("no blocking commands")),
 *   close: () => client.close(),
 * };
 * ```
 *
 * @module
 */
export { newCounters } from "./transport.ts";
export type {
  BlockOptions,
  BlockThenReplies,
  Command,
  PipelineOptions,
  PrimaryReply,
  RedisArg,
  RedisReply,
  ScriptCall,
  Transport,
  TransportCounters,
} from "./transport.ts";
export { toTransportError, TransportError } from "./transport_error.ts";
export type { TransportErrorKind, TransportErrorOptions } from "./transport_error.ts";
export { defineScript, runScript } from "./script.ts";
export type { Script, ScriptRedis, ScriptTwin } from "./script.ts";
