/**
 * Drives the mover script (`GROUP_MOVE`) of grouped queues: moves the head
 * jobs of the next groups in turn into the queue in one script, which also
 * replies the groups next in turn after it: the next move's candidates, so
 * a move is one round trip, not a read of the turn and then the script.
 * One move at a time per queue in a process; moves of many processes are
 * safe together (each is atomic, and a group read by one and emptied by
 * another is passed over).
 *
 * @module
 */
import type { Keys } from "../../keys.ts";
import type { Transport } from "../../transport/transport.ts";
import { GROUP_MOVE, type GroupMove } from "./group_move_script.ts";

/** Where a grouped queue lives. */
export interface GroupSite {
  readonly transport: Transport;
  readonly keys: Keys;
}

const NOTHING: GroupMove = { moved: 0, ready: 0, queued: 0, next: [] };

/**
 * How deep a move fills a grouped queue: a fixed number of jobs, or
 * `"auto"`: at least {@link AUTO_MIN_DEPTH}, and deep enough to cover what
 * this process takes from the queue in {@link AUTO_HORIZON_MS}.
 */
export type GroupDepth = number | "auto";

/** The shallowest an automatic depth goes: a group that just got work waits behind this many jobs at most. */
export const AUTO_MIN_DEPTH = 50;
/** The deepest any depth goes. */
export const MAX_DEPTH = 1000;
/**
 * An automatic depth covers this long of this process's take rate: a
 * queue kept shorter than a move's round trip and a fetch's worth runs dry
 * between moves (a fetch comes back short and waits for the next move), and
 * a deeper one delays a newly busy group by no more than this long.
 */
export const AUTO_HORIZON_MS = 2;

/**
 * An automatic depth's move names one group per this many jobs of depth, so
 * a move gives each group it names up to this many jobs (one per pass over
 * them) while every group is backlogged. Each group named costs Redis about
 * a microsecond whether or not it is served (its key and name parsed, its
 * turn read, its pop): with one per job a 1,000-group drain spent 4.6 µs of
 * Redis per job, with one per 8 jobs 3.7 µs, and ran 20% faster. The groups
 * not named wait for the next move, a millisecond or two away.
 */
export const AUTO_SHARE = 8;

/** A queue's take rate, as the moves here see it. */
interface Pace {
  taken: number;
  since: number;
  /** Jobs per ms, smoothed over moves. */
  rate: number;
  /** The depth it calls for. */
  depth: number;
}

/**
 * Moves grouped jobs into their queues, as deep as its {@link GroupDepth}.
 *
 * @example
 * ```ts
 * const mover = new GroupMover(50);
 * await mover.move({ transport, keys: keys() }, "default"); // { moved: 50, ready: 12, queued: 50 }
 * ```
 */
export class GroupMover {
  readonly #depth: GroupDepth;
  readonly #inflight = new Map<string, Promise<GroupMove>>();
  /** Per queue, the groups next in turn as the last move here left them, and how many were asked for. */
  readonly #next = new Map<string, { groups: readonly string[]; named: number }>();
  readonly #pace = new Map<string, Pace>();

  constructor(depth: GroupDepth) {
    this.#depth = depth;
  }

  /** How deep the next move of `queue` fills it. */
  target(queue: string): number {
    if (this.#depth !== "auto") return this.#depth;
    return this.#pace.get(queue)?.depth ?? AUTO_MIN_DEPTH;
  }

  /** A grouped job of `queue` was taken to run here (what an automatic depth follows). */
  took(queue: string): void {
    if (this.#depth !== "auto") return;
    const pace = this.#pace.get(queue);
    if (pace) pace.taken++;
    else this.#pace.set(queue, { taken: 1, since: performance.now(), rate: 0, depth: AUTO_MIN_DEPTH });
  }

  /** Folds the jobs taken since the last move into the rate. */
  #measure(queue: string): void {
    const pace = this.#pace.get(queue);
    if (!pace) return;
    const now = performance.now();
    const elapsed = now - pace.since;
    // A burst of moves a moment apart says little about a rate: wait for a millisecond of takes.
    if (elapsed < 1) return;
    const rate = pace.taken / elapsed;
    pace.rate = pace.rate === 0 ? rate : (pace.rate + rate) / 2;
    pace.taken = 0;
    pace.since = now;
    // A deeper move reads the turn afresh (the known candidates are as many as the move they came from named), so
    // the depth moves in steps of the least: it grows as soon as the rate calls for more, and shrinks only once the
    // rate calls for less than half of it.
    const want = pace.rate * AUTO_HORIZON_MS;
    const step = (n: number) => Math.min(MAX_DEPTH, Math.max(1, Math.ceil(n / AUTO_MIN_DEPTH)) * AUTO_MIN_DEPTH);
    if (want > pace.depth) pace.depth = step(want);
    else if (want < pace.depth / 2) pace.depth = step(want);
  }

  /**
   * How many groups a move of `queue` names: as many as its depth when the
   * depth is fixed (one job per group per move while every group is
   * backlogged), an eighth of it when automatic (see {@link AUTO_SHARE}).
   */
  candidates(queue: string): number {
    const target = this.target(queue);
    return this.#depth === "auto" ? Math.ceil(target / AUTO_SHARE) : target;
  }

  /** One move for `queue` (joins the one on its way, if any). */
  move(site: GroupSite, queue: string): Promise<GroupMove> {
    let pending = this.#inflight.get(queue);
    if (!pending) {
      pending = this.#move(site, queue).finally(() => this.#inflight.delete(queue));
      this.#inflight.set(queue, pending);
    }
    return pending;
  }

  async #move(site: GroupSite, queue: string): Promise<GroupMove> {
    this.#measure(queue);
    const target = this.target(queue);
    const named = this.candidates(queue);
    const ready = site.keys.groupsReady(queue);
    const kept = this.#next.get(queue);
    const known = kept && kept.named >= named ? kept.groups : undefined;
    const read = known?.length ? known : await site.transport.call("ZRANGE", ready, 0, named - 1) as string[];
    if (!Array.isArray(read) || read.length === 0) return NOTHING;
    const groups = read.length > named ? read.slice(0, named) : read;
    const keys = [site.keys.queue(queue), ready, ...groups.map((g) => site.keys.groupJobs(queue, g))];
    let result: GroupMove;
    try {
      result = await site.transport.script(GROUP_MOVE, keys, [target, named, ...groups]);
    } catch (error) {
      this.#next.delete(queue);
      throw error;
    }
    this.#next.set(queue, { groups: result.next, named });
    // Groups known from the last move may all have been served or paused since (by another process): read the turn
    // afresh when they moved nothing though the queue has room and groups have work.
    if (known?.length && result.moved === 0 && result.ready > 0 && result.queued < target) {
      this.#next.delete(queue);
      return await this.#move(site, queue);
    }
    return result;
  }

  /** Moves for every grouped queue (the `groupedQueues` set); resolves to the jobs moved. */
  async moveAll(site: GroupSite): Promise<number> {
    const queues = await site.transport.call("SMEMBERS", site.keys.groupedQueues) as string[];
    const moves = await Promise.all((Array.isArray(queues) ? queues : []).map((q) => this.move(site, q)));
    return moves.reduce((n, m) => n + m.moved, 0);
  }
}
