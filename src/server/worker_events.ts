/**
 * A worker's lifecycle listeners: `on` subscribes, `emit` calls each in turn,
 * and a listener that throws is reported, never stops the others (or the
 * worker's shutdown). Shared by the plain worker and a sharded one.
 *
 * @module
 */
import type { WorkerEvent } from "./worker.ts";

/**
 * The listeners of one worker, by event.
 *
 * @example
 * ```ts
 * const events = new WorkerEvents((error, context) => console.error(context, error));
 * const off = events.on("startup", () => console.log("up"));
 * events.emit("startup");
 * off();
 * ```
 */
export class WorkerEvents {
  #listeners = new Map<WorkerEvent, Set<() => void>>();
  #onError: (error: unknown, context: Record<string, unknown>) => void;

  constructor(onError: (error: unknown, context: Record<string, unknown>) => void) {
    this.#onError = onError;
  }

  /** Subscribes `handler` to `event`; returns the unsubscribe function. */
  on(event: WorkerEvent, handler: () => void): () => void {
    let set = this.#listeners.get(event);
    if (!set) this.#listeners.set(event, set = new Set());
    set.add(handler);
    return () => set.delete(handler);
  }

  /** Calls every listener of `event`; one that throws goes to `onError`. */
  emit(event: WorkerEvent): void {
    for (const fn of this.#listeners.get(event) ?? []) {
      try {
        fn();
      } catch (error) {
        this.#onError(error, { context: `${event} event handler` });
      }
    }
  }
}
