#!/usr/bin/env node
/**
 * The `edgekiq` command: Sidekiq's `sidekiq` binary for Node, Bun and Deno (all three).
 *
 * ```sh
 * npx edgekiq -r ./jobs.js -q critical,3 -q default -c 10   # a worker (INT/TERM stop it)
 * npx tsx node_modules/.bin/edgekiq -r ./jobs.ts            # TypeScript jobs under Node
 * bunx --bun edgekiq -r ./jobs.ts                           # under Bun
 * deno run -A npm:edgekiq -r ./jobs.ts                      # under Deno
 * npx edgekiq enqueue HardJob --args '["bob", 5]' --in 60   # prints the jid
 * npx edgekiq stats
 * ```
 *
 * The host glue (argv, files, module loading, Redis clients) is
 * `src/cli/host.ts`; the program itself is `src/cli/main.ts`.
 *
 * @module
 */
import { runCli } from "./cli/main.ts";
import { cliHost, finishCli } from "./cli/host.ts";

finishCli(await runCli(cliHost()));
