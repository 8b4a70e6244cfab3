/**
 * The open-loop producer and the latency summary shared by the Node latency
 * children (edgekiq's and BullMQ's; Sidekiq's Ruby twin is in
 * sidekiq_openloop.rb). Plain JavaScript so BullMQ's script runs on bare Node.
 *
 * Open loop: job i is due at start + i / rate whatever the system under test
 * does. A producer that waited for completions (closed loop) would slow down
 * exactly when the system does and hide its queueing delay. Each tick pushes
 * every job that has come due as one bulk push, stamped with the time it was
 * pushed; the worker measures push-to-start from that stamp. How late each
 * push was against its schedule is reported too: a producer that could not
 * keep its schedule (the machine was saturated) says so.
 */

/** Epoch milliseconds with sub-millisecond precision, comparable across processes on one machine. */
export function epochMs() {
  return performance.timeOrigin + performance.now();
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Pushes `rate` jobs a second for `seconds`; `push(batch)` sends a batch of
 * `[pushedAtEpochMs, counted]` argument pairs (counted is 0 during the first
 * `warmupSeconds`). With `preludeJobs`, that many uncounted jobs go first at
 * `preludeRate` a second: a low rate warms a JIT-compiled worker up slowly
 * (at 200 jobs/s V8 was still compiling the worker's hot path after a few
 * seconds, and its compiles were the p99), while a long-running worker is
 * warm. At most `maxInFlight` pushes are outstanding; waits at most 30 s for
 * the last ones.
 */
export async function openLoop(
  { rate, seconds, warmupSeconds, push, maxInFlight = 256, preludeJobs = 0, preludeRate },
) {
  const prelude = preludeJobs > 0 ? preludeJobs : 0;
  const fast = preludeRate ?? rate;
  const total = prelude + Math.max(1, Math.round(rate * seconds));
  const warm = prelude + Math.round(rate * warmupSeconds);
  const start = epochMs() + 50;
  // When job i is due: the prelude's at its own rate, then the rest at `rate`.
  const dueAt = (i) =>
    i < prelude ? start + (i * 1000) / fast : start + (prelude * 1000) / fast + ((i - prelude) * 1000) / rate;
  // How many are due by `now` (one past the last due index).
  const dueBy = (now) => {
    const inPrelude = Math.floor(((now - start) * fast) / 1000) + 1;
    if (inPrelude <= prelude) return Math.max(0, inPrelude);
    return prelude + Math.floor(((now - dueAt(prelude)) * rate) / 1000) + 1;
  };
  const lags = [];
  let sent = 0;
  let inFlight = 0;
  let failure;
  while (sent < total) {
    if (failure) throw failure;
    const now = epochMs();
    const due = Math.min(total, dueBy(now));
    if (due > sent) {
      lags.push(now - dueAt(sent));
      const batch = [];
      for (let i = sent; i < due; i++) batch.push([now, i >= warm ? 1 : 0]);
      sent = due;
      inFlight++;
      push(batch).then(() => inFlight--, (error) => {
        inFlight--;
        failure ??= error;
      });
    }
    await sleep(Math.max(1, dueAt(sent) - epochMs()));
    for (let waited = 0; inFlight >= maxInFlight && waited < 30_000; waited++) await sleep(1);
  }
  for (let waited = 0; inFlight > 0 && waited < 30_000; waited++) await sleep(1);
  if (failure) throw failure;
  if (inFlight > 0) throw new Error(`${inFlight} pushes still outstanding after 30 s`);
  lags.sort((x, y) => x - y);
  return {
    jobs: total,
    counted: total - warm,
    batches: lags.length,
    lagP50Ms: round(percentile(lags, 50), 3),
    lagP99Ms: round(percentile(lags, 99), 3),
    lagMaxMs: round(lags[lags.length - 1], 3),
  };
}

/**
 * Collects push-to-start samples in a worker: `record(pushedAt, counted)`
 * at the start of each job; `done` settles once `jobs` have started.
 * `summary()` gives the percentiles and the rate the counted jobs arrived at.
 */
export function latencyRecorder(jobs) {
  const samples = [];
  let started = 0;
  let first = Infinity;
  let last = 0;
  let finish;
  const done = new Promise((resolve) => (finish = resolve));
  return {
    done,
    record(pushedAt, counted) {
      const now = epochMs();
      if (counted) {
        samples.push(now - pushedAt);
        first = Math.min(first, now);
        last = now;
      }
      if (++started === jobs) finish();
    },
    summary() {
      samples.sort((x, y) => x - y);
      return {
        samples: samples.length,
        p50: round(percentile(samples, 50), 3),
        p99: round(percentile(samples, 99), 3),
        p999: round(percentile(samples, 99.9), 3),
        max: round(samples[samples.length - 1] ?? NaN, 3),
        mean: round(samples.reduce((s, x) => s + x, 0) / samples.length, 3),
        achievedPerSec: last > first ? Math.round((samples.length - 1) / ((last - first) / 1000)) : null,
      };
    },
  };
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

function round(n, digits) {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
