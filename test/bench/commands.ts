/**
 * How the benchmark starts each system: Node bundles of the edgekiq child
 * scripts, the command line per runtime, an older edgekiq from git for
 * before/after runs, and whether Bun, Deno and Ruby Sidekiq are available.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { benchDir, repoRoot } from "./support.ts";

function bin(name: string): string | undefined {
  const local = `${repoRoot}node_modules/.bin/${name}`;
  return existsSync(local) ? local : undefined;
}

/** Where the Node bundles of the edgekiq child scripts go. */
export const buildDir = `${repoRoot}bench/.build/`;
let nodeBundles = false;

/**
 * Bundles TypeScript entry points for Node with esbuild into `outdir`
 * (dependencies stay external), as an application would ship them: one
 * `<name>.mjs` per entry. Running them through tsx instead costs ~50 MB of
 * RSS for the loader alone, which is not edgekiq's.
 */
export async function bundleForNode(entries: string[], outdir: string): Promise<void> {
  const { build } = await import("esbuild");
  await build({
    entryPoints: entries,
    outdir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    packages: "external",
    logLevel: "warning",
    plugins: [{
      // The Bun transport is only ever imported under Bun; keep it out of the Node bundle.
      name: "bun-transport-external",
      setup(b) {
        b.onResolve(
          { filter: /transport\/bun\.ts$/ },
          (args) => ({ path: `${args.resolveDir}/${args.path}`, external: true }),
        );
      },
    }],
  });
}

/**
 * Bundles the edgekiq child scripts for Node (see {@link bundleForNode});
 * BENCH_NODE_LOADER=tsx runs them through tsx instead.
 */
export async function prepareNodeBundles(scripts: string[]): Promise<void> {
  if (process.env.BENCH_NODE_LOADER === "tsx") return;
  await bundleForNode(scripts.map((s) => `${benchDir}${s}`), buildDir);
  nodeBundles = true;
}

/**
 * The command line that runs a TypeScript file on a runtime: Bun and Deno
 * run it as is; Node runs `bundle` when given, else the file through tsx.
 */
export function runtimeCommand(
  runtime: "node" | "bun" | "deno",
  file: string,
  bundle?: string,
): { command: string; args: string[] } {
  if (runtime === "node") {
    return bundle ? { command: process.execPath, args: [bundle] } : {
      command: process.execPath,
      args: ["--import", "tsx", file],
    };
  }
  if (runtime === "bun") {
    const b = bin("bun");
    return b ? { command: b, args: [file] } : { command: "npx", args: ["bun", file] };
  }
  const d = bin("deno");
  const args = ["run", "-A", "--no-check", file];
  return d ? { command: d, args } : { command: "npx", args: ["deno", ...args] };
}

/**
 * An older edgekiq from git, to measure before and after in the same run:
 * `git archive <ref>` of its engine and its own benchmark scripts into
 * bench/.baseline/<ref>/ (the repo's node_modules still resolve), and its
 * drain script bundled for Node. Returns the command that runs it.
 */
export async function prepareBaseline(ref: string): Promise<{ ref: string; command: string; args: string[] }> {
  const rev = spawnSync("git", ["rev-parse", "--short", `${ref}^{commit}`], { cwd: repoRoot, encoding: "utf8" });
  if (rev.status !== 0) throw new Error(`--baseline ${ref}: not a commit in this repository`);
  const short = rev.stdout.trim();
  const dir = `${repoRoot}bench/.baseline/${short}/`;
  if (!existsSync(`${dir}test/bench/edgekiq-drain.ts`)) {
    mkdirSync(dir, { recursive: true });
    const tar = spawnSync(
      "sh",
      ["-c", `git archive ${short} src mod.ts test/bench test/support | tar -x -C "${dir}"`],
      {
        cwd: repoRoot,
        encoding: "utf8",
      },
    );
    if (tar.status !== 0) throw new Error(`--baseline ${ref}: git archive failed: ${tar.stderr}`);
  }
  await bundleForNode([`${dir}test/bench/edgekiq-drain.ts`], `${dir}.build/`);
  return { ref: short, ...runtimeCommand("node", "", `${dir}.build/edgekiq-drain.mjs`) };
}

/** The command lines for an edgekiq child script on each runtime. */
export function edgekiqCommand(runtime: "node" | "bun" | "deno", script: string): { command: string; args: string[] } {
  const bundle = nodeBundles ? `${buildDir}${script.replace(/\.ts$/, ".mjs")}` : undefined;
  return runtimeCommand(runtime, `${benchDir}${script}`, bundle);
}

let rubyState: string | null | undefined;
/** Why Ruby Sidekiq cannot run here, or null when it can. */
export function sidekiqUnavailable(): string | null {
  if (rubyState !== undefined) return rubyState;
  const probe = spawnSync("ruby", ["-e", 'require "sidekiq"; print Sidekiq::VERSION'], {
    encoding: "utf8",
    timeout: 20_000,
  });
  if (probe.error) rubyState = "no ruby on PATH";
  else if (probe.status !== 0) rubyState = "the sidekiq gem is not installed";
  else rubyState = null;
  return rubyState;
}

const runtimeState = new Map<string, string | null>();
/** Why a Bun or Deno binary cannot be run (they are npm devDependencies), or null when it can. */
export function runtimeUnavailable(runtime: "node" | "bun" | "deno"): string | null {
  if (runtime === "node") return null;
  if (!runtimeState.has(runtime)) {
    const cmd = edgekiqCommand(runtime, "");
    const probe = spawnSync(cmd.command, cmd.command === "npx" ? [runtime, "--version"] : ["--version"], {
      encoding: "utf8",
      timeout: 60_000,
    });
    runtimeState.set(runtime, probe.status === 0 ? null : `${runtime} not available`);
  }
  return runtimeState.get(runtime)!;
}
