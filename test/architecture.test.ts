/**
 * The layers of ARCHITECTURE.md, enforced: every import in `src/` (type-only
 * ones included, static and dynamic) points to the same layer or one below,
 * and the import graph has no cycles.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const src = join(root, "src");

/** Lowest first. A file's layer is the first rule whose pattern matches its path under src/. */
export const LAYERS: ReadonlyArray<readonly [name: string, pattern: RegExp]> = [
  ["foundation", /^(errors|standard_schema|version|sanitize|queue_name|json_safe|payload|keys|logger)\.ts$|^runtime\//],
  ["redis", /^transport\/|^scripts\//],
  [
    "jobs",
    /^(job|registry|current_job|push_options|push_plan|push_error|client_middleware|server_middleware|client|dead_set_rules|activejob|push_result|write_guard)\.ts$|^metrics\/|^periodic\/|^unique\//,
  ],
  ["admin", /^api\//],
  ["engine", /^server\//],
  ["features", /^middleware\/|^iterable\//],
  ["surfaces", /^(testing|extend|cli)\.ts$|^web\/|^cli\//],
];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : /\.tsx?$/.test(name) ? [path] : [];
  });
}

function layerOf(path: string): number {
  const rel = relative(src, path);
  const i = LAYERS.findIndex(([, pattern]) => pattern.test(rel));
  if (i < 0) throw new Error(`${rel} is in no layer of ARCHITECTURE.md: add it to LAYERS`);
  return i;
}

/** Every relative import of a file, type-only and dynamic ones included, as absolute paths. */
function importsOf(path: string): string[] {
  const text = readFileSync(path, "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
  const found = new Set<string>();
  for (const m of text.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)) {
    found.add(resolve(dirname(path), m[1]));
  }
  return [...found].filter((p) => p.startsWith(src));
}

describe("architecture", () => {
  const graph = new Map(files(src).map((f) => [f, importsOf(f)]));

  it("imports point to the same layer or lower, never up", () => {
    const upward: string[] = [];
    for (const [file, deps] of graph) {
      for (const dep of deps) {
        if (layerOf(dep) > layerOf(file)) {
          upward.push(
            `${relative(src, file)} (${LAYERS[layerOf(file)][0]}) -> ${relative(src, dep)} (${
              LAYERS[layerOf(dep)][0]
            })`,
          );
        }
      }
    }
    assert.deepEqual(upward, []);
  });

  it("has no import cycles, type-only imports included", () => {
    const state = new Map<string, "open" | "done">();
    const cycles: string[] = [];
    const visit = (file: string, path: string[]) => {
      if (state.get(file) === "done") return;
      if (state.get(file) === "open") {
        cycles.push([...path.slice(path.indexOf(file)), file].map((f) => relative(src, f)).join(" -> "));
        return;
      }
      state.set(file, "open");
      for (const dep of graph.get(file) ?? []) visit(dep, [...path, file]);
      state.set(file, "done");
    };
    for (const file of graph.keys()) visit(file, []);
    assert.deepEqual(cycles, []);
  });
});
