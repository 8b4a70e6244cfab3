/** Types for drain-figures.mjs (what the Node-side drain children report alike). */

/** CPU per job over the second half of a drain of `jobs`, and over all of it. */
export function cpuPerJob(jobs: number): {
  tick(done: number): void;
  result(): { cpuUsPerJob: number; cpuSystemUsPerJob: number; cpuUsPerJobWholeDrain: number };
};

/** Jobs/s and Redis µs per job for each `jobs / windows`-th of a drain. */
export function drainWindows(
  jobs: number,
  windows: number,
  redisCpuUs: () => Promise<number>,
): {
  start(): void;
  tick(done: number): void;
  report(): Promise<Array<{ jobsPerSec: number; redisUsPerJob: number }> | undefined>;
};
