/**
 * What the engine can do to one running job from outside it: ask it to stop
 * (a cancel from the API, say) and read the progress it reported. A job's
 * `ctx.stopping` is made on first use, joined to its capsule's (quiet, stop,
 * a drain's budget), so a job that never reads it costs nothing.
 *
 * @module
 */

/**
 * One running job's control.
 *
 * @example
 * ```ts
 * const control = new JobControl(capsuleStopping);
 * control.signal(); // the job's ctx.stopping
 * control.stop("cancelled by the API"); // aborts it
 * ```
 */
export class JobControl {
  #capsule: AbortSignal;
  #controller: AbortController | undefined;
  #forward: (() => void) | undefined;
  #stopped: string | undefined;
  /** The latest value the job reported with `ctx.progress()`. */
  progress: unknown = undefined;

  constructor(capsuleStopping: AbortSignal) {
    this.#capsule = capsuleStopping;
  }

  /** Whether the job was asked to stop on its own (not with its capsule). */
  get stopped(): string | undefined {
    return this.#stopped;
  }

  /** The job's `ctx.stopping`: aborts when its capsule stops or when {@link JobControl.stop} is called. */
  signal(): AbortSignal {
    if (this.#controller) return this.#controller.signal;
    const controller = this.#controller = new AbortController();
    if (this.#stopped !== undefined) controller.abort(new DOMException(this.#stopped, "AbortError"));
    else if (this.#capsule.aborted) controller.abort(this.#capsule.reason);
    else {
      this.#forward = () => controller.abort(this.#capsule.reason);
      this.#capsule.addEventListener("abort", this.#forward, { once: true });
    }
    return controller.signal;
  }

  /** Asks the job to stop: its `ctx.stopping` aborts with `reason` (now, or as soon as it reads it). */
  stop(reason: string): void {
    if (this.#stopped !== undefined) return;
    this.#stopped = reason;
    this.#controller?.abort(new DOMException(reason, "AbortError"));
  }

  /** The job ended: stop listening to its capsule. */
  dispose(): void {
    if (this.#forward) this.#capsule.removeEventListener("abort", this.#forward);
    this.#forward = undefined;
  }
}
