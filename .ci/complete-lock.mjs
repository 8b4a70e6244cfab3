// Completes package-lock.json with other platforms' optional binaries.
//
// On a full registry, `npm install` records every platform's optional binary
// (@deno/darwin-arm64, ...) in the lock, flagged with its os/cpu so `npm ci`
// skips the ones that do not fit. The registry this project is developed
// against does not serve some of them (404), so npm leaves them out, and then
// `npm ci` refuses the lock as out of sync ("Missing: @deno/darwin-arm64@").
// This script adds each missing entry (version from the parent's
// optionalDependencies, os/cpu/libc read from the package name, no integrity:
// there is none to be had here). Run it after `npm install` changes the lock:
//
//   node .ci/complete-lock.mjs && npm ci
import { readFileSync, writeFileSync } from "node:fs";

const file = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(file, "utf8"));
const OS = ["darwin", "linux", "win32", "freebsd", "android"];
const CPU = { arm64: "arm64", aarch64: "arm64", x64: "x64", arm: "arm", ia32: "ia32" };
const LIBC = ["glibc", "musl"];

let added = 0;
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const key = `${path ? `${path}/` : ""}node_modules/${name}`;
    const hoisted = `node_modules/${name}`;
    if (lock.packages[key] || lock.packages[hoisted]) continue;
    const parts = name.split("/").pop().split("-");
    const os = OS.find((o) => parts.includes(o));
    const cpu = parts.map((p) => CPU[p]).find(Boolean);
    const libc = LIBC.find((l) => parts.includes(l));
    if (!os || !cpu) throw new Error(`${name}: cannot tell its platform from the name; add its lock entry by hand`);
    lock.packages[hoisted] = {
      version,
      cpu: [cpu],
      ...(entry.dev ? { dev: true } : {}),
      ...(libc ? { libc: [libc] } : {}),
      ...(entry.license ? { license: entry.license } : {}),
      optional: true,
      os: [os],
    };
    added++;
  }
}
const [root, ...rest] = Object.entries(lock.packages);
lock.packages = Object.fromEntries([root, ...rest.sort(([a], [b]) => a.localeCompare(b, "en"))]);
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lock: added ${added} missing optional platform entries`);
