#!/usr/bin/env node
/**
 * The `edgekiq` command: Sidekiq's `sidekiq` binary for Node, Bun and Deno.
 *
 * ```sh
 * npx edgekiq -r ./jobs.js -q critical,3 -q default -c 10   # a worker (INT/TERM stop it)
 * npx tsx src/cli.ts -r examples/cli-jobs.ts                # TypeScript jobs under Node
 * bun src/cli.ts -r examples/cli-jobs.ts                    # under Bun
 * deno run -A src/cli.ts -r examples/cli-jobs.ts            # under Deno
 * npx edgekiq enqueue HardJob --args '["bob", 5]' --in 60   # prints the jid
 * npx edgekiq stats
 * ```
 *
 * This file is the host glue (argv, files, module loading, Redis clients);
 * the program itself is `src/cli/main.ts`.
 *
 * @module
 */
import { readFile, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { type CliHost, runCli } from "./cli/main.ts";
import { currentRuntime } from "./runtime/detect.ts";
import type { Transport } from "./transport/transport.ts";

// deno-lint-ignore no-explicit-any
const g = globalThis as any;
const runtime = currentRuntime();
const deno = runtime.key === "deno" ? g.Deno : undefined;
const proc = g.process;

const host: CliHost = {
  argv: deno ? [...deno.args] : proc.argv.slice(2),
  runtime,
  runtimeVersion: deno
    ? `deno ${deno.version.deno}`
    : runtime.key === "bun"
    ? `bun ${g.Bun.version}`
    : `node ${proc.versions.node}`,
  stdoutIsTTY: deno ? deno.stdout.isTerminal() : Boolean(proc.stdout?.isTTY),
  cwd: () => (deno ? deno.cwd() : proc.cwd()),
  out: (line) => console.log(line),
  err: (line) => console.error(line),
  exists: (path) => stat(resolve(path)).then(() => true, () => false),
  readText: (path) => readFile(resolve(path), "utf8"),
  importModule: (path) => import(pathToFileURL(resolve(path)).href),
  async connect(choice): Promise<Transport> {
    switch (choice.kind) {
      case "upstash":
        return (await import("./transport/upstash.ts")).upstashTransport({ url: choice.url, token: choice.token! });
      case "bun":
        return (await import("./transport/bun.ts")).bunTransport({ url: choice.url });
      default:
        return (await import("./transport/ioredis.ts")).ioredisTransport({ url: choice.url });
    }
  },
};

const code = await runCli(host);
if (code !== 0) runtime.exit(code);
else {
  // Everything is closed, so the process should end now by itself. If a
  // stray handle (a user's open socket, say) keeps it alive, say so and go.
  const timer = setTimeout(() => {
    runtime.writeErr("edgekiq: something kept the process alive after shutdown; exiting");
    runtime.exit(0);
  }, 5000);
  if (deno) deno.unrefTimer(timer);
  else timer.unref?.();
}
