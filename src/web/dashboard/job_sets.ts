/**
 * The three job-set pages (Retries, Scheduled, Dead) differ only in words
 * and in which actions they offer; this table says how.
 *
 * @module
 */
import type { JobSetName } from "../../api/job_set.ts";
import { formatCount } from "./format.ts";
import type { Section } from "./view.ts";
import type { ConfirmButton } from "./widgets.tsx";

/** An action on selected rows or on one job. */
export type EntryAction = "retry" | "enqueue" | "delete" | "kill";
/** An action on the whole set. */
export type AllAction = "retry" | "delete" | "kill";

/** How one job set is shown and what can be done with it. */
export interface JobSetKind {
  /** The nav section and URL segment. */
  section: Extract<Section, "retries" | "scheduled" | "dead">;
  /** The Redis set. */
  set: JobSetName;
  /** Page heading. */
  title: string;
  /** One entry, in prose ("retry", "scheduled job", "dead job"). */
  noun: string;
  /** More than one, in prose ("retries", "scheduled jobs", "dead jobs"). */
  nouns: string;
  /** What the score means, as a column heading. */
  timeLabel: string;
  /** Default sort: soonest first for what is coming, newest first for the dead. */
  order: "asc" | "desc";
  /** Whether rows show the last error. */
  errors: boolean;
  /**
   * Actions on selected rows and on one job, with their button labels;
   * `danger` ones (delete, kill) ask first (see {@link entryQuestion}).
   */
  entryActions: ReadonlyArray<{ action: EntryAction; label: string; danger?: boolean }>;
  /** Actions on everything in the set. */
  allActions: (size: number) => Array<ConfirmButton & { value: AllAction }>;
  /** What an empty set means. */
  empty: string;
}

const plural = (n: number, one: string, many = `${one}s`) => `${formatCount(n)} ${n === 1 ? one : many}`;

/** The three kinds, by URL segment. */
export const JOB_SETS: Readonly<Record<"retries" | "scheduled" | "dead", JobSetKind>> = {
  retries: {
    section: "retries",
    set: "retry",
    title: "Retries",
    noun: "retry",
    nouns: "retries",
    timeLabel: "Next retry",
    order: "asc",
    errors: true,
    entryActions: [
      { action: "retry", label: "Retry now" },
      { action: "delete", label: "Delete", danger: true },
      { action: "kill", label: "Kill", danger: true },
    ],
    allActions: (n) => [
      { value: "retry", label: "Retry all", confirm: `Retry all ${plural(n, "job")} now?` },
      { value: "delete", label: "Delete all", confirm: `Delete all ${plural(n, "retry", "retries")}?`, danger: true },
      {
        value: "kill",
        label: "Kill all",
        confirm: `Move all ${plural(n, "retry", "retries")} to the dead set?`,
        danger: true,
      },
    ],
    empty: "Jobs that failed and have retries left wait here until their next attempt.",
  },
  scheduled: {
    section: "scheduled",
    set: "schedule",
    title: "Scheduled",
    noun: "scheduled job",
    nouns: "scheduled jobs",
    timeLabel: "When",
    order: "asc",
    errors: false,
    entryActions: [
      { action: "enqueue", label: "Add to queue" },
      { action: "delete", label: "Delete", danger: true },
    ],
    allActions: (n) => [
      { value: "delete", label: "Delete all", confirm: `Delete all ${plural(n, "scheduled job")}?`, danger: true },
    ],
    empty: "Jobs pushed with `in` or `at` wait here until they are due.",
  },
  dead: {
    section: "dead",
    set: "dead",
    title: "Dead",
    noun: "dead job",
    nouns: "dead jobs",
    timeLabel: "Died",
    order: "desc",
    errors: true,
    entryActions: [
      { action: "retry", label: "Retry now" },
      { action: "delete", label: "Delete", danger: true },
    ],
    allActions: (n) => [
      { value: "retry", label: "Retry all", confirm: `Retry all ${plural(n, "dead job")} now?` },
      { value: "delete", label: "Delete all", confirm: `Delete all ${plural(n, "dead job")}?`, danger: true },
    ],
    empty: "Jobs that ran out of retries or were killed are kept here for six months (at most 10,000).",
  },
};

/**
 * The question a destructive action on `n` entries asks first (Sidekiq's
 * "Are you sure you want to delete this job?"), or `undefined` for one that
 * does not ask (retry, add to queue). `n` of `"{n}"` leaves a place for the
 * page script, which counts the selected rows.
 *
 * @example
 * ```ts
 * entryQuestion(JOB_SETS.retries, "kill", 3); // "Are you sure you want to kill these 3 retries? They move to the Dead set."
 * ```
 */
export function entryQuestion(kind: JobSetKind, action: EntryAction, n: number | "{n}"): string | undefined {
  if (action !== "delete" && action !== "kill") return undefined;
  const which = n === 1 ? `this ${kind.noun}` : `these ${typeof n === "number" ? formatCount(n) : n} ${kind.nouns}`;
  const after = action === "kill" ? ` ${n === 1 ? "It moves" : "They move"} to the Dead set.` : "";
  return `Are you sure you want to ${action} ${which}?${after}`;
}

/**
 * The key that names one entry in URLs and forms: `<score>-<jid>`, as Sidekiq's Web UI.
 *
 * @example
 * ```ts
 * entryKey(1700000000.5, "2f8b0c4e9a1d3b5c7e9f0a1b"); // "1700000000.5-2f8b0c4e9a1d3b5c7e9f0a1b"
 * ```
 */
export function entryKey(score: number, jid: string): string {
  return `${score}-${jid}`;
}

/**
 * Reads an {@link entryKey}; `null` when it is not one.
 *
 * @example
 * ```ts
 * parseEntryKey("1700000000.5-abc"); // { score: 1700000000.5, jid: "abc" }
 * ```
 */
export function parseEntryKey(key: unknown): { score: number; jid: string } | null {
  if (typeof key !== "string" || key.length > 200) return null;
  const match = /^(\d+(?:\.\d+)?(?:e\+?\d+)?)-(\S+)$/i.exec(key);
  if (!match) return null;
  const score = Number(match[1]);
  return Number.isFinite(score) ? { score, jid: match[2] } : null;
}
