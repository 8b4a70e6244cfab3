/**
 * A switchable transport view.
 *
 * @module
 */
import type { Script } from "./script.ts";
import type { BlockOptions, Command, PipelineOptions, RedisArg, Transport } from "./transport.ts";

/**
 * A transport view whose requests go to `target`, which can change while it
 * is in use: a serverless drain runs its jobs on a view cut off at the end of
 * its budget, and switches to the plain transport for what it must still do
 * then.
 *
 * @example
 * ```ts
 * const view = switchable(transport.withSignal?.(AbortSignal.timeout(25_000)) ?? transport);
 * // ... later
 * view.target = transport;
 * ```
 */
export function switchable(initial: Transport): Transport & { target: Transport } {
  const view = {
    target: initial,
    get kind() {
      return view.target.kind;
    },
    get blocking() {
      return view.target.blocking;
    },
    get ordered() {
      return view.target.ordered;
    },
    get counters() {
      return view.target.counters;
    },
    get endpoint() {
      return view.target.endpoint;
    },
    call: (command: string, ...args: RedisArg[]) => view.target.call(command, ...args),
    block: (command: Command, options: BlockOptions) => view.target.block(command, options),
    pipeline: (commands: readonly Command[], options?: PipelineOptions) => view.target.pipeline(commands, options),
    script: <R>(script: Script<R>, keys: readonly string[], args: readonly RedisArg[]) =>
      view.target.script(script, keys, args),
    close: () => view.target.close(),
  };
  return view;
}
