/**
 * The `batches` bench scenario (issue 27): the same backlog of no-op jobs
 * drained plain and in one batch (with a success callback), at concurrency
 * 10 and 100, and flows of 10 children each beside BullMQ's FlowProducer
 * doing the same, in the main bench's run (`test/bench/batches.ts` runs
 * each row, and also measures a 100k-job registration on its own).
 *
 *   npm run bench --silent -- --only batches [--jobs 100000]
 */
import { bullmqRow, type Context, edgekiqRow, NODE, type Planned, runRows, timeoutMs } from "./scenarios.ts";
import type { Section } from "./report.ts";

/**
 * Runs the rows of the `batches` scenario.
 *
 * @example
 * ```ts
 * const section = await batches({ url, jobs: 100_000, quick: false });
 * ```
 */
export function batches(ctx: Context): Promise<Section> {
  const jobs = String(ctx.jobs);
  // Flows of 10 children: 10,000 parents (110,000 jobs) with the default 100k jobs.
  const parents = String(Math.max(1, Math.round(ctx.jobs / 10)));
  const section: Section = {
    id: "batches",
    title: `batches and flows: ${ctx.jobs.toLocaleString("en-US")} no-op jobs plain and in one batch; ` +
      `${Number(parents).toLocaleString("en-US")} flows of 10 children`,
    metric: "jobsPerSec",
    rows: [],
  };
  const planned: Planned[] = [];
  for (const c of [10, 100]) {
    for (const figure of ["plain", "batch"]) {
      planned.push(edgekiqRow(NODE, "batches.ts", ["--figure", figure, "--jobs", jobs, "--concurrency", String(c)], {
        concurrency: c,
        label: `edgekiq node/ioredis ${figure === "plain" ? "plain jobs" : "one batch"} c=${c}`,
      }));
    }
  }
  planned.push(
    edgekiqRow(NODE, "batches.ts", ["--figure", "flow", "--parents", parents, "--children", "10"], {
      concurrency: 50,
      label: "edgekiq node/ioredis flows",
    }),
    {
      ...bullmqRow("bullmq-flow.mjs", ["--parents", parents, "--children", "10", "--concurrency", "50"], 50),
      label: "BullMQ 6 (node) FlowProducer",
    },
  );
  return runRows(ctx, section, planned, timeoutMs(ctx.jobs, 2000));
}
