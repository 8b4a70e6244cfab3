/**
 * The package's manifests agree with each other and with the code: npm and
 * JSR export the same entry points (driven by deno.json's map, so a new
 * entry is one line in each manifest), dependencies are what the code
 * imports, the tarball holds no tests, and core purity holds.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { VERSION } from "../mod.ts";
import { impureFiles } from "./support/purity.ts";
import { checkTarballFiles } from "./packaging/tarball.ts";

const root = fileURLToPath(new URL("..", import.meta.url)).replace(/\/$/, "");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const deno = JSON.parse(readFileSync(join(root, "deno.json"), "utf8"));

function sources(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    return statSync(join(root, path)).isDirectory() ? sources(path) : /\.tsx?$/.test(path) ? [path] : [];
  });
}

/** Bare specifiers a file imports (`from "hono"`, `import("ioredis")`), comments stripped. */
function bareImports(path: string): string[] {
  const code = readFileSync(join(root, path), "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const specifiers = [...code.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)["']([^"']+)["']/g)].map((m) => m[1]);
  return specifiers.filter((s) => !s.startsWith(".") && !s.startsWith("node:"))
    .map((s) => (s.startsWith("@") ? s.split("/").slice(0, 2).join("/") : s.split("/")[0]));
}

/** Files JSR publishes: under `publish.include`, not under `publish.exclude`. */
const published = sources("src").concat("mod.ts").filter((path) =>
  !(deno.publish.exclude as string[]).some((ex) => path === ex || path.startsWith(ex))
);

describe("packaging", () => {
  it("npm and JSR export the same entry points, npm's pointing at the built JSR sources", () => {
    assert.deepEqual(Object.keys(pkg.exports).sort(), Object.keys(deno.exports).sort());
    for (const [subpath, source] of Object.entries(deno.exports as Record<string, string>)) {
      const built = `./dist/${source.replace(/^\.\//, "").replace(/\.ts$/, "")}`;
      assert.deepEqual(
        pkg.exports[subpath],
        { types: `${built}.d.ts`, default: `${built}.js` },
        `${subpath}: { types, default } of ${source}, one condition for import and require`,
      );
      assert.ok(existsSync(join(root, source)), `${subpath}: ${source} exists`);
    }
    assert.equal(pkg.main, pkg.exports["."].default);
    assert.equal(pkg.types, pkg.exports["."].types);
  });

  it("has one version and one licence everywhere", () => {
    assert.equal(pkg.version, VERSION);
    assert.equal(deno.version, VERSION);
    assert.equal(pkg.license, "MIT");
    assert.equal(deno.license, "MIT");
    assert.match(readFileSync(join(root, "LICENSE"), "utf8"), /^MIT License\n/);
    assert.ok((deno.publish.include as string[]).includes("LICENSE"), "JSR publishes the LICENSE");
  });

  it("builds dist/ before packing, so a fresh clone packs a working package", () => {
    assert.equal(pkg.scripts.prepack, "npm run build");
    assert.match(pkg.scripts.build, /tsc -p tsconfig\.build\.json$/);
    assert.deepEqual(pkg.files.sort(), ["LICENSE", "README.md", "dist"]);
  });

  it("keeps every Redis client and hono optional peers, tested at a pinned devDependency", () => {
    for (const name of ["ioredis", "@upstash/redis", "hono", "@hono/node-server"]) {
      assert.equal(pkg.peerDependenciesMeta[name]?.optional, true, `${name} is an optional peer`);
      assert.equal(pkg.dependencies[name], undefined, `${name} is not a hard dependency`);
    }
    for (const name of Object.keys(pkg.peerDependencies)) {
      assert.match(pkg.devDependencies[name] ?? "", /^\d+\.\d+\.\d+$/, `${name} is tested at a pinned version`);
    }
    const adapters = { ioredis: "ioredis", upstash: "@upstash/redis", bun: "bun" };
    for (const [file, own] of Object.entries(adapters)) {
      const imported = bareImports(`src/transport/adapters/${file}/${file}_transport.ts`);
      for (const other of Object.values(adapters).filter((o) => o !== own)) {
        assert.ok(!imported.includes(other), `${file}.ts must not import ${other}`);
      }
    }
    const core = readFileSync(join(root, "mod.ts"), "utf8");
    assert.doesNotMatch(core, /adapters\/(ioredis|upstash|bun)\//, "the core entry loads no adapter");
  });

  it("imports hono only in the dashboard (edgekiq/web and features' pages), valibot, yaml and get-east-asian-width only in the CLI and croner only for periodic jobs (its dependencies)", () => {
    for (const path of sources("src").concat("mod.ts")) {
      const imported = bareImports(path);
      // A .tsx page loads hono/jsx; the architecture test checks the root entry never loads one.
      if (imported.includes("hono") || path.endsWith(".tsx")) {
        assert.match(
          path,
          /^src\/(web\/|features\/preset\/(dashboard|metrics_handler|cron_routes)\.ts$|features\/events\/event_routes\.ts$|features\/[^/]+\/[^/]+\.tsx$|cli\/)/,
          `${path} imports hono`,
        );
      }
      for (const cliOnly of ["valibot", "yaml", "get-east-asian-width"]) {
        if (imported.includes(cliOnly)) assert.match(path, /^src\/cli\//, `${path} imports ${cliOnly}`);
      }
      if (imported.includes("@hono/node-server")) {
        assert.equal(path, "src/cli/host.ts", `${path} imports @hono/node-server`);
      }
      if (imported.includes("croner")) assert.match(path, /^src\/features\/periodic\//, `${path} imports croner`);
    }
    assert.deepEqual(Object.keys(pkg.dependencies).sort(), ["croner", "get-east-asian-width", "valibot", "yaml"]);
  });

  it("maps every bare import of the JSR package, and publishes no CLI file", () => {
    const mapped = Object.keys(deno.imports);
    for (const path of published) {
      assert.doesNotMatch(path, /^src\/cli(\.ts|\/)/, `${path} is CLI code`);
      for (const name of bareImports(path)) {
        assert.ok(mapped.includes(name), `${path} imports '${name}', which deno.json's imports map lacks`);
        assert.match(deno.imports[name], new RegExp(`^npm:${name.replace("/", "\\/")}@`), `${name} maps to npm:`);
      }
      const code = readFileSync(join(root, path), "utf8");
      assert.doesNotMatch(code, /from ["'](\.\.?\/)+cli(\.ts|\/)/, `${path} imports the CLI, which JSR leaves out`);
    }
  });

  it("npm pack holds only the build, the manifest, the readme and the licence", { timeout: 60_000 }, () => {
    const packed = spawnSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
      cwd: root,
      encoding: "utf8",
    });
    assert.equal(packed.status, 0, packed.stderr);
    const [info] = JSON.parse(packed.stdout);
    const files = (info.files as Array<{ path: string }>).map((f) => f.path);
    // Without a build (a fresh clone before `npm run build`) only the rules are checked;
    // test/packaging/smoke.ts packs a fresh clone for real.
    assert.deepEqual(checkTarballFiles(files, pkg, { built: existsSync(join(root, "dist/mod.js")) }), []);
  });
});

describe("core purity", () => {
  it("only src/runtime/, the adapters and the CLI's host glue touch node:*, Deno, Bun or process", () => {
    assert.deepEqual(impureFiles(root), []);
  });

  it("catches `process.` anywhere in code, strings and import paths included, but not in comments", () => {
    const dir = mkdtempSync(join(tmpdir(), "edgekiq-purity-"));
    try {
      mkdirSync(join(dir, "src/api"), { recursive: true });
      mkdirSync(join(dir, "src/runtime"), { recursive: true });
      writeFileSync(join(dir, "src/api/a.ts"), 'import { P } from "./process.ts";\n');
      writeFileSync(join(dir, "src/api/b.ts"), 'export const help = "over every process.";\n');
      writeFileSync(
        join(dir, "src/api/c.ts"),
        "/** Every process.env read lives in src/runtime/. */\nexport const c = 1;\n",
      );
      writeFileSync(join(dir, "src/runtime/d.ts"), "export const env = process.env;\n");
      assert.deepEqual(impureFiles(dir).sort(), ["src/api/a.ts", "src/api/b.ts"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
