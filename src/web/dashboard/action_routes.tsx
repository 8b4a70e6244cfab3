/**
 * The dashboard's POST routes: actions on selected jobs, on one job, on
 * whole sets and queues, and on processes. Every action names exactly what
 * it acts on (the raw entries, read back by score and jid), so acting twice
 * on a job that already moved does nothing. Actions on "all" need
 * `confirm=1` (a confirmation page asks when no script did) and a one-time
 * token: a replayed form is refused with a notice, not run again.
 *
 * @module
 */
import type { Hono } from "hono";
import { JobRecord } from "../../api/job_record.ts";
import { ProcessSet } from "../../api/process_set.ts";
import { Queue } from "../../api/queue.ts";
import { SortedEntry } from "../../api/sorted_entry.ts";
import { JobSet } from "../../api/job_set.ts";
import { type EntryAction, entryQuestion, JOB_SETS, type JobSetKind, parseEntryKey } from "./job_sets.ts";
import { MessagePage } from "./pages/message.tsx";
import { deleteJobQuestion, queueHref, queueQuestion } from "./pages/queues.tsx";
import { MAX_PAGE_SIZE, ParamError } from "./params.ts";
import { field, type Form, list } from "./form.ts";
import { confirmed, confirmPage, onceConfirmed } from "./once_confirmed.tsx";
import { type Ctx, page, redirectWith, type RouteDeps, viewOf } from "./render.ts";
import type { DashboardEnv } from "./view.ts";

/** Refuses more keys than a page lists. */
function checkSelection(keys: readonly string[]): void {
  if (keys.length > MAX_PAGE_SIZE) {
    throw new ParamError(`Cannot act on ${keys.length} jobs at once: select at most ${MAX_PAGE_SIZE}`);
  }
}

/** The entries named by `<score>-<jid>` keys, read in one round trip (one per shard); missing ones are skipped. */
function entriesFor(set: JobSet, keys: readonly string[]): Promise<SortedEntry[]> {
  checkSelection(keys);
  return set.entriesAt(keys.map(parseEntryKey).filter((k) => k !== null));
}

const DONE: Record<EntryAction, string> = { retry: "retried", enqueue: "enqueued", delete: "deleted", kill: "killed" };

async function actOn(set: JobSet, entries: SortedEntry[], action: EntryAction): Promise<number> {
  if (entries.length === 0) return 0;
  let moved: boolean[];
  if (action === "retry") moved = await set.enqueueEntries(entries, { retry: true });
  else if (action === "enqueue") moved = await set.enqueueEntries(entries);
  else if (action === "kill") moved = await set.killEntries(entries);
  else return await set.removeEntries(entries);
  return moved.filter(Boolean).length;
}

function setActions(app: Hono<DashboardEnv>, deps: RouteDeps, kind: JobSetKind): void {
  const path = `/${kind.section}`;
  const allowed = new Set<string>(kind.entryActions.map((a) => a.action));
  const entryAction = (form: Form): EntryAction => {
    const action = field(form, "action") ?? "";
    if (!allowed.has(action)) {
      throw new ParamError(`Cannot act on ${kind.nouns} as 'action' must be one of ${[...allowed].join(", ")}`);
    }
    return action as EntryAction;
  };
  const open = (c: Ctx) => new JobSet(c.get("client"), kind.set, deps.setOptions);

  app.post(`${path}/all`, async (c) => {
    const form = await c.req.parseBody({ all: true });
    const button = kind.allActions(0).find((b) => b.value === field(form, "action"));
    if (!button) throw new ParamError(`Cannot act on all ${kind.nouns} as 'action' is not one this page offers`);
    const set = open(c);
    const size = await set.size();
    const question = kind.allActions(size).find((b) => b.value === button.value)!.confirm;
    return await onceConfirmed(c, deps, form, { question, action: `${path}/all`, back: path }, async () => {
      if (button.value === "retry") return ["retried", await set.retryAll()];
      if (button.value === "kill") return ["killed", await set.killAll()];
      await set.clear();
      return ["deleted", size];
    });
  });
  app.post(path, async (c) => {
    const form = await c.req.parseBody({ all: true });
    const action = entryAction(form);
    const keys = list(form, "key");
    if (keys.length === 0) return redirectWith(c, path, "none-selected");
    checkSelection(keys);
    const question = entryQuestion(kind, action, keys.length);
    if (question && !confirmed(form)) {
      return await confirmPage(c, deps, form, ["action", "key"], { question, action: path, back: path });
    }
    const set = open(c);
    return redirectWith(c, path, DONE[action], await actOn(set, await entriesFor(set, keys), action));
  });
  app.post(`${path}/:key`, async (c) => {
    const form = await c.req.parseBody({ all: true });
    const action = entryAction(form);
    const question = entryQuestion(kind, action, 1);
    if (question && !confirmed(form)) {
      const here = `${path}/${encodeURIComponent(c.req.param("key"))}`;
      return await confirmPage(c, deps, form, ["action"], { question, action: here, back: here });
    }
    const set = open(c);
    const n = await actOn(set, await entriesFor(set, [c.req.param("key")]), action);
    return n > 0 ? redirectWith(c, path, DONE[action], n) : redirectWith(c, path, "gone");
  });
}

/**
 * The Busy page's redirect after a Quiet or Stop, marked so the page shows
 * it as requested until a heartbeat confirms it (see `pendingSignal`). A
 * replayed "all" form (notice `already-done`) is left unmarked.
 */
function withPending(res: Response, action: "quiet" | "stop", target?: string): Response {
  const location = res.headers.get("location");
  if (res.status !== 303 || !location || location.includes("notice=already-done")) return res;
  const marked = new URLSearchParams({ pending: action, ...(target ? { target } : {}), at: String(Date.now()) });
  res.headers.set("location", `${location}&${marked}`);
  return res;
}

/**
 * Registers the POST routes on the dashboard app.
 *
 * @example
 * ```ts
 * actionRoutes(app, deps);
 * ```
 */
export function actionRoutes(app: Hono<DashboardEnv>, deps: RouteDeps): void {
  for (const kind of Object.values(JOB_SETS)) setActions(app, deps, kind);

  app.post("/queues/:name", async (c) => {
    const form = await c.req.parseBody({ all: true });
    const action = field(form, "action");
    if (action !== "clear" && action !== "pause" && action !== "resume") {
      throw new ParamError("Cannot change the queue as 'action' must be clear, pause or resume");
    }
    const queue = new Queue(c.get("client"), c.req.param("name"));
    const back = field(form, "from") === "queue" ? queueHref("", queue.name) : "/queues";
    const question = queueQuestion(action, queue.name, await queue.size());
    return await onceConfirmed(
      c,
      deps,
      form,
      { question, action: queueHref("", queue.name), back },
      async () => {
        if (action === "pause") return [(await queue.pause()) ? "queue-paused" : "queue-was-paused", 1];
        if (action === "resume") return [(await queue.resume()) ? "queue-resumed" : "queue-not-paused", 1];
        await queue.clear();
        return ["cleared", 1];
      },
    );
  });

  app.post("/queues/:name/delete", async (c) => {
    const form = await c.req.parseBody({ all: true });
    const value = field(form, "value");
    if (value === undefined) throw new ParamError("Cannot delete the job as the form has no 'value'");
    const name = c.req.param("name");
    const back = queueHref("", name);
    if (!confirmed(form)) {
      const question = deleteJobQuestion(new JobRecord(value, name));
      return await confirmPage(c, deps, form, ["value"], { question, action: `${back}/delete`, back });
    }
    const gone = !(await new Queue(c.get("client"), name).delete(value));
    return gone ? redirectWith(c, back, "gone") : redirectWith(c, back, "deleted", 1);
  });

  app.post("/busy", async (c) => {
    const form = await c.req.parseBody({ all: true });
    const action = field(form, "action");
    if (action !== "quiet" && action !== "stop") {
      throw new ParamError("Cannot signal processes as 'action' must be quiet or stop");
    }
    const processes = new ProcessSet(c.get("client"));
    const done = action === "quiet" ? "quieted" : "stopped";
    if (field(form, "scope") === "all") {
      // Only the processes the page listed: one started since is left alone.
      const given = Number(field(form, "asof"));
      const asof = Number.isFinite(given) ? given : Date.now();
      const question = `${action === "quiet" ? "Quiet" : "Stop"} all processes?`;
      return await onceConfirmed(
        c,
        deps,
        form,
        { question, action: "/busy", back: "/busy" },
        async () => {
          const targets = (await processes.list()).filter((p) =>
            !p.embedded && (p.startedAt === null || !(p.startedAt.getTime() > asof))
          );
          await Promise.all(targets.map((p) => (action === "quiet" ? p.quiet() : p.stop())));
          return [done, targets.length];
        },
      ).then((res) => withPending(res, action));
    }
    const identity = field(form, "identity") ?? "";
    const target = identity ? await processes.find(identity) : null;
    if (!target) return redirectWith(c, "/busy", "gone");
    if (target.embedded) {
      const view = viewOf(c, deps);
      const message = "That process runs embedded in another program and cannot be quieted or stopped from here.";
      return await page(c, <MessagePage view={view} heading="Cannot signal" message={message} />, 400);
    }
    await (action === "quiet" ? target.quiet() : target.stop());
    return withPending(redirectWith(c, "/busy", done, 1), action, target.identity);
  });
}
