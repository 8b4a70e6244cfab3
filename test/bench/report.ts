/**
 * The benchmark report: the printed tables (with edgekiq/peer ratios and
 * the targets, met or missed), `bench/results.json` and a hand-written SVG
 * bar chart, `bench/results.svg`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import type { ChildResult, Outcome } from "./support.ts";

/** One measured row: a system in a scenario. */
export interface Row {
  label: string;
  family: "edgekiq" | "bullmq" | "sidekiq" | "baseline";
  /** `node/ioredis`, `bun/bun`, ... for edgekiq rows. */
  variant?: string;
  fetch?: "reliable" | "basic";
  concurrency?: number;
  /** Worker processes (the fleet scenario). */
  processes?: number;
  /** Redis servers (the fleet scenario with --scaling). */
  servers?: number;
  /** What a scaling row varies (`{ c: 100 }`, `{ queues: 1000, mode: "strict" }`); peers match on it. */
  params?: Record<string, number | string>;
  outcome: Outcome;
}

/** One scenario's rows. */
export interface Section {
  id: string;
  title: string;
  /** Which figure the scenario is about. */
  metric: "jobsPerSec" | "latency" | "fleet" | "instructions" | "scaling" | "cluster";
  rows: Row[];
}

/** A target, as measured. */
export interface TargetCheck {
  name: string;
  goal: string;
  measured: string;
  met: boolean | null;
}

export interface Report {
  meta: Record<string, unknown>;
  sections: Section[];
  targets: TargetCheck[];
}

export function ok(row: Row | undefined): ChildResult | undefined {
  return row?.outcome.status === "ok" ? row.outcome.result : undefined;
}

export function num(value: unknown, digits = 0): string {
  if (typeof value !== "number" || !Number.isFinite(value)) return "-";
  return value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function ratio(a: number | null | undefined, b: number | null | undefined): string {
  if (!a || !b) return "-";
  return `${(a / b).toFixed(2)}x`;
}

export function status(row: Row): string | undefined {
  const o = row.outcome;
  if (o.status === "ok") return undefined;
  if (o.status === "skipped") return `skipped (${o.detail})`;
  if (o.status === "timeout") return `timeout (${o.detail})`;
  return `error: ${o.detail.split("\n")[0].slice(0, 140)}`;
}

/** A text table; a row of two cells is a label and a note (skipped, error) printed as is. */
export function table(header: string[], rows: string[][]): string {
  const full = rows.filter((r) => r.length !== 2);
  const widths = header.map((h, i) =>
    Math.max(
      h.length,
      ...full.map((r) => (r[i] ?? "").length),
      i === 0 ? Math.max(0, ...rows.map((r) => r[0].length)) : 0,
    )
  );
  const line = (cells: string[]) =>
    cells.length === 2
      ? `${cells[0].padEnd(widths[0])}  ${cells[1]}`
      : cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ").trimEnd();
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

/** The peer row a ratio is taken against: same scenario and concurrency. */
function peer(section: Section, family: "bullmq" | "sidekiq", concurrency?: number): Row | undefined {
  return section.rows.find((r) => r.family === family && r.concurrency === concurrency);
}

/** A drain's tenths 2-10 (`--windows 10`): the first holds the worker's start and its JIT warming up. */
function laterTenths<W>(r: Record<string, unknown>): W[] {
  return ((r.windows as W[] | undefined) ?? []).slice(1);
}

/**
 * Jobs/s over tenths 2-10 of a drain: the rate once the worker has started and its JIT has warmed up (a 100,000-job
 * drain lasts under half a second for edgekiq, so the whole drain's rate is partly its start). Every system alike.
 */
export function steadyRate(r: Record<string, unknown>): number | undefined {
  const w = laterTenths<{ jobsPerSec: number }>(r);
  if (w.length === 0) return undefined;
  // The tenths are equal in jobs: the rate over them is the harmonic mean of theirs.
  return w.length / w.reduce((sum, x) => sum + 1 / x.jobsPerSec, 0);
}

/**
 * Redis µs per job over tenths 2-10 of a drain: the steady cost of a fetch. The first tenth also holds the worker's
 * start, whose first call names every queue once: a cost per start, not per job.
 */
export function steadyUs(r: Record<string, unknown>): number | undefined {
  const w = laterTenths<{ redisUsPerJob: number }>(r);
  return w.length ? w.reduce((sum, x) => sum + x.redisUsPerJob, 0) / w.length : undefined;
}

/** Formats one section as a text table. */
export function formatSection(section: Section): string {
  const out: string[] = [`== ${section.title} ==`];
  if (section.metric === "fleet" || section.metric === "instructions") {
    out.push(section.metric === "fleet" ? fleetTable(section) : instructionsTable(section));
    return out.join("\n");
  }
  if (section.metric === "cluster") {
    out.push(clusterTables(section));
    return out.join("\n");
  }
  if (section.metric === "latency") {
    const rows = section.rows.map((row) => {
      const r = ok(row);
      const bull = ok(peer(section, "bullmq", row.concurrency));
      return status(row) ? [row.label, status(row)!] : [
        row.label,
        num(r?.p50, 3),
        num(r?.p99, 3),
        num(r?.max, 3),
        row.family === "edgekiq" ? ratio(r?.p50, bull?.p50) : "",
        row.family === "edgekiq" ? ratio(r?.p99, bull?.p99) : "",
      ];
    });
    out.push(table(["system", "p50 ms", "p99 ms", "max ms", "p50 e/BullMQ", "p99 e/BullMQ"], rows));
    out.push(...footnotes(section));
    return out.join("\n");
  }
  const baseline = section.rows.find((r) => r.family === "baseline");
  const drain = section.id.startsWith("drain-");
  const rows = section.rows.map((row) => {
    const r = ok(row);
    if (!r) return [row.label, status(row)!];
    const isEdge = row.family === "edgekiq";
    const bull = ok(peer(section, "bullmq", row.concurrency));
    const side = ok(peer(section, "sidekiq", row.concurrency));
    const base = ok(baseline);
    const vs = section.id === "promote"
      ? [isEdge ? ratio(r.jobsPerSec, base?.jobsPerSec) : "", ""]
      : [isEdge ? ratio(r.jobsPerSec, bull?.jobsPerSec) : "", isEdge ? ratio(r.jobsPerSec, side?.jobsPerSec) : ""];
    // A drain's steady rate beside the whole drain's (see steadyRate), for every system.
    const steady = drain
      ? [
        num(steadyRate(r)),
        isEdge ? ratio(steadyRate(r), steadyRate(bull ?? {})) : "",
        isEdge ? ratio(steadyRate(r), steadyRate(side ?? {})) : "",
      ]
      : [];
    return [
      row.label,
      num(r.jobsPerSec),
      ...vs,
      ...steady,
      section.id === "io" ? (r.pctIdeal == null ? "-" : `${num(r.pctIdeal, 1)}%`) : num(r.rssMB, 1),
      r.roundTripsPerJob == null ? "-" : num(r.roundTripsPerJob, 3),
      r.serverCommandsPerJob == null ? "-" : num(r.serverCommandsPerJob, 2),
      num(r.seconds, 2),
    ];
  });
  const vsHeader = section.id === "promote" ? ["vs one-per-call", ""] : ["e/BullMQ", "e/Sidekiq"];
  const fifth = section.id === "io" ? "% ideal" : "RSS MB";
  const steadyHeader = drain ? ["steady jobs/s", "steady e/BullMQ", "steady e/Sidekiq"] : [];
  out.push(table(["system", "jobs/s", ...vsHeader, ...steadyHeader, fifth, "RT/job", "srv cmds/job", "seconds"], rows));
  if (drain) {
    out.push("  steady = tenths 2-10 of the drain (the first holds the worker's start and its JIT warming up)");
  }
  out.push(...footnotes(section));
  return out.join("\n");
}

function fleetTable(section: Section): string {
  const rows = section.rows.map((row) => {
    const r = ok(row);
    return r
      ? [
        row.label,
        num(r.jobsPerSec),
        `${num(r.redisCpuPct, 1)}%`,
        num(r.redisUsPerJob, 2),
        num(r.redisCommandsPerJob, 2),
        num(r.cpuUsPerJob, 1),
        num(r.rssMB, 0),
        num(r.seconds, 2),
      ]
      : [row.label, status(row)!];
  });
  return table(
    [
      "system x processes",
      "jobs/s",
      "Redis CPU",
      "Redis µs/job",
      "Redis cmds/job",
      "worker µs/job",
      "RSS MB",
      "seconds",
    ],
    rows,
  );
}

/**
 * The cluster section: the one-process rows (drain against the single
 * redis-server's) and the fleet rows (each against the same process count
 * on one primary), which carry `params.shards`.
 */
function clusterTables(section: Section): string {
  const isFleet = (row: Row) => row.params?.shards !== undefined;
  const single = ok(section.rows.find((r) => r.params?.transport === "ioredis"));
  const one = section.rows.filter((r) => !isFleet(r)).map((row) => {
    const r = ok(row);
    return r
      ? [
        row.label,
        num(r.jobsPerSec),
        single?.jobsPerSec && r.jobsPerSec ? `${num((r.jobsPerSec / single.jobsPerSec) * 100)}%` : "-",
        num(r.pushPerSec),
        num(r.onePushUs),
      ]
      : [row.label, status(row)!];
  });
  const fleet = section.rows.filter(isFleet).map((row) => {
    const r = ok(row);
    const base = ok(section.rows.find((b) => isFleet(b) && b.processes === row.processes && b.servers === 1));
    return r
      ? [
        row.label,
        num(r.jobsPerSec),
        ratio(r.jobsPerSec, base?.jobsPerSec),
        `${num(r.redisCpuPct, 1)}%`,
        `${(r.redisCpuSharePercent as number[]).map((p) => num(p, 0)).join("/")}%`,
        num(r.redisCpuUsPerJobTotal, 2),
        num(r.redisCommandsPerJob, 2),
        num(r.cpuUsPerJob, 1),
        num(r.rssMB, 0),
      ]
      : [row.label, status(row)!];
  });
  return [
    table(["one process, c=10", "drain jobs/s", "vs single", "bulk push jobs/s", "one push µs"], one),
    "",
    table([
      "processes × primaries",
      "jobs/s",
      "vs 1 primary",
      "busiest primary CPU",
      "Redis CPU per primary",
      "Redis µs/job",
      "Redis cmds/job",
      "worker µs/job",
      "RSS MB",
    ], fleet),
    "  Redis CPU = main-thread CPU (INFO) of every primary over the window; µs and cmds per job are all primaries' together",
  ].join("\n");
}

function instructionsTable(section: Section): string {
  const rows = section.rows.map((row) => {
    const r = ok(row);
    return r
      ? [
        row.label,
        num(r.pushInstructionsPerJob),
        num(r.drainInstructionsPerJob),
        num(Number(r.pushInstructionsPerJob) + Number(r.drainInstructionsPerJob)),
        num(r.pushCommandsPerJob, 2),
        num(r.drainCommandsPerJob, 2),
        num(r.readsPerJob, 3),
      ]
      : [row.label, status(row)!];
  });
  return [
    table(
      ["system", "push instr/job", "drain instr/job", "total", "push cmds/job", "drain cmds/job", "reads/job"],
      rows,
    ),
    "  user-space instructions only: the kernel's work per socket read and write is not counted, so compare reads/job too",
  ].join("\n");
}

/** Notes children attached to their results (e.g. an engine workaround that kicked in), one line per distinct note. */
function footnotes(section: Section): string[] {
  const byNote = new Map<string, string[]>();
  for (const row of section.rows) {
    const notes = ok(row)?.notes;
    if (!Array.isArray(notes)) continue;
    for (const note of notes) byNote.set(String(note), [...(byNote.get(String(note)) ?? []), row.label]);
  }
  return [...byNote].map(([note, labels]) =>
    `  note (${
      labels.length === section.rows.filter((r) => r.family === "edgekiq" && ok(r)).length
        ? "every edgekiq row"
        : labels.join("; ")
    }): ${note}`
  );
}

/**
 * The Redis cost of a job, from the drain scenarios: Redis main-thread CPU
 * (INFO cpu) and commands (total_commands_processed) per job, around the
 * seeding push and around the drain. One Redis core is what a whole fleet
 * shares, so this is the fleet's ceiling.
 */
export function formatRedisCost(sections: Section[]): string | undefined {
  const rows: string[][] = [];
  for (const section of sections) {
    if (!section.id.startsWith("drain-")) continue;
    for (const row of section.rows) {
      const redis = ok(row)?.redis;
      if (!redis?.push || !redis.drain) continue;
      const { push, drain } = redis;
      rows.push([
        `${row.label}, ${section.id.slice("drain-".length)}`,
        num(push.us, 2),
        num(drain.us, 2),
        num(push.us + drain.us, 2),
        num(push.commands, 2),
        num(drain.commands, 2),
        num(push.commands + drain.commands, 2),
        num(push.reads + drain.reads, 3),
      ]);
    }
  }
  if (rows.length === 0) return undefined;
  return [
    "== Redis cost per job: main-thread CPU (INFO cpu) and commands (Lua's inner ones included), push and drain ==",
    table(["system", "push µs", "drain µs", "total µs", "push cmds", "drain cmds", "total cmds", "reads"], rows),
    "  reads = socket reads Redis handled per job (total_reads_processed), about one per client round trip",
  ].join("\n");
}

/** Formats the target checks. */
export function formatTargets(targets: TargetCheck[]): string {
  const rows = targets.map((t) => [t.name, t.goal, t.measured, t.met === null ? "n/a" : t.met ? "met" : "MISSED"]);
  return ["== targets ==", table(["target", "goal", "measured", "status"], rows)].join("\n");
}

/** Writes results.json and results.svg into `dir`. */
export function writeReport(dir: string, report: Report): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}/results.json`, JSON.stringify(report, null, 2) + "\n");
  writeFileSync(`${dir}/results.svg`, svg(report));
}

export const colors: Record<Row["family"], string> = {
  edgekiq: "#2f7d32",
  bullmq: "#c0392b",
  sidekiq: "#8e44ad",
  baseline: "#7f8c8d",
};

export function escapeXml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/**
 * A horizontal bar chart of jobs/s: one group per throughput scenario, one
 * bar per system, each group scaled to its own fastest system.
 */
export function svg(report: Report): string {
  const width = 900;
  const labelWidth = 300;
  const barMax = width - labelWidth - 110;
  const barHeight = 16;
  const gap = 4;
  const parts: string[] = [];
  let y = 40;
  for (const section of report.sections) {
    if (section.metric !== "jobsPerSec") continue;
    const bars = section.rows.map((row) => ({ row, value: ok(row)?.jobsPerSec ?? 0 }));
    const max = Math.max(1, ...bars.map((b) => b.value));
    parts.push(`<text x="10" y="${y}" font-weight="bold">${escapeXml(section.title)}</text>`);
    y += 8;
    for (const { row, value } of bars) {
      const w = Math.max(value > 0 ? 1 : 0, Math.round((value / max) * barMax));
      const note = value > 0 ? `${num(value)} jobs/s` : escapeXml(row.outcome.status);
      parts.push(
        `<text x="${labelWidth - 6}" y="${y + barHeight - 4}" text-anchor="end">${escapeXml(row.label)}</text>`,
        `<rect x="${labelWidth}" y="${y}" width="${w}" height="${barHeight}" fill="${colors[row.family]}"/>`,
        `<text x="${labelWidth + w + 6}" y="${y + barHeight - 4}">${note}</text>`,
      );
      y += barHeight + gap;
    }
    y += 24;
  }
  const legend = (Object.keys(colors) as Row["family"][]).map((family, i) =>
    `<rect x="${10 + i * 130}" y="${y}" width="12" height="12" fill="${colors[family]}"/>` +
    `<text x="${28 + i * 130}" y="${y + 11}">${family}</text>`
  );
  const height = y + 30;
  const title = `edgekiq vs BullMQ vs Sidekiq: jobs/s (${escapeXml(String(report.meta.date ?? ""))})`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" ` +
    `font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="20" font-size="15" font-weight="bold">${title}</text>`,
    ...parts,
    ...legend,
    `</svg>`,
    "",
  ].join("\n");
}
