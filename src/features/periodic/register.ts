/**
 * `registerPeriodic()`: puts a process's declared schedules into Redis.
 *
 * Who owns what, and why removal and sharing both work:
 *
 * - Every registration has an **owner**. Each schedule's hash holds one
 *   lease per owner that declares it (`lease:<owner>` = expiry), and a
 *   schedule runs while one lease is unexpired. Leases are refreshed by the
 *   owner's processes (this function, every `ttl / 3`); when every process
 *   of an owner is gone, its leases run out and its schedules stop (the
 *   next claim drops them). Two apps sharing a Redis therefore never remove
 *   each other's schedules: each only ever touches its own leases.
 * - With an explicit `owner` (say the app's name), the newest schedule set
 *   wins at once: a process starting with a changed set replaces the owner's
 *   set, and a schedule removed from code stops at that moment (unless
 *   another owner declares it too). Processes still running the old code
 *   are told they are `superseded` when they refresh and write nothing, so a
 *   rolling deploy does not flip schedules back and forth; if the newer set's
 *   processes all die, its lease runs out and the older set takes over again
 *   (a rollback is simply the newest start).
 * - Without `owner`, the owner is the schedule set itself (`auto-<digest>`):
 *   every distinct set keeps its own lease, so apps and versions never
 *   interfere, and a schedule removed from code stops once the last process
 *   running the old code has been gone for `ttl` seconds.
 *
 * A schedule's timing and stored job follow the latest registration that
 * declares it; its paused state and last run survive deploys.
 *
 * @module
 */
import type { Client } from "../../client.ts";
import { ConfigError, EdgekiqError } from "../../errors.ts";
import { describeValue } from "../../describe_value.ts";
import { digest } from "./spec_digest.ts";
import { scoreArg } from "./lua_common.ts";
import { PERIODIC_REGISTER } from "./register_script.ts";
import { normalizeSchedules, type PeriodicSchedule } from "./schedule.ts";
import { firstTick } from "./ticks.ts";

/** Options for {@link registerPeriodic}. */
export interface RegisterPeriodicOptions {
  /**
   * Who declares these schedules: an app's name. With it, a deploy that
   * removes a schedule stops it at once; apps sharing a Redis give each its
   * own. Default: one owner per distinct schedule set (see the module doc).
   */
  owner?: string;
  /** Seconds an owner's lease lasts without a refresh; default 1800. Refreshed every `ttl / 3`. */
  ttl?: number;
  /** Now, epoch ms; default `Date.now()`. */
  now?: number;
  /** Send the registration even if this client refreshed it recently. */
  force?: boolean;
}

/** What {@link registerPeriodic} did. */
export interface RegisterPeriodicResult {
  /**
   * `registered` (written), `unchanged` (lease extended), `superseded`
   * (a newer set of this owner is live; nothing written) or `cached` (this
   * client refreshed it less than `ttl / 3` ago; no command sent).
   */
  status: "registered" | "unchanged" | "superseded" | "cached";
  /** The owner registered under. */
  owner: string;
  /** The schedule set's digest. */
  digest: string;
  /** The schedules' names. */
  names: string[];
  /** When (epoch ms) a call will next send anything. */
  refreshAt: number;
}

interface Memo {
  digest: string;
  refreshAt: number;
}

/** Per client: owner -> last registration, so repeated calls cost nothing. */
const memos = new WeakMap<Client, Map<string, Memo>>();

// deno-lint-ignore no-control-regex -- control characters are what it refuses
const OWNER = /^[^\s\x00-\x1f\x7f]{1,100}$/;

/**
 * Registers `schedules` for this process (idempotent). Call it at worker
 * start and then as often as you like (every poll cycle, every serverless
 * tick): a call within `ttl / 3` of the last one for the same client, owner
 * and set sends nothing; otherwise one command (the registration script),
 * two when an explicit owner's set changed and names must be removed.
 * Throws a `ConfigError` naming the schedule at fault before anything is
 * written.
 *
 * @example
 * ```ts
 * const periodic = [{ cron: "0 7 * * *", tz: "Europe/Berlin", job: Report, args: ["daily"] }];
 * await registerPeriodic(client, periodic, { owner: "billing" });
 * // then, each poll: await enqueueDuePeriodic({ client, schedules: periodic });
 * ```
 */
export async function registerPeriodic(
  client: Client,
  schedules: readonly PeriodicSchedule[],
  options: RegisterPeriodicOptions = {},
): Promise<RegisterPeriodicResult> {
  const ttl = options.ttl ?? 1800;
  if (!Number.isInteger(ttl) || ttl < 10) {
    throw new ConfigError(
      `Cannot register periodic schedules as 'ttl' must be whole seconds >= 10: current value is ${describeValue(ttl)}`,
    );
  }
  if (options.owner !== undefined && (typeof options.owner !== "string" || !OWNER.test(options.owner))) {
    throw new ConfigError(
      `Cannot register periodic schedules as 'owner' must be 1 to 100 characters without spaces: current value is ${
        describeValue(options.owner)
      }`,
    );
  }
  const list = await normalizeSchedules(schedules);
  const setDigest = digest(list.map((s) => `${s.name}\n${s.specDigest}`).sort().join("\n"));
  const owner = options.owner ?? `auto-${setDigest}`;
  const names = list.map((s) => s.name);
  const now = options.now ?? Date.now();
  const result = (status: RegisterPeriodicResult["status"], refreshAt: number): RegisterPeriodicResult => ({
    status,
    owner,
    digest: setDigest,
    names,
    refreshAt,
  });
  // An implicit owner with no schedules owns nothing: nothing to say.
  if (list.length === 0 && options.owner === undefined) return result("cached", Infinity);
  let byOwner = memos.get(client);
  if (!byOwner) memos.set(client, byOwner = new Map());
  const memo = byOwner.get(owner);
  if (!options.force && memo?.digest === setDigest && now < memo.refreshAt) return result("cached", memo.refreshAt);

  const k = client.keys;
  const nowS = now / 1000;
  const perSchedule = list.flatMap((s) => [
    s.name,
    s.specJson,
    s.specDigest,
    s.timingDigest,
    scoreArg(firstTick(s.spec, nowS, true)),
    scoreArg(firstTick(s.spec, nowS, false)),
  ]);
  // The first registration of this set by this client claims the owner;
  // later ones only refresh (and give way to a newer set).
  const mode = memo?.digest === setDigest ? "refresh" : "claim";
  let removed: string[] = [];
  for (let attempt = 0; attempt < 4; attempt++) {
    const reply = await client.transport.script(
      PERIODIC_REGISTER,
      [k.periodicDue, k.periodicOwner(owner), ...names.map(k.periodicSchedule), ...removed.map(k.periodicSchedule)],
      [
        mode,
        owner,
        setDigest,
        nowS,
        Math.floor(nowS + ttl),
        // The record outlives its lease a little; the lease, not the key, decides.
        ttl + 60,
        list.length,
        removed.length,
        ...perSchedule,
        ...removed,
      ],
    );
    if (reply.status !== "remove") {
      const refreshAt = now + (ttl * 1000) / 3;
      byOwner.set(owner, { digest: setDigest, refreshAt });
      return result(reply.status, refreshAt);
    }
    removed = reply.names;
  }
  throw new EdgekiqError(
    `Cannot register periodic schedules of owner '${owner}' as its schedule set kept changing under this call`,
  );
}
