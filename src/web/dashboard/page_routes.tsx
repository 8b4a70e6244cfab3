/**
 * The dashboard's GET routes: the pages, `/stats` (what the live chart
 * polls) and the assets. Each page reads Redis a constant number of times:
 * the header's counters (three billed commands, {@link loadSnapshot}) plus
 * at most one or two commands of its own.
 *
 * @module
 */
import type { Hono } from "hono";
import { Queue } from "../../api/queue.ts";
import { JobSet } from "../../api/sorted_set.ts";
import type { SortedEntry } from "../../api/sorted_entry.ts";
import { Stats } from "../../api/stats.ts";
import { assetByFile } from "./assets/assets.ts";
import { readBacktrace } from "./backtrace.ts";
import { JOB_SETS, type JobSetKind, parseEntryKey } from "./job_sets.ts";
import { BusyPage } from "./pages/busy.tsx";
import { HomePage } from "./pages/home.tsx";
import { JobPage } from "./pages/job.tsx";
import { JobSetPage } from "./pages/job_set.tsx";
import { MessagePage } from "./pages/message.tsx";
import { QueuePage, QueuesPage } from "./pages/queues.tsx";
import { filterText, historyDays, paging, sortOrder } from "./params.ts";
import { redisFacts } from "./redis_info.ts";
import { type Ctx, noticeOf, page, type RouteDeps, viewOf } from "./render.ts";
import { loadSnapshot } from "../../api/snapshot.ts";
import { newToken } from "./token.ts";
import type { DashboardEnv } from "./view.ts";

/** The most matches a `substr` filter collects (Sidekiq shows them unpaged; this keeps a page bounded). */
export const MAX_FILTER_MATCHES = 1_000;
/** Entries a filter asks ZSCAN for per call. */
const SCAN_COUNT = 1_000;

async function filtered(set: JobSet, substr: string): Promise<{ entries: SortedEntry[]; capped: boolean }> {
  const entries: SortedEntry[] = [];
  for await (const entry of set.scan(substr, SCAN_COUNT)) {
    entries.push(entry);
    if (entries.length >= MAX_FILTER_MATCHES) return { entries, capped: true };
  }
  return { entries, capped: false };
}

function setRoutes(app: Hono<DashboardEnv>, deps: RouteDeps, kind: JobSetKind): void {
  const path = `/${kind.section}`;
  app.get(path, async (c) => {
    const view = viewOf(c, deps);
    const { page: pageNo, count, start } = paging(c.req.query("page"), c.req.query("count"));
    const substr = filterText(c.req.query("substr"));
    const order = sortOrder(c.req.query("order"), kind.order);
    const client = c.get("client");
    const set = new JobSet(client, kind.set, deps.setOptions);
    const [{ stats }, listed] = await Promise.all([
      loadSnapshot(client),
      substr
        ? filtered(set, substr).then(({ entries, capped }) => {
          entries.sort((a, b) => (order === "asc" ? a.score - b.score : b.score - a.score));
          return { entries: entries.slice(start, start + count), total: entries.length, capped };
        })
        : set.page(start, count, { reverse: order === "desc" }).then((entries) => ({
          entries,
          total: -1,
          capped: false,
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
        substr={substr}
        order={order}
        page={pageNo}
        count={count}
        token={newToken()}
        notice={noticeOf(c)}
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
    const backtrace = await readBacktrace(entry.get("error_backtrace"));
    return await page(c, <JobPage view={view} stats={stats} kind={kind} entry={entry} backtrace={backtrace} />);
  });
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
      <BusyPage view={view} stats={stats} processes={processes} work={work} token={newToken()} notice={noticeOf(c)} />,
    );
  });

  app.get("/queues", async (c) => {
    const view = viewOf(c, deps);
    const { stats, queues } = await loadSnapshot(c.get("client"), { latencies: true });
    return await page(
      c,
      <QueuesPage view={view} stats={stats} queues={queues} token={newToken()} notice={noticeOf(c)} />,
    );
  });

  app.get("/queues/:name", async (c) => {
    const view = viewOf(c, deps);
    const name = c.req.param("name");
    const { page: pageNo, count, start } = paging(c.req.query("page"), c.req.query("count"));
    const client = c.get("client");
    const [{ stats, queues }, jobs] = await Promise.all([
      loadSnapshot(client),
      new Queue(client, name).page(start, count),
    ]);
    const size = queues.find((q) => q.name === name)?.size ?? jobs.length;
    return await page(
      c,
      <QueuePage
        view={view}
        stats={stats}
        name={name}
        size={size}
        jobs={jobs}
        page={pageNo}
        count={count}
        token={newToken()}
        notice={noticeOf(c)}
      />,
    );
  });

  for (const kind of Object.values(JOB_SETS)) setRoutes(app, deps, kind);

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
