/**
 * The README's code, run as written: a snippet is found by the heading it
 * sits under, and its `edgekiq` imports are pointed at this checkout's
 * sources (through deno.json's export map, the one list of entry points),
 * so a test runs what a user copies.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root. */
export const root: string = fileURLToPath(new URL("../..", import.meta.url));

/**
 * The `nth` fenced block of `lang` under the heading `heading` (any level) of
 * a Markdown file (the README by default). Throws if there is none, so a test
 * fails when the README moves its code.
 */
export function snippet(heading: string, options: { nth?: number; lang?: string; file?: string } = {}): string {
  const text = readFileSync(join(root, options.file ?? "README.md"), "utf8");
  const start = text.search(new RegExp(`^#+ ${heading.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\s*$`, "m"));
  if (start < 0) throw new Error(`${options.file ?? "README.md"} has no heading '${heading}'`);
  const body = text.indexOf("\n", start) + 1;
  const rest = text.slice(body);
  // The section ends at the next heading outside a fence (a shell block's comments start with "#" too).
  const next = [...rest.matchAll(/^```|^#+ /gm)].reduce(
    (found: { fenced: boolean; at: number }, m) =>
      found.at >= 0 ? found : m[0] === "```" ? { ...found, fenced: !found.fenced } : found.fenced ? found : {
        ...found,
        at: m.index!,
      },
    { fenced: false, at: -1 },
  ).at;
  const section = next < 0 ? rest : rest.slice(0, next);
  const blocks = [...section.matchAll(/^```(\w+)\n([\s\S]*?)^```$/gm)].filter((m) => m[1] === (options.lang ?? "ts"));
  const block = blocks[options.nth ?? 0];
  if (!block) throw new Error(`'${heading}' has no ${options.lang ?? "ts"} block #${options.nth ?? 0}`);
  return block[2];
}

const exportsMap: Record<string, string> = JSON.parse(readFileSync(join(root, "deno.json"), "utf8")).exports;

/** `code` with every `"edgekiq"` / `"edgekiq/<entry>"` import pointed at this checkout's source. */
export function withLocalImports(code: string): string {
  return code.replace(/(from\s+|import\s*\(\s*)"edgekiq(\/[\w-]+)?"/g, (all, lead: string, sub: string | undefined) => {
    const target = exportsMap[`.${sub ?? ""}`];
    if (!target) throw new Error(`the README imports ${all.trim()}, which is no entry point in deno.json`);
    return `${lead}${JSON.stringify(join(root, target))}`;
  });
}

/**
 * Where {@link writeProgram} writes: `test/.snippets/<runtime>/`, one folder
 * per runtime, so the Node, Bun and Deno suites can run side by side without
 * one rewriting a file another is running.
 */
export const snippetsDir: string = join(
  root,
  "test",
  ".snippets",
  "Bun" in globalThis ? "bun" : "Deno" in globalThis ? "deno" : "node",
);

/**
 * Writes a program into {@link snippetsDir} (inside the repository, so its
 * bare imports resolve from node_modules on every runtime) and returns its
 * path.
 */
export function writeProgram(name: string, code: string): string {
  mkdirSync(snippetsDir, { recursive: true });
  const file = join(snippetsDir, name);
  writeFileSync(file, code);
  return file;
}

/** One fenced code block of a Markdown file, named by the heading it sits under. */
export interface Block {
  /** The nearest heading above it (without the `#`s), or "" before the first. */
  heading: string;
  /** The fence's language ("ts", "sh", ...; "" when none). */
  lang: string;
  /** Its index among the blocks of `lang` under `heading`. */
  nth: number;
  /** Its text. */
  code: string;
  /** `heading › lang #nth`: the name a test gives it. */
  id: string;
}

/** Every fenced block of a Markdown file (the README by default), in order. */
export function blocks(file = "README.md"): Block[] {
  const found: Block[] = [];
  let heading = "";
  let fence: { lang: string; lines: string[] } | null = null;
  for (const line of readFileSync(join(root, file), "utf8").split("\n")) {
    if (fence) {
      if (line.startsWith("```")) {
        const nth = found.filter((b) => b.heading === heading && b.lang === fence!.lang).length;
        const code = fence.lines.join("\n") + "\n";
        found.push({ heading, lang: fence.lang, nth, code, id: `${heading} › ${fence.lang} #${nth}` });
        fence = null;
      } else fence.lines.push(line);
    } else if (line.startsWith("```")) fence = { lang: line.slice(3).trim(), lines: [] };
    else if (/^#+ /.test(line)) heading = line.replace(/^#+ /, "").trim();
  }
  return found;
}

/** Every relative link target of a Markdown file (`[text](target)`), without its `#anchor`. */
export function relativeLinks(file = "README.md"): string[] {
  const text = readFileSync(join(root, file), "utf8").replace(/^```[\s\S]*?^```$/gm, "");
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!)
    .filter((target) => !/^[a-z]+:/.test(target) && !target.startsWith("#"))
    .map((target) => target.replace(/#.*$/, ""));
}
