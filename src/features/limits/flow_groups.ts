/**
 * The admin API over fair groups: the grouped queues, each group's backlog
 * and state, pause and resume.
 *
 * @module
 */
import type { Keys } from "../../keys.ts";
import type { Transport } from "../../transport/transport.ts";
import { GROUP_PAUSE } from "./group_pause_script.ts";

/** One group of a grouped queue. */
export interface GroupInfo {
  readonly queue: string;
  readonly group: string;
  /** Jobs waiting on its list (not yet moved to the queue). */
  readonly backlog: number;
  readonly paused: boolean;
}

/**
 * Fair groups, for operators and the Limits page.
 *
 * @example
 * ```ts
 * const groups = new FlowGroups({ transport, keys: keys() });
 * await groups.pause("default", "tenant-42");
 * console.log(await groups.top("default", 10)); // the biggest backlogs
 * ```
 */
export class FlowGroups {
  readonly #transport: Transport;
  readonly #keys: Keys;

  constructor(site: { transport: Transport; keys: Keys }) {
    this.#transport = site.transport;
    this.#keys = site.keys;
  }

  /** The queues that have had grouped jobs. */
  async queues(): Promise<string[]> {
    const names = await this.#transport.call("SMEMBERS", this.#keys.groupedQueues) as string[];
    return (Array.isArray(names) ? names : []).sort();
  }

  /**
   * The groups of `queue` with work or paused, the biggest backlog first,
   * at most `limit` of them (reads one LLEN per group: meant for a page,
   * not a loop).
   */
  async top(queue: string, limit = 20): Promise<GroupInfo[]> {
    const ready = await this.#transport.call("ZRANGE", this.#keys.groupsReady(queue), 0, 999) as string[];
    const paused = await this.#transport.call("SMEMBERS", this.#keys.groupsPaused(queue)) as string[];
    const pausedSet = new Set(paused);
    const names = [...new Set([...ready, ...paused])];
    const sizes = await Promise.all(names.map((g) => this.#transport.call("LLEN", this.#keys.groupJobs(queue, g))));
    return names
      .map((group, i) => ({ queue, group, backlog: Number(sizes[i]) || 0, paused: pausedSet.has(group) }))
      .sort((a, b) => b.backlog - a.backlog || a.group.localeCompare(b.group))
      .slice(0, limit);
  }

  /** Pauses `group` of `queue`: its jobs stay on its list, and the others are served. Resolves to whether it changed. */
  async pause(queue: string, group: string): Promise<boolean> {
    return await this.#set(queue, group, "pause") === 1;
  }

  /** Resumes `group` of `queue`; resolves to whether it was paused. */
  async resume(queue: string, group: string): Promise<boolean> {
    return await this.#set(queue, group, "resume") === 1;
  }

  #set(queue: string, group: string, what: "pause" | "resume"): Promise<number> {
    const keys = [this.#keys.groupJobs(queue, group), this.#keys.groupsReady(queue), this.#keys.groupsPaused(queue)];
    return this.#transport.script(GROUP_PAUSE, keys, [group, what]);
  }
}
