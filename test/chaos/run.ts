/**
 * `npm run chaos`: faults against real redis-servers and real worker
 * processes, with a ledger outside Redis, and one table row per scenario:
 * pushed / ran / lost / duplicated (and its bound) / dead / drain time.
 *
 *   npm run chaos                        # every scenario, full size (~6 min on 2 cores)
 *   npm run chaos -- --short             # small and fast, for CI (< 3 min); skips the full-only scenarios
 *   npm run chaos -- --runtime bun       # workers on Bun (or deno); default node
 *   npm run chaos -- --transport bun     # workers on Bun's RedisClient (implies --runtime bun); default ioredis
 *   npm run chaos -- --only sigkill-loop,poison-pill
 *   npm run chaos -- --keep              # keep every scenario's directory (logs, ledgers, AOF)
 *
 * Exits 1 if any scenario loses a job, exceeds its duplicate bound, buries
 * an innocent job, leaves anything in Redis or fails its own checks; the
 * failing scenario's directory (worker logs, ledgers, redis.log) is kept and
 * printed. Never touches the Redis on 6379: every scenario starts its own.
 */
import process from "node:process";
import { type ChaosTransport, type Row, runScenario } from "./harness.ts";
import { prepareWorker, type Runtime } from "./fleet.ts";
import { scenarios } from "./scenarios.ts";
import { runtimeUnavailable } from "../bench/commands.ts";

function options(): { short: boolean; runtime: Runtime; transport: ChaosTransport; only: string[]; keep: boolean } {
  const argv = process.argv.slice(2);
  const value = (name: string): string | undefined => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  };
  const known = new Set(["--short", "--keep", "--runtime", "--transport", "--only"]);
  for (const a of argv) {
    if (a.startsWith("--") && !known.has(a.split("=")[0])) throw new Error(`unknown option ${a}`);
  }
  const transport = (value("transport") ?? "ioredis") as ChaosTransport;
  if (!["ioredis", "bun"].includes(transport)) throw new Error(`--transport must be ioredis or bun: got ${transport}`);
  const runtime = (value("runtime") ?? (transport === "bun" ? "bun" : "node")) as Runtime;
  if (!["node", "bun", "deno"].includes(runtime)) {
    throw new Error(`--runtime must be node, bun or deno: got ${runtime}`);
  }
  if (transport === "bun" && runtime !== "bun") throw new Error(`--transport bun needs --runtime bun: got ${runtime}`);
  const only = (value("only") ?? "").split(",").map((s) => s.trim()).filter(Boolean);
  const ids = scenarios.map((s) => s.id);
  for (const o of only) if (!ids.includes(o)) throw new Error(`--only ${o}: no such scenario (${ids.join(", ")})`);
  return { short: argv.includes("--short"), runtime, transport, only, keep: argv.includes("--keep") };
}

function table(rows: Row[]): string {
  const header = [
    "scenario",
    "pushed",
    "ran",
    "lost",
    "dup",
    "dup bound",
    "dead",
    "drain s",
    "faults",
    "dup/fault",
    "in flight/fault",
    "result",
  ];
  const perFault = (n: number, r: Row) => (r.faults ? (n / r.faults).toFixed(1) : "-");
  const cells = rows.map((r) => [
    r.id,
    String(r.pushed),
    String(r.ran),
    String(r.lost),
    String(r.duplicated),
    String(r.bound),
    String(r.dead),
    Number.isFinite(r.drainSeconds) ? r.drainSeconds.toFixed(1) : "-",
    String(r.faults),
    perFault(r.duplicated, r),
    perFault(r.bound, r),
    r.passed ? "ok" : "FAIL",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (c: string[]) =>
    `| ${c.map((v, i) => (i === 0 ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join(" | ")} |`;
  return [line(header), `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`, ...cells.map(line)].join("\n");
}

const log = (line: string) => process.stderr.write(`[chaos ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

async function main(): Promise<number> {
  const opts = options();
  // Ctrl-C: exit through process.exit so the workers and servers are stopped on the way out.
  process.once("SIGINT", () => process.exit(130));
  process.once("SIGTERM", () => process.exit(143));
  const unavailable = runtimeUnavailable(opts.runtime);
  if (unavailable) throw new Error(unavailable);
  const selected = scenarios.filter((s) => opts.only.length ? opts.only.includes(s.id) : !(opts.short && s.fullOnly));
  // The whole suite is bounded too: a hung scenario must not hang CI.
  const limitS = opts.short ? 300 : 1500;
  setTimeout(() => {
    log(`suite exceeded ${limitS} s; giving up`);
    process.exit(1);
  }, limitS * 1000).unref();
  await prepareWorker(opts.runtime);
  const started = performance.now();
  log(`${selected.length} scenarios, workers on ${opts.runtime} over ${opts.transport}${opts.short ? ", short" : ""}`);
  const rows: Row[] = [];
  for (const scenario of selected) {
    const t0 = performance.now();
    log(`${scenario.id} ...`);
    const row = await runScenario(scenario, opts);
    rows.push(row);
    log(
      `${scenario.id}: ${
        row.passed ? "ok" : "FAIL"
      } (pushed ${row.pushed}, lost ${row.lost}, dup ${row.duplicated}/${row.bound}, ` +
        `dead ${row.dead}; ${((performance.now() - t0) / 1000).toFixed(1)} s)`,
    );
  }
  const out = [
    `edgekiq chaos suite: workers on ${opts.runtime} over ${opts.transport}, ${opts.short ? "short" : "full"} run, ` +
    `${((performance.now() - started) / 1000).toFixed(0)} s`,
    "dup bound = sum over faults of (worker processes hit) x 2 x (concurrency + prefetch); " +
    "in flight/fault = dup bound / faults",
    "",
    table(rows),
    "",
  ];
  for (const row of rows) {
    for (const n of row.notes) out.push(`- ${row.id}: ${n}`);
    for (const f of row.failures) out.push(`- ${row.id}: FAILED: ${f}`);
    if (!row.passed) out.push(`- ${row.id}: logs, ledgers and redis.log kept in ${row.dir}`);
  }
  process.stdout.write(out.join("\n") + "\n");
  return rows.every((r) => r.passed) ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`chaos suite failed: ${(error as Error)?.stack ?? error}\n`);
    process.exit(1);
  },
);
