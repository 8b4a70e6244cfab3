/**
 * The wait a blocking fetch makes instead when every queue it would watch
 * is paused: as long as a block would have lasted (so an idle loop costs the
 * same), cut short by the same signal.
 *
 * @module
 */

/**
 * Waits `seconds`, or until `signal` aborts.
 *
 * @example
 * ```ts
 * if (watchable.length === 0) { await pausedWait(blockSeconds, signal); return []; }
 * ```
 */
export function pausedWait(seconds: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, seconds * 1000);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
