/**
 * The Periodic pages' handlers (loaded on a dashboard's first request for
 * them, see `periodic_dashboard.ts`): `/periodic` (every schedule),
 * `/periodic/:name` (one) and `POST /periodic/:name` (`action` = pause,
 * resume or enqueue).
 * A page costs the header's three commands plus two (the schedule names,
 * then one script over their hashes), whatever the number of schedules.
 * Pause is idempotent; Resume acts only on a paused schedule, so a replayed
 * form cannot move a running schedule's next tick; Enqueue now claims the
 * form's one-time token first, so a replay enqueues nothing.
 *
 * @module
 */
import { PeriodicSet } from "./periodic_set.ts";
import { loadSnapshot } from "../../api/snapshot.ts";
import { claimOnce, field } from "../../web/dashboard/form.ts";
import { MessagePage } from "../../web/dashboard/pages/message.tsx";
import { PeriodicEntryPage, periodicHref, PeriodicPage } from "./periodic_views.tsx";
import { nameParam, ParamError } from "../../web/dashboard/params.ts";
import { noticeOf, page, type PageHandler, redirectWith, viewOf } from "../../web/dashboard/render.ts";

/** `GET /periodic`: every schedule. */
export const periodicList: PageHandler = async (c, deps) => {
  const view = viewOf(c, deps);
  const client = c.get("client");
  const [{ stats }, entries] = await Promise.all([loadSnapshot(client), new PeriodicSet(client).list()]);
  return await page(c, <PeriodicPage view={view} stats={stats} entries={entries} notice={noticeOf(c, deps)} />);
};

/** `GET /periodic/:name`: one schedule. */
export const periodicEntry: PageHandler = async (c, deps) => {
  const view = viewOf(c, deps);
  const name = nameParam("name", c.req.param("name"));
  const client = c.get("client");
  const [{ stats }, entry] = await Promise.all([loadSnapshot(client), new PeriodicSet(client).get(name)]);
  if (!entry) {
    const message = "No app declares that schedule now: it may have been renamed, or removed from the code.";
    return await page(
      c,
      <MessagePage view={view} stats={stats} heading="Schedule not found" message={message} />,
      404,
    );
  }
  return await page(c, <PeriodicEntryPage view={view} stats={stats} entry={entry} notice={noticeOf(c, deps)} />);
};

/** `POST /periodic/:name`: pause, resume or enqueue now (`action`). */
export const periodicAction: PageHandler = async (c) => {
  const form = await c.req.parseBody({ all: true });
  const name = nameParam("name", c.req.param("name"));
  const action = field(form, "action");
  const back = field(form, "from") === "detail" ? periodicHref("", name) : "/periodic";
  const periodic = new PeriodicSet(c.get("client"));
  if (action === "pause") {
    return redirectWith(c, back, (await periodic.pause(name)) ? "paused" : "schedule-gone");
  }
  if (action === "resume") {
    const entry = await periodic.get(name);
    if (!entry) return redirectWith(c, back, "schedule-gone");
    if (entry.enabled) return redirectWith(c, back, "not-paused");
    return redirectWith(c, back, (await periodic.resume(name)) ? "resumed" : "schedule-gone");
  }
  if (action === "enqueue") {
    return await claimOnce(c, field(form, "token"), back, async () => {
      const jid = await periodic.enqueueNow(name);
      return jid ? ["run-now", 1] : ["schedule-gone", 0];
    });
  }
  throw new ParamError("Cannot change the schedule as 'action' must be pause, resume or enqueue");
};
