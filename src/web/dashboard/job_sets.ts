/**
 * The three job-set pages (Retries, Scheduled, Dead) differ only in words
 * and in which actions they offer; this table says how.
 *
 * @module
 */
import type { JobSetName } from "../../api/sorted_set.ts";
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
  /** What the score means, as a column heading. */
  timeLabel: string;
  /** Default sort: soonest first for what is coming, newest first for the dead. */
  order: "asc" | "desc";
  /** Whether rows show the last error. */
  errors: boolean;
  /** Actions on selected rows and on one job, with their button labels. */
  entryActions: ReadonlyArray<{ action: EntryAction; label: string; danger?: boolean }>;
  /** Actions on everything in the set. */
  allActions: (size: number) => Array<ConfirmButton & { value: AllAction }>;
  /** What an empty set means. */
  empty: string;
}

const plural = (n: number, noun: string) => `${formatCount(n)} ${noun}${n === 1 ? "" : "s"}`;

/** The three kinds, by URL segment. */
export const JOB_SETS: Readonly<Record<"retries" | "scheduled" | "dead", JobSetKind>> = {
  retries: {
    section: "retries",
    set: "retry",
    title: "Retries",
    noun: "retry",
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
      { value: "delete", label: "Delete all", confirm: `Delete all ${plural(n, "retry")}?`, danger: true },
      { value: "kill", label: "Kill all", confirm: `Move all ${plural(n, "retry")} to the dead set?`, danger: true },
    ],
    empty: "Jobs that failed and have retries left wait here until their next attempt.",
  },
  scheduled: {
    section: "scheduled",
    set: "schedule",
    title: "Scheduled",
    noun: "scheduled job",
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
