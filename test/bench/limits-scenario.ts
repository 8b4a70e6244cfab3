/**
 * The `limits` bench scenario (issue 26): a concurrency-limited and a
 * rate-limited drain (limits far from being the bottleneck) beside the
 * unlimited one, and 1,000 groups x 100 jobs (with the default 100k jobs)
 * beside the plain queue, one worker at concurrency 10 each, with BullMQ's
 * plain drain and its rate-limited worker (`limiter`, the same 1,000,000
 * per second as edgekiq's rate row) in the same run.
 *
 *   npm run bench --silent -- --only limits [--quick]
 */
import { bullmqRow, type Context, edgekiqRow, NODE, type Planned, runRows, timeoutMs } from "./scenarios.ts";
import type { Section } from "./report.ts";

/**
 * Runs the rows of the `limits` scenario.
 *
 * @example
 * ```ts
 * const section = await limits({ url, jobs: 100_000, quick: false });
 * ```
 */
export function limits(ctx: Context): Promise<Section> {
  const section: Section = {
    id: "limits",
    title: `flow limits: drain ${ctx.jobs.toLocaleString("en-US")} no-op jobs, concurrency 10`,
    metric: "jobsPerSec",
    rows: [],
  };
  const groups = String(Math.max(1, Math.round(ctx.jobs / 100)));
  const planned: Planned[] = ["plain", "concurrency", "rate", "grouped"].map((mode) =>
    edgekiqRow(NODE, "edgekiq-limits.ts", ["--jobs", String(ctx.jobs), "--mode", mode, "--groups", groups], {
      concurrency: 10,
      label: `edgekiq node/ioredis ${mode === "grouped" ? `${groups} groups` : mode}`,
    })
  );
  planned.push({
    ...bullmqRow("bullmq-drain.mjs", ["--jobs", String(ctx.jobs), "--concurrency", "10"], 10),
    seed: true,
  }, {
    ...bullmqRow(
      "bullmq-drain.mjs",
      ["--jobs", String(ctx.jobs), "--concurrency", "10", "--limit-max", "1000000", "--limit-duration", "1000"],
      10,
    ),
    label: "BullMQ 6 (node) rate-limited worker",
    seed: true,
  });
  return runRows(ctx, section, planned, timeoutMs(ctx.jobs, 200));
}
