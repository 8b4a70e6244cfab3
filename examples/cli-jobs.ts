/**
 * A jobs module for the `edgekiq` command: every exported defineJob() result
 * is a job the worker runs, and `config` sets its defaults (flags win).
 *
 * ```sh
 * npx tsx src/cli.ts -r examples/cli-jobs.ts            # Node (bun / deno run -A work too)
 * npx tsx src/cli.ts enqueue Thumbnail --args '["cat.png", 128]'
 * npx tsx src/cli.ts enqueue Thumbnail --args '["dog.png", 64]' --in 10
 * npx tsx src/cli.ts stats
 * ```
 */
import * as v from "valibot";
import { defineJob } from "../mod.ts";

/** Pretends to resize an image; `enqueue` checks its arguments against the schema before they run. */
export const Thumbnail = defineJob({
  name: "Thumbnail",
  queue: "images",
  retry: 3,
  args: v.tuple([v.string(), v.pipe(v.number(), v.integer(), v.minValue(1))]),
  async perform(ctx, file, size) {
    await new Promise((resolve) => setTimeout(resolve, 50)); // the "work"
    ctx.logger.info("thumbnail made", { file, size });
  },
});

/** A job a Ruby app could push too: `Cleanup.perform_async` reaches it by its name. */
export const Cleanup = defineJob({
  name: "Cleanup",
  perform(ctx) {
    ctx.logger.info("cleaned up");
  },
});

/** Defaults for this worker; `-q`, `-c` and the `-C` config file override them. */
export const config = {
  queues: ["images,2", "default,1"],
  concurrency: 5,
};
