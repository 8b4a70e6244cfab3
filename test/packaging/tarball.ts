/**
 * What the npm tarball may and must hold, shared by test/package.test.ts
 * (`npm pack --dry-run`) and the packaging smoke test (a real `npm pack` of
 * a fresh clone). Driven by package.json, so a new entry point in `exports`
 * is checked without touching this file.
 */

/** The files package.json points at (`main`, `types`, every `exports` condition, `bin`), without `./`. */
export function exportTargets(pkg: {
  main?: string;
  types?: string;
  exports: Record<string, Record<string, string>>;
  bin?: Record<string, string>;
}): string[] {
  const targets = [
    pkg.main,
    pkg.types,
    ...Object.values(pkg.exports).flatMap((conditions) => Object.values(conditions)),
    ...Object.values(pkg.bin ?? {}),
  ];
  return [...new Set(targets.filter((t): t is string => Boolean(t)).map((t) => t.replace(/^\.\//, "")))];
}

// Built code and its declarations, the manifest, the readme and the licence: nothing else.
const ALLOWED = /^(dist\/.+\.(js|d\.ts)|package\.json|README\.md|LICENSE)$/;
const FORBIDDEN =
  /(^|\/)(test|tests|fixtures|bench|examples|node_modules|\.ci)(\/|$)|\.test\.|results\.(json|svg)$|\.tgz$/;

/**
 * Problems with a tarball's file list: a file outside the allowed set, a
 * test, fixture or benchmark file, or a file package.json points at that is
 * missing (`{ built: false }` skips that, for a tree not yet built).
 *
 * @example
 * ```ts
 * checkTarballFiles(["package.json", "dist/mod.js", "test/x.test.ts"], pkg); // ["not allowed: test/x.test.ts", ...]
 * ```
 */
export function checkTarballFiles(
  files: string[],
  pkg: Parameters<typeof exportTargets>[0],
  { built = true }: { built?: boolean } = {},
): string[] {
  const problems: string[] = [];
  for (const file of files) {
    if (FORBIDDEN.test(file)) problems.push(`test, fixture or benchmark file: ${file}`);
    else if (!ALLOWED.test(file)) problems.push(`not allowed: ${file}`);
  }
  for (const required of ["package.json", "README.md", "LICENSE"]) {
    if (!files.includes(required)) problems.push(`missing ${required}`);
  }
  if (built) {
    for (const target of exportTargets(pkg)) if (!files.includes(target)) problems.push(`missing ${target}`);
  }
  return problems;
}
