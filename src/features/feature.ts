/**
 * The one contract every optional feature implements: a `Feature` is a
 * named object whose parts plug into the seams the core offers. A user
 * passes features once per client, worker, drain and dashboard
 * (`features: [uniqueJobs(), ...]`); the core never names a feature.
 *
 * The parts, and where each plugs in:
 *
 * | part | seam | used by |
 * | --- | --- | --- |
 * | `name` | one feature of a name per client/worker | all |
 * | `options` | typed job and push options, checked at `defineJob` and at push; payload fields it owns | client |
 * | `client` | client middleware around every push and move; may attach a write guard (`ctx.guard`) that composes with every other guard in one atomic script per batch | client |
 * | `entries` | entry ops applied atomically when the admin API deletes, enqueues or kills a job | admin API, dashboard |
 * | `receive` | sees (or rewrites, for the run only) a fetched job before its arguments are checked; may end it (`Discard`, `RunLater`; an error buries it) | worker, drain |
 * | `server` | server middleware around every `perform`; may throw `RunLater` to run the job later without a retry | worker, drain |
 * | `observe` | a synchronous notice of every job's outcome (counters) | worker, drain |
 * | `outcome` | writes made durable before a job is acknowledged (applied once; those of jobs finishing together may share a call) | worker, drain |
 * | `onDeath` | Sidekiq's death handler | worker, drain |
 * | `poll` | work on the poll cycle, woken by a due sorted set read inside the poll check | poller, `pollOnce`, cron routes |
 * | `watch` | a sorted set the heartbeat reads in its own script; its highest score is handed to `beat` | worker |
 * | `beat`, `start`, `stop` | work beside each heartbeat, before the first fetch, after the last job | worker (drain: `stop`) |
 * | `dashboard` | pages, their nav entry, their notices, buttons on the Busy page's running jobs, a section of a job's page | dashboard |
 * | `perShard` | says the feature is correct run in each shard of a sharded namespace on its own (else `shards` refuses it) | client, worker, drain |
 *
 * Each consumer names only its slice (`ClientFeature`, `WorkerFeature`,
 * `DashboardFeature`), so the layers below never import this folder; a
 * `Feature` is all of them. Typed options come from the root entry
 * point's `defineJob` and `createClient`, which combine the built-in
 * features' option types (no declaration merging: JSR forbids it).
 *
 * @module
 */
import type { WorkerFeature } from "../server/worker_feature.ts";
import type { DashboardFeature } from "../web/dashboard/dashboard_feature.ts";

/**
 * A feature: see the module documentation for its parts.
 *
 * @example
 * ```ts
 * const audit: Feature = {
 *   name: "audit",
 *   observe: (outcome) => log.info("job", { class: outcome.payload.class, kind: outcome.kind }),
 * };
 * createWorker({ transport, jobs, features: [audit] });
 * ```
 */
export interface Feature extends WorkerFeature, DashboardFeature {}
