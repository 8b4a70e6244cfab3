/**
 * `edgekiq top`'s screen as a pure function: data and view state in, one
 * line per terminal row out (text already fitted to the width, plus a
 * style). No I/O, so every layout rule is testable without a terminal; the
 * loop in `top.ts` paints the lines that changed.
 *
 * Every string that came from Redis (queue names, classes, errors, tags,
 * identities) is escaped with `sanitize` before it is measured: Redis is
 * shared, and a hostile name must not drive the terminal.
 *
 * @module
 */
import type { SortedEntry } from "../api/sorted_entry.ts";
import { sanitize } from "../sanitize.ts";
import { displayWidth, fitWidth } from "./text_width.ts";
import type { TopData } from "./top_data.ts";

/** The panes whose rows can be selected and acted on. */
export type Pane = "processes" | "retries" | "dead";

/** The panes in Tab order. */
export const PANES: readonly Pane[] = ["processes", "retries", "dead"];

/** What the person at the terminal has chosen and been told. */
export interface TopView {
  /** The pane the arrow keys and actions apply to. */
  pane: Pane;
  /** The selected row of each pane: a process index, or a rank in the set. */
  selected: Record<Pane, number>;
  /** The first rank shown of each set (the window read from Redis). */
  offset: { retries: number; dead: number };
  /** A question awaiting y/n (a destructive action). */
  prompt?: string;
  /** The last action's result, or why the last refresh failed. */
  message?: string;
  /** Signals sent and not yet seen in a heartbeat, by process identity ("quieting", "stopping"). */
  pending: Map<string, string>;
  /** The Redis URL, redacted. */
  redis: string;
  /** Seconds between refreshes. */
  interval: number;
  /** Whether the key help is shown instead of the panes. */
  help: boolean;
}

/** One painted row. */
export interface ScreenLine {
  text: string;
  style?: "bold" | "reverse" | "dim";
}

/** Rows each section gets, from the terminal's height and what there is to show. */
export interface TopLayout {
  queues: number;
  processes: number;
  retries: number;
  dead: number;
}

/** The smallest terminal `top` draws in. */
export const MIN_SIZE = { columns: 60, rows: 14 } as const;

/** Running jobs listed under each process at most. */
const JOBS_PER_PROCESS = 3;

/** Lines that are not section rows: title, stats, blank, four section headers, message, keys. */
const CHROME = 9;

/**
 * Shares the rows between the sections, one at a time round the sections
 * that still have something to show, so a long queue list cannot push the
 * processes or the retries off the screen.
 *
 * @example
 * ```ts
 * layoutTop(24, { queues: 40, processes: 2, retries: 5, dead: 0 }); // { queues: 8, processes: 2, retries: 5, dead: 0 }
 * ```
 */
export function layoutTop(rows: number, demand: TopLayout): TopLayout {
  const out: TopLayout = { queues: 0, processes: 0, retries: 0, dead: 0 };
  let left = Math.max(0, rows - CHROME);
  const order: (keyof TopLayout)[] = ["processes", "retries", "dead", "queues"];
  while (left > 0) {
    let gave = false;
    for (const key of order) {
      if (left > 0 && out[key] < demand[key]) {
        out[key]++;
        left--;
        gave = true;
      }
    }
    if (!gave) break;
  }
  return out;
}

/** The rows each section would like: every queue, each process with its jobs, each set entry. */
export function demandOf(data: TopData | undefined): TopLayout {
  if (!data) return { queues: 0, processes: 0, retries: 0, dead: 0 };
  return {
    queues: data.queues.length,
    processes: data.processes.reduce((n, p) => n + 1 + jobsOf(data, p.identity).length, 0),
    retries: data.retries.size,
    dead: data.dead.size,
  };
}

function jobsOf(data: TopData, identity: string) {
  return data.work.filter((w) => w.process === identity).slice(0, JOBS_PER_PROCESS);
}

/** `1234567` as `1,234,567`. */
function count(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

/**
 * A duration, short: `12 s`, `4 m`, `3 h`, `2 d`.
 *
 * @example
 * ```ts
 * shortDuration(90); // "1 m"
 * ```
 */
export function shortDuration(seconds: number): string {
  const s = Math.max(0, seconds);
  if (s < 60) return `${s < 10 ? s.toFixed(1).replace(/\.0$/, "") : Math.floor(s)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} m`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86_400)} d`;
}

/** Clock time in UTC, `HH:MM:SS`. */
function clock(ms: number): string {
  return new Date(ms).toISOString().slice(11, 19);
}

/** Columns joined with two spaces; each `[text, width, align?]` fitted to its width. */
function columns(parts: Array<[string, number, ("left" | "right")?]>): string {
  return parts.map(([text, width, align]) => fitWidth(text, width, { pad: true, align })).join("  ");
}

/** Keeps `selected` in view: the first row of a window of `size` rows over `total`. */
function windowStart(selected: number, size: number, total: number): number {
  if (size <= 0) return 0;
  return Math.max(0, Math.min(selected - Math.floor(size / 2), total - size));
}

const HELP_LINES = [
  "edgekiq top: keys",
  "",
  "  Tab, Shift-Tab, ← →   move between Processes, Retries and Dead",
  "  ↑ ↓ (or j k), PgUp PgDn   select a row",
  "",
  "  Processes:  t  quiet (stop fetching new jobs; TSTP)",
  "              s  stop (shut down; TERM), asks first",
  "  Retries:    r  retry now",
  "              x  kill (move to Dead), asks first",
  "              d  delete, asks first",
  "  Dead:       r  retry now (back to its queue)",
  "              d  delete, asks first",
  "",
  "  space  refresh now      ?  this help      q, Ctrl-C  quit",
];

/**
 * The whole screen, `size.rows` lines, each at most `size.columns` cells.
 *
 * @example
 * ```ts
 * const lines = renderTop(data, view, { columns: 100, rows: 30 }, Date.now());
 * ```
 */
export function renderTop(
  data: TopData | undefined,
  view: TopView,
  size: { columns: number; rows: number },
  now: number,
): ScreenLine[] {
  const width = size.columns;
  const lines: ScreenLine[] = [];
  const push = (text: string, style?: ScreenLine["style"]) => lines.push({ text: fitWidth(text, width), style });
  if (width < MIN_SIZE.columns || size.rows < MIN_SIZE.rows) {
    push(`edgekiq top needs at least ${MIN_SIZE.columns}×${MIN_SIZE.rows}; this terminal is ${width}×${size.rows}`);
    push("q quits");
    return pad(lines, size.rows);
  }
  push(
    `edgekiq top  ${view.redis}  ${data ? `${clock(data.at)} UTC` : "loading…"}  every ${view.interval} s  ? help`,
    "bold",
  );
  if (view.help) {
    for (const line of HELP_LINES) push(line);
    return pad(lines, size.rows);
  }
  const s = data?.stats;
  const capacity = data?.processes.reduce((n, p) => n + p.concurrency, 0) ?? 0;
  push(
    s
      ? `Processed ${count(s.processed)}  Failed ${count(s.failed)}  Busy ${count(s.workersSize)}/${
        count(capacity)
      }  Enqueued ${count(s.enqueued)}  Scheduled ${count(s.scheduledSize)}  Retries ${count(s.retrySize)}  Dead ${
        count(s.deadSize)
      }  Processes ${count(s.processesSize)}`
      : "",
  );
  push("");
  const layout = layoutTop(size.rows, demandOf(data));
  const body = width - 2;
  const marker = (pane: Pane, selected: boolean) => (view.pane === pane && selected ? "> " : "  ");

  // Queues: name, size, latency.
  const queues = data?.queues ?? [];
  const nameWidth = Math.min(40, Math.max(10, ...queues.map((q) => displayWidth(sanitize(q.name, 100)))));
  push(
    `Queues (${queues.length})${layout.queues < queues.length ? `, ${layout.queues} shown` : ""}`,
    "bold",
  );
  for (const q of queues.slice(0, layout.queues)) {
    push(`  ${
      columns([[sanitize(q.name, 100), nameWidth], [count(q.size), 10, "right"], [
        `latency ${shortDuration(q.latency)}`,
        16,
      ], [q.paused ? "paused" : "", 6]])
    }`);
  }

  // Processes, each with up to three running jobs under it.
  const processes = data?.processes ?? [];
  push(`${view.pane === "processes" ? "▸ " : ""}Processes (${processes.length})`, "bold");
  const processLines: Array<{ line: ScreenLine; owner: number }> = [];
  processes.forEach((p, i) => {
    const selected = view.selected.processes === i;
    const pending = view.pending.get(p.identity);
    const state = p.isQuiet ? (pending === "stopping" ? "stopping…" : "quiet") : pending ? `${pending}…` : "running";
    const tag = p.tag ? `[${sanitize(p.tag, 40)}]` : "";
    const rss = p.rss ? `${Math.round(p.rss / 1024)} MB` : "";
    const text = marker("processes", selected) + columns([
      [sanitize(p.identity, 120), Math.max(20, Math.floor(body * 0.35))],
      [tag, 12],
      [`busy ${p.busy}/${p.concurrency}`, 12],
      [state, 10],
      [`beat ${shortDuration((now - p.beat.getTime()) / 1000)} ago`, 14],
      [rss, 8, "right"],
    ]);
    processLines.push({
      line: { text, style: selected && view.pane === "processes" ? "reverse" : undefined },
      owner: i,
    });
    for (const w of jobsOf(data!, p.identity)) {
      const job = w.payload;
      processLines.push({
        line: {
          text: `      ${
            columns([
              [sanitize(job.klass ?? "?", 80), 28],
              [sanitize(job.jid ?? "", 30), 24],
              [`on ${sanitize(w.queue, 60)}`, 16],
              [`for ${shortDuration((now - w.runAt.getTime()) / 1000)}`, 10],
            ])
          }`,
          style: "dim",
        },
        owner: i,
      });
    }
  });
  const firstOfSelected = Math.max(0, processLines.findIndex((l) => l.owner === view.selected.processes));
  const start = windowStart(firstOfSelected, layout.processes, processLines.length);
  for (const { line } of processLines.slice(start, start + layout.processes)) push(line.text, line.style);

  // Retries and dead: the window read from Redis.
  const setRows = (pane: "retries" | "dead", title: string, rows: number) => {
    const window = data?.[pane];
    const total = window?.size ?? 0;
    const first = view.offset[pane];
    const shown = rows > 0 && total > rows ? `, ${first + 1}-${Math.min(total, first + rows)} shown` : "";
    push(`${view.pane === pane ? "▸ " : ""}${title} (${count(total)}${shown})`, "bold");
    const from = Math.max(0, view.offset[pane] - (window?.start ?? 0));
    (window?.entries ?? []).slice(from, from + rows).forEach((entry, i) => {
      const rank = window!.start + from + i;
      const selected = view.selected[pane] === rank;
      push(
        marker(pane, selected) + entryColumns(pane, entry, now, body),
        selected && view.pane === pane ? "reverse" : undefined,
      );
    });
  };
  setRows("retries", "Retries", layout.retries);
  setRows("dead", "Dead", layout.dead);

  const footer = size.rows - 2;
  while (lines.length < footer) push("");
  lines.length = footer;
  push(view.prompt ?? view.message ?? "", view.prompt ? "reverse" : undefined);
  push(keysFor(view.pane), "dim");
  return lines;
}

/** One retry or dead entry: when, class, retries, error. */
function entryColumns(pane: "retries" | "dead", entry: SortedEntry, now: number, width: number): string {
  const seconds = (entry.at.getTime() - now) / 1000;
  const when = pane === "retries"
    ? (seconds > 0 ? `in ${shortDuration(seconds)}` : "due now")
    : `${shortDuration(-seconds)} ago`;
  const error = [entry.errorClass, entry.errorMessage].filter(Boolean).join(": ");
  return columns([
    [when, 10],
    [sanitize(entry.klass ?? "?", 80), 28],
    [`retried ${entry.retryCount ?? 0}`, 11],
    [sanitize(error, 200), Math.max(10, width - 10 - 28 - 11 - 8)],
  ]);
}

/** The key line for the focused pane. */
function keysFor(pane: Pane): string {
  const actions = pane === "processes"
    ? "t quiet  s stop"
    : pane === "retries"
    ? "r retry  x kill  d delete"
    : "r retry  d delete";
  return `${actions}  ↑↓ select  Tab pane  space refresh  ? help  q quit`;
}

function pad(lines: ScreenLine[], rows: number): ScreenLine[] {
  while (lines.length < rows) lines.push({ text: "" });
  return lines.slice(0, rows);
}
