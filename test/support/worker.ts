/** Test defaults for workers: silent, no signal handlers, short blocking and timeouts. */
import { createWorker, silentLogger, type Transport, type Worker, type WorkerOptions } from "../../mod.ts";

export function testWorker(transport: Transport, options: Omit<WorkerOptions, "transport">): Worker {
  return createWorker({
    logger: silentLogger,
    handleSignals: false,
    poller: false,
    blockSeconds: 0.1,
    timeout: 5,
    ...options,
    transport,
  });
}
