/**
 * Leader election (Sidekiq Enterprise's Senate) as a feature: one worker
 * process of a fleet is the leader at a time, holding a lease in Redis that
 * it renews with every heartbeat. The lease is a `PX` expiry, so Redis's
 * clock decides when it runs out, and each process measures its own belief
 * with its monotonic clock from before it asked: no wall clock is compared
 * with another's, so skewed clocks cannot make two leaders. Each new leader
 * gets a term number one higher than the last (a fencing token) for writes
 * that must refuse a deposed leader. See docs/operations.md.
 *
 * @module
 */
import { ConfigError } from "../../errors.ts";
import { describeValue } from "../../describe_value.ts";
import { COMPARE_AND_DELETE } from "../../scripts/compare_and_delete.ts";
import type { FeatureContext } from "../../server/worker_feature.ts";
import type { Feature } from "../feature.ts";
import { LEADER_CLAIM } from "./claim_script.ts";

/** Options for {@link leaderElection}. */
export interface LeaderElectionOptions {
  /**
   * The election's name: processes with the same name (and key prefix)
   * elect one leader among them. Default `"default"`. Several elections in
   * one worker need different names.
   */
  name?: string;
  /**
   * Seconds a lease lasts without renewal (default 30): the longest a fleet
   * goes without a leader after the leader is killed. It is renewed with
   * each heartbeat, so make it at least three heartbeat intervals (10 s by
   * default, 20 s over HTTP): a renewal that fails then has a second chance.
   */
  lease?: number;
}

/** One process's time as leader. */
export interface LeaderTerm {
  /**
   * The term number: one higher for every new leader, never reused (a
   * fencing token). Store it with what the leader writes, and refuse a
   * write carrying a lower one: a leader that stalled past its lease
   * learns it lost only when it wakes.
   */
  readonly token: number;
  /** Aborts when this process stops being leader (lease lost or run out, worker stopping). */
  readonly signal: AbortSignal;
}

/**
 * Called when this process becomes leader. It may return a function, called
 * when the term ends (as `signal` aborts).
 */
export type LeaderCallback = (term: LeaderTerm) => void | (() => void) | Promise<void | (() => void)>;

/** The leader election feature: pass it to `createWorker({ features })`, then ask it. */
export interface LeaderElection extends Feature {
  /** Whether this process is the leader now (its lease cannot have run out, by its own monotonic clock). */
  isLeader(): boolean;
  /** The current term's fencing token while leader, else undefined. */
  readonly term: number | undefined;
  /**
   * Runs `fn` each time this process becomes leader (at once if it is
   * already). Returns a function that unsubscribes (and runs the off-callback
   * `fn` returned, if its term is still on).
   */
  onLeader(fn: LeaderCallback): () => void;
}

/**
 * How much of a lease a holder trusts: Redis's clock and this process's may
 * run at slightly different rates (Redlock's allowance: 1%), and a
 * millisecond of rounding.
 */
const DRIFT = 0.01;
const MARGIN_MS = 2;

interface Term {
  readonly token: number;
  readonly controller: AbortController;
  validUntil: number;
  readonly offs: Map<LeaderCallback, () => void>;
}

/**
 * Creates a leader election. The lease is taken at `worker.run()` (before
 * any job is fetched), renewed on every heartbeat, and given up at stop, so
 * another process takes over at once; after a SIGKILL the others take over
 * when the lease runs out (each waits for exactly that: the holder's
 * remaining time comes back with every failed claim). One script call per
 * heartbeat; nothing at all for a worker that does not use it.
 *
 * @example
 * ```ts
 * const leader = leaderElection({ lease: 30 });
 * const worker = createWorker({ transport, jobs, features: [leader] });
 * leader.onLeader(({ token, signal }) => {
 *   const timer = setInterval(() => reconcile({ fencingToken: token }), 60_000);
 *   return () => clearInterval(timer); // the term ended
 * });
 * await worker.run();
 * if (leader.isLeader()) console.log("leading term", leader.term);
 * ```
 */
export function leaderElection(options: LeaderElectionOptions = {}): LeaderElection {
  const name = options.name ?? "default";
  if (typeof name !== "string" || !/^[^\s|]{1,100}$/.test(name)) {
    throw new ConfigError(
      `Cannot create leader election as 'name' must be 1 to 100 characters without spaces or '|': current value is ${
        describeValue(name)
      }`,
    );
  }
  const leaseSeconds = options.lease ?? 30;
  if (typeof leaseSeconds !== "number" || !(leaseSeconds >= 0.1 && leaseSeconds <= 86_400)) {
    throw new ConfigError(
      `Cannot create leader election as 'lease' must be from 0.1 to 86400 seconds: current value is ${
        describeValue(leaseSeconds)
      }`,
    );
  }
  const leaseMs = Math.round(leaseSeconds * 1000);
  const listeners = new Set<LeaderCallback>();
  let ctx: FeatureContext | undefined;
  let candidate = "";
  let term: Term | undefined;
  /** The last term this process held in Redis: what it releases at stop. */
  let heldToken: number | undefined;
  let claiming: Promise<void> | undefined;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let expiryTimer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  let lastBeat: number | undefined;
  let warned = false;
  const report = (error: unknown, what: string) => ctx?.onError(error, { context: `leader election ${name}: ${what}` });

  const call = (t: Term, fn: LeaderCallback) => {
    const keep = (off: unknown) => {
      if (typeof off !== "function") return;
      if (term === t && listeners.has(fn)) t.offs.set(fn, off as () => void);
      else runOff(off as () => void);
    };
    try {
      const result = fn({ token: t.token, signal: t.controller.signal });
      if (result instanceof Promise) result.then(keep, (error) => report(error, "onLeader callback"));
      else keep(result);
    } catch (error) {
      report(error, "onLeader callback");
    }
  };
  const runOff = (off: () => void) => {
    try {
      off();
    } catch (error) {
      report(error, "onLeader off-callback");
    }
  };
  const end = (t: Term) => {
    if (term !== t) return;
    term = undefined;
    clearTimeout(expiryTimer);
    t.controller.abort(new Error(`no longer the leader of '${name}' (term ${t.token})`));
    for (const off of t.offs.values()) runOff(off);
    t.offs.clear();
  };
  const armExpiry = (t: Term) => {
    clearTimeout(expiryTimer);
    // The belief ends on its own when no renewal comes in time.
    expiryTimer = setTimeout(() => {
      if (performance.now() >= t.validUntil) end(t);
      else armExpiry(t);
    }, Math.max(0, t.validUntil - performance.now()));
  };
  const claim = (): Promise<void> => {
    if (stopped || !ctx) return Promise.resolve();
    return claiming ??= (async () => {
      const { transport, keys } = ctx!;
      const sentAt = performance.now();
      try {
        const reply = await transport.script(LEADER_CLAIM, [keys.leader(name), keys.leaderTerm(name)], [
          candidate,
          leaseMs,
        ]);
        if (reply.held) heldToken = reply.term; // released at stop, even if stop came while this was out
        if (stopped) return;
        clearTimeout(retryTimer);
        if (reply.held) {
          // Redis set the expiry after `sentAt`, so the lease outlives this in real time.
          const validUntil = sentAt + leaseMs * (1 - DRIFT) - MARGIN_MS;
          if (term && term.token === reply.term && performance.now() < term.validUntil) term.validUntil = validUntil;
          else {
            if (term) end(term);
            const fresh: Term = { token: reply.term, controller: new AbortController(), validUntil, offs: new Map() };
            term = fresh;
            for (const fn of [...listeners]) if (term === fresh) call(fresh, fn);
          }
          if (term) armExpiry(term);
        } else {
          if (term) end(term);
          // Be there when the holder's lease runs out (a SIGKILLed leader's, say).
          if (reply.ttlMs > 0) retryTimer = setTimeout(() => void claim(), reply.ttlMs + 1);
        }
      } catch (error) {
        // The belief runs out on its own (armExpiry); the next beat asks again.
        report(error, "claim");
      } finally {
        claiming = undefined;
      }
    })();
  };

  const feature: LeaderElection = {
    name: name === "default" ? "leader" : `leader:${name}`,
    isLeader: () => term !== undefined && performance.now() < term.validUntil,
    get term() {
      return feature.isLeader() ? term!.token : undefined;
    },
    onLeader(fn) {
      if (typeof fn !== "function") {
        throw new ConfigError(
          `Cannot subscribe to leadership as the callback must be a function: current value is ${describeValue(fn)}`,
        );
      }
      listeners.add(fn);
      if (term && feature.isLeader()) call(term, fn);
      return () => {
        listeners.delete(fn);
        const off = term?.offs.get(fn);
        if (off) {
          term!.offs.delete(fn);
          runOff(off);
        }
      };
    },
    async start(context) {
      ctx = context;
      stopped = false;
      candidate = context.identity ?? crypto.randomUUID();
      await claim();
    },
    async beat(context) {
      ctx = context;
      const now = performance.now();
      if (lastBeat !== undefined && !warned && (now - lastBeat) * 2 > leaseMs) {
        warned = true;
        context.logger.warn(
          `leader election '${name}': the lease (${leaseSeconds} s) is shorter than two heartbeats (${
            Math.round(now - lastBeat) / 1000
          } s apart): leadership lapses whenever one renewal is late; make 'lease' at least three heartbeat intervals`,
        );
      }
      lastBeat = now;
      await claim();
    },
    async stop(context) {
      stopped = true;
      clearTimeout(retryTimer);
      if (term) end(term);
      await claiming;
      if (heldToken === undefined) return;
      const value = `${heldToken}|${candidate}`;
      heldToken = undefined;
      // Given up at once, so another process takes over now rather than when the lease runs out.
      await context.transport.script(COMPARE_AND_DELETE, [context.keys.leader(name)], [value])
        .catch((error) => report(error, "release"));
    },
  };
  return feature;
}
