/**
 * The Limits page's handler and view (loaded on a dashboard's first request
 * for it, see `limits_dashboard.ts`): every limiter in use, most recently
 * used first (its kind, limit, uses and over-limit events this minute and
 * the one before, in total, its holders and mean hold time), and each
 * grouped queue's groups with the biggest backlogs. Costs the header's
 * commands plus two per limiter shown and two per group.
 *
 * @module
 */
import { loadSnapshot } from "../../api/snapshot.ts";
import { Layout } from "../../web/dashboard/layout.tsx";
import { absoluteTime, formatCount, formatMillis, relativeTime } from "../../web/dashboard/format.ts";
import { page, type PageHandler, viewOf } from "../../web/dashboard/render.ts";
import { FlowGroups } from "./flow_groups.ts";
import { FlowLimiters } from "./flow_limiters.ts";

/** `GET /limits`: limiters and groups. */
export const limitsPage: PageHandler = async (c, deps) => {
  const view = viewOf(c, deps);
  const client = c.get("client");
  const site = { transport: client.transport, keys: client.keys };
  const groups = new FlowGroups(site);
  const [{ stats }, limiters, queues] = await Promise.all([
    loadSnapshot(client),
    new FlowLimiters(site).list(50),
    groups.queues(),
  ]);
  const tops = await Promise.all(queues.map(async (queue) => ({ queue, top: await groups.top(queue, 10) })));
  return await page(
    c,
    <Layout view={view} section="limits" heading="Limits" stats={stats}>
      <div class="panel flush">
        <div class="bar">
          <h2>Limiters</h2>
        </div>
        {limiters.length === 0 ? <p class="empty">No limiter used lately.</p> : (
          <table class="table">
            <thead>
              <tr>
                <th>Name</th>
                <th>Kind</th>
                <th>Limit</th>
                <th>Used (this min / last)</th>
                <th>Over limit (this min / last)</th>
                <th>Total used / over</th>
                <th>Held</th>
                <th>Last used</th>
              </tr>
            </thead>
            <tbody>
              {limiters.map((l) => (
                <tr>
                  <td>
                    <code>{l.name}</code>
                  </td>
                  <td data-label="Kind">{l.kind}</td>
                  <td data-label="Limit">
                    {l.kind === "concurrent"
                      ? `${l.limit} at once (lease ${formatMillis(l.perMs)})`
                      : `${l.limit} per ${formatMillis(l.perMs)}`}
                  </td>
                  <td data-label="Used (this min / last)">
                    {formatCount(l.thisMinute.use)} / {formatCount(l.lastMinute.use)}
                  </td>
                  <td data-label="Over limit (this min / last)">
                    {formatCount(l.thisMinute.over)} / {formatCount(l.lastMinute.over)}
                  </td>
                  <td data-label="Total used / over">{formatCount(l.use)} / {formatCount(l.over)}</td>
                  <td data-label="Held">
                    {l.kind === "concurrent" ? `${l.held} (mean hold ${formatMillis(l.holdMs)})` : ""}
                  </td>
                  <td data-label="Last used" title={absoluteTime(new Date(l.usedAt))}>
                    {relativeTime(new Date(l.usedAt), view.now)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
      <div class="panel flush">
        <div class="bar">
          <h2>Fair groups</h2>
        </div>
        {tops.length === 0
          ? <p class="empty">No grouped queue (push with a group to make one).</p>
          : tops.map(({ queue, top }) => (
            <div>
              <div class="bar">
                <span class="muted">
                  queue <code>{queue}</code>
                </span>
              </div>
              {top.length === 0 ? <p class="empty">No group has work.</p> : (
                <table class="table">
                  <thead>
                    <tr>
                      <th>Group</th>
                      <th>Backlog</th>
                      <th>State</th>
                    </tr>
                  </thead>
                  <tbody>
                    {top.map((g) => (
                      <tr>
                        <td>
                          <code>{g.group}</code>
                        </td>
                        <td data-label="Backlog">{formatCount(g.backlog)}</td>
                        <td data-label="State">{g.paused ? "paused" : "ready"}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
            </div>
          ))}
      </div>
    </Layout>,
  );
};
