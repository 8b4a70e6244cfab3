/**
 * Each entry point exports exactly what test/fixtures/entry_points.json
 * lists: a change to the public surface is a deliberate edit of that file,
 * seen in review, never a side effect. Names are read from the entry
 * files' export statements (types included). Regenerate the snapshot with
 * `UPDATE_SNAPSHOT=1 npx tsx --test test/entry_points.test.ts`.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const deno = JSON.parse(readFileSync(join(root, "deno.json"), "utf8"));
const snapshotPath = join(root, "test/fixtures/entry_points.json");

/** The names an entry file exports, sorted (`type` for type-only ones). */
export function exportedNames(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const names = new Set<string>();
  for (const m of code.matchAll(/export\s+(type\s+)?\{([^}]*)\}/g)) {
    for (const part of m[2].split(",").map((p) => p.trim()).filter(Boolean)) {
      const typeOnly = Boolean(m[1]) || part.startsWith("type ");
      const name = part.replace(/^type\s+/, "").split(/\s+as\s+/).pop()!;
      names.add(typeOnly ? `type ${name}` : name);
    }
  }
  for (const m of code.matchAll(/export\s+(?:async\s+)?(function|const|class|interface|type)\s+([A-Za-z_$][\w$]*)/g)) {
    names.add(m[1] === "interface" || m[1] === "type" ? `type ${m[2]}` : m[2]);
  }
  return [...names].sort((a, b) => a.replace(/^type /, "").localeCompare(b.replace(/^type /, "")));
}

describe("entry points", () => {
  const actual: Record<string, string[]> = {};
  for (const [entry, file] of Object.entries(deno.exports as Record<string, string>)) {
    actual[entry] = exportedNames(readFileSync(join(root, file), "utf8"));
  }
  if (process.env.UPDATE_SNAPSHOT) writeFileSync(snapshotPath, JSON.stringify(actual, null, 2) + "\n");

  it("export exactly the committed list, each readable in one screen", () => {
    const expected = JSON.parse(readFileSync(snapshotPath, "utf8"));
    assert.deepEqual(actual, expected);
    for (const [entry, names] of Object.entries(actual)) {
      assert.ok(names.length <= 100, `${entry} exports ${names.length} names: split it by audience`);
    }
  });

  it("the root exports no internals", () => {
    for (const internal of ["validateArgs", "UNIQUE_FIELD", "StandardSchemaV1", "MetricsTrackerOptions", "runScript"]) {
      assert.ok(!actual["."].some((n) => n.replace(/^type /, "") === internal), `the root exports ${internal}`);
    }
  });
});
