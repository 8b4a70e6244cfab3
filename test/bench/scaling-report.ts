/**
 * The scaling report: one text table per scaling section (with edgekiq/peer
 * ratios where a peer ran the same params), and `bench/scaling.svg`, small
 * line charts of each curve a reader takes in at a glance.
 */
import {
  colors,
  escapeXml,
  formatSection,
  num,
  ok,
  type Row,
  type Section,
  status,
  steadyRate,
  steadyUs,
  table,
} from "./report.ts";
import type { ChildResult } from "./support.ts";
import { bytesText } from "./scaling-scenarios.ts";

type Cell = string;

/** The peer row with the same params. */
function peerOf(section: Section, row: Row, family: Row["family"]): ChildResult | undefined {
  const key = JSON.stringify(row.params ?? {});
  return ok(section.rows.find((r) => r.family === family && JSON.stringify(r.params ?? {}) === key));
}

/** edgekiq's figure over a peer's (or, with `lowerIsBetter`, the peer's over edgekiq's is not used: a plain ratio). */
function ratio(a: unknown, b: unknown): string {
  return typeof a === "number" && typeof b === "number" && a > 0 && b > 0 ? `${(a / b).toFixed(2)}x` : "";
}

function rowsOf(section: Section, cells: (r: ChildResult, row: Row) => Cell[]): string[][] {
  return section.rows.map((row) => {
    const r = ok(row);
    return r ? [row.label, ...cells(r, row)] : [row.label, status(row)!];
  });
}

const drain = (r: ChildResult) => (r.redis as { drain?: { us: number; commands: number } } | undefined)?.drain;

/** The edgekiq/peer ratio cells of an edgekiq row, blank for the peers' own rows. */
function vsPeers(section: Section, row: Row, pick: (r: ChildResult) => unknown): Cell[] {
  if (row.family !== "edgekiq") return ["", ""];
  const mine = pick(ok(row)!);
  return (["bullmq", "sidekiq"] as const).map((f) => {
    const peer = peerOf(section, row, f);
    return peer ? ratio(mine, pick(peer)) : "";
  });
}

function concurrencyTable(s: Section): string {
  return table(
    [
      "system",
      "jobs/s",
      "e/BullMQ",
      "e/Sidekiq",
      "steady jobs/s",
      "e/BullMQ",
      "e/Sidekiq",
      "worker µs/job",
      "RSS MB",
      "peak RSS",
      "Redis µs/job",
      "Redis cmds/job",
    ],
    rowsOf(s, (r, row) => [
      num(r.jobsPerSec),
      ...vsPeers(s, row, (x) => x.jobsPerSec),
      num(steadyRate(r)),
      ...vsPeers(s, row, steadyRate),
      num(r.cpuUsPerJob, 1),
      num(r.rssMB, 0),
      num(r.peakRssMB, 0),
      num(drain(r)?.us, 2),
      num(drain(r)?.commands, 2),
    ]),
  ) +
    "\n  steady = tenths 2-10 of the drain (the first holds the worker's start and its JIT warming up), for every system";
}

function ioTable(s: Section): string {
  return table(
    ["system", "jobs/s", "ideal", "% ideal", "e/BullMQ", "e/Sidekiq", "worker µs/job", "RSS MB", "Redis µs/job"],
    rowsOf(s, (r, row) => [
      num(r.jobsPerSec),
      num((row.concurrency ?? 0) * 50),
      `${num(r.pctIdeal, 1)}%`,
      ...vsPeers(s, row, (x) => x.jobsPerSec),
      num(r.cpuUsPerJob, 1),
      num(r.rssMB, 0),
      num(drain(r)?.us, 2),
    ]),
  );
}

function payloadTable(s: Section): string {
  return table(
    [
      "system",
      "jobs",
      "jobs/s",
      "MB/s",
      "e/BullMQ",
      "e/Sidekiq",
      "worker µs/job",
      "Redis µs/job",
      "Redis longest ms",
      "peak RSS",
    ],
    rowsOf(s, (r, row) => [
      num(r.jobs),
      num(r.jobsPerSec),
      num((Number(r.jobsPerSec) * Number(row.params?.bytes)) / 1e6, 1),
      ...vsPeers(s, row, (x) => x.jobsPerSec),
      num(r.cpuUsPerJob, 1),
      num(drain(r)?.us, 2),
      num(r.redisLongestMs ?? 0, 1),
      num(r.peakRssMB, 0),
    ]),
  ) +
    "\n  Redis longest = the longest single command (a script counts as one) in the row: every other client waits that long";
}

function queuesTable(s: Section): string {
  const base = (row: Row) =>
    ok(s.rows.find((r) =>
      r.label.split(" ")[0] === row.label.split(" ")[0] && r.fetch === row.fetch &&
      r.params?.queues === 1 && r.params?.mode === row.params?.mode
    ));
  return table(
    [
      "system",
      "jobs/s",
      "worker µs/job",
      "Redis µs/job",
      "Redis cmds/job",
      "vs 1 queue",
      "steady Redis µs/job",
      "steady vs 1 queue",
      "steady by round",
      "Redis longest ms",
      "e/Sidekiq",
    ],
    rowsOf(s, (r, row) => [
      num(r.jobsPerSec),
      num(r.cpuUsPerJob, 1),
      num(drain(r)?.us, 2),
      num(drain(r)?.commands, 2),
      ratio(drain(r)?.us, drain(base(row) ?? {})?.us),
      num(steadyUs(r), 2),
      ratio(steadyUs(r), steadyUs(base(row) ?? {})),
      ((r.roundsSteadyRedisUs as number[] | undefined) ?? []).map((x) => num(x, 2)).join(" / "),
      num(r.redisLongestMs ?? 0, 1),
      vsPeers(s, row, (x) => x.jobsPerSec)[1],
    ]),
  ) +
    "\n  steady = Redis µs/job over tenths 2-10 of the drain (the first holds the worker's start, whose first call names" +
    " every queue); edgekiq rows: the round with the median steady figure";
}

function backlogTable(s: Section): string {
  type Win = { jobsPerSec: number; redisUsPerJob: number };
  const w = (r: ChildResult) => (r.windows as Win[] | undefined) ?? [];
  return table(
    [
      "system",
      "Redis bytes/job",
      "jobs/s",
      "1st tenth jobs/s",
      "2nd tenth",
      "last tenth",
      "Redis µs/job 2nd tenth",
      "last tenth",
      "whole drain",
    ],
    rowsOf(s, (r) => [
      num(r.redisBytesPerJob),
      num(r.jobsPerSec),
      num(w(r)[0]?.jobsPerSec),
      num(w(r)[1]?.jobsPerSec),
      num(w(r).at(-1)?.jobsPerSec),
      num(w(r)[1]?.redisUsPerJob, 2),
      num(w(r).at(-1)?.redisUsPerJob, 2),
      num(drain(r)?.us, 2),
    ]),
  ) + "\n  the first tenth includes the worker's start and JIT warm-up; compare the second tenth with the last";
}

function latencyTable(s: Section): string {
  const p99 = (x: ChildResult) => x.p99;
  return table(
    [
      "system",
      "target/s",
      "achieved/s",
      "p50 ms",
      "p99 ms",
      "p99.9 ms",
      "max ms",
      "push lag p99",
      "p99 e/BullMQ",
      "p99 e/Sidekiq",
      "worker µs/job",
      "Redis µs/job",
      "worker RT/job",
      "p99 by round",
    ],
    rowsOf(s, (r, row) => [
      num(r.targetPerSec),
      num(r.achievedPerSec),
      num(r.p50, 2),
      num(r.p99, 2),
      num(r.p999, 2),
      num(r.max, 1),
      num((r.producer as { lagP99Ms?: number } | undefined)?.lagP99Ms, 2),
      ...vsPeers(s, row, p99),
      num(r.cpuUsPerJob, 0),
      num(r.redisUsPerJob, 1),
      num(r.workerRoundTripsPerJob, 2),
      ((r.roundsP99 as Array<number | null> | undefined) ?? []).map((p) => num(p, 1)).join(" / "),
    ]),
  ) +
    "\n  push lag = how late the producer's pushes were against its schedule (high: the machine could not keep the load);" +
    "\n  worker µs/job = the worker's CPU over the whole point per job (its uncounted seconds included);" +
    "\n  worker RT/job = socket reads Redis handled, less the producer's pushes, per job: about the worker's round trips";
}

function scheduleTable(s: Section): string {
  return table(
    ["system", "promoted/s", "Redis µs/promoted", "cmds/promoted", "idle poll µs", "idle poll cmds"],
    rowsOf(s, (r) => [
      num(r.jobsPerSec),
      num(r.redisUsPerJob, 2),
      num(r.serverCommandsPerJob, 2),
      num(r.idlePollUs, 1),
      num(r.idlePollCommands, 1),
    ]),
  );
}

function dashboardTable(s: Section): string {
  const rows: string[][] = [];
  for (const row of s.rows) {
    const r = ok(row);
    if (!r) {
      rows.push([row.label, status(row)!]);
      continue;
    }
    const pages = r.pages as Record<string, { ms: number; redisUs: number; commands: number }>;
    for (const [path, p] of Object.entries(pages)) {
      rows.push([`${row.label} ${path}`, num(p.commands, 1), num(p.redisUs, 0), num(p.ms, 2)]);
    }
  }
  return table(["system, page", "Redis cmds", "Redis µs", "ms"], rows) +
    "\n  ?substr= scans the whole set (ZSCAN) by design, as Sidekiq 7's filter does; Sidekiq 6.4 has no such filter";
}

function profileTable(s: Section): string {
  const r = ok(s.rows[0]);
  if (!r) return s.rows[0] ? `${s.rows[0].label}: ${status(s.rows[0])}` : "not run";
  type Fn = { fn: string; where: string; area: string; pct: number };
  const list = (fns: Fn[]) => fns.map((f) => [f.fn, `${num(f.pct, 1)}%`, f.area, f.where]);
  const areas = Object.entries(r.areas as Record<string, number>).map(([a, p]) => `${a} ${p}%`).join(", ");
  return [
    `${num(r.jobsPerSec)} jobs/s under the profiler (${num(r.cpuUsPerJob, 1)} µs CPU per job, ` +
    `${num(r.cpuSystemUsPerJob, 1)} of it in the kernel); ` +
    `${num(r.busyMs)} ms busy of the ${num(r.windowMs)} ms drain: ${areas}`,
    "top self time, all code:",
    table(["function", "self", "area", "where"], list(r.top as Fn[])),
    "top self time in src/:",
    table(["function", "self", "area", "where"], list(r.topSrc as Fn[])),
  ].join("\n");
}

function prefetchTable(s: Section): string {
  return table(
    ["system", "jobs/s", "worker µs/job", "kernel µs/job", "round trips/job", "Redis µs/job"],
    rowsOf(s, (r) => [
      num(r.jobsPerSec),
      num(r.cpuUsPerJob, 2),
      num(r.cpuSystemUsPerJob, 2),
      num(r.roundTripsPerJob, 4),
      num(drain(r)?.us, 2),
    ]),
  ) +
    "\n  the engine's prefetch adapts up to 100 jobs held beyond the running ones; the fixed rows set CapsuleConfig.prefetch";
}

const TABLES: Record<string, (s: Section) => string> = {
  "scaling-prefetch": prefetchTable,
  "scaling-concurrency": concurrencyTable,
  "scaling-io": ioTable,
  "scaling-payload": payloadTable,
  "scaling-queues": queuesTable,
  "scaling-backlog": backlogTable,
  "scaling-latency": latencyTable,
  "scaling-schedule": scheduleTable,
  "scaling-dashboard": dashboardTable,
  "scaling-profile": profileTable,
};

/** A scaling section as text. */
export function formatScaling(section: Section): string {
  const body = TABLES[section.id];
  return body ? `== ${section.title} ==\n${body(section)}` : formatSection(section);
}

// ---------------------------------------------------------------------------
// scaling.svg: small line charts

interface Series {
  name: string;
  color: string;
  dash?: boolean;
  points: Array<[number, number]>;
}

interface Chart {
  title: string;
  /** x labels for categorical axes (points' x are indexes), else a log axis. */
  categories?: string[];
  yLabel: string;
  logY?: boolean;
  series: Series[];
}

const W = 440;
const H = 230;
const PAD = { left: 58, right: 12, top: 40, bottom: 34 };

function ticks(min: number, max: number, log: boolean): number[] {
  if (log) {
    const out: number[] = [];
    for (let e = Math.floor(Math.log10(min)); e <= Math.ceil(Math.log10(max)); e++) out.push(10 ** e);
    return out;
  }
  const step = 10 ** Math.floor(Math.log10(Math.max(max, 1e-9))) /
    (max / 10 ** Math.floor(Math.log10(max)) < 3 ? 2 : 1);
  const out: number[] = [];
  for (let v = 0; v <= max * 1.0001; v += step) out.push(v);
  return out;
}

function short(v: number): string {
  if (v >= 1e6) return `${+(v / 1e6).toPrecision(3)}M`;
  if (v >= 1e3) return `${+(v / 1e3).toPrecision(3)}k`;
  return `${+v.toPrecision(3)}`;
}

function chart(c: Chart, x0: number, y0: number): string[] {
  const pts = c.series.flatMap((s) => s.points).filter(([, y]) => Number.isFinite(y) && (!c.logY || y > 0));
  const parts = [`<text x="${x0 + 8}" y="${y0 + 16}" font-weight="bold">${escapeXml(c.title)}</text>`];
  if (pts.length === 0) return [...parts, `<text x="${x0 + 60}" y="${y0 + 110}">not measured</text>`];
  const xs = pts.map(([x]) => x);
  const ys = pts.map(([, y]) => y);
  const xLog = !c.categories;
  const [xMin, xMax] = c.categories ? [0, c.categories.length - 1] : [Math.min(...xs), Math.max(...xs)];
  let [yMin, yMax] = [c.logY ? Math.min(...ys) : 0, Math.max(...ys)];
  if (c.logY) [yMin, yMax] = [10 ** Math.floor(Math.log10(yMin)), 10 ** Math.ceil(Math.log10(yMax))];
  else yMax *= 1.1;
  const f = (v: number, log: boolean) => (log ? Math.log10(v) : v);
  const px = (x: number) =>
    x0 + PAD.left +
    ((f(x, xLog) - f(xMin, xLog)) / Math.max(1e-9, f(xMax, xLog) - f(xMin, xLog))) * (W - PAD.left - PAD.right);
  const py = (y: number) =>
    y0 + H - PAD.bottom -
    ((f(y, !!c.logY) - f(yMin, !!c.logY)) / Math.max(1e-9, f(yMax, !!c.logY) - f(yMin, !!c.logY))) *
      (H - PAD.top - PAD.bottom);
  parts.push(
    `<rect x="${x0 + PAD.left}" y="${y0 + PAD.top}" width="${W - PAD.left - PAD.right}" height="${
      H - PAD.top - PAD.bottom
    }" fill="none" stroke="#bbb"/>`,
  );
  for (const t of ticks(yMin || 1, yMax, !!c.logY)) {
    if (t < yMin || t > yMax) continue;
    parts.push(
      `<line x1="${x0 + PAD.left}" x2="${x0 + W - PAD.right}" y1="${py(t)}" y2="${py(t)}" stroke="#eee"/>`,
      `<text x="${x0 + PAD.left - 4}" y="${py(t) + 4}" text-anchor="end" font-size="10">${short(t)}</text>`,
    );
  }
  const xTicks = c.categories ? c.categories.map((_, i) => i) : [...new Set(xs)].sort((a, b) => a - b);
  for (const t of xTicks) {
    const label = c.categories ? c.categories[t] : c.title.includes("payload") ? bytesText(t) : short(t);
    parts.push(
      `<text x="${px(t)}" y="${y0 + H - PAD.bottom + 14}" text-anchor="middle" font-size="10">${label}</text>`,
    );
  }
  parts.push(
    `<text x="${x0 + 12}" y="${y0 + (H + PAD.top - PAD.bottom) / 2}" font-size="10" transform="rotate(-90 ${x0 + 12} ${
      y0 + (H + PAD.top - PAD.bottom) / 2
    })" text-anchor="middle">${escapeXml(c.yLabel)}</text>`,
  );
  // The legend: one line under the title, a short stroke of each series before its name.
  let legendX = x0 + PAD.left;
  for (const s of c.series) {
    if (!s.name || !s.points.some(([, y]) => Number.isFinite(y))) continue;
    const y = y0 + 31;
    parts.push(
      `<line x1="${legendX}" x2="${legendX + 14}" y1="${y - 4}" y2="${y - 4}" stroke="${s.color}" stroke-width="2"${
        s.dash ? ' stroke-dasharray="4,2"' : ""
      }/>`,
      `<text x="${legendX + 18}" y="${y}" font-size="10" fill="${s.color}">${escapeXml(s.name)}</text>`,
    );
    legendX += 26 + s.name.length * 5.6;
  }
  for (const s of c.series) {
    const p = s.points.filter(([, y]) => Number.isFinite(y) && (!c.logY || y > 0));
    if (p.length === 0) continue;
    const d = p.map(([x, y], j) => `${j ? "L" : "M"}${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(" ");
    parts.push(
      `<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2"${s.dash ? ' stroke-dasharray="5,3"' : ""}/>`,
      ...p.map(([x, y]) => `<circle cx="${px(x).toFixed(1)}" cy="${py(y).toFixed(1)}" r="2.5" fill="${s.color}"/>`),
    );
  }
  return parts;
}

const FAMILIES = [["edgekiq", "edgekiq"], ["bullmq", "BullMQ"], ["sidekiq", "Sidekiq"]] as const;
const FAMILY_OF: Record<string, Row["family"]> = Object.fromEntries(FAMILIES.map(([f, name]) => [name, f]));

/** One series per family over a section's rows: x from the params, y from the result. */
function byFamily(
  s: Section | undefined,
  x: (row: Row) => number,
  y: (r: ChildResult, row: Row) => number,
  where: (row: Row) => boolean = (row) => row.fetch !== "basic",
): Series[] {
  return FAMILIES.map(([family, name]) => ({
    name,
    color: colors[family],
    points: (s?.rows ?? []).filter((row) => row.family === family && where(row) && ok(row))
      .map((row) => [x(row), Number(y(ok(row)!, row))] as [number, number]),
  }));
}

/** The scaling charts, two a row. */
export function scalingSvg(sections: Section[], date: string): string {
  const by = (id: string) => sections.find((s) => s.id === id);
  const c = (row: Row) => Number(row.params?.c);
  const latency = by("scaling-latency");
  const loads = [...new Set((latency?.rows ?? []).map((row) => String(row.params?.load)))];
  const queues = by("scaling-queues");
  const queueSeries: Series[] = [
    ...(["strict", "weighted"] as const).flatMap((mode) =>
      [
        ...byFamily(queues, (row) =>
          Number(row.params?.queues), (r) =>
          Number(drain(r)?.us), (row) =>
          row.params?.mode === mode && row.fetch !== "basic").filter((s) =>
            s.name !== "BullMQ"
          ),
      ].map((s) => ({ ...s, name: `${s.name} ${mode}`, dash: mode === "weighted" }))
    ),
  ];
  const fleet = by("fleet");
  const charts: Chart[] = [
    {
      title: "no-op jobs/s by concurrency",
      yLabel: "jobs/s",
      logY: true,
      series: byFamily(by("scaling-concurrency"), c, (r) => Number(r.jobsPerSec)),
    },
    {
      title: "I/O-bound (20 ms): % of ideal by concurrency",
      yLabel: "% of c / 20 ms",
      series: byFamily(by("scaling-io"), c, (r) => Number(r.pctIdeal)),
    },
    {
      title: "worker CPU µs per no-op job by concurrency",
      yLabel: "µs/job",
      logY: true,
      series: byFamily(by("scaling-concurrency"), c, (r) => Number(r.cpuUsPerJob)),
    },
    {
      title: "worker RSS (MB) by concurrency: no-op, I/O-bound dashed",
      yLabel: "MB",
      series: [
        ...byFamily(by("scaling-concurrency"), c, (r) => Number(r.rssMB)),
        ...byFamily(by("scaling-io"), c, (r) => Number(r.rssMB)).map((s) => ({ ...s, name: "", dash: true })),
      ],
    },
    {
      title: "push-to-start p99 (ms) by load",
      categories: loads,
      yLabel: "p99 ms",
      logY: true,
      series: byFamily(latency, (row) => loads.indexOf(String(row.params?.load)), (r) => Number(r.p99)),
    },
    {
      title: "payload: MB/s by argument size",
      yLabel: "MB/s",
      logY: true,
      series: byFamily(
        by("scaling-payload"),
        (row) => Number(row.params?.bytes),
        (r, row) => (Number(r.jobsPerSec) * Number(row.params?.bytes)) / 1e6,
      ),
    },
    {
      title: "payload: Redis µs per job by argument size",
      yLabel: "Redis µs/job",
      logY: true,
      series: byFamily(by("scaling-payload"), (row) => Number(row.params?.bytes), (r) => Number(drain(r)?.us)),
    },
    {
      title: "queued backlog: drain jobs/s by tenth of the drain",
      categories: Array.from({ length: 10 }, (_, i) => `${i + 1}/10`),
      yLabel: "jobs/s",
      logY: true,
      series: byFamily(by("scaling-backlog"), () => 0, () => NaN).map((series) => {
        const row = by("scaling-backlog")?.rows.find((r) => r.family === FAMILY_OF[series.name] && ok(r));
        const windows = (ok(row)?.windows as Array<{ jobsPerSec: number }> | undefined) ?? [];
        return { ...series, points: windows.map((w, i) => [i, w.jobsPerSec] as [number, number]) };
      }),
    },
    {
      title: "Redis µs per job by number of queues (one loaded)",
      yLabel: "Redis µs/job",
      logY: true,
      series: queueSeries,
    },
    {
      title: "fleet jobs/s by worker processes (one Redis)",
      yLabel: "jobs/s",
      series: byFamily(
        fleet,
        (row) => Number(row.processes),
        (r) => Number(r.jobsPerSec),
        (row) => (row.servers ?? 1) === 1,
      ),
    },
  ];
  const parts: string[] = [];
  charts.forEach((ch, i) => parts.push(...chart(ch, 10 + (i % 2) * (W + 10), 34 + Math.floor(i / 2) * (H + 8))));
  const width = 2 * W + 30;
  const height = 34 + Math.ceil(charts.length / 2) * (H + 8) + 10;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ` +
    `font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="20" font-size="15" font-weight="bold">edgekiq vs BullMQ vs Sidekiq as the work grows (${
      escapeXml(date)
    })</text>`,
    ...parts,
    `</svg>`,
    "",
  ].join("\n");
}
