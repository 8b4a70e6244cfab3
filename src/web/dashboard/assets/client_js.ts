/**
 * The dashboard's only script, shipped as a string (no filesystem on the
 * edge). Every page works without it; it adds confirm dialogs, select-all,
 * the live poll, and the charts (uPlot). It is loaded with the CSP nonce and
 * binds every handler with addEventListener: no inline handlers.
 *
 * The poll interval comes from `localStorage` or the page and is clamped to
 * 2–20 s here too (Sidekiq's CVE-2023-26141 was a refresh interval taken
 * from localStorage unchecked). Polling pauses while the tab is hidden.
 *
 * @module
 */

/** The script. */
export const CLIENT_JS: string = `(function () {
  "use strict";
  var body = document.body;
  var base = body.getAttribute("data-base") || "";
  var MIN = 2, MAX = 20;
  function clamp(value, fallback) {
    var n = Math.round(Number(value));
    return value !== null && value !== "" && isFinite(n) ? Math.min(MAX, Math.max(MIN, n)) : fallback;
  }
  function load(key) { try { return window.localStorage.getItem("edgekiq." + key); } catch (e) { return null; } }
  function save(key, value) { try { window.localStorage.setItem("edgekiq." + key, value); } catch (e) { /* private mode */ } }
  var pageInterval = clamp(body.getAttribute("data-interval"), 5);
  var interval = body.hasAttribute("data-interval-explicit") ? pageInterval : clamp(load("interval"), pageInterval);
  var numbers = new Intl.NumberFormat("en-US");
  function latency(s) { return !(s > 0) ? "0" : s < 10 ? s.toFixed(2) : s < 100 ? s.toFixed(1) : numbers.format(Math.round(s)); }
  function show(el) { if (el) el.hidden = false; }

  // Confirm before destructive actions; the server insists on confirm=1 and renders a confirmation page without it.
  // On a list, the question counts the selected rows (none selected: the server says to select some first).
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var button = event.submitter;
    var message = (button && button.getAttribute("data-confirm")) || form.getAttribute("data-confirm");
    var field = form.querySelector("input[name=confirm]");
    if (field) field.value = "";
    if (!message) return;
    if (form.querySelector("input[name=key]")) {
      var selected = form.querySelectorAll("input[name=key]:checked").length;
      if (selected === 0) return;
      var many = button && button.getAttribute("data-confirm-many");
      if (selected > 1 && many) message = many.replace("{n}", numbers.format(selected));
    }
    if (!window.confirm(message)) { event.preventDefault(); return; }
    if (field) field.value = "1";
  });
  document.addEventListener("change", function (event) {
    var box = event.target;
    if (!box.matches || !box.matches("[data-select-all]") || !box.form) return;
    var rows = box.form.querySelectorAll("input[name=key]");
    for (var i = 0; i < rows.length; i++) rows[i].checked = box.checked;
  });

  // Every counter on the page, nav badges included, from one reading (/stats, or a refreshed page's own).
  function showStats(s) {
    var stats = document.querySelectorAll("[data-stat]");
    for (var i = 0; i < stats.length; i++) {
      var name = stats[i].getAttribute("data-stat");
      if (typeof s[name] !== "number") continue;
      stats[i].textContent = name === "default_latency" ? latency(s[name]) : numbers.format(s[name]);
      if (stats[i].classList.contains("badge")) stats[i].hidden = !(s[name] > 0);
    }
  }
  function statsIn(doc) {
    var out = {}, found = doc.querySelectorAll("#summary [data-stat]");
    for (var i = 0; i < found.length; i++) out[found[i].getAttribute("data-stat")] = Number(found[i].textContent.replace(/[^0-9.]/g, ""));
    return out;
  }

  var timer = 0;
  var tick = null;
  // Polls fall on whole multiples of the interval (wall clock), so the time between two readings is an exact
  // multiple too and does not drift by each request's duration; tick(at) gets that time (null when run at once).
  function schedule(now) {
    clearTimeout(timer);
    if (!tick || document.hidden) return;
    var period = interval * 1000, delay = now ? 0 : period - (Date.now() % period), at = now ? null : (Date.now() + delay) / 1000;
    timer = setTimeout(function () { Promise.resolve(tick(at)).then(function () { schedule(false); }, function () { schedule(false); }); },
      delay);
  }
  document.addEventListener("visibilitychange", function () { if (!document.hidden) { if (onResume) onResume(); schedule(true); } else clearTimeout(timer); });
  var onResume = null;

  // Live poll for list pages: fetch this page again and swap the summary and the main region in place.
  var toggle = document.getElementById("live-toggle");
  function refresh() {
    if (document.querySelector("#main input[type=checkbox]:checked") || document.activeElement && document.activeElement.closest && document.activeElement.closest("#main form")) return null;
    return fetch(window.location.href, { credentials: "same-origin" }).then(function (res) {
      if (!res.ok) return;
      return res.text().then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        ["summary", "main"].forEach(function (id) {
          var fresh = doc.getElementById(id), old = document.getElementById(id);
          if (!fresh || !old) return;
          old.replaceChildren.apply(old, Array.prototype.map.call(fresh.childNodes, function (n) { return document.importNode(n, true); }));
        });
        showStats(statsIn(doc));
      });
    }).catch(function () { /* try again next tick */ });
  }
  if (toggle) {
    show(toggle);
    var on = load("live") === "1";
    var setLive = function (value) {
      on = value;
      toggle.setAttribute("aria-pressed", String(on));
      save("live", on ? "1" : "0");
      // Paused (disabled) on a filtered list: each poll would scan the set again.
      tick = on && !toggle.disabled ? refresh : null;
      schedule(false);
    };
    toggle.addEventListener("click", function () { setLive(!on); });
    setLive(on);
  }

  var select = document.getElementById("interval");
  if (select) {
    show(select.parentNode);
    var known = false;
    for (var i = 0; i < select.options.length; i++) if (Number(select.options[i].value) === interval) known = true;
    if (!known) select.add(new Option(interval + " s", String(interval)));
    select.value = String(interval);
    select.addEventListener("change", function () {
      interval = clamp(select.value, interval);
      save("interval", String(interval));
      schedule(false);
    });
  }

  // Charts (Dashboard and Metrics pages), drawn by uPlot.
  if (!window.uPlot) return;
  var css = getComputedStyle(document.documentElement);
  function color(name) { return css.getPropertyValue(name).trim(); }
  function two(n) { return (n < 10 ? "0" : "") + n; }
  function upFrom0(floor) { return function (u, min, max) { return [0, Math.max(floor, max * 1.1)]; }; }
  function axis(extra) {
    return Object.assign({ stroke: color("--muted"), grid: { stroke: color("--line"), width: 1 }, ticks: { stroke: color("--line"), width: 1 } }, extra);
  }
  function utc(ts) { return window.uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"); }
  function draw(el, opts, data) {
    var height = opts.height || 240;
    opts.width = el.clientWidth || 600;
    opts.height = height;
    opts.cursor = opts.cursor || { drag: { x: false, y: false } };
    var plot = new window.uPlot(opts, data, el);
    // One listener per element, resizing its current plot (a redrawn chart replaces a destroyed one).
    if (!el.edgekiqPlot) window.addEventListener("resize", function () { el.edgekiqPlot.setSize({ width: el.clientWidth || 600, height: height }); });
    el.edgekiqPlot = plot;
    return plot;
  }
  function ms(v) {
    return v == null ? "--" : v < 10 ? v.toFixed(2) + " ms" : v < 1000 ? Math.round(v) + " ms" : (v / 1000).toFixed(2) + " s";
  }
  // Axis ticks: as short as they can be.
  function msTick(v) { return !v ? "0" : v < 1000 ? +v.toFixed(1) + " ms" : +(v / 1000).toFixed(1) + " s"; }
  function count(v) { return v == null ? "--" : numbers.format(v); }
  // Deploy marks: a dashed line at each mark's bucket, its label beside it (on a lower row than the last one's,
  // and left of the line near the right edge).
  function marks(list) {
    return { hooks: { draw: [function (u) {
      if (!list || !list.length) return;
      var ctx = u.ctx, box = u.bbox, ratio = window.uPlot.pxRatio || 1;
      ctx.save();
      ctx.strokeStyle = ctx.fillStyle = color("--warn");
      ctx.setLineDash([4 * ratio, 4 * ratio]);
      ctx.lineWidth = ratio;
      ctx.font = Math.round(11 * ratio) + "px system-ui, sans-serif";
      ctx.textBaseline = "top";
      list.forEach(function (m, i) {
        var x = Math.round(u.valToPos(m[0], "x", true));
        if (x < box.left || x > box.left + box.width) return;
        ctx.beginPath(); ctx.moveTo(x, box.top); ctx.lineTo(x, box.top + box.height); ctx.stroke();
        var label = String(m[1]).slice(0, 60), width = ctx.measureText(label).width, gap = 4 * ratio;
        var left = x + gap + width > box.left + box.width;
        ctx.textAlign = left ? "right" : "left";
        ctx.fillText(label, left ? x - gap : x + gap, box.top + (2 + 14 * (i % 3)) * ratio);
      });
      ctx.restore();
    }] } };
  }
  var PROCESSED_FAILED = [{ label: "Processed", stroke: color("--accent"), fill: color("--accent") + "22", width: 2 },
    { label: "Failed", stroke: color("--danger"), width: 2 }];
  function timeChart(el, series, data, extra) {
    var opts = Object.assign({ tzDate: utc, scales: { x: { time: true }, y: { range: upFrom0(4) } }, axes: [axis({}), axis({ size: 60 })], series: [{}].concat(series) }, extra);
    return draw(el, opts, data);
  }

  var history = document.getElementById("history-chart");
  if (history) {
    var h = JSON.parse(history.getAttribute("data-history") || "{}");
    var days = (h.days || []).map(function (d) { return Date.parse(d + "T00:00:00Z") / 1000; });
    timeChart(history, PROCESSED_FAILED, [days, h.processed || [], h.failed || []]);
  }

  // Metrics: the top classes over time, one metric at a time (total time, runs, failures, average time).
  var overview = document.getElementById("metrics-chart");
  if (overview) {
    var m = JSON.parse(overview.getAttribute("data-metrics") || "{}");
    var metric = document.getElementById("metric");
    var shown = null;
    var render = function (which) {
      var perJob = (m.jobs || []).map(function (j) {
        if (which !== "avg") return j[which];
        return j.ms.map(function (t, i) { var ok = j.p[i] - j.f[i]; return ok > 0 ? t / ok : null; });
      });
      var timed = which === "ms" || which === "avg";
      var series = (m.jobs || []).map(function (j, i) {
        return { label: j.name, stroke: color("--c" + (i % 5)), width: 2, points: { show: false }, value: function (u, v) { return timed ? ms(v) : count(v); } };
      });
      if (shown) shown.destroy();
      shown = timeChart(overview, series, [m.t || []].concat(perJob), {
        axes: [axis({}), axis({ size: 70, values: function (u, splits) { return splits.map(timed ? msTick : count); } })],
        plugins: [marks(m.marks)],
      });
      overview.setAttribute("data-metric", which);
    };
    if (metric) {
      show(metric.parentNode);
      metric.addEventListener("change", function () { render(metric.value); });
    }
    render(metric ? metric.value : "ms");
  }

  // One class: runs and failures per bucket, the average time on its own axis.
  var perClass = document.getElementById("job-chart");
  if (perClass) {
    var s = JSON.parse(perClass.getAttribute("data-series") || "{}");
    timeChart(perClass, [
      { label: "Runs", stroke: color("--accent"), fill: color("--accent") + "22", width: 2, points: { show: false }, value: function (u, v) { return count(v); } },
      { label: "Failures", stroke: color("--danger"), width: 2, points: { show: false }, value: function (u, v) { return count(v); } },
      { label: "Average time", stroke: color("--c1"), width: 2, scale: "ms", points: { show: false }, value: function (u, v) { return ms(v); } },
    ], [s.t || [], s.p || [], s.f || [], s.avg || []], {
      scales: { x: { time: true }, y: { range: upFrom0(4) }, ms: { range: upFrom0(1) } },
      axes: [axis({}), axis({ size: 60 }), axis({ scale: "ms", side: 1, size: 70, grid: { show: false }, values: function (u, splits) { return splits.map(msTick); } })],
      plugins: [marks(s.marks)],
    });
  }

  // The execution-time histogram: one bar per Sidekiq bucket.
  var histogram = document.getElementById("histogram-chart");
  if (histogram) {
    var hg = JSON.parse(histogram.getAttribute("data-histogram") || "{}");
    var labels = hg.labels || [];
    var xs = labels.map(function (_, i) { return i; });
    draw(histogram, {
      scales: { x: { time: false, range: [-0.5, xs.length - 0.5] }, y: { range: upFrom0(4) } },
      axes: [axis({ space: 10, grid: { show: false }, splits: function () { return xs; }, values: function (u, splits) { return splits.map(function (i) { return labels[i] || ""; }); } }),
        axis({ size: 60 })],
      series: [{ label: "Under", value: function (u, v) { return v == null ? "--" : labels[v]; } },
        { label: "Runs", stroke: color("--accent"), fill: color("--accent") + "99", width: 1, points: { show: false },
          paths: window.uPlot.paths.bars({ size: [0.8, 40] }), value: function (u, v) { return count(v); } }],
    }, [xs, hg.counts || []]);
    histogram.setAttribute("data-drawn", "1");
  }

  // The live chart: jobs per second, each point averaged over the WINDOW seconds before it. Workers add their
  // counts to Redis once per heartbeat (every 10 s by default, 20 s over HTTP), so the counters move in steps; the
  // change between two polls would read 0, then a heartbeat's worth, then 0. Over 20 s (two 10 s beats, one 20 s
  // beat, a whole number of 2, 5, 10 and 20 s polls) a steady load draws a steady line.
  var live = document.getElementById("live-chart");
  if (!live) return;
  // The time axis: the last minute at first, growing to the last five as the page stays open.
  var SPAN = 300, opened = Date.now() / 1000;
  function windowSec() { return Math.max(20, interval); }
  var readings = [];
  var points = [[], [], []];
  var raw = [];
  var counted = 0;
  var zoneName = "";
  try { zoneName = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { /* no Intl zone */ }
  var local = load("zone") === "local";
  var zoneButton = document.getElementById("live-zone");
  function zoneLabel() { return local ? "Local time" + (zoneName ? " (" + zoneName + ")" : "") : "UTC"; }
  function clock(ts) {
    var d = new Date(ts * 1000);
    return local ? two(d.getHours()) + ":" + two(d.getMinutes()) + ":" + two(d.getSeconds())
      : two(d.getUTCHours()) + ":" + two(d.getUTCMinutes()) + ":" + two(d.getUTCSeconds());
  }
  function rate(v) { return v == null ? "--" : (v < 10 ? v.toFixed(2) : numbers.format(Math.round(v))) + "/s"; }
  var liveSeries = PROCESSED_FAILED.map(function (s) { return Object.assign({}, s, { value: function (u, v) { return rate(v); } }); });
  var plot;
  function drawLive() {
    if (plot) plot.destroy();
    // A fixed span ending now: distinct clock labels from the first load on, in the zone the axis names.
    plot = timeChart(live, liveSeries, points, {
      tzDate: undefined,
      scales: { x: { time: true, range: function () { var now = Date.now() / 1000; return [Math.max(now - SPAN, Math.min(opened, now - 60)), now]; } }, y: { range: upFrom0(1) } },
      axes: [axis({ space: 80, label: zoneLabel(), labelSize: 20, values: function (u, splits) { return splits.map(clock); } }),
        axis({ size: 60, label: "jobs/s", labelSize: 20 })],
    });
    live.setAttribute("data-zone", local ? "local" : "utc");
    if (zoneButton) zoneButton.textContent = local ? "Show UTC" : "Show local time";
  }
  drawLive();
  if (zoneButton) {
    show(zoneButton);
    zoneButton.addEventListener("click", function () { local = !local; save("zone", local ? "local" : "utc"); drawLive(); });
  }
  var status = document.getElementById("live-status");
  function measuring() { if (status) status.textContent = "Measuring: the first point comes " + windowSec() + " s after the first reading."; }
  measuring();
  onResume = function () { readings = []; measuring(); };
  tick = function (at) {
    return fetch(base + "/stats", { credentials: "same-origin", headers: { accept: "application/json" } }).then(function (res) {
      if (!res.ok) return;
      return res.json().then(function (json) {
        var s = json.sidekiq || {};
        showStats(s);
        // Only polls on the interval's grid are readings: their spans are exact multiples of it.
        if (at === null) return;
        var now = at, last = readings[readings.length - 1];
        // A counter that went down was reset: measure from here.
        if (last && (s.processed < last.p || s.failed < last.f)) readings = [];
        if (last && readings.length) {
          // What the old chart plotted: the change since the last poll (kept to compare, and counted for tests).
          raw.push(s.processed - last.p);
          counted += s.processed - last.p;
          if (raw.length > 200) raw.shift();
        }
        readings.push({ t: now, p: s.processed, f: s.failed });
        live.setAttribute("data-readings", String(readings.length));
        var WINDOW = windowSec();
        while (readings.length > 2 && now - readings[1].t >= WINDOW + interval) readings.shift();
        // The reading nearest WINDOW seconds back: the rate over the whole heartbeat window, never part of one.
        var from = null;
        for (var i = 0; i < readings.length - 1; i++) {
          if (now - readings[i].t >= WINDOW - interval / 2 && (!from || Math.abs(now - readings[i].t - WINDOW) < Math.abs(now - from.t - WINDOW))) from = readings[i];
        }
        if (from && status) status.textContent = "";
        live.setAttribute("data-processed", String(counted));
        if (!from) return;
        var span = now - from.t;
        points[0].push(now); points[1].push((s.processed - from.p) / span); points[2].push((s.failed - from.f) / span);
        while (points[0].length && points[0][0] < now - SPAN) points.forEach(function (a) { a.shift(); });
        plot.setData(points);
        live.setAttribute("data-points", String(points[0].length));
        live.edgekiqSeries = { rates: points[1].slice(), deltas: raw.slice(), window: WINDOW, interval: interval };
      });
    }).catch(function () { /* the next tick tries again */ });
  };
  schedule(true);
})();
`;
