import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { VERSION } from "../mod.ts";
import { impureFiles } from "./support/purity.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const deno = JSON.parse(readFileSync(join(root, "deno.json"), "utf8"));

describe("packaging", () => {
  it("npm and JSR export the same subpaths, pointing at the same sources", () => {
    assert.deepEqual(Object.keys(pkg.exports).sort(), Object.keys(deno.exports).sort());
    for (const [subpath, target] of Object.entries(pkg.exports as Record<string, { import: string }>)) {
      const source = (deno.exports[subpath] as string).replace(/^\.\//, "").replace(/\.ts$/, ".js");
      assert.equal(target.import, `./dist/${source}`, `${subpath} points at the built ${source}`);
    }
  });

  it("has one version everywhere", () => {
    assert.equal(pkg.version, VERSION);
    assert.equal(deno.version, VERSION);
  });

  it("keeps Redis clients optional peers, so one adapter never loads another's package", () => {
    for (const name of ["ioredis", "@upstash/redis"]) {
      assert.equal(pkg.peerDependenciesMeta[name]?.optional, true, `${name} is an optional peer`);
      assert.equal(pkg.dependencies[name], undefined, `${name} is not a hard dependency`);
    }
    const adapters = { ioredis: "ioredis", upstash: "@upstash/redis", bun: "bun" };
    for (const [file, own] of Object.entries(adapters)) {
      const source = readFileSync(join(root, "src/transport", `${file}.ts`), "utf8");
      for (const other of Object.values(adapters).filter((o) => o !== own)) {
        assert.doesNotMatch(source, new RegExp(`from ["']${other}["']`), `${file}.ts must not import ${other}`);
      }
    }
    const core = readFileSync(join(root, "mod.ts"), "utf8");
    assert.doesNotMatch(core, /transport\/(ioredis|upstash|bun)\.ts/, "the core entry loads no adapter");
  });
});

describe("core purity", () => {
  it("only src/runtime/, the adapters and the CLI touch node:*, Deno, Bun or process", () => {
    assert.deepEqual(impureFiles(root.replace(/\/$/, "")), []);
  });
});
