/**
 * The dashboard's assets ship inside the package as string modules: the
 * vendored uPlot matches the installed `uplot` devDependency, the page
 * script parses, and everything together stays under 60 KB gzipped.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";
import { ASSETS } from "../src/web/dashboard/assets/assets.ts";
import { CLIENT_JS } from "../src/web/dashboard/assets/client_js.ts";
import { UPLOT_CSS, UPLOT_JS, UPLOT_VERSION } from "../src/web/dashboard/assets/uplot.ts";

const root = fileURLToPath(new URL("..", import.meta.url));
const GZIP_BUDGET = 60 * 1024;

describe("dashboard assets", () => {
  it("the vendored uPlot is the installed uplot package's build (regenerate: test/support/vendor-uplot.ts)", () => {
    const pkg = JSON.parse(readFileSync(`${root}node_modules/uplot/package.json`, "utf8"));
    assert.equal(UPLOT_VERSION, pkg.version);
    assert.equal(UPLOT_JS, readFileSync(`${root}node_modules/uplot/dist/uPlot.iife.min.js`, "utf8").trim());
    assert.equal(UPLOT_CSS, readFileSync(`${root}node_modules/uplot/dist/uPlot.min.css`, "utf8").trim());
  });

  it(`all assets together are at most ${GZIP_BUDGET / 1024} KB gzipped`, () => {
    const sizes = Object.fromEntries(
      Object.entries(ASSETS).map((
        [role, a],
      ) => [role, { raw: a.body.length, gzip: gzipSync(a.body, { level: 9 }).length }]),
    );
    const total = Object.values(sizes).reduce((n, s) => n + s.gzip, 0);
    console.log(
      `dashboard assets, gzip: ${
        Object.entries(sizes).map(([r, s]) =>
          `${r} ${(s.gzip / 1024).toFixed(1)} KB (raw ${(s.raw / 1024).toFixed(1)})`
        ).join(", ")
      }; total ${(total / 1024).toFixed(1)} KB`,
    );
    assert.ok(total <= GZIP_BUDGET, `${total} bytes gzipped`);
  });

  it("the page script parses, binds no inline handlers and clamps the poll interval", () => {
    assert.doesNotThrow(() => new Function(CLIENT_JS));
    assert.doesNotMatch(CLIENT_JS, /\.on(click|submit|change|load)\s*=|setAttribute\(\s*["']on/);
    assert.doesNotMatch(CLIENT_JS, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(/);
    assert.match(CLIENT_JS, /var MIN = 2, MAX = 20;/);
  });

  it("file names carry a content hash", () => {
    const files = Object.values(ASSETS).map((a) => a.file);
    assert.equal(new Set(files).size, files.length);
    for (const file of files) assert.match(file, /^[a-z]+-[0-9a-f]{8}\.(js|css|svg)$/);
  });
});
