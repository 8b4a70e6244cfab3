/**
 * The `edgekiq` command's host glue: argv, files, module loading, terminal
 * detection and Redis clients, for Node, Bun and Deno. It names their
 * globals, so it is one of the few files outside `src/runtime/` that core
 * purity allows (as the transport adapters are): it sits beside the CLI it
 * serves because it imports the CLI's types and the adapters, and the
 * runtime layer must not import upward. The program itself is
 * `src/cli/main.ts`, which stays web-standard.
 *
 * @module
 */
import { readFile, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { CliHost } from "./main.ts";
import type { Transport } from "../transport/transport.ts";
import { currentRuntime } from "../runtime/detect.ts";

// deno-lint-ignore no-explicit-any
const g = globalThis as any;

/**
 * The host the CLI runs on.
 *
 * @example
 * ```ts
 * const code = await runCli(cliHost());
 * ```
 */
export function cliHost(): CliHost {
  const runtime = currentRuntime();
  const deno = runtime.key === "deno" ? g.Deno : undefined;
  const proc = g.process;
  return {
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
          return (await import("../transport/upstash.ts")).upstashTransport({ url: choice.url, token: choice.token! });
        case "bun":
          return (await import("../transport/bun.ts")).bunTransport({ url: choice.url });
        default:
          return (await import("../transport/ioredis.ts")).ioredisTransport({ url: choice.url });
      }
    },
  };
}

/**
 * Ends the command. After a clean run everything is closed and the process
 * ends by itself; if a stray handle (a user's open socket, say) keeps it
 * alive, say so after 5 s and go.
 *
 * @example
 * ```ts
 * finishCli(await runCli(cliHost()));
 * ```
 */
export function finishCli(code: number): void {
  const runtime = currentRuntime();
  if (code !== 0) return runtime.exit(code);
  const timer = setTimeout(() => {
    runtime.writeErr("edgekiq: something kept the process alive after shutdown; exiting");
    runtime.exit(0);
  }, 5000);
  if (runtime.key === "deno") g.Deno.unrefTimer(timer);
  else timer.unref?.();
}
