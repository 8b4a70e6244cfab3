/**
 * The ledger outside Redis: every worker incarnation appends `done <jid>`
 * (and `start`/`poison`/`fail` marks, and `callback` lines for batch
 * callbacks) to its own file. Reading them all tells what
 * ran, how often, whatever Redis says.
 */
import { readFileSync } from "node:fs";

/** What the ledger files say. */
export interface Ledger {
  /** jid -> times a worker finished it. */
  done: Map<string, number>;
  /** jid -> times a poison pill ran (each run killed its process). */
  poison: Map<string, number>;
  /** jid -> times a signal-ignoring job started. */
  started: Map<string, number>;
  /** jid -> times a failing job ran (and threw). */
  failed: Map<string, number>;
  /** A batch callback's runs: `<callback jid> <bid> <done jobs in every ledger when it ran>`, one per run. */
  callbacks: string[];
}

/** Reads and tallies ledger files. */
export function readLedgers(files: string[]): Ledger {
  const ledger: Ledger = { done: new Map(), poison: new Map(), started: new Map(), failed: new Map(), callbacks: [] };
  for (const file of files) {
    const text = readFileSync(file, "utf8");
    let at = 0;
    while (at < text.length) {
      let end = text.indexOf("\n", at);
      if (end < 0) end = text.length; // a line cut short by SIGKILL mid-write (never seen: one write(2) per line)
      const line = text.slice(at, end);
      at = end + 1;
      const space = line.indexOf(" ");
      if (space < 0) continue;
      const kind = line.slice(0, space);
      const jid = line.slice(space + 1);
      if (kind === "callback") {
        ledger.callbacks.push(jid);
        continue;
      }
      const map = kind === "done"
        ? ledger.done
        : kind === "poison"
        ? ledger.poison
        : kind === "fail"
        ? ledger.failed
        : ledger.started;
      map.set(jid, (map.get(jid) ?? 0) + 1);
    }
  }
  return ledger;
}

/** Extra runs: the sum over jids of (times done - 1). */
export function duplicates(ledger: Ledger): number {
  let n = 0;
  for (const count of ledger.done.values()) if (count > 1) n += count - 1;
  return n;
}
