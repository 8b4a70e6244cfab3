/**
 * `edgekiq top`: Sidekiq 8.1's `kiq` for edgekiq. A full-screen view of the
 * counters, queues with their latency, live processes with their running
 * jobs, and the retry and dead sets, refreshed every `--interval` seconds
 * and redrawn in place (only the rows that changed are written). Keys quiet
 * or stop the selected process and retry, kill or delete the selected
 * retry or dead entry; destructive ones ask first.
 *
 * The screen is plain ANSI: `top_screen.ts` lays it out as lines (a pure
 * function), this loop paints them and handles keys, and the host's
 * {@link Terminal} owns raw mode and the alternate screen, and gives the
 * terminal back as it was on every way out: `q`, Ctrl-C, INT or TERM, or
 * an error.
 *
 * @module
 */
import { ProcessSet } from "../api/process_set.ts";
import type { SortedEntry } from "../api/sorted_entry.ts";
import { Client } from "../client.ts";
import { sanitize } from "../sanitize.ts";
import type { Transport } from "../transport/transport.ts";
import { type CliArgs, UsageError } from "./args.ts";
import type { CliHost, Terminal } from "./cli_host.ts";
import type { ResolvedOptions } from "./config.ts";
import { parseKeys } from "./key_input.ts";
import { redact } from "./redact.ts";
import { loadTop, type TopData } from "./top_data.ts";
import { demandOf, layoutTop, PANES, renderTop, type ScreenLine, type TopView } from "./top_screen.ts";

/** Seconds between refreshes unless `--interval` says otherwise. */
export const DEFAULT_TOP_INTERVAL = 2;

/** What {@link runTop} needs. */
export interface TopContext {
  host: CliHost;
  transport: Transport;
  args: CliArgs;
  options: ResolvedOptions;
}

const STYLE: Record<NonNullable<ScreenLine["style"]>, string> = { bold: "\x1b[1m", reverse: "\x1b[7m", dim: "\x1b[2m" };

/**
 * The terminal `top` draws on, or a {@link UsageError} saying why there is
 * none (checked before Redis is contacted).
 *
 * @example
 * ```ts
 * const terminal = topTerminal(host);
 * ```
 */
export function topTerminal(host: CliHost): Terminal {
  const terminal = host.terminal?.();
  if (!terminal) {
    throw new UsageError(
      "edgekiq top needs a terminal (standard input and output are not one): run it in a terminal, " +
        "or use `edgekiq stats` (--json for one JSON object) in scripts",
    );
  }
  return terminal;
}

/**
 * Runs the view until `q`, Ctrl-C, INT or TERM; resolves to the exit code.
 *
 * @example
 * ```ts
 * const code = await runTop({ host, transport, args, options });
 * ```
 */
export async function runTop({ host, transport, args, options }: TopContext): Promise<number> {
  const terminal = topTerminal(host);
  const client = new Client({
    transport,
    prefix: options.prefix,
    shards: options.shards,
    timeFormat: options.timeFormat,
  });
  const noColor = host.runtime.env("NO_COLOR") !== undefined && host.runtime.env("NO_COLOR") !== "";
  const view: TopView = {
    pane: "processes",
    selected: { processes: 0, retries: 0, dead: 0 },
    offset: { retries: 0, dead: 0 },
    pending: new Map(),
    redis: redact(options.redisUrl),
    interval: args.interval ?? DEFAULT_TOP_INTERVAL,
    help: false,
  };
  let data: TopData | undefined;
  let painted: string[] = [];
  let paintedSize = "";
  let closed = false;
  let confirm: (() => Promise<string>) | undefined;
  let refreshing: Promise<void> | undefined;
  let again = false;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const quit = () => {
    closed = true;
    finish();
  };

  const style = (line: ScreenLine) =>
    line.style && !(noColor && line.style !== "reverse") ? `${STYLE[line.style]}${line.text}\x1b[0m` : line.text;

  /** Writes the rows that changed since the last paint (all of them after a resize). */
  const paint = () => {
    if (closed) return;
    const size = terminal.size();
    const lines = renderTop(data, view, size, Date.now()).map(style);
    let out = "";
    if (`${size.columns}x${size.rows}` !== paintedSize) {
      paintedSize = `${size.columns}x${size.rows}`;
      painted = [];
      out += "\x1b[2J";
    }
    lines.forEach((line, i) => {
      if (painted[i] !== line) out += `\x1b[${i + 1};1H${line}\x1b[K`;
    });
    painted = lines;
    if (out) terminal.write(out);
  };

  /** Rows a set window is read with: as many as any section can get on this screen. */
  const windowRows = () => Math.max(1, terminal.size().rows);

  /**
   * Reads and repaints. One read at a time: asked for during a read (a key,
   * an action), one more follows it; the timer's tick is just skipped, so a
   * slow Redis is never queued up on.
   */
  const refresh = ({ queue = true }: { queue?: boolean } = {}): Promise<void> => {
    if (refreshing) {
      if (queue) again = true;
      return refreshing;
    }
    refreshing = (async () => {
      try {
        const rows = windowRows();
        data = await loadTop(client, {
          retries: { start: view.offset.retries, count: rows },
          dead: { start: view.offset.dead, count: rows },
        });
        settle(data);
        if (view.message?.startsWith("Redis: ")) view.message = undefined;
      } catch (error) {
        view.message = `Redis: ${
          sanitize((error as Error)?.message ?? String(error), 200)
        } (trying again every ${view.interval} s)`;
      } finally {
        refreshing = undefined;
        paint();
      }
      if (again && !closed) {
        again = false;
        await refresh();
      }
    })();
    return refreshing;
  };

  /** Keeps selections in range and forgets signals a heartbeat has confirmed. */
  const settle = (d: TopData) => {
    view.selected.processes = clamp(view.selected.processes, d.processes.length);
    view.selected.retries = clamp(view.selected.retries, d.retries.size);
    view.selected.dead = clamp(view.selected.dead, d.dead.size);
    // A quiet is confirmed by the quiet flag; a stop only by the process going away.
    for (const [identity, pending] of view.pending) {
      const p = d.processes.find((p) => p.identity === identity);
      if (!p || (p.isQuiet && pending === "quieting")) view.pending.delete(identity);
    }
    scroll("retries");
    scroll("dead");
  };

  /** Moves a set's window so its selected rank is on screen; true when that needs a read. */
  const scroll = (pane: "retries" | "dead"): boolean => {
    const rows = Math.max(1, layoutTop(terminal.size().rows, demandOf(data))[pane]);
    const selected = view.selected[pane];
    if (selected < view.offset[pane]) view.offset[pane] = selected;
    if (selected >= view.offset[pane] + rows) view.offset[pane] = selected - rows + 1;
    const window = data?.[pane];
    if (!window) return true;
    const loadedEnd = window.start + window.entries.length;
    return view.offset[pane] < window.start ||
      (view.offset[pane] + rows > loadedEnd && loadedEnd < window.size);
  };

  const move = (delta: number) => {
    const pane = view.pane;
    const total = pane === "processes" ? data?.processes.length ?? 0 : data?.[pane].size ?? 0;
    view.selected[pane] = clamp(view.selected[pane] + delta, total);
    if (pane !== "processes" && scroll(pane)) void refresh();
  };

  const selectedEntry = (pane: "retries" | "dead"): SortedEntry | undefined => {
    const window = data?.[pane];
    return window?.entries[view.selected[pane] - window.start];
  };

  /** Runs an action, shows its result, and reads again at once. */
  const act = async (action: () => Promise<string>) => {
    try {
      view.message = await action();
    } catch (error) {
      view.message = `failed: ${sanitize((error as Error)?.message ?? String(error), 200)}`;
    }
    paint();
    await refresh();
  };

  const ask = (prompt: string, action: () => Promise<string>) => {
    view.prompt = `${prompt} [y/N]`;
    confirm = action;
  };

  const processAction = (key: string) => {
    const p = data?.processes[view.selected.processes];
    if (!p) return;
    const who = sanitize(p.identity, 120);
    // Acted on by identity, read fresh: the row may be a refresh old.
    const signal = async (kind: "quiet" | "stop") => {
      const live = await new ProcessSet(client).find(p.identity);
      if (!live) return `${who} is gone`;
      await (kind === "quiet" ? live.quiet() : live.stop());
      view.pending.set(p.identity, kind === "quiet" ? "quieting" : "stopping");
      return kind === "quiet"
        ? `asked ${who} to quiet (TSTP): it stops fetching on its next heartbeat`
        : `asked ${who} to stop (TERM): it finishes its jobs within its timeout, then exits`;
    };
    if (key === "t") void act(() => signal("quiet"));
    if (key === "s") ask(`Stop ${who}?`, () => signal("stop"));
  };

  const entryAction = (pane: "retries" | "dead", key: string) => {
    const entry = selectedEntry(pane);
    if (!entry) return;
    const what = `${sanitize(entry.klass ?? "?", 80)} ${sanitize(entry.jid ?? "", 40)}`;
    const gone = `${what} is no longer in ${pane === "retries" ? "Retries" : "Dead"}`;
    if (key === "r") {
      void act(async () => (await entry.retry()) ? `retried ${what}: back on its queue` : gone);
    } else if (key === "x" && pane === "retries") {
      ask(`Kill ${what} (move it to Dead)?`, async () => (await entry.kill()) ? `killed ${what}` : gone);
    } else if (key === "d") {
      ask(`Delete ${what}? It cannot be undone.`, async () => (await entry.delete()) ? `deleted ${what}` : gone);
    }
  };

  const onKey = (key: string) => {
    if (key === "ctrl-c") return quit();
    if (confirm) {
      const action = confirm;
      confirm = undefined;
      view.prompt = undefined;
      if (key === "y" || key === "Y") void act(action);
      else {
        view.message = "cancelled";
        paint();
      }
      return;
    }
    const pageRows = Math.max(1, terminal.size().rows - 12);
    switch (key) {
      case "q":
        return quit();
      case "?":
        view.help = !view.help;
        break;
      case "escape":
        view.help = false;
        break;
      case "tab":
      case "right":
      case "backtab":
      case "left": {
        const step = key === "tab" || key === "right" ? 1 : PANES.length - 1;
        view.pane = PANES[(PANES.indexOf(view.pane) + step) % PANES.length];
        break;
      }
      case "up":
      case "k":
        move(-1);
        break;
      case "down":
      case "j":
        move(1);
        break;
      case "pageup":
        move(-pageRows);
        break;
      case "pagedown":
        move(pageRows);
        break;
      case " ":
        void refresh();
        return;
      default:
        if (view.pane === "processes") processAction(key);
        else entryAction(view.pane, key);
    }
    paint();
  };

  const offs = (["SIGINT", "SIGTERM"] as const).map((name) => host.runtime.onSignal(name, quit));
  let timer: ReturnType<typeof setInterval> | undefined;
  try {
    terminal.start({
      onInput: (text) => {
        for (const key of parseKeys(text)) if (!closed) onKey(key);
      },
      onResize: () => {
        // A taller screen may show more of a set than was read.
        paint();
        void refresh();
      },
    });
    paint();
    void refresh();
    timer = setInterval(() => void refresh({ queue: false }), view.interval * 1000);
    await finished;
    await refreshing;
  } finally {
    closed = true;
    clearInterval(timer);
    for (const off of offs) off();
    terminal.stop();
  }
  return 0;
}

function clamp(index: number, total: number): number {
  return Math.max(0, Math.min(index, total - 1));
}
