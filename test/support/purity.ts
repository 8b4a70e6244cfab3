/**
 * Core purity: only src/runtime/, the transport adapters and the CLI's
 * host glue may touch node:*, Deno, Bun or process. Everything else must run
 * on an edge runtime. Comments are stripped first, so prose may say "process".
 *
 * src/cli/host.ts is allowed by name, like an adapter: it is the CLI's one
 * contact with the host (argv, files, importing the jobs module, opening
 * Redis clients). It lives beside the CLI rather than in src/runtime/
 * because it imports the CLI's types and the adapters, and the runtime
 * layer must not import upward. The rest of src/cli/ stays web-standard.
 *
 * Run directly (`tsx test/support/purity.ts`) it prints offenders and exits 1.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ALLOWED = /^src\/(runtime\/|transport\/adapters\/(ioredis|cluster|bun|upstash)\/|cli\/host\.ts$)/;
const IMPURE = /from\s+["']node:|(?<![\w$.])(?:process|Deno|Bun)\./;

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

function stripComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
}

/** Files outside the allowed places that use a runtime global or node:*. */
export function impureFiles(root: string): string[] {
  return walk(join(root, "src"))
    .map((p) => p.slice(root.length + 1).replace(/\\/g, "/"))
    .filter((rel) => /\.tsx?$/.test(rel) && !ALLOWED.test(rel))
    .filter((rel) => IMPURE.test(stripComments(readFileSync(join(root, rel), "utf8"))));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const offenders = impureFiles(fileURLToPath(new URL("../..", import.meta.url)).replace(/\/$/, ""));
  if (offenders.length) {
    console.error(
      `Core purity violated (node:*, Deno, Bun or process outside src/runtime/, the adapters and src/cli/host.ts):\n  ${
        offenders.join("\n  ")
      }`,
    );
    process.exit(1);
  }
  console.log("core purity: ok");
}
