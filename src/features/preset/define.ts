/**
 * `defineJob` and `defineIterableJob` as the root entry point exports them:
 * the core's definers with the built-in features' options, type-checked and
 * validated at definition (`defineJob({ unique: { for: -1 } })` fails there).
 *
 * @module
 */
import { type DefineIterableJob, iterableJobDefiner } from "../iterable/define_iterable_job.ts";
import { createJobDefiner, type DefineJob } from "../../job.ts";
import { BUILT_IN_OPTION_RULES, type BuiltInJobOptions } from "./built_in.ts";

/**
 * Defines a job. Options are validated here, so a typo fails at start-up,
 * not at 3 a.m.
 *
 * @example
 * ```ts
 * import * as v from "valibot";
 * const SendEmail = defineJob({
 *   name: "SendEmail",
 *   queue: "mailers",
 *   retry: 5,
 *   args: v.tuple([v.pipe(v.string(), v.email()), v.string()]),
 *   async perform(ctx, to, subject) {
 *     await fetch("https://mail.example/send", { method: "POST", body: JSON.stringify({ to, subject }), signal: ctx.signal });
 *   },
 * });
 * await SendEmail.performAsync(client, "ada@example.com", "Hello");
 * ```
 */
export const defineJob: DefineJob<BuiltInJobOptions> = createJobDefiner<BuiltInJobOptions>(BUILT_IN_OPTION_RULES);

/**
 * Defines an iterable job (Sidekiq 7.3's): a normal job whose `perform`
 * walks `each` and calls `perItem` for each item, saving its cursor as it
 * goes, so it survives deploys, shutdowns and serverless budgets.
 *
 * @example
 * ```ts
 * const Backfill = defineIterableJob({
 *   name: "Backfill",
 *   each: (ctx, cursor: number | null) => iterateRange({ start: cursor ?? 0, end: 1000 }),
 *   async perItem(ctx, id) { await reindex(id); },
 * });
 * ```
 */
export const defineIterableJob: DefineIterableJob<BuiltInJobOptions> = iterableJobDefiner(defineJob);
