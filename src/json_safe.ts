/**
 * JSON safety: what a job payload may hold. A value must survive a JSON
 * round trip unchanged (Sidekiq's `strict_args!`) and nest no deeper than
 * Ruby's JSON reads. Both checks are iterative, so no input, however deep,
 * overflows the stack: the answer is always a clear {@link PayloadError}.
 *
 * @module
 */
import { PayloadError } from "./errors.ts";
import { sanitize } from "./sanitize.ts";

/**
 * How deeply a payload may nest: the payload object is level 1, `args` level
 * 2, and so on. 100 is the `max_nesting` default of Ruby's JSON, which
 * Sidekiq's `load_json`/`dump_json` use: a deeper payload is one no Ruby
 * process can read or write. It also keeps every JavaScript runtime's
 * recursive `JSON.stringify` far from its stack limit (Node 20's overflows near
 * 5,000 levels).
 */
export const MAX_NESTING = 100;

/**
 * Whether a parsed JSON value nests deeper than `max` levels (the value
 * itself is level 1); iterative, so any depth is safe.
 *
 * @example
 * ```ts
 * nestedDeeperThan(JSON.parse(raw), MAX_NESTING); // true for a payload Ruby cannot read
 * ```
 */
export function nestedDeeperThan(root: object, max: number): boolean {
  const stack: object[] = [root];
  const depths: number[] = [1];
  while (stack.length > 0) {
    const value = stack.pop() as Record<string, unknown>;
    const depth = depths.pop()!;
    if (depth > max) return true;
    for (const key in value) {
      const child = value[key];
      if (typeof child === "object" && child !== null) {
        stack.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

/**
 * Checks that a value survives a JSON round trip unchanged, as Sidekiq's
 * `strict_args!` does, and throws a {@link PayloadError} naming the first
 * offending path otherwise (`args[1].when is a Date`). `value` is one
 * top-level payload field, so it may nest {@link MAX_NESTING} - 1 levels.
 * The walk is iterative: no input overflows the stack.
 *
 * @example
 * ```ts
 * assertJsonSafe([1, { when: new Date() }], "args");
 * // PayloadError: Cannot push job as args[1].when is a Date: ...
 * ```
 */
export function assertJsonSafe(value: unknown, path: string): void {
  const problem = jsonProblem(value, path);
  if (problem === undefined) return;
  throw new PayloadError(
    problem.endsWith(DEEP_NOTE)
      ? `Cannot push job as ${problem}: a Sidekiq payload holds at most ${MAX_NESTING} (Ruby's JSON limit)`
      : `Cannot push job as ${problem}: job arguments must be JSON-native (${JSON_NATIVE})`,
  );
}

/** What a JSON-native value is made of, for error messages. */
export const JSON_NATIVE = "string, finite number, boolean, null, array, plain object";

const DEEP_NOTE = ` levels deep`;

/**
 * Why `value` (a payload field at `path`) would not survive a JSON round
 * trip, as an escaped phrase (`args[1].when is a Date`, `cursor nests more
 * than 99 levels deep`), or undefined when it would: for callers that word
 * their own error.
 *
 * @example
 * ```ts
 * jsonProblem({ at: new Date() }, "cursor"); // "cursor.at is a Date"
 * ```
 */
export function jsonProblem(value: unknown, path: string): string | undefined {
  const problem = findUnsafe(value, MAX_NESTING - 1);
  if (problem === undefined) return undefined;
  if (problem === TOO_DEEP) return `${sanitize(path)} nests more than ${MAX_NESTING - 1}${DEEP_NOTE}`;
  return sanitize(path + problem);
}

const TOO_DEEP = " nests too deeply";

/**
 * The first non-JSON value under `root`, as a path suffix and a description
 * (`[1].when is a Date`), {@link TOO_DEEP} past `maxDepth` levels, or
 * undefined. A flat array or object of leaves (most job arguments) is
 * checked in one loop with no allocation; anything nested is walked by
 * {@link walk}.
 */
function findUnsafe(root: unknown, maxDepth: number): string | undefined {
  const problem = valueProblem(root);
  if (problem !== null) return problem;
  if (Array.isArray(root)) {
    let i = 0;
    for (; i < root.length; i++) {
      const own = valueProblem(root[i]);
      if (own === null) break;
      if (own !== undefined) return `[${i}]${own}`;
    }
    if (i === root.length) return undefined;
  }
  return walk(root as object, maxDepth);
}

/**
 * Depth-first with an explicit stack of containers, so no input overflows
 * the call stack; the stack also finds cycles, and the path is built only
 * when there is a problem.
 */
function walk(root: object, maxDepth: number): string | undefined {
  const containers: object[] = [];
  const keyLists: (string[] | undefined)[] = [];
  const positions: number[] = [];
  let child: unknown = root;
  for (;;) {
    // `child` is a container: check it and step into it.
    const obj = child as object;
    let problem: string | undefined;
    let keys: string[] | undefined;
    if (containers.length >= maxDepth) return TOO_DEEP;
    if (containers.includes(obj)) problem = " is a circular reference";
    else if (!Array.isArray(obj)) {
      const proto = Object.getPrototypeOf(obj);
      if (proto !== Object.prototype && proto !== null) {
        problem = ` is ${
          article((obj as { constructor?: { name?: string } }).constructor?.name || "non-plain object")
        }`;
      } else if (Object.getOwnPropertySymbols(obj).length > 0) problem = " has a symbol key";
      else keys = Object.keys(obj);
    }
    if (problem) return pathOf(keyLists, positions) + problem;
    containers.push(obj);
    keyLists.push(keys);
    positions.push(0);
    // Find the next container to enter, popping finished ones.
    for (;;) {
      const top = containers.length - 1;
      if (top < 0) return undefined;
      const list = keyLists[top];
      const at = positions[top]++;
      const current = containers[top] as Record<string, unknown>;
      if (at >= (list ? list.length : (current as unknown as unknown[]).length)) {
        containers.pop();
        keyLists.pop();
        positions.pop();
        continue;
      }
      child = list ? current[list[at]] : current[at];
      const own = valueProblem(child);
      if (own === undefined) continue;
      if (own !== null) return pathOf(keyLists, positions) + own;
      break;
    }
  }
}

/** The path to the value last stepped to: `[1].when`. */
function pathOf(keyLists: readonly (string[] | undefined)[], positions: readonly number[]): string {
  let out = "";
  for (let f = 0; f < keyLists.length; f++) {
    const keys = keyLists[f];
    const at = positions[f] - 1;
    out += keys ? propPath(keys[at]) : `[${at}]`;
  }
  return out;
}

/** A leaf's problem, undefined for a JSON-native leaf, or null for a container to walk into. */
function valueProblem(value: unknown): string | null | undefined {
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      return Number.isFinite(value) ? undefined : ` is ${value}`;
    case "undefined":
      return " is undefined";
    case "bigint":
      return " is a bigint";
    case "function":
      return " is a function";
    case "symbol":
      return " is a symbol";
  }
  return value === null ? undefined : null;
}

function propPath(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

function article(name: string): string {
  return `${/^[AEIOU]/i.test(name) ? "an" : "a"} ${name}`;
}
