/**
 * Profiling a job (Sidekiq 8's Profiles, with the runtime's own profiler
 * instead of Vernier): push a job with `profile: true` (or a label) and the
 * worker that runs it records a CPU profile of that run with `node:inspector`
 * (Node, Deno and Bun; not on the edge), stores it in Redis with a bounded
 * size and a TTL, and the dashboard lists profiles and downloads them as
 * `.cpuprofile` files that speedscope and Chrome DevTools open.
 *
 * A profile covers the whole process while the job runs (the inspector has
 * no per-task profiler): profile on a worker with low concurrency for a
 * clean picture. One profile at a time per process; a profiled job that
 * starts while another is being recorded runs unprofiled (and says so).
 *
 * @module
 */
import type { ClientMiddleware } from "../../client_middleware.ts";
import type { OptionRules } from "../../option_rules.ts";
import { currentRuntime } from "../../runtime/detect.ts";
import { hasUnsafeChars } from "../../sanitize.ts";
import type { CpuProfiler } from "../../runtime/runtime.ts";
import type { ServerMiddleware } from "../../server_middleware.ts";
import type { Feature } from "../feature.ts";
import { PROFILES_DASHBOARD } from "./profiles_dashboard.ts";
import { saveProfile } from "./profile_store.ts";

/** The job and push option: `true` to profile every run (labelled by class), or a label. */
export type ProfileOption = boolean | string;

/** The option profiling adds to `defineJob` and to a push. */
export interface ProfileJobOptions {
  /** Record a CPU profile of this job's runs: `true`, or a label shown on the Profiles page. */
  profile?: ProfileOption;
}

/** Options for {@link jobProfiles}. */
export interface JobProfilesOptions {
  /** Largest profile kept, bytes (a larger one is recorded as too large); default 4 MiB. */
  maxBytes?: number;
  /** Profiles kept, newest first; default 100. */
  keep?: number;
  /** Seconds a profile is kept; default 7 days. */
  ttlSeconds?: number;
  /** The profiler to use; default the runtime's (`node:inspector`). */
  profiler?: CpuProfiler;
}

const check = (value: unknown, fail: (what: string, value: unknown) => Error): ProfileOption => {
  if (typeof value === "boolean") return value;
  if (typeof value === "string" && value.length > 0 && value.length <= 100 && !hasUnsafeChars(value)) {
    return value;
  }
  throw fail("'profile' must be true, false or a label of 1 to 100 characters", value);
};

/** The rules of the `profile` option. */
export const PROFILE_OPTION_RULES: OptionRules = {
  feature: "jobProfiles()",
  job: { profile: { check } },
  push: { profile: check },
  fields: { profile: "use the push option 'profile'" },
};

/** The profiling feature. */
export interface JobProfiles extends Feature {
  readonly name: "profiles";
}

/**
 * Job profiling: pass it to the client (which marks the jobs to profile)
 * and the worker (which records them), and to the dashboard.
 *
 * @example
 * ```ts
 * const profiles = jobProfiles();
 * createClient({ transport, features: [profiles] }).push(SlowReport, [42], { profile: "mike" });
 * createWorker({ transport, jobs, concurrency: 1, features: [profiles] });
 * ```
 */
export function jobProfiles(options: JobProfilesOptions = {}): JobProfiles {
  const maxBytes = options.maxBytes ?? 4 * 1024 * 1024;
  const limits = { keep: options.keep ?? 100, ttlSeconds: options.ttlSeconds ?? 7 * 24 * 60 * 60 };
  let recording = false;
  let warned = false;

  const client: ClientMiddleware = Object.assign(
    (payload: Parameters<ClientMiddleware>[0], ctx: Parameters<ClientMiddleware>[1], next: () => Promise<void>) => {
      const profile = ctx.options?.profile ?? ctx.job?.options.profile;
      if (profile) payload.profile = profile === true ? payload.class : profile;
      return next();
    },
    {
      appliesTo: (job: { options: Record<string, unknown> } | undefined, push?: Readonly<Record<string, unknown>>) =>
        Boolean(push?.profile ?? job?.options.profile),
    },
  );

  const server: ServerMiddleware = async (_job, payload, _queue, next, tools) => {
    const label = payload.profile;
    if (typeof label !== "string" || label === "") return next();
    const runtime = currentRuntime();
    const profiler = options.profiler ?? runtime.profiler?.();
    if (!profiler || recording) {
      if (!profiler && !warned) {
        warned = true;
        tools.logger.warn("this runtime cannot record CPU profiles: profiled jobs run unprofiled", {
          runtime: runtime.key,
        });
      }
      return next();
    }
    recording = true;
    const startedAt = Date.now();
    const started = performance.now();
    let data: string | undefined;
    let note: string | undefined;
    try {
      await profiler.start();
    } catch (error) {
      recording = false;
      tools.logger.warn("could not start a CPU profile: the job runs unprofiled", { error: String(error) });
      return next();
    }
    try {
      await next();
    } finally {
      const ms = performance.now() - started;
      try {
        data = await profiler.stop();
        if (data.length > maxBytes) {
          note = `too large to keep: ${data.length} bytes (maxBytes ${maxBytes})`;
          data = undefined;
        }
      } catch (error) {
        note = `the profiler failed: ${String(error)}`;
      } finally {
        recording = false;
      }
      await saveProfile(tools, {
        jid: payload.jid,
        className: payload.class,
        label,
        startedAt,
        ms,
        runtime: runtime.key,
        note,
        data,
      }, limits).catch((error) => tools.logger.warn("could not store a CPU profile", { error: String(error) }));
    }
  };

  return Object.freeze(
    {
      name: "profiles",
      options: PROFILE_OPTION_RULES,
      client,
      server,
      dashboard: PROFILES_DASHBOARD,
    } as const,
  );
}
