/**
 * The Profiles pages' handlers and views (loaded on a dashboard's first
 * request for them, see `profiles_dashboard.ts`): `/profiles` (the newest
 * profiles), `/profiles/:jid` (one run's hottest functions) and
 * `/profiles/:jid/download` (its `.cpuprofile`, for speedscope or Chrome
 * DevTools). A list costs the header's three commands plus three.
 *
 * @module
 */
import { loadSnapshot } from "../../api/snapshot.ts";
import { Layout } from "../../web/dashboard/layout.tsx";
import { absoluteTime, formatMillis, relativeTime } from "../../web/dashboard/format.ts";
import { nameParam } from "../../web/dashboard/params.ts";
import { page, type PageHandler, viewOf } from "../../web/dashboard/render.ts";
import { hotFunctions } from "./cpu_profile_summary.ts";
import { listProfiles, profileData } from "./profile_store.ts";

const kib = (bytes: number) => `${(bytes / 1024).toFixed(bytes < 10_240 ? 1 : 0)} KiB`;

/** `GET /profiles`: the newest profiles, newest first. */
export const profilesList: PageHandler = async (c, deps) => {
  const view = viewOf(c, deps);
  const client = c.get("client");
  const [{ stats }, entries] = await Promise.all([loadSnapshot(client), listProfiles(client)]);
  return await page(
    c,
    <Layout view={view} section="profiles" heading="Profiles" stats={stats}>
      <div class="panel">
        <h1>Profiles</h1>
        <p class="muted">
          Push a job with <code>profile: true</code>{" "}
          (or a label) to record a CPU profile of its next run; the download opens in speedscope (speedscope.app) or
          Chrome DevTools.
        </p>
        {entries.length === 0 ? <p class="empty">No profiles recorded yet.</p> : (
          <table class="table">
            <thead>
              <tr>
                <th>When</th>
                <th>Job</th>
                <th>Label</th>
                <th>Took</th>
                <th>Runtime</th>
                <th>Profile</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((e) => (
                <tr>
                  <td title={absoluteTime(new Date(e.startedAt))}>{relativeTime(new Date(e.startedAt), view.now)}</td>
                  <td>
                    <a href={`${view.base}/profiles/${encodeURIComponent(e.jid)}`}>{e.className}</a>
                  </td>
                  <td>{e.label}</td>
                  <td>{formatMillis(e.ms)}</td>
                  <td>{e.runtime}</td>
                  <td>
                    {e.bytes > 0
                      ? <a href={`${view.base}/profiles/${encodeURIComponent(e.jid)}/download`}>{kib(e.bytes)}</a>
                      : <span class="muted">{e.note ?? "none"}</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
    </Layout>,
  );
};

/** `GET /profiles/:jid`: one run's hottest functions. */
export const profileDetail: PageHandler = async (c, deps) => {
  const view = viewOf(c, deps);
  const jid = nameParam("jid", c.req.param("jid"));
  const client = c.get("client");
  const [{ stats }, data] = await Promise.all([loadSnapshot(client), profileData(client, jid)]);
  const hot = data ? hotFunctions(data, 30) : [];
  return await page(
    c,
    <Layout view={view} section="profiles" heading={`${jid} · Profile`} stats={stats}>
      <div class="panel">
        <h1>Profile of {jid}</h1>
        {data
          ? (
            <p>
              <a href={`${view.base}/profiles/${encodeURIComponent(jid)}/download`}>Download the .cpuprofile</a>{" "}
              (open it in speedscope or Chrome DevTools for the flame graph). Hottest functions by self time:
            </p>
          )
          : <p class="empty">This profile is gone (it expired) or was not kept.</p>}
        {hot.length
          ? (
            <table class="table">
              <thead>
                <tr>
                  <th>Function</th>
                  <th>Where</th>
                  <th>Self samples</th>
                  <th>Share</th>
                </tr>
              </thead>
              <tbody>
                {hot.map((f) => (
                  <tr>
                    <td>
                      <code>{f.name}</code>
                    </td>
                    <td class="muted">{f.location}</td>
                    <td>{f.samples}</td>
                    <td>{(f.share * 100).toFixed(1)}%</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
          : null}
      </div>
    </Layout>,
    data ? 200 : 404,
  );
};

/** `GET /profiles/:jid/download`: the `.cpuprofile` as an attachment. */
export const profileDownload: PageHandler = async (c) => {
  const jid = nameParam("jid", c.req.param("jid"));
  const data = await profileData(c.get("client"), jid);
  if (!data) return c.text("This profile is gone (it expired) or was not kept.", 404);
  const file = `${jid.replace(/[^\w-]/g, "_")}.cpuprofile`;
  return c.body(data, 200, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Disposition": `attachment; filename="${file}"`,
  });
};
