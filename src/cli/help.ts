/**
 * The `edgekiq --help` text. It states the bounds from {@link LIMITS},
 * what `enqueue` checks with and without `-r`, `top`'s keys and `web`'s
 * rules for credentials.
 *
 * @module
 */
import { LIMITS } from "./args.ts";

/** The `--help` text. */
export const HELP = `edgekiq: Sidekiq's job model for Node, Bun and Deno

Usage:
  edgekiq [run] -r <jobs module> [options]     run a worker
  edgekiq enqueue <Class> [--args '<json array>'] [-q queue] [--in seconds] [-r <jobs module>]
  edgekiq stats                                 processed, failed, queues, sets, processes
  edgekiq top [-i seconds]                      live terminal view; keys quiet/stop processes, retry/kill jobs
  edgekiq web [--port 3000] [--host 127.0.0.1]  serve the dashboard (password from EDGEKIQ_WEB_PASSWORD)
  edgekiq queue pause|resume <name>             stop (or restart) every edgekiq process taking a queue's jobs
  edgekiq cancel <jid>                          stop a job wherever it runs (workers with jobCancellation())
                                                and skip its waiting copies; an iterable job stops at its next flush

Worker options:
  -r, --require <file>       module whose exports are the jobs (every defineJob() result counts);
                             it may also export \`config\` (same keys as the config file)
  -q, --queue <name[,weight]> queue to process, repeatable (default: default; weight 0-${LIMITS.weight})
  -c, --concurrency <n>      jobs run at once (default 10, at most ${LIMITS.concurrency})
  -t, --timeout <seconds>    shutdown timeout before running jobs are put back (default 25, at most
                             ${LIMITS.timeout})
  -g, --tag <tag>            process tag shown in the Web UI (default: the directory name)

enqueue:
  With -r (or a config file's require), the job's definition is used: its queue (unless -q) and retry, and
  --args is checked against its args schema before anything is written; a class the module does
  not export is an error. Without -r, the class name is pushed as is: queue 'default' (or -q),
  Sidekiq's default retry (25), and --args is only checked to be a JSON array, so a job a Ruby
  or other worker runs can be pushed. --in is at most ${LIMITS.in} seconds (ten years).

top:
  -i, --interval <seconds>   refresh every (default 2, 0.2-${LIMITS.interval}). Tab moves between
                             Processes, Retries and Dead, arrows select; t quiets and s stops a process,
                             r retries, x kills and d deletes an entry (s, x, d ask first); ? lists the
                             keys, q quits.

web:
  -p, --port <n>             port (default 3000; 0 picks a free one)
      --host <address>       address to listen on (default 127.0.0.1, this machine only)
      --user <name>          basic-auth user (default admin, or EDGEKIQ_WEB_USER)
      --password <pw>        basic-auth password; prefer EDGEKIQ_WEB_PASSWORD (a flag shows in ps)
      --no-auth              no password: allowed on a loopback address only
  Without a password and without --no-auth, web refuses to start. On Node it needs @hono/node-server
  (npm i hono @hono/node-server); Bun and Deno serve it themselves (hono still needed).

Common options:
  -C, --config <file>        config file: JSON { queues, concurrency, timeout, tag, require, redisUrl, ...,
                             environments: { production: { ... } } }, or Sidekiq's sidekiq.yml (.yml/.yaml:
                             :concurrency:, :queues: with [name, weight], :timeout:, :tag:, :labels:,
                             :capsules:, environment sections; no ERB)
  -e, --environment <name>   config section to apply (default: APP_ENV, NODE_ENV or development)
      --redis-url <url>      redis://, rediss:// (TCP, needs the ioredis package except on Bun),
                             redis-cluster://host:port (a Redis Cluster through one seed node;
                             rediss-cluster:// for TLS; needs ioredis) or
                             https:// (Upstash REST, needs @upstash/redis; token from
                             UPSTASH_REDIS_REST_TOKEN or EDGEKIQ_REDIS_TOKEN). Default: REDIS_URL,
                             UPSTASH_REDIS_REST_URL, then redis://127.0.0.1:6379. Passwords are
                             never printed.
      --shards <n>           the namespace is sharded n ways over a Redis Cluster (the workers' and
                             clients' \`shards\`, 1-${LIMITS.shards}): run serves every shard, the others
                             read or write all of them
      --json, --no-json      JSON log lines (default: JSON unless stdout is a terminal); stats --json
                             prints one JSON object
  -v, --verbose              debug logging, and the stack of an error loading the jobs module
  -h, --help                 this text
  -V, --version              print the version

Precedence: flags, then the config file's environment section, the config file, the module's
\`config\` export, then defaults. Bad flags, config or jobs modules exit with code 2.

TypeScript jobs modules: Bun (\`bunx --bun edgekiq\`) and Deno (\`deno run -A npm:edgekiq\`) load
them directly. Node needs a loader: \`npx tsx node_modules/.bin/edgekiq -r jobs.ts\`, or
\`node --experimental-strip-types node_modules/.bin/edgekiq -r jobs.ts\` (Node 22.6+), or compile
the module to JavaScript.
`;
