/**
 * The layers of ARCHITECTURE.md, enforced, with ARCHITECTURE.md's table as
 * the one list of layers: every import (type-only ones included, static and
 * dynamic) points to the same layer or one below; the import graph has no
 * cycles; a feature folder imports no other feature's folder; and the root
 * entry point's static imports never load hono (feature pages load lazily).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** ARCHITECTURE.md's layer table, lowest first: each layer's name and paths (repo-relative; `dir/` is a folder). */
export function readLayers(markdown: string): Array<{ name: string; paths: string[] }> {
  const table = /<!-- layers:start -->([\s\S]*?)<!-- layers:end -->/.exec(markdown)?.[1];
  if (!table) throw new Error("ARCHITECTURE.md has no <!-- layers:start --> table");
  return table.split("\n")
    .filter((line) => line.startsWith("|") && !/^\|\s*(-+|layer)\s*\|/.test(line))
    .map((line) => {
      const cells = line.split("|").map((c) => c.trim());
      return { name: cells[1], paths: [...cells[3].matchAll(/`([^`]+)`/g)].map((m) => m[1]) };
    });
}

const LAYERS = readLayers(readFileSync(join(root, "ARCHITECTURE.md"), "utf8"));

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : /\.tsx?$/.test(name) ? [path] : [];
  });
}

/** The layer of a repo-relative path: the layer whose path matches it most closely. */
function layerOf(rel: string): number {
  let best = -1;
  let bestLength = -1;
  LAYERS.forEach((layer, i) => {
    for (const path of layer.paths) {
      const hit = path.endsWith("/") ? rel.startsWith(path) : rel === path;
      if (hit && path.length > bestLength) [best, bestLength] = [i, path.length];
    }
  });
  if (best < 0) throw new Error(`${rel} is in no layer of ARCHITECTURE.md: add it to the layers table`);
  return best;
}

/** Relative imports of a file (type-only and dynamic ones included), as absolute paths, and whether each is static. */
function importsOf(path: string): Array<{ path: string; dynamic: boolean; typeOnly: boolean }> {
  const text = readFileSync(path, "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
  const found: Array<{ path: string; dynamic: boolean; typeOnly: boolean }> = [];
  for (
    const m of text.matchAll(
      /(import\s+type\b[^;]*?from|export\s+type\b[^;]*?from|from|import)\s*(\()?\s*["'](\.{1,2}\/[^"']+)["']/g,
    )
  ) {
    found.push({
      path: resolve(dirname(path), m[3]),
      dynamic: m[2] === "(",
      typeOnly: /^(import|export)\s+type\b/.test(m[1]),
    });
  }
  return found.filter((i) => i.path.startsWith(root) && !i.path.includes("node_modules"));
}

/**
 * The entry points that hand users features ready to use: the root (its
 * defaults), the web surface (dashboard, Prometheus, cron and event routes)
 * and the test harness. Every other file outside src/features/ (the CLI
 * and `edgekiq/api` included) names no feature.
 */
const COMPOSING_ENTRY_POINTS = ["mod.ts", "src/web/mod.ts", "src/testing.ts", "src/extend.ts"];

const sources = [...files(join(root, "src")), join(root, "mod.ts")];
const graph = new Map(sources.map((f) => [f, importsOf(f)]));
const rel = (p: string) => relative(root, p).replace(/\\/g, "/");

describe("architecture", () => {
  it("reads every layer from ARCHITECTURE.md's table", () => {
    assert.deepEqual(LAYERS.map((l) => l.name), [
      "foundation",
      "redis",
      "jobs",
      "admin",
      "engine",
      "web",
      "features",
      "surfaces",
    ]);
  });

  it("imports point to the same layer or lower, never up", () => {
    const upward: string[] = [];
    for (const [file, deps] of graph) {
      for (const dep of deps) {
        const [from, to] = [layerOf(rel(file)), layerOf(rel(dep.path))];
        if (to > from) upward.push(`${rel(file)} (${LAYERS[from].name}) -> ${rel(dep.path)} (${LAYERS[to].name})`);
      }
    }
    assert.deepEqual(upward, []);
  });

  it("a feature folder imports no other feature's folder (only the Feature contract)", () => {
    const crossing: string[] = [];
    const featureOf = (p: string) => /^src\/features\/([^/]+)\//.exec(rel(p))?.[1];
    for (const [file, deps] of graph) {
      const own = featureOf(file);
      // The preset composes the built-in features (defaults, option types): it is not a feature itself.
      if (!own || own === "preset") continue;
      for (const dep of deps) {
        const other = featureOf(dep.path);
        if (other && other !== own) crossing.push(`${rel(file)} -> ${rel(dep.path)}`);
      }
    }
    assert.deepEqual(crossing, []);
  });

  it("the core never imports a feature: only src/features/ and the entry points that compose them do", () => {
    const inward: string[] = [];
    for (const [file, deps] of graph) {
      if (rel(file).startsWith("src/features/") || COMPOSING_ENTRY_POINTS.includes(rel(file))) continue;
      for (const dep of deps) {
        if (rel(dep.path).startsWith("src/features/")) inward.push(`${rel(file)} -> ${rel(dep.path)}`);
      }
    }
    assert.deepEqual(inward, []);
  });

  it("the root entry point's static imports load no .tsx page and no hono (feature pages load lazily)", () => {
    const seen = new Set<string>();
    const loaded: string[] = [];
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      if (file.endsWith(".tsx")) loaded.push(rel(file));
      const text = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
      if (/^\s*import\s+(?!type\b)[^;]*?from\s+["']hono/m.test(text)) loaded.push(`${rel(file)} imports hono`);
      for (const dep of graph.get(file) ?? []) if (!dep.dynamic && !dep.typeOnly) visit(dep.path);
    };
    visit(join(root, "mod.ts"));
    assert.deepEqual(loaded, []);
  });

  it("has no import cycles, type-only imports included", () => {
    const state = new Map<string, "open" | "done">();
    const cycles: string[] = [];
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === "done") return;
      if (state.get(file) === "open") {
        cycles.push([...path.slice(path.indexOf(file)), file].map(rel).join(" -> "));
        return;
      }
      state.set(file, "open");
      for (const dep of graph.get(file) ?? []) visit(dep.path, [...path, file]);
      state.set(file, "done");
    };
    for (const file of graph.keys()) visit(file, []);
    assert.deepEqual(cycles, []);
  });
});

describe("scripts", () => {
  it("every Lua script's text is printable: a NUL or other control byte stays an escape (`\\\\0` in the TypeScript)", async () => {
    const found: string[] = [];
    for (const file of files(join(root, "src"))) {
      if (!readFileSync(file, "utf8").includes("defineScript")) continue;
      const module: Record<string, unknown> = await import(file);
      for (const [name, value] of Object.entries(module)) {
        const lua = (value as { lua?: unknown } | null)?.lua;
        if (typeof lua !== "string") continue;
        found.push(name);
        // Lua reads "\0" in a script as a NUL; a raw byte in the text is fragile over JSON gateways and in logs.
        const at = [...lua].findIndex((ch) => ch < " " && ch !== "\n" && ch !== "\t" && ch !== "\r");
        assert.equal(at, -1, `${rel(file)} ${name}: a raw control byte at ${at}`);
      }
    }
    assert.ok(found.includes("FETCH") && found.length > 20, `scripts found: ${found.join(", ")}`);
  });
});

describe("names", () => {
  it("no two source files share a name, but for the names a folder qualifies", () => {
    // A feature folder's mod.ts, options.ts, push_guard.ts and claim_script.ts are named by their folder (one
    // per feature, as hono's adapters each have an index); scripts/ holds each Lua script under its own name, so
    // scripts/heartbeat.ts is the HEARTBEAT script beside server/heartbeat.ts's Heartbeat; the preset's
    // metrics_handler.ts is the web handler with the preset's features applied.
    const qualified = new Set([
      "mod.ts",
      "options.ts",
      "push_guard.ts",
      "claim_script.ts",
      "heartbeat.ts",
      "metrics_handler.ts",
    ]);
    const seen = new Map<string, string[]>();
    for (const file of files(join(root, "src"))) {
      const name = file.split(/[\\/]/).pop()!;
      if (!qualified.has(name)) seen.set(name, [...(seen.get(name) ?? []), rel(file)]);
    }
    assert.deepEqual([...seen.values()].filter((paths) => paths.length > 1), []);
  });
});
