/**
 * Jobs several test files need: one that succeeds and counts its runs, one
 * that always fails.
 */
import { defineJob, type Job } from "../../mod.ts";

/** A job named `name` that succeeds; `runs.count` says how often it ran. */
export function okJob(name = "Ok"): { job: Job<unknown[]>; runs: { count: number; jids: string[] } } {
  const runs = { count: 0, jids: [] as string[] };
  const job = defineJob({
    name,
    perform(ctx, ..._args: unknown[]) {
      runs.count++;
      runs.jids.push(ctx.jid);
    },
  });
  return { job, runs };
}

/** A job named `name` that always throws `message`, with `retry` as given (default none). */
export function failingJob(name = "Bad", options: { retry?: boolean | number; message?: string } = {}): Job<unknown[]> {
  return defineJob({
    name,
    retry: options.retry ?? false,
    perform(_ctx, ..._args: unknown[]) {
      throw new Error(options.message ?? "x");
    },
  });
}
