/**
 * Test helpers for running code in workerd (Cloudflare's runtime) through
 * miniflare: bundle an entry as an edge app would be bundled, start it, and
 * forward its outbound requests from Node. Node only: miniflare drives the
 * workerd binary from Node.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** A worker running in workerd. */
export interface WorkerdApp {
  // deno-lint-ignore no-explicit-any
  readonly mf: any;
  /** What the worker printed (console.log, uncaught errors). */
  readonly output: () => string;
  dispose(): Promise<void>;
}

/** Bundles an entry (a file under the repository, or source text resolved from its root) into one ES module for workerd. */
export async function bundleForWorkerd(entry: { file: string } | { contents: string }): Promise<string> {
  const esbuild = await import("esbuild");
  const bundle = await esbuild.build({
    ...("file" in entry
      ? { entryPoints: [join(root, entry.file)] }
      : { stdin: { contents: entry.contents, resolveDir: root, loader: "ts" as const } }),
    bundle: true,
    format: "esm",
    platform: "neutral",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["browser", "module", "main"],
    target: "es2022",
    write: false,
    logLevel: "silent",
  });
  return bundle.outputFiles[0].text;
}

/** Forwards a request the worker made to its real address (workerd's outbound service runs in Node). */
export async function forward(request: Request, body?: string): Promise<Response> {
  const headers = new Headers(request.headers);
  headers.delete("host");
  headers.delete("content-length");
  body ??= await request.text();
  return fetch(request.url, { method: request.method, headers, body: request.method === "GET" ? undefined : body });
}

/**
 * Starts `code` (an ES module) in workerd with `bindings`. Outbound requests
 * go to `outbound`, or are forwarded as they are.
 */
export async function startWorkerd(
  code: string,
  options: { bindings?: Record<string, string>; outbound?: (request: Request) => Promise<Response> } = {},
): Promise<WorkerdApp> {
  const dir = mkdtempSync(join(tmpdir(), "edgekiq-workerd-"));
  writeFileSync(join(dir, "worker.mjs"), code);
  let output = "";
  const { Miniflare } = await import("miniflare");
  const mf = new Miniflare({
    modules: true,
    scriptPath: join(dir, "worker.mjs"),
    modulesRoot: dir,
    compatibilityDate: "2025-01-01",
    bindings: options.bindings ?? {},
    outboundService: options.outbound ?? ((request: Request) => forward(request)),
    handleRuntimeStdio(stdout: NodeJS.ReadableStream, stderr: NodeJS.ReadableStream) {
      stdout.on("data", (d) => (output += d));
      stderr.on("data", (d) => (output += d));
    },
  });
  const dispose = async () => {
    await mf.dispose();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await mf.ready;
  } catch (error) {
    await dispose().catch(() => {});
    throw new Error(`${(error as Error).message}\nworkerd output:\n${output}`);
  }
  return { mf, output: () => output, dispose };
}
