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
 * Moves grouped jobs into their queues, `target` deep at most.
 *
 * @example
 * ```ts
 * const mover = new GroupMover(50);
 * await mover.move({ transport, keys: keys() }, "default"); // { moved: 50, ready: 12, queued: 50 }
 * ```
 */
export class GroupMover {
  readonly target: number;
  readonly #inflight = new Map<string, Promise<GroupMove>>();
  /** Per queue, the groups next in turn as the last move here left them. */
  readonly #next = new Map<string, readonly string[]>();

  constructor(target: number) {
    this.target = target;
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
    const ready = site.keys.groupsReady(queue);
    const known = this.#next.get(queue);
    const groups = known?.length ? known : await site.transport.call("ZRANGE", ready, 0, this.target - 1) as string[];
    if (!Array.isArray(groups) || groups.length === 0) return NOTHING;
    const keys = [site.keys.queue(queue), ready, ...groups.map((g) => site.keys.groupJobs(queue, g))];
    let result: GroupMove;
    try {
      result = await site.transport.script(GROUP_MOVE, keys, [this.target, this.target, ...groups]);
    } catch (error) {
      this.#next.delete(queue);
      throw error;
    }
    this.#next.set(queue, result.next);
    // Groups known from the last move may all have been served or paused since (by another process): read the turn
    // afresh when they moved nothing though the queue has room and groups have work.
    if (known?.length && result.moved === 0 && result.ready > 0 && result.queued < this.target) {
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
