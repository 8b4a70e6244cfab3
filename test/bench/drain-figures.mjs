/**
 * Figures every Node-side drain child reports the same way (edgekiq's on
 * Node, Bun and Deno, and BullMQ's; Sidekiq's Ruby twins are in
 * sidekiq_common.rb). Plain JavaScript so BullMQ's script runs on bare Node.
 */
import process from "node:process";

const round = (n, digits) => Math.round(n * 10 ** digits) / 10 ** digits;

/**
 * CPU per job over a drain of `jobs`: call `tick(done)` after each job. The
 * figure is the second half's, so a short drain is not dominated by the
 * process's start (module compilation, the JIT warming up); the whole
 * drain's is reported beside it.
 */
export function cpuPerJob(jobs) {
  const start = process.cpuUsage();
  const half = Math.floor(jobs / 2);
  let mid = start;
  return {
    tick(done) {
      if (done === half) mid = process.cpuUsage();
    },
    result() {
      const end = process.cpuUsage();
      const n = jobs - half;
      return {
        cpuUsPerJob: round((end.user + end.system - mid.user - mid.system) / n, 2),
        cpuSystemUsPerJob: round((end.system - mid.system) / n, 2),
        cpuUsPerJobWholeDrain: round((end.user + end.system - start.user - start.system) / jobs, 2),
      };
    },
  };
}

/**
 * Drain windows: `start()` before the drain and `tick(done)` after each job
 * mark every `jobs / windows`-th job with the time and Redis's CPU then
 * (`redisCpuUs()`, read without waiting); `report()` gives jobs/s and Redis
 * µs/job per window (a backlog's start against its end). Nothing with 0 windows.
 */
export function drainWindows(jobs, windows, redisCpuUs) {
  const every = windows > 0 ? Math.ceil(jobs / windows) : 0;
  const marks = [];
  const mark = () => marks.push({ at: performance.now(), redisUs: redisCpuUs() });
  return {
    start: () => {
      if (every) mark();
    },
    tick: (done) => {
      if (every && (done % every === 0 || done === jobs)) mark();
    },
    async report() {
      if (!every) return undefined;
      const out = [];
      for (let i = 1; i < marks.length; i++) {
        const n = Math.min(every, jobs - (i - 1) * every);
        const us = (await marks[i].redisUs) - (await marks[i - 1].redisUs);
        out.push({
          jobsPerSec: round(n / ((marks[i].at - marks[i - 1].at) / 1000), 0),
          redisUsPerJob: round(us / n, 2),
        });
      }
      return out;
    },
  };
}
