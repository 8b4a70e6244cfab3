/**
 * The little programs the packaging smoke test writes into its empty
 * project: a run script (load every export, push three jobs, drain them) in
 * ESM, CommonJS and Deno flavours, and a jobs module for the CLI.
 */

/** A run script: imports every entry in `$ENTRIES`, pushes 3 jobs and drains them over `$URL`. */
export function runScript(options: {
  imports: "esm" | "require" | "deno";
  transport: "memory" | "ioredis" | "bun";
  label: string;
}): string {
  const { imports, transport, label } = options;
  const from = (entry: string) => (imports === "deno" ? `npm:${entry}` : entry);
  const lines: string[] = [];
  const load = (names: string, entry: string) =>
    lines.push(
      imports === "require"
        ? `const { ${names} } = require(${JSON.stringify(entry)});`
        : `import { ${names} } from ${JSON.stringify(from(entry))};`,
    );
  load("createClient, defineJob, drain, memoryTransport", "edgekiq");
  if (transport === "ioredis") load("ioredisTransport", "edgekiq/ioredis");
  if (transport === "bun") load("bunTransport", "edgekiq/bun");
  const make = transport === "memory"
    ? "memoryTransport()"
    : transport === "bun"
    ? "bunTransport({ url: process.env.URL })"
    : "ioredisTransport({ url: process.env.URL })";
  const body = `
const entries = (process.env.ENTRIES ?? "").split(",").filter(Boolean);
for (const entry of entries) {
  const mod = ${imports === "require" ? "require(entry)" : "await import(entry)"};
  if (Object.keys(mod).length === 0) throw new Error(entry + " exports nothing");
}
const ran = [];
const Hello = defineJob({ name: "Hello", perform(_ctx, n) { ran.push(n); } });
const transport = ${make};
const queue = "smoke-${label}";
await createClient({ transport }).pushBulk(Hello, [[1], [2], [3]], { queue });
const result = await drain({ transport, jobs: [Hello], queues: [queue], budgetMs: 20000 });
await transport.close();
if (result.processed !== 3 || ran.sort().join(",") !== "1,2,3") {
  console.error(JSON.stringify({ result, ran }));
  process.exit(1);
}
console.log("${label}: " + entries.length + " exports loaded, pushed 3, ran " + ran.length);
`;
  return imports === "require"
    ? `${lines.join("\n")}\n(async () => {${body}})().catch((e) => { console.error(e); process.exit(1); });\n`
    : `${lines.join("\n")}\n${body}`;
}

/** A jobs module for the CLI: `Hello` prints `hello <who> <jid>`. */
export function jobsModule(kind: "js" | "ts"): string {
  return `import { defineJob } from "edgekiq";

export const Hello = defineJob({
  name: "Hello",
  perform(ctx, who${kind === "ts" ? ": string" : ""}) {
    console.log(\`hello \${who} \${ctx.jid}\`);
  },
});
`;
}
