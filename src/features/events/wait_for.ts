/**
 * Waiting for a job's result (BullMQ's `job.waitUntilFinished`): `waitFor`
 * resolves with what `perform` returned, for a job pushed with
 * `keepResult`. The result is a key of its own (`edgekiq:result:<jid>`,
 * expiring after `keepResult.for`), so a wait that starts after the job
 * ended still finds it; a wait that starts before learns of it from the
 * `results` stream, which one reader per client follows for every waiting
 * call together (`XREAD BLOCK` on TCP, a poll with a back-off over HTTP),
 * and which is read only while someone waits.
 *
 * @module
 */
import type { Client } from "../../client.ts";
import { ConfigError } from "../../errors.ts";
import { describeValue } from "../../describe_value.ts";
import type { RedisReply } from "../../transport/transport.ts";
import { followStream, lastIdNow } from "./event_reader.ts";
import type { ResultRecord } from "./event_write.ts";
import { JobFailedError, ResultError, WaitTimeoutError } from "./result_errors.ts";

/** Options for {@link waitFor}. */
export interface WaitForOptions {
  /** The longest wait, ms; default 30,000, at most a day. Past it, a `WaitTimeoutError`. */
  timeoutMs?: number;
  /** Ends the wait early: it rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** A job's kept result, as {@link readResult} reads it. */
export interface JobResult {
  /** How the job ended. */
  readonly status: "completed" | "dead" | "failed" | "discarded";
  /** When its result was written, epoch ms. */
  readonly at: number;
  /** What `perform` returned (`completed`, when it was kept). */
  readonly result?: unknown;
  /** Why a completed job's result was not kept (too large, not JSON). */
  readonly unkept?: string;
  /** The last failure (`dead`, `failed`, a `discarded` one's reason). */
  readonly error?: { readonly className: string; readonly message: string };
}

const MAX_TIMEOUT_MS = 24 * 60 * 60 * 1000;

/**
 * Waits for a job pushed with `keepResult` to end, and resolves with what
 * its `perform` returned. Rejects with a `JobFailedError` if it died, failed
 * for good or was discarded, a `ResultError` if its result was too large to
 * keep, and a `WaitTimeoutError` after `timeoutMs` (a job without
 * `keepResult` never has a result to wait for). Retries are waited through.
 *
 * @example
 * ```ts
 * const jid = await client.push(Thumbnail, ["cat.png"], { keepResult: { for: 300 } });
 * const { url } = await waitFor<{ url: string }>(client, jid!, { timeoutMs: 10_000 });
 * ```
 */
export async function waitFor<T = unknown>(client: Client, jid: string, options: WaitForOptions = {}): Promise<T> {
  if (typeof jid !== "string" || jid === "" || jid.length > 1000) {
    throw new ConfigError(
      `Cannot wait for a job as its jid must be a non-empty string: current value is ${describeValue(jid)}`,
    );
  }
  const timeoutMs = options.timeoutMs ?? 30_000;
  if (typeof timeoutMs !== "number" || !Number.isFinite(timeoutMs) || timeoutMs <= 0 || timeoutMs > MAX_TIMEOUT_MS) {
    throw new ConfigError(
      `Cannot wait for job ${jid} as 'timeoutMs' must be > 0 and at most a day: current value is ${
        describeValue(timeoutMs)
      }`,
    );
  }
  const { signal } = options;
  signal?.throwIfAborted();
  const deadline = Date.now() + timeoutMs;
  let wake: (() => void) | undefined;
  // Registered (and the watcher's cursor taken) before the first read: a
  // result written after that read is always seen by the watcher.
  const unwatch = await watcherOf(client).watch(jid, () => wake?.());
  try {
    for (;;) {
      signal?.throwIfAborted();
      const woken = new Promise<void>((resolve) => (wake = resolve));
      const record = await readResult(client, jid);
      if (record) return settle<T>(jid, record);
      const left = deadline - Date.now();
      if (left <= 0) throw new WaitTimeoutError(jid, timeoutMs);
      await until(woken, left, signal);
      signal?.throwIfAborted();
    }
  } finally {
    unwatch();
  }
}

/**
 * Reads a job's kept result now (one command), or null when there is none
 * (not ended, not kept, expired). For an edge function that looks once.
 *
 * @example
 * ```ts
 * const r = await readResult(client, jid);
 * if (r?.status === "completed") return Response.json(r.result);
 * ```
 */
export async function readResult(client: Client, jid: string): Promise<JobResult | null> {
  return decodeRecord(await client.transport.call("GET", client.keys.result(jid)));
}

function decodeRecord(reply: RedisReply): JobResult | null {
  if (typeof reply !== "string") return null;
  let raw: Partial<ResultRecord>;
  try {
    raw = JSON.parse(reply);
  } catch {
    return null;
  }
  if (!raw || typeof raw !== "object" || typeof raw.status !== "string") return null;
  const out: { -readonly [K in keyof JobResult]: JobResult[K] } = {
    status: raw.status,
    at: typeof raw.at === "number" ? raw.at : 0,
  };
  if ("result" in raw) out.result = raw.result;
  if (typeof raw.unkept === "string") out.unkept = raw.unkept;
  if (typeof raw.error_class === "string") {
    out.error = { className: raw.error_class, message: String(raw.error_message ?? "") };
  }
  return out;
}

function settle<T>(jid: string, record: JobResult): T {
  if (record.status === "completed") {
    if (record.unkept !== undefined) throw new ResultError(jid, record.unkept);
    return record.result as T;
  }
  throw new JobFailedError(jid, record.status, record.error);
}

/** Resolves when `woken` does, after `ms`, or when `signal` aborts (at once if it has). */
function until(woken: Promise<void>, ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
    void woken.then(done);
  });
}

const watchers = new WeakMap<Client, ResultWatcher>();

function watcherOf(client: Client): ResultWatcher {
  let watcher = watchers.get(client);
  if (!watcher) watchers.set(client, watcher = new ResultWatcher(client));
  return watcher;
}

/**
 * One client's reader of the `results` stream: it runs while any call
 * waits, tells the waiters of each jid that came, and stops (its blocking
 * read aborted) when the last one leaves, so nothing keeps a process alive.
 * A failed read is tried again after a back-off; the waiters are bounded by
 * their own timeouts, and read their key once more then.
 */
class ResultWatcher {
  #client: Client;
  #waiters = new Map<string, Set<() => void>>();
  #ready: Promise<unknown> | undefined;
  #running: AbortController | undefined;

  constructor(client: Client) {
    this.#client = client;
  }

  /** Tells `notify` of each line for `jid` from now on; resolves (to the unwatch) once the cursor is taken. */
  async watch(jid: string, notify: () => void): Promise<() => void> {
    let set = this.#waiters.get(jid);
    if (!set) this.#waiters.set(jid, set = new Set());
    set.add(notify);
    const unwatch = () => {
      set!.delete(notify);
      if (set!.size === 0 && this.#waiters.get(jid) === set) this.#waiters.delete(jid);
      if (this.#waiters.size === 0) this.#halt();
    };
    if (!this.#running) this.#start();
    try {
      await this.#ready;
    } catch (error) {
      unwatch();
      throw error;
    }
    return unwatch;
  }

  #start(): void {
    const control = this.#running = new AbortController();
    const { transport, keys } = this.#client;
    // The cursor is taken before any waiter reads its key: a result written
    // after that read is on the stream after the cursor.
    const from = lastIdNow(transport, keys.results);
    this.#ready = from;
    from.then((id) => this.#loop(id, control), () => this.#halt(control));
  }

  #halt(control: AbortController | undefined = this.#running): void {
    if (!control || control !== this.#running) return;
    this.#running = undefined;
    this.#ready = undefined;
    control.abort(new DOMException("no one waits", "AbortError"));
  }

  async #loop(from: string, control: AbortController): Promise<void> {
    const entries = followStream(this.#client.transport, this.#client.keys.results, {
      from,
      signal: control.signal,
      count: 1000,
      blockMs: 5000,
      pollMaxMs: 2000,
      onError: () => {},
    });
    for await (const entry of entries) {
      const fields = Array.isArray(entry) && Array.isArray(entry[1]) ? entry[1] : [];
      const at = fields.indexOf("jid");
      const jid = at >= 0 && at % 2 === 0 ? fields[at + 1] : undefined;
      if (typeof jid === "string") { for (const notify of this.#waiters.get(jid) ?? []) notify(); }
    }
  }
}
