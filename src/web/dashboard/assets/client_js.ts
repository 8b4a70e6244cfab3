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
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var button = event.submitter;
    var message = (button && button.getAttribute("data-confirm")) || form.getAttribute("data-confirm");
    if (!message) return;
    if (!window.confirm(message)) { event.preventDefault(); return; }
    var field = form.querySelector("input[name=confirm]");
    if (field) field.value = "1";
  });
  document.addEventListener("change", function (event) {
    var box = event.target;
    if (!box.matches || !box.matches("[data-select-all]") || !box.form) return;
    var rows = box.form.querySelectorAll("input[name=key]");
    for (var i = 0; i < rows.length; i++) rows[i].checked = box.checked;
  });

  var timer = 0;
  var tick = null;
  function schedule(now) {
    clearTimeout(timer);
    if (!tick || document.hidden) return;
    timer = setTimeout(function () { Promise.resolve(tick()).then(function () { schedule(false); }, function () { schedule(false); }); },
      now ? 0 : interval * 1000);
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
      tick = on ? refresh : null;
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

  // Charts (dashboard only), drawn by uPlot.
  if (!window.uPlot) return;
  var css = getComputedStyle(document.documentElement);
  function color(name) { return css.getPropertyValue(name).trim(); }
  function two(n) { return (n < 10 ? "0" : "") + n; }
  function clock(ts) { var d = new Date(ts * 1000); return two(d.getHours()) + ":" + two(d.getMinutes()) + ":" + two(d.getSeconds()); }
  function chart(el, data, timeZone) {
    var axis = { stroke: color("--muted"), grid: { stroke: color("--line"), width: 1 }, ticks: { stroke: color("--line"), width: 1 } };
    // The live chart spans seconds to minutes: label it with clock times, not uPlot's sub-second ticks.
    var xAxis = timeZone ? axis : Object.assign({}, axis, { space: 80, values: function (u, splits) { return splits.map(clock); } });
    var opts = {
      width: el.clientWidth || 600,
      height: 240,
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true }, y: { range: function (u, min, max) { return [0, Math.max(4, max * 1.1)]; } } },
      axes: [xAxis, Object.assign({}, axis, { size: 60 })],
      series: [{}, { label: "Processed", stroke: color("--accent"), fill: color("--accent") + "22", width: 2 },
        { label: "Failed", stroke: color("--danger"), width: 2 }],
    };
    if (timeZone) opts.tzDate = function (ts) { return window.uPlot.tzDate(new Date(ts * 1000), timeZone); };
    var plot = new window.uPlot(opts, data, el);
    window.addEventListener("resize", function () { plot.setSize({ width: el.clientWidth || 600, height: 240 }); });
    return plot;
  }

  var history = document.getElementById("history-chart");
  if (history) {
    var h = JSON.parse(history.getAttribute("data-history") || "{}");
    var days = (h.days || []).map(function (d) { return Date.parse(d + "T00:00:00Z") / 1000; });
    chart(history, [days, h.processed || [], h.failed || []], "Etc/UTC");
  }

  var live = document.getElementById("live-chart");
  if (!live) return;
  var points = [[Date.now() / 1000], [0], [0]];
  var plot = chart(live, points);
  var last = null;
  var total = 0;
  onResume = function () { last = null; };
  tick = function () {
    return fetch(base + "/stats", { credentials: "same-origin", headers: { accept: "application/json" } }).then(function (res) {
      if (!res.ok) return;
      return res.json().then(function (json) {
        var s = json.sidekiq || {};
        var stats = document.querySelectorAll("[data-stat]");
        for (var i = 0; i < stats.length; i++) {
          var name = stats[i].getAttribute("data-stat");
          if (typeof s[name] === "number") stats[i].textContent = name === "default_latency" ? latency(s[name]) : numbers.format(s[name]);
        }
        if (last) {
          var p = Math.max(0, s.processed - last.processed), f = Math.max(0, s.failed - last.failed);
          total += p;
          points[0].push(Date.now() / 1000); points[1].push(p); points[2].push(f);
          if (points[0].length > 60) points.forEach(function (a) { a.shift(); });
          plot.setData(points);
          live.setAttribute("data-points", String(points[0].length));
          live.setAttribute("data-processed", String(total));
        }
        last = s;
      });
    }).catch(function () { /* the next tick tries again */ });
  };
  schedule(true);
})();
`;
