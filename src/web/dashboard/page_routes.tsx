/**
 * The dashboard's GET routes: the pages, `/stats` (what the live chart
 * polls) and the assets. Each page reads Redis a constant number of times:
 * the header's counters (three billed commands, {@link loadSnapshot}) plus
 * at most one or two commands of its own.
 *
 * @module
 */
import type { Hono } from "hono";
import { JobSet } from "../../api/job_set.ts";
import { Queue } from "../../api/queue.ts";
import type { SortedEntry } from "../../api/sorted_entry.ts";
import { Stats } from "../../api/stats.ts";
import { assetByFile } from "./assets/assets.ts";
import { readBacktrace } from "./backtrace_view.ts";
import { entryKey, JOB_SETS, type JobSetKind, parseEntryKey } from "./job_sets.ts";
import { BusyPage } from "./pages/busy.tsx";
import { HomePage } from "./pages/home.tsx";
import { JobPage } from "./pages/job.tsx";
import { JobSetPage } from "./pages/job_set.tsx";
import { MessagePage } from "./pages/message.tsx";
import { queueHref, QueuePage, QueuesPage } from "./pages/queues.tsx";
import { FIND_QUEUE_DEPTH, NotFoundJobPage } from "./pages/find.tsx";
import {
  DEFAULT_PAGE_SIZE,
  filterText,
  historyDays,
  nameParam,
  paging,
  pendingSignal,
  scanCursor,
  sortOrder,
} from "./params.ts";
import { redisFacts } from "./redis_info.ts";
import { type Ctx, noticeOf, page, type RouteDeps, viewOf } from "./render.ts";
import { loadSnapshot } from "../../api/snapshot.ts";
import { newToken } from "./token.ts";
import type { DashboardEnv } from "./view.ts";
import type { JobSectionInput } from "./dashboard_feature.ts";
import type { Child } from "hono/jsx";

/** The most matches a `substr` filter collects (Sidekiq shows them unpaged; this keeps a page bounded). */
export const MAX_FILTER_MATCHES = 1_000;
/** Entries a filter asks ZSCAN for per call. */
const SCAN_COUNT = 1_000;
/**
 * ZSCAN calls a filter makes per request: about 10,000 entries, some 20 ms
 * of Redis time, however big the set (the whole of 300,000 entries was 300
 * calls and about 570 ms, on every load and every live poll). A search cut
 * off there offers to continue from where it stopped.
 */
export const MAX_SCAN_STEPS = 10;

/**
 * The ZSCAN MATCH pattern of a `substr` filter: the text anywhere in the
 * job's JSON, ignoring the case of ASCII letters (`chargecard` finds
 * `ChargeCard`). Redis's glob has no case-insensitive flag, so each letter
 * becomes a class (`[cC]`), matched in Redis as before: the same ZSCANs,
 * the same bounds. Glob characters are matched literally, except `*`, which
 * stays a wildcard as in Sidekiq's filter. Other letters (`é`) match as typed:
 * the glob compares bytes, and a class of two multi-byte letters would not.
 *
 * @example
 * ```ts
 * caselessPattern("Card 4"); // "*[cC][aA][rR][dD] 4*"
 * ```
 */
export function caselessPattern(text: string): string {
  let out = "";
  for (const ch of text) {
    if (/^[A-Za-z]$/.test(ch)) out += `[${ch.toLowerCase()}${ch.toUpperCase()}]`;
    else out += /[?[\]\\]/.test(ch) ? `\\${ch}` : ch;
  }
  return text.includes("*") ? out : `*${out}*`;
}

/** What one request of a filtered search found, and where it stopped (`next`, `"0"` when it scanned it all). */
interface Filtered {
  entries: SortedEntry[];
  capped: boolean;
  next: string;
  examined: number;
}

async function filtered(set: JobSet, substr: string, from: string): Promise<Filtered> {
  const entries: SortedEntry[] = [];
  const seen = new Set<string>();
  let next = from;
  let steps = 0;
  do {
    const found = await set.scanStep(caselessPattern(substr), next, SCAN_COUNT);
    steps++;
    next = found.cursor;
    for (const entry of found.entries) {
      if (!seen.has(entry.value)) entries.push(entry), seen.add(entry.value);
    }
  } while (next !== "0" && entries.length < MAX_FILTER_MATCHES && steps < MAX_SCAN_STEPS);
  return { entries, capped: entries.length >= MAX_FILTER_MATCHES, next, examined: steps * SCAN_COUNT };
}

function setRoutes(app: Hono<DashboardEnv>, deps: RouteDeps, kind: JobSetKind): void {
  const path = `/${kind.section}`;
  app.get(path, async (c) => {
    const view = viewOf(c, deps);
    const { page: pageNo, count, start } = paging(c.req.query("page"), c.req.query("count"));
    const substr = filterText(c.req.query("substr"));
    const scan = substr ? scanCursor(c.req.query("scan")) : "0";
    const order = sortOrder(c.req.query("order"), kind.order);
    const client = c.get("client");
    const set = new JobSet(client, kind.set, deps.setOptions);
    const [{ stats }, listed] = await Promise.all([
      loadSnapshot(client),
      substr
        ? filtered(set, substr, scan).then(({ entries, capped, next, examined }) => {
          entries.sort((a, b) => (order === "asc" ? a.score - b.score : b.score - a.score));
          return { entries: entries.slice(start, start + count), total: entries.length, capped, next, examined };
        })
        : set.page(start, count, { reverse: order === "desc" }).then((entries) => ({
          entries,
          total: -1,
          capped: false,
          next: "0",
          examined: 0,
        })),
    ]);
    const size = kind.set === "retry"
      ? stats.retrySize
      : kind.set === "schedule"
      ? stats.scheduledSize
      : stats.deadSize;
    return await page(
      c,
      <JobSetPage
        view={view}
        stats={stats}
        kind={kind}
        entries={listed.entries}
        total={listed.total >= 0 ? listed.total : size}
        capped={listed.capped}
        search={{ from: scan, next: listed.next, examined: listed.examined }}
        substr={substr}
        order={order}
        page={pageNo}
        count={count}
        token={newToken()}
        notice={noticeOf(c, deps)}
      />,
    );
  });
  app.get(`${path}/:key`, async (c) => {
    const view = viewOf(c, deps);
    const key = parseEntryKey(c.req.param("key"));
    const client = c.get("client");
    const set = new JobSet(client, kind.set, deps.setOptions);
    const [{ stats }, found] = await Promise.all([
      loadSnapshot(client),
      key ? set.fetch(key.score, key.jid) : Promise.resolve([]),
    ]);
    const entry = found[0];
    if (!entry) {
      const message = `That ${kind.noun} is no longer here: it may have run, been retried, deleted or moved.`;
      return await page(c, <MessagePage view={view} stats={stats} heading="Job not found" message={message} />, 404);
    }
    const [backtrace, sections] = await Promise.all([
      readBacktrace(entry.get("error_backtrace")),
      jobSections(deps, entry, { client, base: view.base, now: view.now }),
    ]);
    return await page(
      c,
      <JobPage view={view} stats={stats} kind={kind} entry={entry} backtrace={backtrace} sections={sections} />,
    );
  });
}

/** The features' sections of a job's page (none for an entry that is not a job object). */
async function jobSections(
  deps: RouteDeps,
  entry: SortedEntry,
  at: Omit<JobSectionInput, "payload">,
): Promise<Child[]> {
  const payload = entry.item;
  if (!payload || deps.jobSections.length === 0) return [];
  const job = { ...at, payload: payload as unknown as JobSectionInput["payload"] };
  // A feature's section that fails leaves the core page whole.
  const nodes = await Promise.all(
    deps.jobSections.map((load) => load().then((section) => section(job)).catch(() => null)),
  );
  return nodes.filter((node) => node !== null) as unknown as Child[];
}

/**
 * Registers the GET routes on the dashboard app.
 *
 * @example
 * ```ts
 * pageRoutes(app, deps);
 * ```
 */
export function pageRoutes(app: Hono<DashboardEnv>, deps: RouteDeps): void {
  app.get("/", async (c) => {
    const view = viewOf(c, deps);
    const days = historyDays(c.req.query("days"));
    const client = c.get("client");
    const [{ stats }, history, redis] = await Promise.all([
      loadSnapshot(client),
      new Stats(client).history(days),
      redisFacts(client.transport),
    ]);
    return await page(c, <HomePage view={view} stats={stats} history={history} days={days} redis={redis} />);
  });

  app.get("/stats", async (c) => {
    const { stats: s } = await loadSnapshot(c.get("client"));
    return c.json({
      sidekiq: {
        processed: s.processed,
        failed: s.failed,
        busy: s.workersSize,
        processes: s.processesSize,
        enqueued: s.enqueued,
        scheduled: s.scheduledSize,
        retries: s.retrySize,
        dead: s.deadSize,
        default_latency: s.defaultQueueLatency,
      },
      server_utc_time: new Date().toISOString().slice(11, 19) + " UTC",
    });
  });

  app.get("/busy", async (c) => {
    const view = viewOf(c, deps);
    const { stats, processes, work } = await loadSnapshot(c.get("client"), { processes: true });
    return await page(
      c,
      <BusyPage
        view={view}
        stats={stats}
        processes={processes}
        work={work}
        token={newToken()}
        notice={noticeOf(c, deps)}
        actions={deps.workActions}
        pending={pendingSignal(c.req.query("pending"), c.req.query("target"), c.req.query("at"))}
      />,
    );
  });

  app.get("/queues", async (c) => {
    const view = viewOf(c, deps);
    const { stats, queues, paused } = await loadSnapshot(c.get("client"), { latencies: true });
    // A queue paused before anything was pushed to it is listed too, so it can be resumed here.
    const known = new Set(queues.map((q) => q.name));
    const rows = [
      ...queues,
      ...paused.filter((name) => !known.has(name)).map((name) => ({ name, size: 0, latency: 0, paused: true })),
    ].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return await page(
      c,
      <QueuesPage view={view} stats={stats} queues={rows} token={newToken()} notice={noticeOf(c, deps)} />,
    );
  });

  app.get("/queues/:name", async (c) => {
    const view = viewOf(c, deps);
    const name = c.req.param("name");
    const { page: pageNo, count, start } = paging(c.req.query("page"), c.req.query("count"));
    const order = sortOrder(c.req.query("order"), "desc");
    const client = c.get("client");
    // One page of the list, never more (on a sharded namespace, shard by shard).
    const [{ stats, queues, paused }, jobs] = await Promise.all([
      loadSnapshot(client, { latencies: true }),
      new Queue(client, name).page(start, count, { reverse: order === "asc" }),
    ]);
    const row = queues.find((q) => q.name === name);
    return await page(
      c,
      <QueuePage
        view={view}
        stats={stats}
        name={name}
        size={row?.size ?? jobs.length}
        latency={row?.latency ?? 0}
        paused={paused.includes(name)}
        jobs={jobs}
        order={order}
        page={pageNo}
        count={count}
        token={newToken()}
        notice={noticeOf(c, deps)}
      />,
    );
  });

  for (const kind of Object.values(JOB_SETS)) setRoutes(app, deps, kind);

  // A job by jid: where it runs or waits, within bounds (its queue's newest
  // 1,000, each set's filter bound), else a page saying where it looked.
  app.get("/find", async (c) => {
    const jid = nameParam("jid", c.req.query("jid"));
    const queue = c.req.query("queue") ? nameParam("queue", c.req.query("queue")) : undefined;
    const client = c.get("client");
    const base = c.get("base");
    const kinds = Object.values(JOB_SETS);
    const [{ stats, work }, waiting, ...searched] = await Promise.all([
      loadSnapshot(client, { processes: true }),
      queue ? new Queue(client, queue).page(0, FIND_QUEUE_DEPTH) : [],
      ...kinds.map((kind) => filtered(new JobSet(client, kind.set, deps.setOptions), jid, "0")),
    ]);
    if (work.some((w) => w.payload.jid === jid)) return c.redirect(`${base}/busy`, 302);
    const at = waiting.findIndex((job) => job.jid === jid);
    if (queue && at >= 0) {
      const pageNo = Math.floor(at / DEFAULT_PAGE_SIZE) + 1;
      return c.redirect(`${queueHref(base, queue)}?page=${pageNo}#job-${encodeURIComponent(jid)}`, 302);
    }
    for (const [i, kind] of kinds.entries()) {
      const entry = searched[i].entries.find((e) => e.jid === jid);
      if (entry) return c.redirect(`${base}/${kind.section}/${encodeURIComponent(entryKey(entry.score, jid))}`, 302);
    }
    const cutShort = kinds.filter((_, i) => searched[i].next !== "0").map((kind) => kind.section);
    return await page(
      c,
      <NotFoundJobPage view={viewOf(c, deps)} stats={stats} jid={jid} queue={queue} cutShort={cutShort} />,
      404,
    );
  });

  app.get("/assets/:file", (c) => {
    const asset = assetByFile(c.req.param("file"));
    if (!asset) return c.text("Not found", 404);
    return c.body(asset.body, 200, {
      "Content-Type": asset.type,
      // The file name carries the content hash: a new release is a new URL.
      "Cache-Control": "private, max-age=31536000, immutable",
    });
  });
}

/** The 404 page for anything else under the dashboard. */
export function notFound(c: Ctx, deps: RouteDeps): Promise<Response> {
  const view = viewOf(c, deps);
  return page(
    c,
    <MessagePage view={view} heading="Not found" message="There is no such page in the dashboard." />,
    404,
  );
}
