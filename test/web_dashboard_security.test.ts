/**
 * The dashboard's safety rules, each with a test (issue 13): the auth hook
 * before every route, the same-origin rule for actions, hostile text from
 * Redis and from the URL rendered inert, the CSP nonce and the other
 * headers (bounded inputs and "all" actions: web_dashboard_inputs.test.ts).
 * On the memory transport: these are properties of the app, not of Redis
 * (test/web_dashboard.test.ts runs the pages on every transport).
 */
import { beforeEach, describe, it } from "node:test";
import assert from "node:assert/strict";
import { Hono } from "hono";
import { ConfigError, createClient, memoryTransport, type Transport } from "../mod.ts";
import { markDeploy, PeriodicSet } from "../src/features/mod.ts";
import { MetricsTracker } from "../src/features/metrics/tracker.ts";
import { registerPeriodic } from "../src/features/periodic/mod.ts";
import { compressBacktrace } from "../src/server/backtrace_codec.ts";
import { dashboard, type DashboardOptions, verifyBasic } from "../src/web/mod.ts";

const XSS = `"'><script>alert(1)</script><img src=x onerror=alert(2)>`;
const PAGES = [
  "",
  "/busy",
  "/queues",
  "/queues/default",
  "/retries",
  "/scheduled",
  "/dead",
  "/metrics",
  "/periodic",
  "/stats",
];

/**
 * No markup from data: every tag is one the dashboard wrote (hono/jsx escapes
 * `<`, `>` and quotes in data, so raw `<`/`>` only delimit real tags), with
 * no inline handler, no style attribute, no javascript: URL, no img, and
 * no script but ours.
 */
function assertInert(html: string, where: string): void {
  for (const [tag, name, rawAttrs] of html.matchAll(/<([a-zA-Z][\w-]*)([^<>]*)>/g)) {
    const attrs = rawAttrs.replace(/"[^"]*"/g, '""');
    assert.doesNotMatch(attrs, /\son[a-z]+\s*=/i, `${where}: an inline event handler in ${tag}`);
    assert.doesNotMatch(attrs, /\sstyle\s*=/i, `${where}: a style attribute in ${tag}`);
    assert.notEqual(name.toLowerCase(), "img", `${where}: an img element`);
    if (name.toLowerCase() === "script") {
      assert.match(rawAttrs, /\ssrc="[^"]*\/assets\/[\w-]+\.js"/, `${where}: ${tag}`);
    }
    for (const [, value] of rawAttrs.matchAll(/\s(?:href|src|action)="([^"]*)"/g)) {
      assert.doesNotMatch(value, /^\s*(javascript|data|vbscript):/i, `${where}: ${tag}`);
    }
  }
}

const same = { "sec-fetch-site": "same-origin" };
const form = (fields: Record<string, string | string[]>) => {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) body.append(k, one);
  return body;
};

describe("dashboard: construction", () => {
  it("refuses to build without auth, without a transport, or with a bad basePath", () => {
    const transport = memoryTransport();
    for (const auth of [undefined, "secret", true]) {
      assert.throws(
        () => dashboard({ transport, auth: auth as unknown as DashboardOptions["auth"] }),
        (e: Error) => e instanceof ConfigError && /'auth' must be a function/.test(e.message),
      );
    }
    assert.throws(() => dashboard({ transport: undefined as unknown as Transport, auth: () => true }), /transport/);
    for (const basePath of ["jobs", "/jobs/", "//evil.com", "/a b", '/x"y']) {
      assert.throws(() => dashboard({ transport, auth: () => true, basePath }), /basePath/);
    }
  });
});

describe("dashboard: auth runs before every route", () => {
  let transport: Transport;
  let app: Hono;
  let allowed = false;
  beforeEach(() => {
    transport = memoryTransport();
    allowed = false;
    app = new Hono().route("/jobs", dashboard({ transport, auth: () => allowed }));
  });

  it("401s every page, /stats, the assets and every action, without reading Redis", async () => {
    allowed = true;
    const page = await (await app.request("/jobs")).text();
    const assets = [...page.matchAll(/\/jobs\/assets\/[\w.-]+/g)].map((m) => m[0]);
    assert.equal(assets.length >= 3, true, "the page links its assets");
    allowed = false;
    const before = transport.counters.commands;
    for (const path of [...PAGES.map((p) => `/jobs${p}`), ...assets, "/jobs/retries/1-abc", "/jobs/nope"]) {
      const res = await app.request(path);
      assert.equal(res.status, 401, path);
      assert.match(res.headers.get("www-authenticate") ?? "", /^Basic realm="edgekiq"/);
      assert.equal(res.headers.get("cache-control"), "private, no-store");
    }
    for (
      const path of ["/jobs/retries/all", "/jobs/retries", "/jobs/busy", "/jobs/queues/default", "/jobs/periodic/x"]
    ) {
      const res = await app.request(path, { method: "POST", headers: same, body: form({ action: "delete" }) });
      assert.equal(res.status, 401, path);
    }
    assert.equal(transport.counters.commands, before, "nothing was read or written for an unauthenticated caller");
  });

  it("a hook that throws gets a generic 500; the detail goes to onError only", async () => {
    const seen: unknown[] = [];
    const leaky = dashboard({
      transport,
      auth: () => {
        throw new Error("session store at redis://:hunter2@10.0.0.5 timed out");
      },
      onError: (e) => seen.push(e),
    });
    const res = await leaky.request("/");
    const body = await res.text();
    assert.equal(res.status, 500);
    assert.doesNotMatch(body, /hunter2|10\.0\.0\.5|session store/);
    assert.equal(seen.length, 1);
  });

  it("sees the hono context (headers, env bindings) and may be async", async () => {
    const proxied = dashboard<{ OPS: string }>({
      transport,
      auth: async (c) => {
        await Promise.resolve();
        return c.req.header("x-auth-user") === c.env.OPS;
      },
    });
    assert.equal((await proxied.request("/", { headers: { "x-auth-user": "ops" } }, { OPS: "ops" })).status, 200);
    assert.equal((await proxied.request("/", { headers: { "x-auth-user": "eve" } }, { OPS: "ops" })).status, 401);
    assert.equal((await proxied.request("/", {}, { OPS: "ops" })).status, 401);
  });

  it("verifyBasic checks user and password in constant time; the default challenge prompts browsers", async () => {
    const basic = dashboard({ transport, auth: (c) => verifyBasic(c.req.raw, "admin", "s3cret:with:colons") });
    const auth = (s: string) => ({ headers: { authorization: `Basic ${btoa(s)}` } });
    assert.equal((await basic.request("/", auth("admin:s3cret:with:colons"))).status, 200);
    for (const bad of ["admin:wrong", "Admin:s3cret:with:colons", "admin", ":", "admin:s3cret:with:colon"]) {
      assert.equal((await basic.request("/", auth(bad))).status, 401, bad);
    }
    assert.equal((await basic.request("/", { headers: { authorization: "Basic !!!" } })).status, 401);
    const req = new Request("http://x/", auth("admin:"));
    assert.equal(await verifyBasic(req, "admin", ""), false, "an unset password never matches");
    const quiet = dashboard({ transport, auth: () => false, challenge: null });
    assert.equal((await quiet.request("/")).headers.get("www-authenticate"), null);
  });
});

describe("dashboard: CSRF (Sec-Fetch-Site, else Origin must match the host, else 403)", () => {
  let transport: Transport;
  let app: Hono;
  beforeEach(async () => {
    transport = memoryTransport();
    app = new Hono().route("/jobs", dashboard({ transport, auth: () => true }));
    await createClient({ transport }).push("Victim", [1]);
  });
  const clear = (headers: Record<string, string>) =>
    app.request("http://dash.example/jobs/queues/default/delete", {
      method: "POST",
      headers: { ...headers, "content-type": "application/x-www-form-urlencoded" },
      body: "value=x&confirm=1",
    });

  it("refuses cross-site, same-site and headerless requests; accepts same-origin and a matching Origin", async () => {
    const cases: Array<[Record<string, string>, number]> = [
      [{ "sec-fetch-site": "cross-site", origin: "http://dash.example" }, 403],
      [{ "sec-fetch-site": "same-site", origin: "http://dash.example" }, 403],
      [{ "sec-fetch-site": "none" }, 403],
      [{}, 403],
      [{ origin: "http://evil.example" }, 403],
      [{ origin: "null" }, 403],
      [{ origin: "not a url" }, 403],
      [{ origin: "http://dash.example.evil.example" }, 403],
      [{ origin: "http://dash.example" }, 303],
      [{ origin: "http://other.example", host: "other.example" }, 303],
      [{ "sec-fetch-site": "same-origin" }, 303],
    ];
    for (const [headers, status] of cases) assert.equal((await clear(headers)).status, status, JSON.stringify(headers));
  });

  it("a refused request changes nothing, and GET stays open to links from anywhere", async () => {
    const before = transport.counters.commands;
    const res = await app.request("/jobs/queues/default", {
      method: "POST",
      headers: { "sec-fetch-site": "cross-site", "content-type": "application/x-www-form-urlencoded" },
      body: "action=clear&confirm=1&token=AAAAAAAAAAAAAAAAAAAAAA",
    });
    assert.equal(res.status, 403);
    assert.match(await res.text(), /cross-site request refused/);
    assert.equal(transport.counters.commands, before, "not one command");
    assert.equal(await transport.call("LLEN", "queue:default"), 1);
    assert.equal((await app.request("/jobs/queues", { headers: { "sec-fetch-site": "cross-site" } })).status, 200);
  });

  it("a cross-site Pause or Enqueue now of a periodic schedule is refused and changes nothing", async () => {
    const client = createClient({ transport });
    await registerPeriodic(client, [{ every: 3600, job: "Hourly", name: "hourly" }]);
    const before = await transport.call("LLEN", "queue:default");
    for (const action of ["pause", "enqueue"]) {
      const res = await app.request("/jobs/periodic/hourly", {
        method: "POST",
        headers: { "sec-fetch-site": "cross-site", "content-type": "application/x-www-form-urlencoded" },
        body: `action=${action}&token=AAAAAAAAAAAAAAAAAAAAAA`,
      });
      assert.equal(res.status, 403, action);
    }
    assert.equal((await new PeriodicSet(client).get("hourly"))!.enabled, true);
    assert.equal(await transport.call("LLEN", "queue:default"), before);
  });

  it("allowedOrigins admits a proxy's public origin", async () => {
    const proxied = dashboard({ transport, auth: () => true, allowedOrigins: ["https://admin.example"] });
    const post = (origin: string) =>
      proxied.request("http://10.0.0.1/queues/default/delete", {
        method: "POST",
        headers: { origin, "content-type": "application/x-www-form-urlencoded" },
        body: "value=x&confirm=1",
      });
    assert.equal((await post("https://admin.example")).status, 303);
    assert.equal((await post("https://evil.example")).status, 403);
  });
});

describe("dashboard: redirects and links stay on this site", () => {
  const tenantApp = () =>
    new Hono().route("/:tenant/jobs", dashboard({ transport: memoryTransport(), auth: () => true }));
  const onSite = (link: string) => /^\/(?![/\\])/.test(link) && !link.includes("\\");

  it("a base built from a route parameter is the raw path, never decoded input", async () => {
    const app = tenantApp();
    // `%5C` decodes to a backslash: `/\evil.com/jobs` is what browsers read as https://evil.com/jobs.
    for (const tenant of ["%5Cevil.com", "%5C%5Cevil.com", "%2F%2Fevil.com", "%09%5Cevil.com"]) {
      const res = await app.request(`/${tenant}/jobs/`);
      const location = res.headers.get("location");
      if (location !== null) assert.ok(onSite(location), `${tenant}: redirected to ${location}`);
      const page = await (await app.request(`/${tenant}/jobs/queues`)).text();
      const links = [...page.matchAll(/(?:href|action|src|data-base)="([^"]*)"/g)].map((m) => m[1]);
      for (const link of links.filter((l) => l !== "")) assert.ok(onSite(link), `${tenant}: a link to ${link}`);
    }
    const ok = await app.request("/acme%20corp/jobs/");
    assert.equal(ok.status, 308);
    assert.equal(ok.headers.get("location"), "/acme%20corp/jobs", "an encoded tenant stays encoded");
    assert.match(await (await app.request("/acme/jobs/queues")).text(), /href="\/acme\/jobs\/queues"/);
  });

  it("refuses a mount path that is not a clean path", async () => {
    const app = tenantApp();
    // URL parsing resolves dot segments (`%2e%2e` too) and encodes quotes; these pass through raw.
    let checked = 0;
    for (const tenant of ["a|b", "x^y", "[evil]"]) {
      // Bun's URL parser percent-encodes `^`, which hands the dashboard a clean path: only raw ones are checked.
      if (!new URL(`http://x/${tenant}/jobs/`).pathname.includes(tenant)) continue;
      checked++;
      const res = await app.request(`/${tenant}/jobs/`);
      assert.equal(res.status, 400, tenant);
      assert.equal(res.headers.get("location"), null);
      assert.match(await res.text(), /not a clean path/);
    }
    assert.ok(checked >= 2, `${checked} hostile mount paths reached the dashboard raw`);
  });
});

describe("dashboard: hostile text is rendered inert", () => {
  let transport: Transport;
  let app: Hono;
  beforeEach(async () => {
    transport = memoryTransport();
    app = new Hono().route("/jobs", dashboard({ transport, auth: () => true }));
    const now = Date.now() / 1000;
    const job = (extra: Record<string, unknown>) =>
      JSON.stringify({
        class: XSS,
        args: [XSS, { [XSS]: XSS }],
        queue: XSS,
        jid: "a1b2c3d4e5f6a1b2c3d4e5f6",
        created_at: now,
        enqueued_at: now,
        error_class: XSS,
        error_message: XSS,
        retry_count: 2,
        failed_at: now,
        tags: [XSS],
        ...extra,
      });
    const identity = `host${XSS}:1:abc`;
    await transport.pipeline([
      ["SADD", "queues", XSS, "default"],
      ["LPUSH", `queue:${XSS}`, job({})],
      ["LPUSH", "queue:default", job({ display_class: XSS })],
      ["ZADD", "retry", now + 60, job({ error_backtrace: await compressBacktrace([XSS, "at x.ts:1"]) })],
      ["ZADD", "schedule", now + 60, job({})],
      ["ZADD", "dead", now, job({ error_backtrace: [XSS] })],
      ["SADD", "processes", identity],
      [
        "HSET",
        identity,
        "info",
        JSON.stringify({
          hostname: XSS,
          pid: 1,
          tag: XSS,
          labels: [XSS],
          queues: [XSS],
          capsules: { [XSS]: { concurrency: 5 } },
          started_at: now,
          version: XSS,
        }),
        "busy",
        1,
        "beat",
        now,
        "quiet",
        "false",
        "rss",
        1000,
      ],
      ["HSET", `${identity}:work`, "slot", JSON.stringify({ queue: XSS, payload: job({}), run_at: now })],
    ]);
    const client = createClient({ transport });
    const tracker = new MetricsTracker();
    tracker.record(XSS, 120, false);
    tracker.record(XSS, 5, true);
    await tracker.flush(transport, client.keys);
    await markDeploy(client, XSS);
    await registerPeriodic(client, [{ cron: "0 * * * *", job: XSS, args: [XSS], name: XSS }]);
  });

  it("in job args, class names, queue names, errors, backtraces, process tags, labels and hostnames", async () => {
    const key = (set: string) => transport.call("ZRANGE", set, 0, 0, "WITHSCORES");
    const pages = [
      ...PAGES.filter((p) => p !== "/stats"),
      `/metrics/${encodeURIComponent(XSS)}`,
      `/periodic/${encodeURIComponent(XSS)}`,
      `/queues/${encodeURIComponent(XSS)}`,
    ];
    for (const set of ["retry", "schedule", "dead"]) {
      const [, score] = (await key(set)) as string[];
      const section = { retry: "retries", schedule: "scheduled", dead: "dead" }[set];
      pages.push(`/${section}/${encodeURIComponent(`${Number(score)}-a1b2c3d4e5f6a1b2c3d4e5f6`)}`);
    }
    for (const path of pages) {
      const res = await app.request(`/jobs${path}`);
      assert.equal(res.status, 200, path);
      const html = await res.text();
      assertInert(html, path);
      if (path) assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/, `${path} shows the text, escaped`);
    }
    const retry = await (await app.request(`/jobs${pages.at(-3)}`)).text();
    assert.match(retry, /Backtrace/, "the compressed backtrace was decoded");
    assert.match(retry, /at x\.ts:1/);
  });

  it("in the substr, days, period, interval, page and count parameters", async () => {
    const q = encodeURIComponent(XSS);
    for (const path of PAGES.filter((p) => p !== "/stats")) {
      for (const param of ["substr", "days", "period", "interval", "page", "count", "order", "notice", "n"]) {
        const res = await app.request(`/jobs${path}?${param}=${q}`);
        const html = await res.text();
        assertInert(html, `${path}?${param}`);
        assert.ok([200, 400].includes(res.status), `${path}?${param}: ${res.status}`);
      }
    }
    const filtered = await (await app.request(`/jobs/retries?substr=${q}`)).text();
    assert.match(filtered, /value="&quot;&#39;&gt;&lt;script&gt;/, "the filter box keeps the text, escaped");
    const metrics = await (await app.request(`/jobs/metrics?substr=${q}`)).text();
    assert.match(metrics, /value="&quot;&#39;&gt;&lt;script&gt;/, "the metrics filter too");
    assert.match(
      metrics,
      /<a class="mono" href="\/jobs\/metrics\/%22&#39;%3E%3Cscript%3E[^"]*">&quot;&#39;&gt;&lt;script&gt;/,
    );
    for (const path of [`/metrics?period=${q}`, `/metrics/${q}?period=${q}`, `/metrics?period=24h%00`]) {
      const res = await app.request(`/jobs${path}`);
      assert.equal(res.status, 400, path);
      const page = await res.text();
      assertInert(page, path);
      assert.match(
        page,
        /&#39;period&#39; must be one of 1h, 2h, 4h, 8h, 24h, 48h, 72h/,
        `${path}: says what is allowed`,
      );
    }
    const long = await app.request(`/jobs/metrics/${"x".repeat(1001)}`);
    assert.equal(long.status, 400, "a class name over 1,000 characters");
    assert.equal((await app.request(`/jobs/metrics?substr=${"x".repeat(201)}`)).status, 400, "a filter over 200");
  });

  it("in the JSON endpoint", async () => {
    const res = await app.request("/jobs/stats");
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    assert.equal(res.headers.get("x-content-type-options"), "nosniff");
  });
});

describe("dashboard: CSP with a per-request nonce, and the other headers", () => {
  const transport = memoryTransport();
  const app = new Hono().route("/jobs", dashboard({ transport, auth: () => true }));

  it("every page's scripts and stylesheets carry this response's nonce; no inline scripts or handlers", async () => {
    const nonces = new Set<string>();
    for (const path of PAGES.filter((p) => p !== "/stats")) {
      const res = await app.request(`/jobs${path}`);
      const csp = res.headers.get("content-security-policy") ?? "";
      const nonce = /script-src 'nonce-([\w-]+)'/.exec(csp)?.[1];
      assert.ok(nonce && nonce.length >= 22, `${path}: a nonce`);
      nonces.add(nonce);
      assert.match(csp, /default-src 'none'/);
      assert.match(csp, /frame-ancestors 'self'/);
      assert.match(csp, /base-uri 'none'/);
      assert.match(csp, /form-action 'self'/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
      const html = await res.text();
      const tags = [...html.matchAll(/<(script|link rel="stylesheet")[^>]*>/g)].map((m) => m[0]);
      assert.ok(tags.length >= 2, path);
      for (const tag of tags) assert.match(tag, new RegExp(`nonce="${nonce}"`), `${path}: ${tag}`);
      assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)/, `${path}: no inline script`);
      assertInert(html, path);
    }
    assert.equal(nonces.size, PAGES.length - 1, "a fresh nonce per response");
  });

  it("nosniff, framing by self, no referrer leaks and no-store on pages, JSON, errors and redirects", async () => {
    const responses = [
      await app.request("/jobs"),
      await app.request("/jobs/stats"),
      await app.request("/jobs/nope"),
      await app.request("/jobs/?days=999"),
      await app.request("/jobs/?days=9999", { redirect: "manual" }),
      await app.request("/jobs/retries", { method: "POST", headers: same, body: form({ action: "retry" }) }),
      await app.request("/jobs/retries", { method: "POST" }),
    ];
    assert.deepEqual(responses.map((r) => r.status), [200, 200, 404, 308, 308, 303, 403]);
    for (const res of responses) {
      assert.equal(res.headers.get("x-content-type-options"), "nosniff");
      assert.equal(res.headers.get("cache-control"), "private, no-store");
      assert.equal(res.headers.get("x-frame-options"), "SAMEORIGIN");
      assert.equal(res.headers.get("referrer-policy"), "same-origin");
      assert.match(res.headers.get("content-security-policy") ?? "", /frame-ancestors 'self'/);
    }
  });

  it("assets are cacheable under content-hashed names, nosniff, with their type; unknown ones 404", async () => {
    const html = await (await app.request("/jobs")).text();
    for (const [, path, ext] of html.matchAll(/"(\/jobs\/assets\/[\w-]+\.(js|css|svg))"/g)) {
      const res = await app.request(path);
      assert.equal(res.status, 200, path);
      assert.equal(res.headers.get("cache-control"), "private, max-age=31536000, immutable");
      assert.equal(res.headers.get("x-content-type-options"), "nosniff");
      const type = { js: "text/javascript", css: "text/css", svg: "image/svg+xml" }[ext]!;
      assert.ok(res.headers.get("content-type")?.startsWith(type), path);
    }
    assert.equal((await app.request("/jobs/assets/app-00000000.js")).status, 404);
  });
});
