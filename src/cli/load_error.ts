/**
 * Turns the ways a jobs module or a Redis client package fails to load into
 * one line that says what to do, instead of a runtime's stack trace:
 * TypeScript under plain Node, a package that is not installed, a module
 * that throws while it is imported.
 *
 * @module
 */
import type { RuntimeKey } from "../runtime/runtime.ts";
import { SetupError } from "./args.ts";
import { sanitize } from "../sanitize.ts";

/**
 * The package a failed import was looking for, when the failure is "not
 * installed" (Node, Bun and Deno word it differently), else undefined.
 *
 * @example
 * ```ts
 * missingPackage(new Error("Cannot find package 'ioredis' imported from /app/x.js")); // "ioredis"
 * missingPackage(new Error("Cannot find module '/app/missing.js'"));                 // undefined
 * ```
 */
export function missingPackage(error: unknown): string | undefined {
  const message = error instanceof Error ? error.message : String(error);
  const match = message.match(
    /(?:Cannot|Could not) find (?:a matching )?(?:npm )?(?:package|module)(?: for)? ['"`]([^'"`]+)['"`]/,
  ) ??
    message.match(/Import ['"`]([^'"`]+)['"`] not a dependency/); // Deno
  const specifier = match?.[1].replace(/^npm:/, "");
  if (!specifier || /^[./]|^[a-z]+:/i.test(specifier)) return undefined;
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/**
 * Where an error was thrown: the first `path:line[:column]` its stack names,
 * skipping the CLI's own loader (a module that fails to resolve is reported
 * from where the CLI imported it, which says nothing).
 */
function location(error: unknown): string | undefined {
  const stack = error instanceof Error ? String(error.stack ?? "") : "";
  for (const match of stack.matchAll(/(?:file:\/\/)?(\/[^\s()'"`]+\.[cm]?[jt]sx?):(\d+)(?::(\d+))?/g)) {
    if (/\/cli\/(main|host)\.[jt]s$/.test(match[1])) continue;
    return `${match[1]}:${match[2]}${match[3] ? `:${match[3]}` : ""}`;
  }
  return undefined;
}

/** A runtime's message as plain text: colour codes dropped, first line only (`-v` shows the rest). */
function firstLine(text: string): string {
  // deno-lint-ignore no-control-regex
  const plain = text.replace(/\x1b\[[0-9;]*m/g, "");
  const end = plain.indexOf("\n");
  return end === -1 ? plain : plain.slice(0, end);
}

/** What the user can run to install a package, on the runtime at hand. */
function installHint(name: string, runtime: RuntimeKey): string {
  return runtime === "bun"
    ? `bun add ${name}`
    : runtime === "deno"
    ? `npm i ${name} (or deno add npm:${name})`
    : `npm i ${name}`;
}

/** How the jobs module was launched, for the hint. */
export interface LoadContext {
  /** The flag or config key that named the module, e.g. `-r/--require`. */
  label: string;
  /** The module path as given. */
  path: string;
  runtime: RuntimeKey;
  /** `bunx` ran the command (bunx follows the bin's `#!/usr/bin/env node` line, so this is Node). */
  viaBunx: boolean;
}

/**
 * Explains why importing the jobs module failed, as a {@link SetupError}
 * (exit code 2) whose `cause` keeps the original error for `-v`.
 *
 * @example
 * ```ts
 * try { await import(path); } catch (e) {
 *   throw explainModuleError(e, { label: "-r/--require", path, runtime: "node", viaBunx: false });
 * }
 * ```
 */
export function explainModuleError(error: unknown, context: LoadContext): SetupError {
  const { label, path, runtime } = context;
  const code = (error as { code?: unknown })?.code;
  const shown = sanitize(path, 200);
  if (code === "ERR_UNKNOWN_FILE_EXTENSION" && /\.[cm]?tsx?$/i.test(path)) {
    const message = context.viaBunx
      ? `${label} ${shown} is TypeScript, and bunx ran edgekiq under Node (it follows the bin's ` +
        "#!/usr/bin/env node line): run `bunx --bun edgekiq ...` to run it on Bun"
      : `${label} ${shown} is TypeScript, which Node cannot import by itself: run ` +
        "`npx tsx node_modules/.bin/edgekiq ...` (or `node --experimental-strip-types` on Node 22.6+), " +
        "run it on Bun (`bunx --bun edgekiq`) or Deno (`deno run -A npm:edgekiq`), or compile it to JavaScript";
    return new SetupError(message, { cause: error });
  }
  const pkg = missingPackage(error);
  if (pkg) {
    return new SetupError(
      `${label} ${shown} imports '${sanitize(pkg, 100)}', which is not installed: ${installHint(pkg, runtime)}`,
      { cause: error },
    );
  }
  const name = error instanceof Error ? error.name : "thrown value";
  const text = firstLine(error instanceof Error ? error.message : String(error));
  const where = location(error);
  return new SetupError(
    `${label} ${shown} failed to load: ${sanitize(name, 60)}: ${sanitize(text, 300)}${
      where ? ` (at ${sanitize(where, 200)})` : ""
    }; run with -v for the stack`,
    { cause: error },
  );
}

/**
 * Explains a package that is missing (`ioredis` for TCP, `@upstash/redis`
 * for REST, `hono` and `@hono/node-server` for `edgekiq web`) as a
 * {@link SetupError}: "`what` needs the X package, which is not installed:
 * how to install it"; undefined when the failure is something else. `what`
 * is shown as given: pass a URL redacted.
 *
 * @example
 * ```ts
 * explainAdapterError(new Error("Cannot find package 'ioredis'"), { what: "redis://h:6379", runtime: "node" });
 * // SetupError: redis://h:6379 needs the ioredis package, which is not installed: npm i ioredis
 * ```
 */
export function explainAdapterError(
  error: unknown,
  { what, runtime }: { what: string; runtime: RuntimeKey },
): SetupError | undefined {
  const pkg = missingPackage(error);
  if (!pkg) return undefined;
  return new SetupError(
    `${what} needs the ${sanitize(pkg, 100)} package, which is not installed: ${installHint(pkg, runtime)}`,
    { cause: error },
  );
}
