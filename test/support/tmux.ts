/**
 * A real terminal for tests of full-screen programs: tmux on a private
 * socket (never the user's tmux server), a session of a fixed size running
 * one command, keys typed with `send-keys`, the screen read with
 * `capture-pane`. Works under Node, Bun and Deno (node:child_process).
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Whether tmux is installed. */
export function tmuxAvailable(): boolean {
  return spawnSync("tmux", ["-V"], { stdio: "ignore" }).status === 0;
}

/** A tmux session running one command. */
export interface TmuxSession {
  /** The screen as text, one line per row. */
  screen(): string;
  /** Types keys (tmux key names: "Tab", "Down", "C-c", or text). */
  keys(...keys: string[]): void;
  /** Waits until the screen matches `re`; throws with the screen after `timeoutMs`. */
  waitFor(re: RegExp, timeoutMs?: number): Promise<string>;
  /** A pane format variable (`alternate_on`, `pane_pid`). */
  display(format: string): string;
  /** The file the command's wrapper wrote after it exited (`stty -a`), or "" before. */
  after(): string;
  /** Ends the session and the tmux server. */
  close(): void;
}

/**
 * Starts `command` (an argv) in a new detached session of `columns` ×
 * `rows`, with `env` added. When it exits, the pane prints `EXITED <code>`
 * and the terminal's settings (`stty -a`, readable with `after()`), then
 * stays open so the test can read the screen.
 *
 * @example
 * ```ts
 * const tmux = startTmux(["node", "app.js"], { columns: 100, rows: 30 });
 * await tmux.waitFor(/ready/);
 * tmux.keys("q");
 * tmux.close();
 * ```
 */
export function startTmux(
  command: string[],
  { columns, rows, env = {}, cwd }: { columns: number; rows: number; env?: Record<string, string>; cwd: string },
): TmuxSession {
  const dir = mkdtempSync(join(tmpdir(), "edgekiq-tmux-"));
  const socket = join(dir, "socket");
  const conf = join(dir, "tmux.conf");
  const sttyFile = join(dir, "stty");
  writeFileSync(conf, "set -g status off\nset -g history-limit 100\n");
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const exports = Object.entries(env).map(([k, v]) => `export ${k}=${quote(v)}; `).join("");
  const script = `${exports}cd ${quote(cwd)}; ${command.map(quote).join(" ")}; code=$?; ` +
    `stty -a > ${quote(sttyFile)} 2>&1; echo "EXITED $code"; exec sleep 600`;
  const tmux = (...args: string[]) => {
    const result = spawnSync("tmux", ["-S", socket, "-f", conf, ...args], { encoding: "utf8" });
    if (result.status !== 0) throw new Error(`tmux ${args[0]} failed: ${result.stderr}`);
    return result.stdout;
  };
  tmux("new-session", "-d", "-s", "t", "-x", String(columns), "-y", String(rows), "sh", "-c", script);
  const session: TmuxSession = {
    screen: () => tmux("capture-pane", "-p", "-t", "t"),
    keys: (...keys) => void tmux("send-keys", "-t", "t", ...keys),
    async waitFor(re, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const screen = session.screen();
        if (re.test(screen)) return screen;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${re} on the screen:\n${screen}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    display: (format) => tmux("display-message", "-p", "-t", "t", `#{${format}}`).trim(),
    after() {
      try {
        return readFileSync(sttyFile, "utf8");
      } catch {
        return "";
      }
    },
    close() {
      spawnSync("tmux", ["-S", socket, "kill-server"], { stdio: "ignore" });
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return session;
}
